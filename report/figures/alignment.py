"""Patch alignment: per patch size, within each grid size, the accuracy of the answered cells of the more-crossed half
minus that of the less-crossed half, with its 95% bootstrap interval over grids (none under the minimum of grids)."""

from __future__ import annotations

import math

import numpy as np

from drawing.canvas import PT, Canvas
from drawing.panel import Axes, boxes, figure_title, nice_ticks, panel_title_room, tick_labels

STRONG, PALE = "#4c72b0", "#c9d4e6"


def draw_alignment(results: list[dict], title: str) -> Canvas:
    """Per patch size: within each grid size, the accuracy of the answered cells of the more-crossed half minus that
    of the less-crossed half (0: alignment does not matter), with its 95% interval over grids where there is one
    (``patch_crossing.INTERVAL``). A bar whose interval holds 0, or that has none, is drawn pale: no effect beyond the
    grids' noise. Sizes where every cell crosses alike, or none was answered, are marked n/a."""
    from scoring.rescoring.patch_crossing import INTERVAL, in_words, reads_as_none

    cols = max(1, min(2, len(results)))
    rows = max(1, math.ceil(len(results) / cols))
    canvas = Canvas(5.6 * cols, 3.2 * rows)
    ends = [abs(v) for res in results for r in res["per_n"] if r["difference"] is not None
            for v in (r["difference"], *(r.get("difference_ci") or ()))]
    lim = min(1.05, max(0.1, 1.15 * max(ends, default=0)))  # one scale for every panel, intervals included
    ticks = nice_ticks(-lim, lim, 7)
    top = figure_title(canvas, title + f"\nanswered cells only; bars: 95% bootstrap intervals over grids (none under "
                       f"{INTERVAL['minimum_grids']} grids); pale: the interval holds 0 or there is none") \
        + panel_title_room(1)
    # left: a two-line axis label and tick labels; between rows: the upper row's ticks and axis label
    grid = boxes(canvas, rows, cols, left=1.0, right=0.15, top=top, bottom=0.55, wspace=0.25, hspace=0.75)
    for k, res in enumerate(results):
        ax = Axes(canvas, *grid[k // cols][k % cols], xlim=(-0.6, len(res["per_n"]) - 0.4), ylim=(-lim, lim))
        ns = [r["grid_size"] for r in res["per_n"]]
        diffs = [r["difference"] for r in res["per_n"]]
        cis = [r.get("difference_ci") for r in res["per_n"]]
        pos = list(range(len(ns)))
        colours = [None if d is None else PALE if reads_as_none(ci) else STRONG
                   for d, ci in zip(diffs, cis, strict=True)]
        ax.bars(pos, [d if d is not None else 0.0 for d in diffs], colours)
        shown = [i for i, (d, ci) in enumerate(zip(diffs, cis, strict=True)) if d is not None and ci is not None]
        if shown:
            ax.errorbars(np.array(shown, dtype=float), [min(cis[i][0], diffs[i]) for i in shown],
                         [max(cis[i][1], diffs[i]) for i in shown], "#000000", width=0.8, cap=2)
        for i, d in enumerate(diffs):
            if d is None:
                canvas.text(float(ax.x(i)) + 0.35 * 7 * PT, float(ax.y(0.02 * lim)), "n/a", 7, ha="left",
                            rotation=90, colour="#777777")
        ax.hline(0, "#000000", 0.8)
        ax.frame()
        ax.xticks(pos, [str(n) for n in ns], size=6)
        ax.yticks(ticks, tick_labels(ticks) if k % cols == 0 else [""] * len(ticks))
        ax.xlabel("grid size N")
        ax.title(f"patch {res['patch']:g} px at {res['input_size']:g} px; "
                 f"weighted mean {in_words(res['difference'], res.get('difference_ci'))}")
        if k % cols == 0:
            ax.ylabel("more - less crossed\ncells' accuracy")
    return canvas
