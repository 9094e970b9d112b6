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
from functools import lru_cache
from pathlib import Path

from PIL import Image

from dataset_builder.configs import ZERO_SHOT_SIZES
from dataset_builder.render import render_rgb
from dataset_builder.spec import PATCH_SIZES
from g2m_base.errors import UsageError
from g2m_base.files import atomic_write_text, ensure_dir, safe_name
from g2m_base.untrusted import esc, plot, term
from harness_tasks.answers.baselines import oracle_answer, random_answer
from leaderboard import figures
from leaderboard import geometry as geo
from leaderboard.html import fmt, fmt_ci, page, table
from leaderboard.rescore import (
    by_task,
    color_bias,
    confusion_by_palette,
    heatmaps,
    score_output,
    summarise,
    truth_matrix,
    zero_shot_truth,
)
from leaderboard.site_page import VIEWS, write_index
from leaderboard.submission import validate

REPORTED = Path(__file__).with_name("reported.json")


def slug(name: str, suffix: str = "") -> str:
    """A file name for a model page: only [A-Za-z0-9_.-], never hidden or '..', unique through ``suffix``."""
    base = safe_name(name, "-")
    return f"{base}-{suffix}" if suffix else base


#: The built-in reference models: computed here, never taken from a submission (their names are reserved).
BASELINES = ("g2m-oracle", "g2m-random")


@lru_cache(maxsize=1)
def _baseline_scores() -> dict[str, dict[str, list]]:
    """The oracle's and the random model's outputs on the full release, made offline by the same functions the
    lm-eval models call, then scored like any other (under G2M's protocol and the paper's rule)."""
    out: dict[str, dict[str, list]] = {name: {"g2m": [], "paper_rule_on_g2m": []} for name in BASELINES}
    for sid, t in zero_shot_truth().items():
        m = truth_matrix(t)
        answers = {"g2m-oracle": oracle_answer(Image.fromarray(render_rgb(m)), t.grid_size),
                   "g2m-random": random_answer(t.grid_size, t.num_colors, sid)}
        for name, answer in answers.items():
            out[name]["g2m"].append(score_output(sid, answer, m, t.num_colors))
            out[name]["paper_rule_on_g2m"].append(score_output(sid, answer, m, t.num_colors, protocol="paper"))
    return out


def baseline_rows() -> list[dict]:
    return [{"name": name, "kind": "baseline", "scored": scored["g2m"], "by_protocol": scored,
             "meta": {"model": {"id": name, "backend": "built-in", "open_weights": True}}}
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
    return {"overall": summarise(scored), "paper": summarise(paper) if paper else None, "paper_mark": mark,
            "by_n": {n: summarise([s for s in scored if s.grid_size == n]) for n in ZERO_SHOT_SIZES}}


def _model_page(row: dict, folder: Path) -> str:
    name, scored = row["name"], row["scored"]
    page_slug = row["slug"]
    assets = folder / page_slug
    assets.mkdir(parents=True, exist_ok=True)
    tasks = {k: summarise(v) for k, v in by_task(scored).items()}
    hms = heatmaps(scored)
    counts = {n: sum(1 for r in scored if r.grid_size == n) for n in hms}
    title = plot(name, 60)
    conf = confusion_by_palette(scored)
    figs = [figures.accuracy_vs_n(tasks, assets / "accuracy_vs_n.png", title=f"{title}: accuracy against grid size"),
            figures.heatmap_grid(hms, counts, assets / "heatmaps.png", f"{title}: accuracy of each cell", 16),
            figures.confusion(conf, {c: color_bias(m) for c, m in conf.items()}, assets / "confusion.png",
                              f"{title}: colour confusion per palette size"),
            figures.alignment([geo.alignment(hms, counts, p) for p in PATCH_SIZES], assets / "patch_alignment.png",
                              f"{title}: patch alignment within each grid size")]
    meta_rows = [[k, json.dumps(v) if not isinstance(v, str) else v] for k, v in _flat(row["meta"]).items()]
    rows = [[str(n), str(c), fmt_ci(s["exact_match"], s["exact_match_ci"]), fmt_ci(s["cell_accuracy"], s["cell_accuracy_ci"]),
             fmt(s["parse_failed"]), fmt(s["truncated"])] for (n, c), s in tasks.items()]
    raw = (f"<p><a href=\"../{esc(row['raw'])}\" download>raw outputs ({esc(row['file'])})</a></p>"
           if row.get("raw") else "<p class=\"muted\">Built-in baseline: its outputs are regenerated by g2m.</p>")
    img = [f"<img src=\"{esc(page_slug)}/{esc(f)}\" alt=\"{esc(f)}\">" for f in figs]
    body = [f"<p><a href=\"../index.html\">&larr; leaderboard</a></p><h1>{esc(name)}</h1>",
            f"<p class=\"muted\">{esc(row['kind'])}; every score re-computed from the raw outputs.</p>", raw,
            *img[:2], "<h2>Scores by task</h2>",
            table(["N", "C", "exact match [95% CI]", "cell accuracy [95% CI]", "parse failed", "truncated"], rows, text_cols=0),
            *img[2:], "<h2>Submission metadata</h2>", table(["field", "value"], meta_rows, text_cols=2)]
    path = folder / f"{page_slug}.html"
    atomic_write_text(path, page(f"G2M: {name}", "\n".join(body)))
    return f"models/{path.name}"


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and k != "max_gen_toks":
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def build_site(submissions: str | Path, out: str | Path, progress: bool = True) -> dict:
    """Validate and re-score every submission, then write the site. A file that is refused, breaks a page, repeats
    another file's outputs or claims a built-in baseline's name is listed as rejected with its reason; it never stops
    the rest of the site. Each submission is rendered as soon as it is scored and only its summary is kept, so
    memory does not grow with the number of submissions."""
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise UsageError(f"{submissions} is not a folder of submissions")
    ensure_dir(out / "models")  # a bad output folder fails before any submission is scored
    ensure_dir(out / "raw")
    files = sorted(p for p in submissions.iterdir() if p.name.endswith((".json", ".json.gz")))
    reserved = {name.lower() for name in BASELINES}
    built, rejected, seen = [], [], {}
    from tqdm.auto import tqdm

    for f in tqdm(files, desc="g2m leaderboard", unit="file", disable=not progress or not files):
        try:
            v = validate(f)
        except Exception as e:  # noqa: BLE001 - a bug in scoring one file must not stop the site; it is shown
            _complain(f.name, "could not be scored")
            rejected.append({"file": f.name, "reason": f"could not be scored (internal error: {type(e).__name__})"})
            continue
        if not v.ok:
            rejected.append({"file": f.name, "reason": v.reason})
            continue
        name = v.metadata["model"]["id"]
        if name.strip().lower() in reserved:
            rejected.append({"file": f.name, "reason": f"the model id {name.strip()!r} is a built-in baseline's; "
                                                       "baselines are computed here, never taken from a submission"})
        elif v.sha256 in seen:
            rejected.append({"file": f.name, "reason": f"the same submission as {seen[v.sha256]} (shown once)"})
        else:
            seen[v.sha256] = f.name
            row = {"name": name, "kind": "submission", "scored": v.scored, "meta": v.metadata, "file": f.name,
                   "sha256": v.sha256, "warnings": v.warnings, "data": v.data, "by_protocol": v.by_protocol}
            try:
                built.append(_render(row, submissions, out))
            except Exception as e:  # noqa: BLE001 - one broken submission must not stop the site
                _complain(f.name, "broke its page")
                rejected.append({"file": f.name, "reason": f"could not be rendered ({type(e).__name__}: {e})"})
    built += [_render(b, submissions, out) for b in baseline_rows()]  # ours: a bug here keeps its traceback
    reported = json.loads(REPORTED.read_text())
    write_index(out, built, reported, rejected)
    return {"rows": len(built), "submissions": sum(r["kind"] == "submission" for r in built), "rejected": rejected,
            "output_dir": str(out)}


def _render(r: dict, submissions: Path, out: Path) -> dict:
    """Summaries, the raw-output copy and the model page of one row; its per-output scores are then dropped."""
    r["slug"] = slug(r["name"], (r.get("sha256") or "")[:10])
    r["views"] = {view: summaries(r, view) for view in VIEWS}
    if r["kind"] == "submission":
        r["raw"] = f"raw/{r['slug']}{'.json.gz' if r['file'].endswith('.gz') else '.json'}"
        shutil.copyfile(submissions / r["file"], out / r["raw"])
    r["page"] = _model_page(r, out / "models")
    r.pop("scored", None)
    r.pop("by_protocol", None)
    return r


def _complain(file: str, what: str) -> None:
    print(f"g2m leaderboard: {term(file)} {what}:\n{term(traceback.format_exc(), 4000)}", file=sys.stderr)
