"""Leaderboard submissions: one JSON file (optionally gzip'd) with metadata and the raw output for every
``zero_shot`` id. ``g2m submit`` writes it from a run; ``validate`` checks it and re-scores every output.

A submission is untrusted input. It is read with hard limits (``safe_json``), parsed as data only (JSON; no pickle,
no archives, no paths followed), its metadata must be plain text and numbers (``g2m_base.untrusted``), it must
hold every id of the release exactly once, and every output is re-parsed and re-scored; any score written in the file
is ignored. Where its outputs came from is stated by the content hash of the data the run read: only a run whose hash
equals the release's (``spec.RELEASE_CONTENT_SHA256``) is "the release" and ranked; any other build is accepted and
shown apart, as a local build.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from dataset_builder.grids.spec import RELEASE_CONTENT_SHA256, cell_key
from g2m_base.bounded_json import MAX_FILE_BYTES, Rejected, check_structure, check_utf8, read_bytes, read_object
from g2m_base.errors import UsageError
from g2m_base.files import atomic_write_bytes, output_file
from g2m_base.untrusted import MAX_STRING, check_value, term
from scoring.rescoring.load import load_run
from scoring.rescoring.rescore import by_task, summarise, zero_shot_truth
from scoring.runs import identity
from scoring.runs.layout import run_files
from submission import model_info, probe_section
from submission.coverage import LOCAL, RELEASE, data_of, missing_tasks, scaled_count
from submission.model_info import id_problem, identity_problem
from submission.records import MAX_OUTPUT_CHARS, Records, record
from submission.run_metadata import metadata_from_run, public, server_facts

FORMAT = "g2m-submission/1"
#: How to ask again for the answers that failed, in the harness the run came from.
RETRY_ADVICE = {"g2m": "retry them (with g2m eval, running the same command again retries exactly those)",
                "vlmevalkit": "retry them (run VLMEvalKit's run.py again with the same arguments and --reuse: it asks "
                              "again for every prediction that failed)"}
COVER_ADVICE = ("export every row (g2m export vlmevalkit, whose default --tasks g2m is the whole release) and run "
                "VLMEvalKit on it")

__all__ = ["FORMAT", "LOCAL", "MAX_FILE_BYTES", "MAX_OUTPUT_CHARS", "RELEASE", "Rejected", "Validation",
           "Submitted", "check_metadata", "claims_sha256", "metadata_from_run", "server_facts", "submit_run",
           "validate", "write_submission"]


@dataclass
class Validation:
    ok: bool
    reason: str | None = None
    sha256: str | None = None
    metadata: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    scored: list = field(default_factory=list)  # per-output re-scores, for figures
    data: str | None = None  # RELEASE or LOCAL: which data the outputs were produced on
    by_protocol: dict = field(default_factory=dict)  # per-output re-scores of every protocol (g2m, paper, ...)
    probes: list = field(default_factory=list)  # re-scored probe sections (probe_section.rescore), if any
    outputs_sha256: str | None = None  # the hash of what was submitted, not of the file: every (id, output), the data
    # they were produced on and the probe sections; the same for a reformatted copy or another model name
    texts: dict = field(default_factory=dict)  # id -> (output, finish reason) of ``records``: what the viewer shows

    @property
    def content_sha256(self) -> str | None:
        """The hash of everything the submission says: its outputs and every claim of its metadata."""
        return None if self.outputs_sha256 is None else claims_sha256(self.outputs_sha256, self.metadata)


def claims_sha256(outputs_sha256: str, metadata: dict) -> str:
    """What an audit record vouches for: these outputs under exactly these claims (the model, its revision and size,
    every setting), whatever the file's layout or compression. The same outputs sent again claiming another revision
    or size hash otherwise, so they are not covered by a record made for the first file."""
    claims = json.dumps([outputs_sha256, metadata], sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(claims.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Submitted:
    """What ``submit_run`` wrote: the file, the run it read (``Run.which``), and, for a partial submission, what it
    lacks (one line per task or problem; empty when it is complete)."""

    path: Path
    run: str
    missing: tuple[str, ...] = ()
    model: str = ""  # the model id it names

    @property
    def partial(self) -> bool:
        return bool(self.missing)


def write_submission(run_dir: str | Path, out: str | Path | None = None, allow_partial: bool = False,
                     model_info: dict | None = None, run: str | None = None,
                     probes: str | Path | None = None) -> Path:
    """``submit_run``'s file."""
    return submit_run(run_dir, out, allow_partial, model_info, run, probes).path


def submit_run(run_dir: str | Path, out: str | Path | None = None, allow_partial: bool = False,
               model_info: dict | None = None, run_name: str | None = None,
               probes: str | Path | None = None) -> Submitted:
    """The run's outputs as a submission: ``records`` from its g2m tasks and, when it ran them, ``paper_records``
    from its g2m_paper tasks (the paper's protocol, with the authors' budget). ``model_info`` (parameters, open
    weights, release date, link: ``model_info.check``) goes into ``metadata.model``. ``run_name`` chooses the run of
    the folder (``load_run``); ``probes``: a folder of the same model's probe and sweep results, added as
    re-scorable ``probes`` sections (``probe_section``). With ``allow_partial``, what the file lacks is returned in
    ``Submitted.missing``."""
    run = load_run(run_dir, allow_partial=allow_partial, run=run_name)
    known = zero_shot_truth()
    doc = {"format": FORMAT, "metadata": public(metadata_from_run(run.results, run.model))}  # a public file
    doc["metadata"]["model"].update(model_info or {})  # "id": the submitter's --model-id, else the run's own name
    problem = id_problem(doc["metadata"]["model"]["id"])
    if problem:
        raise Rejected(f"the model is called {term(str(doc['metadata']['model']['id']), 120)!r}, not a Hub model id "
                       f"({problem}); give the checkpoint's id on the Hub with --model-id ORG/NAME")
    refused = identity_problem(doc["metadata"]["model"])
    if refused is not None:
        raise Rejected(f"{refused}: submit a model's own run, under its id on the Hub (--model-id ORG/NAME)")
    config = identity.of_run(run).config_sha256  # the model's config.json, where this machine can read it
    if config:
        doc["metadata"]["model"][identity.CONFIG_HASH_KEY] = config
    if run.cut:
        first, chars = run.cut[0]
        raise Rejected(f"{len(run.cut):,} predictions in {run.results_path.name} stop at exactly {chars:,} characters, "
                       f"the limit of an .xlsx cell: the spreadsheet cut them, not the model (first: {first}); submit "
                       "the .tsv (rerun VLMEvalKit with PRED_FORMAT=tsv), which keeps every character")
    failed = [s.id for s in run.samples if s.request_failed]
    if failed and not allow_partial:
        raise Rejected(f"{len(failed):,} of the run's requests failed and have no answer (first: {failed[0]}); "
                       f"{RETRY_ADVICE.get(run.harness, RETRY_ADVICE['g2m'])}, or pass --allow-partial to submit "
                       "without them")
    lacking = [f"the run: {line}" for line in run.incomplete]
    if failed:
        lacking.append(f"{len(failed):,} failed request(s) without an answer (first: {failed[0]})")
    for key, protocol in (("records", "g2m"), ("paper_records", "paper")):
        kept = {s.id: s for s in run.samples if s.protocol == protocol and not s.request_failed}
        by_id = {i: s.output for i, s in kept.items()}
        if not by_id and protocol == "paper":
            continue
        missing = [i for i in known if i not in by_id]
        if missing and doc["metadata"]["dataset"].get("content_sha256") != RELEASE_CONTENT_SHA256 \
                and scaled_count(by_id) and not run.incomplete:
            missing = []  # every row of a scaled build: complete, shown as a local build
        if missing and not allow_partial:
            tag = "g2m" if protocol == "g2m" else "g2m_paper"
            how = (COVER_ADVICE if run.harness == "vlmevalkit"
                   else f"evaluate all of {tag} with the release")
            raise Rejected(f"the run's {tag} tasks cover {len(known) - len(missing):,} of the {len(known):,} zero_shot "
                           f"ids (first missing: {missing[0]}); {how}, or pass --allow-partial")
        if missing:
            lacking += missing_tasks(known, set(by_id), protocol)
        # why generation stopped travels with the text: a "length" stop is a truncation however complete the text
        # looks, and validate, the board and the report must count it alike
        doc[key] = [record(i, kept[i]) for i in known if i in kept]
    if probes is not None:
        doc["probes"] = probe_section.collect(probes, run, doc["metadata"]["model"]["id"])
    raw = json.dumps(doc).encode("ascii")  # every non-ASCII character escaped: any output round-trips
    own = (run.results_path, *run_files(run.folder))
    out = output_file(out if out is not None else run.folder / "submission.json.gz", inputs=own)
    # level 6, zlib's default: level 9's longer match search costs several times the CPU on these repetitive outputs
    # and saves a few per cent of the size
    data = gzip.compress(raw, compresslevel=6, mtime=0) if out.name.endswith(".gz") else raw
    if len(data) > MAX_FILE_BYTES:
        raise Rejected(f"the submission would be {len(data) / 2**20:.0f} MiB, over the {MAX_FILE_BYTES >> 20} MiB "
                       f"limit")
    atomic_write_bytes(out, data)
    return Submitted(out, run.which(), tuple(lacking), doc["metadata"]["model"]["id"])


def _check_format(value: object) -> None:
    if value != FORMAT:
        raise Rejected(f"not a G2M submission (expected an object with format {FORMAT!r})")


def check_metadata(meta: object) -> dict:
    if not isinstance(meta, dict):
        raise Rejected("metadata must be an object")
    try:
        check_value(meta, "metadata")
    except UsageError as e:
        raise Rejected(str(e)) from None
    for section, keys in (("model", ("id", "backend")), ("dataset", ())):
        part = meta.get(section)
        if not isinstance(part, dict):
            raise Rejected(f"metadata.{section} must be an object")
        for k in keys:
            if not isinstance(part.get(k), str) or not part[k].strip():
                raise Rejected(f"metadata.{section}.{k} must be a non-empty string of at most {MAX_STRING} characters")
    try:
        model_info.check(meta["model"])
    except ValueError as e:
        raise Rejected(f"metadata.{e}") from None
    refused = identity_problem(meta["model"])
    if refused is not None:  # the board computes the baselines: a file under a baseline's name is never one of them
        raise Rejected(refused)
    return meta


def validate(path: str | os.PathLike) -> Validation:
    """Check a submission file and re-score it; a rejection is a result (ok=False, reason), never an exception.

    ``records`` (outputs of the g2m tasks) are scored under G2M's protocol and, for comparison, under the paper's
    scoring rule; optional ``paper_records`` (outputs of the g2m_paper tasks, the authors' budget) under the paper's.
    """
    try:
        raw = read_bytes(Path(path))
        sha = hashlib.sha256(raw).hexdigest()
        check_utf8(raw)
        check_structure(raw)
        records = Records("records", (("g2m", "g2m"), ("paper_rule_on_g2m", "paper")))
        paper = Records("paper_records", (("paper", "paper"),))
        doc = read_object(raw, {"records": records, "paper_records": paper},
                          {"format": _check_format, "metadata": check_metadata})
        _check_format(doc.get("format"))
        if "records" not in doc:
            raise Rejected("records must be a list")
        meta = check_metadata(doc.get("metadata"))
        warnings = [f"ignored top-level field {term(k, 40)!r}" for k in sorted(doc)
                    if k not in ("format", "metadata", "records", "paper_records", "probes")]
        for r in (records, paper):
            if r.with_extra:
                warnings.append(f"ignored field(s) {', '.join(sorted(r.extra_fields)[:10])} in {r.with_extra:,} "
                                f"{r.key}")
        kind, note = data_of(meta)
        for r in (records, paper) if "paper_records" in doc else (records,):
            scaled = r.check_complete(kind)
            if scaled:
                warnings.append(f"{r.key}: the first {scaled} of every (N, C)'s grids, as a build at a scale holds "
                                "them: a complete run of a scaled build")
        if note:
            warnings.append(note)
        scores = _scores(records.scored["g2m"])
        scores["protocols"] = {name: summarise(rows).as_dict()
                               for name, rows in (*records.scored.items(), *paper.scored.items())
                               if rows}
        by_protocol = {name: rows for name, rows in (*records.scored.items(), *paper.scored.items()) if rows}
        probes = probe_section.rescore(doc["probes"], meta["model"]["id"], meta["model"]) if "probes" in doc else []
        if probes:
            scores["probes"] = probes
        outputs = hashlib.sha256(b"".join((
            records.digest(), paper.digest() if "paper_records" in doc else b"",
            json.dumps([meta.get("dataset"), doc.get("probes")], sort_keys=True).encode()))).hexdigest()
        return Validation(True, None, sha, meta, scores, warnings, records.scored["g2m"], kind, by_protocol, probes,
                          outputs, records.texts)
    except Rejected as e:
        return Validation(False, str(e))


def _scores(scored: list) -> dict:
    by_n: dict[int, list] = {}
    for r in scored:
        by_n.setdefault(r.grid_size, []).append(r)
    return {"overall": summarise(scored).as_dict(),
            "by_grid_size": {str(n): summarise(v).as_dict() for n, v in sorted(by_n.items())},
            "by_task": {cell_key(n, c): summarise(v).as_dict() for (n, c), v in by_task(scored).items()}}
