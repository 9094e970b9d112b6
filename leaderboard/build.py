"""``g2m leaderboard build``: a static site of validated, re-scored submissions (servable as it is, e.g. as a Hugging
Face static Space), plus a CSV and a markdown table.

Rows: every submission that passes ``validate`` (scores recomputed here, never read from the file), with a copy of
its file (the raw outputs) and a re-scored model page; the two reference models computed offline from the generator
(the oracle's and the random model's real outputs), unless someone submitted them again; and, in their own table,
the paper's reported numbers, never ranked. Rejected files are listed with their reasons.
"""

from __future__ import annotations

import json
import shutil
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from audit import records as audit_records
from audit.records import AUDITS_DIR
from g2m_base.errors import UsageError
from g2m_base.files import ensure_dir, folder_lock, remove_unwritten
from g2m_base.untrusted import skeleton, term
from leaderboard import baseline_store
from leaderboard.cache import CACHE_DIR, Cache, file_digest, signing_key
from leaderboard.hub_entries import read_hub_board
from leaderboard.index_page import INDEX_FILES, VIEWS, write_index
from leaderboard.model_page import write_model_page
from leaderboard.rows import BASELINES, baseline_rows, cached_form, slug, summaries, well_formed
from scoring.rescoring import gap
from submission.model_info import baseline_look_alike
from submission.submission import Validation, claims_sha256, validate

LOCK_NAME = "build.lock"  # beside the cache entries, never pruned with them (not a .json entry)

REPORTED = Path(__file__).with_name("reported.json")


class _Outcome(NamedTuple):
    """What scoring one file gave: its validation (``accepted``, and the per-output scores when it was scored in this
    build), or why it was rejected, and whether that reason may be cached (an internal error may be a bug: never)."""

    accepted: dict | None
    validation: Validation | None
    reason: str | None = None
    cacheable: bool = True


@dataclass(frozen=True)
class SiteBuild:
    """What a build of the site did: rows on the board (baselines included), accepted submissions, the files refused
    (each ``{"file", "reason"}``), where it wrote, the Hub's listing (``--hub``), where each baseline's outputs came
    from, the audit records read and ignored, the rows without one, and files scored now against rows from the
    cache."""

    rows: int
    submissions: int
    rejected: list[dict]
    output_dir: Path
    hub: object
    baselines: dict[str, str]
    audits: int
    ignored_audits: list[str]
    unaudited: object
    scored: int
    cached: int


def build_site(submissions: str | Path, out: str | Path, progress: bool = True, hub: bool = False,
               hub_endpoint: str | None = None, audits: str | Path | None = None) -> SiteBuild:
    """Build the site in ``out`` from the folder ``submissions`` (see ``_build_site``), holding a lock on ``out``: two
    builds into one folder would remove each other's pages and cache entries, so a second one is refused at once.
    ``hub``: also list what the Hub's leaderboard of the release reports (``hub_board``; at ``hub_endpoint``, else
    ``HF_ENDPOINT``), apart and unranked. ``audits``: the folder of audit records (``g2m audit``; default
    ``SUBMISSIONS/audits``): each row's tier comes from the record of its outputs, when its signature verifies."""
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise UsageError(f"{submissions} is not a folder of submissions")
    busy = f"another g2m leaderboard build is writing to {out}; wait for it to finish"
    with folder_lock(out / CACHE_DIR, LOCK_NAME, busy.replace("{", "{{").replace("}", "}}")):
        return _build_site(submissions, out, progress, hub or hub_endpoint is not None, hub_endpoint,
                           Path(audits) if audits is not None else submissions / AUDITS_DIR)


def _build_site(submissions: Path, out: Path, progress: bool, hub: bool, hub_endpoint: str | None,
                audits: Path) -> SiteBuild:
    """Validate and re-score every submission, then write the site. A file that is refused, breaks a page, repeats
    another file's outputs or claims a built-in baseline's name is listed as rejected with its reason; it never stops
    the rest of the site. Each submission is rendered as soon as it is scored and only its summary is kept, so
    memory does not grow with the number of submissions. What a file gave is cached in ``OUT/.g2m-cache``
    (``leaderboard.cache``): building into the same folder again scores only new or changed files."""
    ensure_dir(out / "models")  # a bad output folder fails before any submission is scored
    ensure_dir(out / "raw")
    files = sorted(p for p in submissions.iterdir() if p.name.endswith((".json", ".json.gz")))
    cache = Cache(out, well_formed)
    records, ignored = audit_records.read_folder(audits, signing_key())
    for name in ignored:
        print(f"g2m leaderboard: ignored the audit record {term(name)}: it is not one this board signed "
              "(or of an older format: audit the submission again)",
              file=sys.stderr)
    board = _Board(submissions, out, cache, records)
    for f in _progress(files) if progress and files else files:
        board.admit(f, board.outcome(f))
    built, rejected, counts = board.built, board.rejected, board.counts
    baselines: dict[str, str] = {}
    built += _baselines(board.cache, submissions, out, baselines)
    reported = json.loads(REPORTED.read_text())
    hub_rows = read_hub_board(built, hub_endpoint) if hub else None
    write_index(out, built, reported, rejected, hub_rows)
    remove_unwritten(out, {*INDEX_FILES, *board.cache.files, *(r["page"] for r in built),
                            *(r["raw"] for r in built if r.get("raw"))}, ("models", "raw"))
    board.cache.prune()
    return SiteBuild(rows=len(built), submissions=sum(r["kind"] == "submission" for r in built), rejected=rejected,
                     output_dir=out, hub=hub_rows, baselines=baselines, audits=len(records), ignored_audits=ignored,
                     unaudited=audit_records.unaudited(built), scored=counts["scored"], cached=counts["cached"])


def _progress(files: list[Path]):
    """``files`` with a progress bar; tqdm is imported only to show one (``tqdm.auto`` brings asyncio, ssl and
    importlib.metadata: 40 ms of a quiet build)."""
    from tqdm.auto import tqdm

    return tqdm(files, desc="g2m leaderboard", unit="file")


class _Known(NamedTuple):
    """What this build knows of one file before admitting it: its outcome, scored now or read from the cache."""

    source: str | None  # its cache source, ``file:<sha256>``; None: not a regular file, never cached
    outcome: _Outcome
    cached: bool  # the outcome was read from the cache (else the file was scored in this build)
    row: dict | None = None  # its rendered row from the cache, when it was drawn under this very file name


class _Board:
    """The submissions' rows as the files are admitted, one at a time: ``outcome`` says what a file gave (scored, or
    from the cache), ``admit`` decides whether it is shown (a baseline's name or a copy of another file is not) and
    draws its page."""

    def __init__(self, submissions: Path, out: Path, cache: Cache, records: dict[str, dict]) -> None:
        self.submissions, self.out, self.cache, self.records = submissions, out, cache, records
        self.built: list[dict] = []
        self.rejected: list[dict] = []
        self.seen: dict[str, tuple[str, str]] = {}  # outputs' sha256 -> (the first file shown with them, its sha256)
        self.names: dict[str, str] = {}  # what a shown model id looks like -> the id as shown
        self.counts = {"scored": 0, "cached": 0}

    def score(self, f: Path) -> _Outcome:
        self.counts["scored"] += 1
        try:
            v = validate(f)
        except Exception as e:  # noqa: BLE001 - a bug in scoring one file must not stop the site; it is shown
            _complain(f.name, "could not be scored")
            return _Outcome(None, None, f"could not be scored (internal error: {type(e).__name__})", cacheable=False)
        if not v.ok:
            return _Outcome(None, None, v.reason)
        return _Outcome({"kind": "submission", "name": v.metadata["model"]["id"], "sha256": v.sha256,
                         "outputs_sha256": v.outputs_sha256, "meta": v.metadata, "warnings": v.warnings,
                         "data": v.data}, v)

    def outcome(self, f: Path) -> _Known:
        """The file's cached outcome when the cache has one, else its score (a rejection cached when it may be)."""
        digest = file_digest(f)
        source = f"file:{digest}" if digest else None
        entry = self.cache.get(source) if source else None
        if entry is None:
            outcome = self.score(f)
            if outcome.accepted is None and outcome.cacheable and source:
                self.cache.put(source, {"rejected": outcome.reason})
            return _Known(source, outcome, cached=False)
        if "rejected" in entry:
            return _Known(source, _Outcome(None, None, entry["rejected"]), cached=True)
        row = entry["row"]
        if row is not None and row["file"] != f.name:
            row = None  # the same bytes under another name: its page names the file, so it is drawn again
        return _Known(source, _Outcome(entry["accepted"], None), cached=True, row=row)

    def admit(self, f: Path, known: _Known) -> None:
        """Show the file's row, or list it as rejected with the reason."""
        row, reason = self._row(f, known)
        if row is None:
            self.rejected.append({"file": f.name, "reason": reason})
        else:
            self.built.append(row)

    def _refusal(self, accepted: dict) -> str | None:
        """Why an accepted file is not shown: a built-in baseline's name (or a look-alike of one), a look-alike of a
        model id shown already, or the same outputs as a file shown already."""
        name = accepted["name"]
        baseline = baseline_look_alike(name)  # in any spelling a reader could not tell apart from it
        if baseline is not None:
            return baseline
        shown = self.names.get(skeleton(name))
        if shown is not None and shown != name:  # two ids a reader could not tell apart, for two models
            return (f"the model id {ascii(name)} looks like {ascii(shown)}, which the board already shows, but is "
                    "spelled differently (other letters drawn alike, case, or invisible characters); send it under "
                    "the same id")
        first = self.seen.get(accepted["outputs_sha256"])
        if first is not None:  # the same outputs, whatever the file's layout or the name they are sent under
            same = "submission" if first[1] == accepted["sha256"] else "outputs"
            return f"the same {same} as {first[0]} (shown once)"
        return None

    def _row(self, f: Path, known: _Known) -> tuple[dict | None, str | None]:
        """(the file's row, None), or (None, why it is not shown)."""
        outcome = known.outcome
        if outcome.accepted is None:
            return None, outcome.reason
        refusal = self._refusal(outcome.accepted)
        if refusal is not None:
            if not known.cached and known.source:  # validated but not shown: drawn if it ever is
                self.cache.put(known.source, {"accepted": outcome.accepted, "row": None})
            return None, refusal
        self.seen[outcome.accepted["outputs_sha256"]] = (f.name, outcome.accepted["sha256"])
        self.names.setdefault(skeleton(outcome.accepted["name"]), outcome.accepted["name"])
        content = claims_sha256(outcome.accepted["outputs_sha256"], outcome.accepted["meta"])
        tier = audit_records.tier_of(self.records, content, outcome.accepted["name"])
        if known.row is not None and known.row["tier"] == tier:
            self.counts["cached"] += 1
            return {**outcome.accepted, **known.row}, None
        if outcome.validation is None:  # known from the cache but never drawn under this name: the page needs every
            outcome = self.score(f)  # output's score again
            if outcome.accepted is None:
                return None, outcome.reason
        v = outcome.validation
        try:
            r = _render({**outcome.accepted, "file": f.name, "scored": v.scored, "by_protocol": v.by_protocol,
                         "probes": v.probes, "tier": tier, "texts": v.texts}, self.submissions, self.out)
        except ModuleNotFoundError:
            raise  # this machine lacks an extra: not the submission's fault
        except Exception as e:  # noqa: BLE001 - one broken submission must not stop the site
            _complain(f.name, "broke its page")
            return None, f"could not be rendered ({type(e).__name__}: {e})"
        if known.source:
            self.cache.put(known.source, *cached_form(r, self.out))
        return r, None


def _baselines(cache: Cache, submissions: Path, out: Path, where: dict[str, str]) -> list[dict]:
    """The reference rows, from the folder's cache when it has them, else from this machine's store of them
    (``baseline_store``: checked by the folder's cache like its own entries), else computed here (a bug keeps its
    traceback) and stored. ``where`` says which, per baseline."""
    entries = {}
    for name in BASELINES:
        entry = cache.get(f"baseline:{name}")
        where[name] = "cache"
        if not (entry and entry["row"]) and baseline_store.restore(cache, f"baseline:{name}"):
            entry = cache.get(f"baseline:{name}")
            where[name] = "store"
        entries[name] = entry
    fresh = {} if all(e and e["row"] for e in entries.values()) else {r["name"]: r for r in baseline_rows()}
    rows = []
    for name in BASELINES:
        if entries[name] and entries[name]["row"]:
            rows.append({**entries[name]["accepted"], **entries[name]["row"]})
        else:
            r = _render(fresh[name], submissions, out)
            where[name] = "computed"
            cache.put(f"baseline:{name}", *cached_form(r, out))
            baseline_store.save(cache, f"baseline:{name}")
            rows.append(r)
    return rows


def _render(r: dict, submissions: Path, out: Path) -> dict:
    """Summaries, the raw-output copy and the model page of one row; its per-output scores are then dropped."""
    r["slug"] = slug(r["name"], (r.get("sha256") or "")[:10])
    r["views"] = {view: summaries(r, view) for view in VIEWS}
    r["gap"] = gap.summary(r.pop("probes", None) or [], r["scored"])  # re-scored numbers only, never the file's
    if r["kind"] == "submission":
        r["raw"] = f"raw/{r['slug']}{'.json.gz' if r['file'].endswith('.gz') else '.json'}"
        shutil.copyfile(submissions / r["file"], out / r["raw"])
    folder = out / "models" / r["slug"]
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)  # it holds what this page writes and nothing else: its entry lists every file in it
    r["page"] = write_model_page(r, out / "models")
    for heavy in ("scored", "by_protocol", "texts"):
        r.pop(heavy, None)
    return r


def _complain(file: str, what: str) -> None:
    print(f"g2m leaderboard: {term(file)} {what}:\n{term(traceback.format_exc(), 4000)}", file=sys.stderr)
