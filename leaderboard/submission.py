"""Leaderboard submissions: one JSON file (optionally gzip'd) with metadata and the raw output for every
``zero_shot`` id. ``g2m submit`` writes it from an lm-eval run; ``validate`` checks it and re-scores every output.

A submission is untrusted input. It is read with hard size limits, parsed as data only (JSON; no pickle, no
archives, no paths followed), checked for exactly the release's ids and the pinned dataset revision, and every
output is re-parsed and re-scored; any score written in the file is ignored.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dataset_builder import __version__
from dataset_builder.errors import G2MError
from dataset_builder.fsutil import atomic_write_bytes
from dataset_builder.spec import DATASET_REVISION, HUB_REPO_ID
from harness_tasks.parsing import MAX_ANSWER_CHARS

from .runs import load_run
from .scoring import by_task, score_output, summarise, truth_matrix, zero_shot_truth

FORMAT = "g2m-submission/1"
MAX_FILE_BYTES = 64 << 20  # on disk, compressed or not
MAX_JSON_BYTES = 128 << 20  # after decompression: a gzip bomb stops here
MAX_OUTPUT_CHARS = MAX_ANSWER_CHARS  # longer outputs could never parse anyway
MAX_META_CHARS = 2_000
_SECRET = re.compile(r"(?i)(api[_-]?key|token|secret|password)=[^,]*")


class Rejected(G2MError, ValueError):
    """The submission is refused; the message says why, in one line."""


@dataclass
class Validation:
    ok: bool
    reason: str | None = None
    sha256: str | None = None
    metadata: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    scored: list = field(default_factory=list)  # per-output re-scores, for figures


def _version(results: dict, name: str) -> str | None:
    return (results.get("g2m", {}).get("versions") or {}).get(name)


def metadata_from_run(results: dict, model: str) -> dict:
    cfg = results.get("config", {})
    args = cfg.get("model_args") or ""
    if isinstance(args, dict):
        args = ",".join(f"{k}={v}" for k, v in args.items())
    args = _SECRET.sub(r"\1=<redacted>", args)
    revision = re.search(r"(?:^|,)revision=([^,]+)", args)
    data = results.get("g2m", {}).get("data", {})
    dataset_revision = data.get("revision")
    if dataset_revision is None and (data.get("build_params") or {}).get("scale") == 1:
        dataset_revision = DATASET_REVISION  # a full local build: byte-identical to the release (g2m verify)
    configs = results.get("configs", {})
    budgets = {t: c.get("generation_kwargs", {}).get("max_gen_toks") for t, c in sorted(configs.items())}
    date = results.get("date")
    return {
        "model": {"id": model, "revision": revision.group(1) if revision else None, "backend": cfg.get("model"),
                  "model_args": args},
        "versions": {"grid2matrix": _version(results, "grid2matrix"), "lm_eval": results.get("lm_eval_version"),
                     "transformers": results.get("transformers_version") or _version(results, "transformers"),
                     "vllm": _version(results, "vllm"), "torch": _version(results, "torch"), "submitted_with": __version__},
        "dataset": {"repo_id": HUB_REPO_ID if dataset_revision else data.get("source"), "revision": dataset_revision,
                    "manifest_sha256": data.get("manifest_sha256")},
        "generation": {"task_version": results.get("g2m", {}).get("task_version"), "gen_kwargs": cfg.get("gen_kwargs"),
                       "chat_template_sha": results.get("chat_template_sha"), "max_gen_toks": budgets},
        "date": datetime.fromtimestamp(float(date), timezone.utc).isoformat() if isinstance(date, (int, float)) else date,
    }


def write_submission(run_dir: str | Path, out: str | Path | None = None, allow_partial: bool = False) -> Path:
    run = load_run(run_dir)
    known = zero_shot_truth()
    by_id = {s.id: s.output for s in run.samples}
    missing = [i for i in known if i not in by_id]
    if missing and not allow_partial:
        raise Rejected(f"the run covers {len(known) - len(missing):,} of the {len(known):,} zero_shot ids "
                       f"(first missing: {missing[0]}); evaluate all of g2m with the release, or pass --allow-partial")
    records = [{"id": i, "output": by_id[i]} for i in known if i in by_id]
    doc = {"format": FORMAT, "metadata": metadata_from_run(run.results, run.model), "records": records}
    raw = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    out = Path(out) if out else run.folder / "submission.json.gz"
    data = gzip.compress(raw, mtime=0) if out.name.endswith(".gz") else raw
    if len(data) > MAX_FILE_BYTES:
        raise Rejected(f"the submission would be {len(data) / 2**20:.0f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit")
    atomic_write_bytes(out, data)
    return out


def _read_limited(path: Path) -> bytes:
    if not path.is_file():
        raise Rejected(f"{path} is not a file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise Rejected(f"file is {size / 2**20:.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit")
    raw = path.read_bytes()
    if raw[:4] == b"PK\x03\x04" or raw[257:262] == b"ustar" or raw[:3] == b"BZh" or raw[:6] == b"\xfd7zXZ\x00":
        raise Rejected("archives are not accepted: submit one .json or .json.gz file")
    if raw[:2] == b"\x1f\x8b":
        out = io.BytesIO()
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                while chunk := gz.read(1 << 20):
                    out.write(chunk)
                    if out.tell() > MAX_JSON_BYTES:
                        raise Rejected(f"decompresses to over {MAX_JSON_BYTES >> 20} MiB")
        except (OSError, EOFError) as e:
            raise Rejected(f"not a valid gzip file ({e})") from None
        raw = out.getvalue()
    return raw


def _no_duplicate_keys(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Rejected(f"a JSON object repeats the key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def _check_metadata(meta: object) -> dict:
    if not isinstance(meta, dict):
        raise Rejected("metadata must be an object")
    dataset = meta.get("dataset")
    if isinstance(dataset, dict) and not isinstance(dataset.get("revision"), str):
        raise Rejected(f"dataset revision is {dataset.get('revision')!r}: outputs must come from {HUB_REPO_ID}@"
                       f"{DATASET_REVISION} or a full local build of it (not a scaled one)")
    for section, keys in (("model", ("id", "backend")), ("dataset", ("revision",)), ("versions", ("lm_eval",))):
        part = meta.get(section)
        if not isinstance(part, dict):
            raise Rejected(f"metadata.{section} must be an object")
        for k in keys:
            if not isinstance(part.get(k), str) or not part[k] or len(part[k]) > MAX_META_CHARS:
                raise Rejected(f"metadata.{section}.{k} must be a non-empty string of at most {MAX_META_CHARS} characters")
    if len(json.dumps(meta)) > 64 * MAX_META_CHARS:
        raise Rejected("metadata is too large")
    revision = meta["dataset"]["revision"]
    if revision != DATASET_REVISION:
        raise Rejected(f"dataset revision {revision!r} does not match the leaderboard's {DATASET_REVISION!r}")
    return meta


def validate(path: str | os.PathLike) -> Validation:
    """Check a submission file and re-score it; a rejection is a result (ok=False, reason), never an exception."""
    path = Path(path)
    try:
        raw = _read_limited(path)
        sha = hashlib.sha256(raw).hexdigest()
        try:
            doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
        except Rejected:
            raise
        except UnicodeDecodeError:
            raise Rejected("not UTF-8 text") from None
        except RecursionError:
            raise Rejected("JSON nested too deeply") from None
        except ValueError as e:
            raise Rejected(f"malformed JSON ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise Rejected(f"not a G2M submission (expected an object with format {FORMAT!r})")
        meta = _check_metadata(doc.get("metadata"))
        warnings = [f"ignored top-level field {k!r}" for k in sorted(doc) if k not in ("format", "metadata", "records")]
        return _rescore(doc.get("records"), meta, sha, warnings)
    except Rejected as e:
        return Validation(False, str(e))


def _rescore(records: object, meta: dict, sha: str, warnings: list[str]) -> Validation:
    truth = zero_shot_truth()
    if not isinstance(records, list):
        raise Rejected("records must be a list")
    if len(records) > 2 * len(truth):
        raise Rejected(f"{len(records):,} records; the release has {len(truth):,} ids")
    seen: set[str] = set()
    extra_fields: set[str] = set()
    with_extra = 0
    for k, rec in enumerate(records):
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or not isinstance(rec.get("output"), str):
            raise Rejected(f"record {k} must be an object with a string id and a string output")
        if rec["id"] not in truth:
            raise Rejected(f"record {k}: unknown id {rec['id'][:80]!r}")
        if rec["id"] in seen:
            raise Rejected(f"record {k}: id {rec['id']} appears more than once")
        if len(rec["output"]) > MAX_OUTPUT_CHARS:
            raise Rejected(f"record {k} ({rec['id']}): output of {len(rec['output']):,} characters, over {MAX_OUTPUT_CHARS:,}")
        seen.add(rec["id"])
        extra = set(rec) - {"id", "output"}
        if extra:
            with_extra += 1
            extra_fields |= {str(x)[:40] for x in extra}
    if with_extra:
        warnings.append(f"ignored field(s) {', '.join(sorted(extra_fields)[:10])} in {with_extra:,} records")
    missing = [i for i in truth if i not in seen]
    if missing:
        raise Rejected(f"{len(missing):,} of {len(truth):,} ids are missing (first: {missing[0]})")
    scored = [score_output(r["id"], r["output"], truth_matrix(truth[r["id"]]), truth[r["id"]].num_colors)
              for r in records]
    tasks = by_task(scored)
    by_n: dict[int, list] = {}
    for r in scored:
        by_n.setdefault(r.grid_size, []).append(r)
    scores = {"overall": summarise(scored),
              "by_grid_size": {str(n): summarise(v) for n, v in sorted(by_n.items())},
              "by_task": {f"n{n:02d}_c{c}": summarise(v) for (n, c), v in tasks.items()}}
    return Validation(True, None, sha, meta, scores, warnings, scored)
