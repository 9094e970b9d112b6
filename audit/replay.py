"""Replaying a submission's sampled items through the same paths as ``g2m eval``, with the settings it records.

The sampled rows are copied, as they are, into a small release folder of their own (``sample_release``: the same
row bytes, one parquet file, the source's card and manifest), and ``g2m eval`` runs on it with the access the
maintainer gives (``--serve``, ``--base-url``, ``--model``/``--model-args``) and the submission's generation
settings (its ``gen_kwargs`` and reasoning budget). What the replay recorded is then held against what the
submission recorded (``unhonoured``): a setting the replay could not match makes the audit say so, and the row stays
self-reported with that reason, never reproduced.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from dataset_builder.grids.spec import MANIFEST_NAME, README_NAME, cell_key
from dataset_builder.release.provenance import dataset_content_sha256
from dataset_builder.release.source import load_config, resolve_source
from g2m_base.errors import UsageError
from g2m_base.files import atomic_write_text
from harness_tasks import ModelArgs
from scoring.catalog import budget
from submission.run_metadata import redact

#: A ``{model}`` or ``{revision}`` in an access setting is the submission's own (``g2m leaderboard audit`` replays
#: every submission from the weights it names with one command).
FIELDS = ("model", "revision")
_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]{0,199}")


@dataclass(frozen=True)
class Access:
    """How the maintainer reaches the model: exactly one of ``serve`` (a checkpoint ``vllm serve`` starts),
    ``base_url`` (a running server) or ``model`` (an lm-eval backend, with ``model_args``); the rest as ``g2m eval``
    takes them."""

    model: str | None = None
    model_args: str = ""
    serve: str | None = None
    serve_args: str = ""
    base_url: str | None = None
    vllm: str | None = None
    device: str | None = None
    batch_size: str = "1"
    concurrency: int = 32

    def __post_init__(self) -> None:
        given = [name for name, v in (("--model", self.model), ("--serve", self.serve), ("--base-url", self.base_url))
                 if v]
        if len(given) != 1:
            raise UsageError("say how to reach the model: one of --serve MODEL, --base-url URL or --model BACKEND "
                             f"(with --model-args){'; got ' + ' and '.join(given) if given else ''}")

    def shown(self) -> dict:
        """What an audit record says of this access: every setting, with any secret in the arguments redacted."""
        return {k: redact(v) if isinstance(v, str) else v for k, v in asdict(self).items()}

    def named(self, meta: dict) -> Access:
        """This access with ``{model}`` and ``{revision}`` filled in from a submission's metadata."""
        model = meta.get("model") or {}
        values = {k: str(model.get("id" if k == "model" else k) or "") for k in FIELDS}
        for k, v in values.items():  # put into model arguments and command lines: never a separator or a flag
            if f"{{{k}}}" in "".join(x or "" for x in (self.model, self.model_args, self.serve, self.base_url)) \
                    and not _PLAIN.fullmatch(v):
                raise UsageError(f"the submission's {k} {v[:80]!r} is not a plain Hub id or path (letters, digits, "
                                 ". _ - / only, not starting with -): it is not put into a command; give the "
                                 "model explicitly")

        def fill(text: str | None) -> str | None:
            if text is None:
                return None
            for k, v in values.items():
                text = text.replace("{" + k + "}", v)
            return text

        return replace(self, model=fill(self.model), model_args=fill(self.model_args) or "", serve=fill(self.serve),
                       base_url=fill(self.base_url))


CONFIG, SPLIT = "zero_shot", "test"


def rows(data: str | None = None):
    """The zero_shot test split of ``data`` (a local build, else the Hub release at its pinned revision)."""
    return load_config(CONFIG, SPLIT, *resolve_source(data))


def content_sha256(data: str | None = None) -> str:
    """The content hash of those rows: what a run records of the data it read."""
    return dataset_content_sha256(rows(data))


def sample_release(data: str | None, ids: list[str], out: Path, content: str = "") -> Path:
    """A release folder holding only the rows ``ids`` of ``data``'s zero_shot split, their bytes unchanged.
    ``content``: the content hash of ``data``, part of the file's name (as the ids are)."""
    rows_ = rows(data)
    where = {rid: i for i, rid in enumerate(rows_["id"])}
    lacking = [i for i in ids if i not in where]
    if lacking:
        raise UsageError(f"the data has no row {lacking[0]} ({len(lacking)} of the sample's ids are missing)")
    shutil.rmtree(out, ignore_errors=True)
    (out / CONFIG).mkdir(parents=True)
    # ``datasets`` caches a local folder's rows under a hash of its card's config (the data files' patterns), not of
    # the files: two samples named alike would read each other's rows (measured: datasets 5.2, one process), so
    # the file is named by the data's content hash and the sample's ids.
    key = hashlib.sha256(chr(0).join([content, *sorted(ids)]).encode()).hexdigest()[:16]
    name = f"{CONFIG}/{SPLIT}-{key}.parquet"
    rows_.select(sorted(where[i] for i in ids)).to_parquet(str(out / name))
    source, revision = resolve_source(data)
    shutil.copyfile(_source_file(source, revision, MANIFEST_NAME), out / MANIFEST_NAME)  # it marks a release folder
    # the card names that one file and states no split sizes (the source's card states its own, which these rows would
    # fail); the rows' features travel in the parquet file's own metadata
    atomic_write_text(out / README_NAME, f"---\nconfigs:\n- config_name: {CONFIG}\n  data_files:\n  - split: {SPLIT}\n"
                                         f"    path: {name}\n---\n\nThe rows an audit replays.\n")
    return out


def _source_file(source: str, revision: str | None, name: str) -> Path:
    if revision is None:
        return Path(source) / name
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(source, name, repo_type="dataset", revision=revision))


def tasks_of(cells: set[tuple[int, int]]) -> tuple[str, ...]:
    return tuple(f"g2m_{cell_key(n, c)}" for n, c in sorted(cells))


def generation(meta: dict, cells: set[tuple[int, int]]) -> tuple[str | None, int]:
    """(``gen_kwargs``, reasoning budget) that give the replay the submission's answer budgets on these cells."""
    gen = meta.get("generation") or {}
    kwargs = gen.get("gen_kwargs")
    if isinstance(kwargs, dict):
        kwargs = ",".join(f"{k}={v}" for k, v in kwargs.items()) or None
    kwargs = kwargs if isinstance(kwargs, str) and kwargs.strip() else None
    budgets = gen.get("max_gen_toks") or {}
    extra = {budgets.get(t) - budget(n) for t, (n, _c) in zip(tasks_of(cells), sorted(cells), strict=True)
             if isinstance(budgets.get(t), int)}
    reasoning = extra.pop() if len(extra) == 1 and not (kwargs and "max_gen_toks" in kwargs) else 0
    return kwargs, max(0, reasoning)


def serve_flag(serve_args: str, flag: str) -> str | None:
    """The value of ``flag`` (``--flag V`` or ``--flag=V``) in a ``vllm serve`` command line, or None."""
    words = (serve_args or "").split()
    for i, word in enumerate(words):
        if word.startswith(flag + "="):
            return word.partition("=")[2]
        if word == flag and i + 1 < len(words):
            return words[i + 1]
    return None


def dtype(model_args: object, serve_args: str = "") -> str | None:
    """The dtype a run states: ``dtype=`` in its model arguments, else ``--dtype`` in its ``vllm serve`` arguments;
    None when it states none (a running server's own setting is not known here)."""
    stated = ModelArgs.parse(str(model_args or "")).get("dtype") or serve_flag(serve_args, "--dtype")
    return str(stated) if stated else None


def unhonoured(submitted: dict, replayed: dict, tasks: tuple[str, ...]) -> list[str]:
    """The settings the replay did not match, one line each: the model's revision, its chat template, the answer
    budget of a sampled task, its dtype when both state one (``replayed["dtype"]``). A setting the submission does not
    record is not held against it (the board cannot know it) but the audit record shows what the replay used."""
    out = []
    sm, rm = submitted.get("model") or {}, replayed.get("model") or {}
    if sm.get("revision") and sm.get("revision") != rm.get("revision"):
        out.append(f"the submission names revision {sm['revision']}; the replay ran {rm.get('revision') or 'none'}")
    mine, theirs = dtype(sm.get("model_args")), replayed.get("dtype")
    if mine and theirs and mine != theirs:  # float32 and bfloat16 give other greedy answers (docs/maintainers/audit.md)
        out.append(f"the submission ran dtype {mine}; the replay {theirs}")
    sg, rg = submitted.get("generation") or {}, replayed.get("generation") or {}
    if sg.get("chat_template_sha") and rg.get("chat_template_sha") and sg["chat_template_sha"] != rg[
            "chat_template_sha"]:
        out.append(f"chat template {str(rg['chat_template_sha'])[:12]}, not the submission's "
                   f"{str(sg['chat_template_sha'])[:12]}")
    if sg.get("chat_template") is False and rg.get("chat_template") is not False:
        out.append("the submission applied no chat template; the replay applied one")
    sb, rb = sg.get("max_gen_toks") or {}, rg.get("max_gen_toks") or {}
    for t in tasks:
        if t in sb and sb[t] != rb.get(t):
            out.append(f"{t}: answer budget {rb.get(t)} tokens, not the submission's {sb[t]}")
            break
    return out
