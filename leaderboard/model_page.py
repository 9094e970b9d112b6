"""One model's page of the site: its figures (accuracy against N, per-cell heatmaps, colour confusion, patch
alignment), its scores by task and its submission's metadata, written from its re-scored outputs by
``templates/model.html.j2``; and, for a submission, the sample viewer of its re-scored outputs (the one ``g2m
report`` writes, ``viewer.write``) beside its figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from dataset_builder.grids.spec import PATCH_SIZES
from drawing.html import fmt, fmt_ci, render
from g2m_base.files import atomic_write_text
from g2m_base.untrusted import term
from leaderboard.gap_board import draw_sweeps
from leaderboard.index_page import tier
from report import figures
from scoring.rescoring import patch_crossing
from scoring.rescoring.rescore import by_task, cell_outcomes, color_bias, confusion_by_palette, heatmaps, summarise
from scoring.runs.run import Sample
from scoring.score import PROTOCOL_TITLES
from submission.run_metadata import public
from viewer.write import write_viewer

TEMPLATES = Path(__file__).with_name("templates")


def write_model_page(row: dict, folder: Path) -> str:
    """Draw the row's figures into ``folder/<slug>/`` and write ``folder/<slug>.html``; returns its path in the site."""
    name, scored = row["name"], row["scored"]
    page_slug = row["slug"]
    assets = folder / page_slug
    assets.mkdir(parents=True, exist_ok=True)
    tasks = {k: summarise(v).as_dict() for k, v in by_task(scored).items()}
    outcomes = cell_outcomes(scored)
    hms = heatmaps(outcomes)
    counts = {n: len(o.parsed) for n, o in outcomes.items()}
    title = term(name, 60)
    protocol = PROTOCOL_TITLES["g2m"]  # the site scores every output under G2M's protocol
    conf = confusion_by_palette(scored)
    # the page shows each figure as its PNG, and nothing links an SVG: drawing one would cost a third of the page
    figs = [figures.accuracy_vs_n(tasks, assets / "accuracy_vs_n.png",
                                  title=f"{title}: accuracy against grid size\n{protocol}", svg=False),
            figures.heatmap_grid(hms, counts, assets / "heatmaps.png", f"{title}: accuracy of each cell\n{protocol}",
                                 16, svg=False),
            figures.confusion(conf, {c: color_bias(m) for c, m in conf.items()}, assets / "confusion.png",
                              f"{title}: colour confusion per palette size\n{protocol}", svg=False),
            figures.alignment([patch_crossing.alignment(outcomes, p) for p in PATCH_SIZES],
                              assets / "patch_alignment.png",
                              f"{title}: patch alignment within each grid size\n{protocol}", svg=False)]
    meta = [[k, json.dumps(v) if not isinstance(v, str) else v] for k, v in _flat(public(row["meta"])).items()]
    rows = [[str(n), str(c), fmt_ci(s["exact_match"], s["exact_match_ci"]),
             fmt_ci(s["cell_accuracy"], s["cell_accuracy_ci"]),
             fmt(s["parse_failed"]), fmt(s["truncated"])] for (n, c), s in tasks.items()]
    viewer = _viewer(row, assets, title) if row.get("texts") else None
    path = folder / f"{page_slug}.html"
    row_tier, tier_why = tier(row)
    atomic_write_text(path, render(TEMPLATES, "model.html.j2", title=f"G2M: {name}", name=name, kind=row["kind"],
                                   raw=row.get("raw"), file=row.get("file"), slug=page_slug, figures=figs, tasks=rows,
                                   meta=meta, sweeps=draw_sweeps(row, assets), tier=row_tier,
                                   tier_why=tier_why, viewer=viewer))
    return f"models/{path.name}"


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and k != "max_gen_toks":
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


class _Submitted(NamedTuple):
    """A submission as the viewer reads a run: the model, its outputs as G2M's samples, and each task's answer
    budget as the submission records it (a task it does not name gets the protocol's own)."""

    model: str
    samples: list
    results: dict


def _viewer(row: dict, assets: Path, title: str) -> str:
    """The viewer of the row's re-scored outputs in ``assets/viewer``; its path from the model page."""
    budgets = (row["meta"].get("generation") or {}).get("max_gen_toks") or {}
    configs = {t: {"generation_kwargs": {"max_gen_toks": b}} for t, b in budgets.items() if isinstance(b, int)}
    texts = row["texts"]
    samples = [Sample(r.id, r.grid_size, r.num_colors, r.target, texts[r.id][0], "g2m", texts[r.id][1])
               for r in row["scored"]]
    run = _Submitted(row["name"], samples, {"configs": configs})
    back = (f"../../{row['slug']}.html", f"{row['name']}'s page")
    return f"{row['slug']}/{write_viewer(assets, run, row['scored'], 'g2m', title, back)}"
