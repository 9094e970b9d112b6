"""What identifies a run's answers (the run key), and which folder a run goes to.

**The run key** names the answer cache of a run (``cache/<model>-<key>_rank0.db``): a rerun with the same key
resumes from it, a rerun with another key asks for every answer again, and the answers of the old key stay cached
under it. Everything that can change an answer is in it (``key_facts``):

- the backend, the model arguments (not those that only say how to reach a server: ``TRANSPORT_ARGS``), the
  generation settings (``--gen-kwargs``), the reasoning budget;
- the chat template: whether it is applied, and the template itself when the backend runs in-process;
- the task version and the prompt version;
- for a server: what it reports about itself (``/v1/models``: id, root, max_model_len; ``/version``), and for
  ``--serve`` what g2m starts (the vllm executable, the model, every ``vllm serve`` argument but host and port).

The same request under one key (its text, settings and image, hashed by lm-eval) finds its answer.

**The run folder** (``folder_name``) is ``<model>`` for a run with default settings, and ``<model>+<digest>`` for one
whose settings differ: ``digest`` is 8 hex digits of the settings the user chose (``settings``: model arguments other
than the one naming the model, ``--gen-kwargs``, ``--no-chat-template``, ``--reasoning-budget``, ``--serve-args``,
the harness when it is not lm-eval), so runs with other settings never share a folder (``g2m report`` reads one
folder as one model's run). What the server reports is not a setting: a run of the same settings on an upgraded
server goes to the same folder, gets a new key, and says so (``key_change``).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path

from dataset_builder.grids.prompt import PROMPT_VERSION
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.files import safe_name
from harness_tasks.evaluation.settings import versions
from harness_tasks.serving.identity import MODEL_FIELDS
from harness_tasks.serving.launcher import executable_stamp, without_address
from scoring.catalog import TASK_VERSION
from scoring.runs.layout import MAX_RESULTS_BYTES, newest_results
from scoring.runs.model_args import NAME_KEYS, ModelArgs

#: Model arguments that say how to reach a server, not what answers: left out of the run key, so a resumed
#: ``--serve`` run (a new port each time) finds its answers.
TRANSPORT_ARGS = frozenset({"base_url", "num_concurrent", "timeout", "max_retries", "verify_certificate",
                            "ca_cert_path", "auth_token", "header"})


def _digest(value: object, n: int) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:n]


def key_facts(spec, model_args: str, chat_template: str | None = None, link=None) -> dict:
    """Everything that can change an answer of the run ``spec`` (an ``EvalSpec``), as JSON values.

    ``model_args`` are the backend's arguments as it is created; ``chat_template`` the template an in-process
    backend applies (None when the server applies its own); ``link`` the server's ``ServerLink``, if any.
    """
    template = None
    if spec.apply_chat_template:
        template = hashlib.sha256(chat_template.encode()).hexdigest() if chat_template else "the server's"
    return {
        "backend": spec.model,
        "model_args": str(ModelArgs.parse(model_args).without(*TRANSPORT_ARGS)),
        "gen_kwargs": spec.gen_kwargs,
        "chat_template": template,  # None: not applied
        "task_version": TASK_VERSION,
        "prompt_version": PROMPT_VERSION,
        "reasoning_budget": spec.reasoning_budget,
        "server": link.identity() if link is not None else None,
        "serve": link.launch if link is not None else None,
    }


def run_key(facts: dict) -> str:
    """12 hex digits naming ``facts``."""
    return _digest(facts, 12)


def settings(spec, display: str) -> dict:
    """The settings of ``spec`` that differ from the defaults, beyond the model's name (see the module's docstring)."""
    args = ModelArgs.parse(spec.model_args).without(*TRANSPORT_ARGS)
    naming = {f"{k}={display}" for k in ("model_version", *NAME_KEYS)}  # the piece the run is named after
    args = ModelArgs(tuple(p for p in args.pieces if p.strip() not in naming))
    out: dict = {}
    if args.pieces:
        out["model_args"] = str(args)
    if spec.gen_kwargs:
        out["gen_kwargs"] = spec.gen_kwargs
    if not spec.apply_chat_template:
        out["chat_template"] = False
    if spec.reasoning_budget:
        out["reasoning_budget"] = spec.reasoning_budget
    serve_args = without_address(shlex.split(spec.serve_args or ""))
    if serve_args:
        out["serve_args"] = serve_args
    if spec.harness != "lm-eval":
        out["harness"] = spec.harness
    return out


def folder_name(spec, display: str) -> str:
    """``<model>``, or ``<model>+<8 hex digits of its settings>`` when they differ from the defaults."""
    chosen = settings(spec, display)
    return safe_name(display) + (f"+{_digest(chosen, 8)}" if chosen else "")


def earlier_run(folder: Path) -> dict:
    """The ``g2m`` block of the newest results file in ``folder`` (empty when there is none, or it is unreadable)."""
    newest = newest_results(folder)
    try:
        block = read_json(newest, MAX_RESULTS_BYTES, "results file").get("g2m") if newest else None
    except (Rejected, OSError, AttributeError):
        return {}
    return block if isinstance(block, dict) else {}


def earlier_server(folder: Path, launch: dict) -> dict | None:
    """What a server started as ``launch`` reported to the folder's earlier run (its identity, and when it was
    asked), or None when that run started something else, or its executable file has changed since."""
    block = earlier_run(folder)
    run, provenance = block.get("run_key"), block.get("provenance")
    facts = run.get("facts") if isinstance(run, dict) else None
    server = provenance.get("server") if isinstance(provenance, dict) else None
    if not isinstance(facts, dict) or facts.get("serve") != launch or not isinstance(facts.get("server"), dict) \
            or not isinstance(server, dict) or server.get("executable_stamp") != executable_stamp(launch["executable"]):
        return None
    return {**{k: facts["server"].get(k) for k in (*MODEL_FIELDS, "version")}, "reported_at": server.get("reported_at")}


def _changed(old: dict, new: dict) -> list[str]:
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{k}.{sub}" for sub in _changed(a, b)]
        elif a != b:
            out.append(k)
    return out


def key_change(folder: Path, key: str, facts: dict) -> str | None:
    """One line when the folder's earlier run had another key, naming what changed; else None."""
    earlier = earlier_run(folder).get("run_key")
    if not isinstance(earlier, dict) or earlier.get("key") in (None, key):
        return None
    what = _changed(earlier.get("facts") if isinstance(earlier.get("facts"), dict) else {}, facts)
    return (f"g2m: the run key changed from the earlier run in {folder} ({', '.join(what) or 'its facts'}): "
            f"every answer is asked anew under key {key}; the earlier answers stay cached under key {earlier['key']}")


class RunKey:
    """The key of a run in progress, settled before it starts, and again once a ``--serve`` server that was not
    running is started (``settle``): it may report something other than what the folder's earlier run recorded."""

    def __init__(self, spec, model_args: str, chat_template: str | None, link, folder: Path) -> None:
        self.spec, self.model_args, self.chat_template, self.link, self.folder = (spec, model_args, chat_template,
                                                                                  link, folder)
        self.facts: dict | None = None
        self.key = ""
        self.settle()

    def settle(self) -> bool:
        """Recompute the key; True when it changed. A key that differs from the folder's earlier run is said once."""
        facts = key_facts(self.spec, self.model_args, self.chat_template, self.link)
        if facts == self.facts:
            return False
        self.facts, self.key = facts, run_key(facts)
        line = key_change(self.folder, self.key, facts)
        if line:
            print(line, file=sys.stderr)
        return True

    def record(self) -> dict:
        """What a results file records: ``g2m.run_key``."""
        return {"key": self.key, "facts": self.facts}


def run_record(spec, target, key: RunKey) -> dict:
    """What every driver adds to a run's ``g2m`` block about what made its answers: the run key and its facts, the
    settings that named the folder, and the provenance of the two sides apart: ``client``, g2m's own environment;
    ``server``, only what the server reported (``serving.link``), None in-process."""
    out = {"run_key": key.record(), "settings": settings(spec, target.display),
           "provenance": {"client": versions(), "server": target.link.provenance() if target.link else None}}
    if target.served:
        out["served_by"] = target.served
    return out


def beside(folder: Path) -> list[str]:
    """The other runs of the same model next to ``folder`` (``<model>`` and ``<model>+<hash>`` folders of other
    settings, each holding results), one line each: its folder and the settings that named it. A rerun with other
    settings lands in a new folder; this says the earlier one is still there, and how it differs."""
    folder = Path(folder)
    model = folder.name.split("+", 1)[0]
    out = []
    for other in sorted(folder.parent.glob(f"{model}*")):
        if other == folder or other.name.split("+", 1)[0] != model or newest_results(other) is None:
            continue
        chosen = earlier_run(other).get("settings")
        shown = json.dumps(chosen, sort_keys=True) if isinstance(chosen, dict) and chosen else "the defaults"
        out.append(f"{other.name} ({shown[:200]})")
    return out
