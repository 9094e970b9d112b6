"""``g2m audit``: replay a keyed sample of one submission from the weights it names, and sign what was found.

One way through: the submission is validated (a file the board refuses is not audited), its outputs hash keys the
sample (``sample``), its recorded settings are carried into the replay or named as ones it cannot honour
(``honour``), the sampled rows are replayed through ``g2m eval`` (``replay``), each answer is held against the
submitted one and the sample decides the tier (``verdict``), and the record is signed and written, filed under the
submission's content hash (``audit_records``). Replays live in ``AUDITS/.work/<content sha256>/``, so an
interrupted audit resumes where it stopped (``g2m eval``'s answer cache); a record is written only when the audit is
whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import NamedTuple

from audit import honour, probe_replay, replay, sample, verdict
from audit import records as audit_records
from audit.key import signing_key
from dataset_builder import __version__
from g2m_base.bounded_json import read_bytes
from g2m_base.errors import UsageError
from g2m_base.untrusted import term
from harness_tasks import BASELINES
from scoring.rescoring.rescore import truth_matrix, zero_shot_truth
from submission.submission import Validation, metadata_from_run, validate

#: How much of a differing replayed answer a record keeps (a reader compares it with the submitted one).
SHOWN_CHARS = 2000
WORK = ".work"


class Audited(NamedTuple):
    path: Path
    tier: str
    reason: str


def audit(submission: str | os.PathLike, access: replay.Access, audits: str | os.PathLike, data: str | None = None,
          k: int = sample.DEFAULT_K, progress: bool = True, v: Validation | None = None,
          probes: probe_replay.ProbeAccess | None = None) -> Audited:
    """Audit one submission file and write its signed record in ``audits``: its answers, and its probe sections'
    predictions where it sent any (``probes``: where to replay them; default the checkpoint ``access`` loads and
    ``data``)."""
    submission, audits = Path(submission), Path(audits)
    v = v or validate(submission)
    if not v.ok:
        raise UsageError(f"{submission.name} is refused by validate, so there is nothing to audit: {v.reason}")
    meta = v.metadata
    model = meta["model"]
    if model.get("backend") in BASELINES or model["id"] in BASELINES:
        raise UsageError(f"{submission.name} names a built-in baseline ({model['id']}): the board computes those "
                         "itself")
    key = signing_key()
    started = time.time()
    if model.get("open_weights") is False:  # nothing public to replay: the row stays the submitter's word
        why = "an API model: its weights are not public, so its outputs cannot be replayed"
        return _write(audits, key, v, submission, {"k": 0, "offered": 0, "ids": []}, {}, [],
                      verdict.Verdict(verdict.SELF_REPORTED, why, 0, 0, 0), started)
    plan = honour.plan(meta, access.named(meta))
    access = plan.access
    offered = _offered(v, meta, data)
    ids = sample.draw(sample.sample_key(key, v.outputs_sha256), offered, k)
    outputs = _outputs(submission)
    truth = zero_shot_truth()
    cells = {(truth[i].grid_size, truth[i].num_colors) for i in ids}
    work = audits / WORK / v.content_sha256
    folder = replay.sample_release(data, ids, work / "data", meta["dataset"]["content_sha256"])
    replayed, rmeta = _replay(plan, meta, folder, work / "runs", cells, progress)
    items = [verdict.compare(i, outputs[i], replayed.get(i), truth_matrix(truth[i]), truth[i].num_colors) for i in ids]
    found = verdict.decide(items)
    sections = probe_replay.sections_of(submission)
    where = probe_replay.resolve(probes, access, meta, data)
    probed, probes_found = probe_replay.audit_probes(sections, v.outputs_sha256, key, where, k, progress)
    found = probe_replay.combined(found, probes_found, probed)
    found = _honoured(found, plan, meta, rmeta, cells)
    shown = [{**i._asdict(), "submitted_sha256": _sha(outputs[i.id]), "replayed_sha256": _sha(replayed.get(i.id)),
              **({"replayed": replayed[i.id][:SHOWN_CHARS]} if i.outcome == verdict.DIFFERS else {})} for i in items]
    drawn = {"k": len(ids), "offered": len(offered), "ids": ids,
             "rows_sha256": replay.content_sha256(str(folder))}
    rmeta["settings"] = plan.shown()
    return _write(audits, key, v, submission, drawn, rmeta, shown, found, started, access, probed)


def _honoured(found: verdict.Verdict, plan: honour.Plan, meta: dict, rmeta: dict, cells: set) -> verdict.Verdict:
    """The sample's verdict, held to what the replay honoured: a setting it could not run as the submission did
    leaves the row self-reported whatever the sample showed; one a running server may or may not hold stops a
    refutation (the replay's disagreement may be the setting's), never a reproduction."""
    unmet = [*plan.unmet, *(u for u in replay.unhonoured(meta, rmeta, replay.tasks_of(cells)) if u not in plan.unmet)]
    model = meta["model"]["id"]
    if rmeta["model"]["id"] != model:
        unmet.insert(0, f"the replay ran {rmeta['model']['id']!r}, not the model the submission names ({model!r})")
    if unmet:
        return found._replace(tier=verdict.SELF_REPORTED, reason="the replay could not honour the submission's "
                              f"settings: {'; '.join(unmet)}; what the sample showed: {found.reason}")
    if plan.unconfirmed and found.tier == verdict.REFUTED:
        return found._replace(tier=verdict.SELF_REPORTED, reason="the replay disagreed, but it cannot refute: the "
                              f"server it ran on may not hold the submission's {'; '.join(plan.unconfirmed)}; replay "
                              f"it with --serve or in-process; what the sample showed: {found.reason}")
    return found


def _offered(v: Validation, meta: dict, data: str | None) -> list[tuple[str, int, int]]:
    """(id, N, C) of every row the data holds: it must be the data the submission's outputs were produced on."""
    want = (meta.get("dataset") or {}).get("content_sha256")
    have = replay.content_sha256(data)
    if want != have:
        where = f"--data {data}" if data else "the release"
        raise UsageError(f"the submission's outputs were produced on data hashing to {str(want)[:12]}, and "
                         f"{where} hashes to {have[:12]}: replay it on the same data (--data DIR)")
    truth = zero_shot_truth()
    return [(i, truth[i].grid_size, truth[i].num_colors) for i in replay.rows(data)["id"] if i in truth]


def _outputs(path: Path) -> dict[str, str]:
    """The submitted output of every id (the file has just passed ``validate``: its records are well formed)."""
    return {r["id"]: r["output"] for r in json.loads(read_bytes(path))["records"]}


def _replay(plan: honour.Plan, meta: dict, folder: Path, runs: Path, cells: set, progress: bool) -> tuple:
    from harness_tasks import CHAT, EvalSpec, run_eval
    from scoring.rescoring.load import load_run

    access = plan.access
    gen_kwargs, reasoning = replay.generation(meta, cells)
    spec = EvalSpec(model=access.model or CHAT, model_args=access.model_args, tasks=replay.tasks_of(cells),
                    data=str(folder), output=str(runs), gen_kwargs=gen_kwargs, reasoning_budget=reasoning,
                    base_url=access.base_url, serve=access.serve, serve_args=access.serve_args, vllm=access.vllm,
                    device=access.device, batch_size=access.batch_size, concurrency=access.concurrency,
                    progress=progress, apply_chat_template=plan.chat_template, harness=plan.harness)
    run = load_run(run_eval(spec)["output_dir"], allow_partial=True)
    answers = {s.id: s.output for s in run.samples if s.protocol == "g2m" and not s.request_failed}
    rmeta = metadata_from_run(run.results, run.model)
    rmeta["batch_size"] = access.batch_size
    rmeta["dtype"] = replay.dtype(access.model_args, access.serve_args)
    rmeta["model"]["revision"] = rmeta["model"]["revision"] or replay.serve_flag(access.serve_args, "--revision")
    return answers, rmeta


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _hardware() -> dict:
    """Where the replay ran (the client's machine; a server's own is what it reported, in ``replay.server``)."""
    out = {"machine": platform.machine(), "system": platform.system(), "cpus": os.cpu_count(),
           "python": platform.python_version()}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        out["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return out


def _write(audits: Path, key: bytes, v: Validation, submission: Path, drawn: dict, rmeta: dict, items: list,
           found: verdict.Verdict, started: float, access: replay.Access | None = None,
           probed: list | None = None) -> Audited:
    model = v.metadata["model"]
    doc = {"submission": {"file": submission.name, "sha256": v.sha256, "outputs_sha256": v.outputs_sha256,
                          "content_sha256": v.content_sha256, "params": model.get("params"),
                          "model": model["id"], "revision": model.get("revision"),
                          "data_sha256": (v.metadata.get("dataset") or {}).get("content_sha256")},
           "sample": {**drawn, "how": "HMAC-SHA256 of each id under a key derived from the board's key and the "
                                       "outputs hash, lowest first within each (N, C)"},
           "replay": {**rmeta, "access": None if access is None else access.shown(),
                      "hardware": _hardware(), "audited_with": __version__,
                      "started": _iso(started), "finished": _iso(time.time())},
           "items": items,
           **({"probes": probed} if probed else {}),
           "verdict": {**found._asdict(), "tolerance": verdict.tolerance(len(items)), "k": len(items)}}
    path = audit_records.write(audits, key, doc)
    return Audited(path, found.tier, found.reason)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def said(done: Audited) -> str:
    return f"{done.tier.upper()}: {term(done.reason, 1000)}\naudit record: {term(done.path)}"


def audit_all(submissions: str | os.PathLike, access: replay.Access, audits: str | os.PathLike | None = None,
              data: str | None = None, k: int = sample.DEFAULT_K, again: bool = False, progress: bool = True,
              probes: probe_replay.ProbeAccess | None = None):
    """Audit every submission in the folder that has no verified record yet, one model at a time; yields
    ``(file name, Audited or None, why it was skipped or failed)``. Resumable: a finished audit is a record, an
    unfinished one resumes from its replay's answer cache, and ``again`` audits those with a record too."""
    from audit.records import AUDITS_DIR, read_folder

    submissions = Path(submissions)
    if not submissions.is_dir():
        raise UsageError(f"{submissions} is not a folder of submissions")
    audits = Path(audits) if audits is not None else submissions / AUDITS_DIR
    done, _ = read_folder(audits, signing_key())
    for f in sorted(p for p in submissions.iterdir() if p.name.endswith((".json", ".json.gz"))):
        v = validate(f)
        if not v.ok:
            yield f.name, None, f"refused by validate: {v.reason}"
        elif v.content_sha256 in done and not again:
            yield f.name, None, f"audited already: {done[v.content_sha256]['verdict']['tier']}"
        else:
            try:
                yield f.name, audit(f, access, audits, data, k, progress, v, probes), None
            except UsageError as e:
                yield f.name, None, f"not audited: {e}"
