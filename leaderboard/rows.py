"""What a row of the leaderboard is: its page's name, the built-in reference rows, its summaries per view, and the
form a rendered row takes in the build cache, with the check a cached row must pass before it is shown."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from audit.records import VERDICTS, well_formed_tier
from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from dataset_builder.grids.render import render_rgb
from g2m_base.bounded_json import Rejected
from g2m_base.errors import UsageError
from g2m_base.files import safe_name
from g2m_base.untrusted import check_value
from harness_tasks import BASELINES
from leaderboard import gap_board
from leaderboard.index_page import VIEWS
from scoring.baselines import oracle_answer, random_answer
from scoring.rescoring.rescore import score_outputs, summarise, truth_matrix, zero_shot_truth
from submission.submission import LOCAL, RELEASE, check_metadata


def slug(name: str, suffix: str = "") -> str:
    """A file name for a model page: only [A-Za-z0-9_.-], never hidden or '..', unique through ``suffix``."""
    base = safe_name(name, "-")
    return f"{base}-{suffix}" if suffix else base


@lru_cache(maxsize=1)
def _baseline_scores() -> dict[str, dict[str, list]]:
    """The oracle's and the random model's outputs on the full release, made offline by the same functions the
    lm-eval models call, then scored like any other (under G2M's protocol and the paper's rule)."""
    out: dict[str, dict[str, list]] = {name: {"g2m": [], "paper_rule_on_g2m": []} for name in BASELINES}
    for sid, t in zero_shot_truth().items():
        m = truth_matrix(t)
        answers = {"g2m-oracle": oracle_answer(render_rgb(m), t.grid_size),
                   "g2m-random": random_answer(t.grid_size, t.num_colors, sid)}
        for name, answer in answers.items():
            g2m, paper = score_outputs(sid, answer, m, t.num_colors, None, ("g2m", "paper"))
            out[name]["g2m"].append(g2m)
            out[name]["paper_rule_on_g2m"].append(paper)
    return out


def baseline_meta(name: str) -> dict:
    return {"model": {"id": name, "backend": "built-in", "open_weights": True}}


def baseline_rows() -> list[dict]:
    return [{"name": name, "kind": "baseline", "sha256": None, "outputs_sha256": None, "warnings": [], "data": RELEASE,
             "scored": scored["g2m"], "by_protocol": scored, "meta": baseline_meta(name)}
            for name, scored in _baseline_scores().items()]


def summaries(row: dict, view: str) -> dict:
    """A row's numbers in one view (all palettes, or one palette size): overall, per N, and the paper columns from
    its g2m_paper outputs when it sent them, else its g2m outputs under the paper's rule (marked *)."""
    def keep(s) -> bool:
        return view == "all" or s.num_colors == int(view[1:])

    scored = [s for s in row["scored"] if keep(s)]
    by_protocol = row.get("by_protocol") or {}
    paper_key, mark = ("paper", "") if "paper" in by_protocol else ("paper_rule_on_g2m", "*")
    paper = [s for s in by_protocol.get(paper_key, []) if keep(s)]
    return {"overall": summarise(scored).as_dict(),
            "paper": summarise(paper).as_dict() if paper else None, "paper_mark": mark,
            "by_n": {n: summarise([s for s in scored if s.grid_size == n]).as_dict() for n in ZERO_SHOT_SIZES}}


#: A figure's file name in a model page's folder (never hidden, never a path).
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
#: The sample viewer's files under a model's folder (``viewer.write``): its page and its chunks.
_VIEWER_FILE = re.compile(r"viewer/(?:index\.html|chunks/[0-9]{4}\.js)")
#: What a cached row keeps: its validation (``accepted``) and what its rendering added (``row``).
ACCEPTED = ("kind", "name", "sha256", "outputs_sha256", "meta", "warnings", "data")
ROW = ("file", "slug", "page", "raw", "views", "gap", "tier")


def cached_form(r: dict, out: Path) -> tuple[dict, list[str]]:
    """A rendered row as a cache entry, and the files its page wrote."""
    files = [r["page"], *(p.relative_to(out).as_posix() for p in sorted((out / "models" / r["slug"]).rglob("*"))
                          if p.is_file())]
    if r.get("raw"):
        files.append(r["raw"])
    return {"accepted": {k: r.get(k) for k in ACCEPTED}, "row": {k: r.get(k) for k in ROW}}, files


def well_formed(accepted: dict, row: dict | None, files: set[str]) -> bool:
    """A cache entry's validation and row are exactly of the kind this site writes: names, paths, metadata (checked
    again as a submission's), warnings. Its numbers were checked by the cache; nothing else in it is used."""
    try:
        if set(accepted) != set(ACCEPTED) or not isinstance(accepted["name"], str):
            return False
        name, sha, meta = accepted["name"], accepted["sha256"], accepted["meta"]
        if accepted["kind"] == "baseline":
            if (name not in BASELINES or sha is not None or accepted["outputs_sha256"] is not None
                    or meta != baseline_meta(name) or accepted["warnings"] or accepted["data"] != RELEASE):
                return False
        elif accepted["kind"] == "submission":
            if not all(isinstance(h, str) and len(h) == 64 and all(c in "0123456789abcdef" for c in h)
                       for h in (sha, accepted["outputs_sha256"])):
                return False
            if check_metadata(meta)["model"]["id"] != name or accepted["data"] not in (RELEASE, LOCAL):
                return False
            check_value(accepted["warnings"], "warnings")
            if not isinstance(accepted["warnings"], list) or not all(isinstance(w, str) for w in accepted["warnings"]):
                return False
        else:
            return False
        if row is None:
            return True
        if set(row) != set(ROW) or set(row["views"]) != set(VIEWS):
            return False
        page_slug = slug(name, (sha or "")[:10])
        if accepted["kind"] == "baseline":
            want_raw, file_ok = None, row["file"] is None
        else:
            file_ok = isinstance(row["file"], str) and row["file"].endswith((".json", ".json.gz"))
            want_raw = f"raw/{page_slug}{'.json.gz' if file_ok and row['file'].endswith('.gz') else '.json'}"
        pages = {row["page"], want_raw} - {None}
        figures = [f.split("/") for f in files - pages]  # models/<slug>/<name>: nothing else, nothing above
        if accepted["kind"] == "baseline" and (row["gap"] is not None or row["tier"] is not None):
            return False
        if accepted["kind"] == "submission" and not well_formed_tier(row["tier"], VERDICTS):
            return False
        return (file_ok and row["slug"] == page_slug and row["page"] == f"models/{page_slug}.html"
                and gap_board.well_formed(row["gap"], page_slug, files)
                and row["raw"] == want_raw and pages <= files
                and all(p[:2] == ["models", page_slug] and (_FILE_NAME.fullmatch(p[2]) if len(p) == 3 else
                                                             _VIEWER_FILE.fullmatch("/".join(p[2:]))) for p in figures))
    except (Rejected, UsageError, TypeError, KeyError, AttributeError):
        return False
