"""The leaderboard's front-page figure: cell accuracy against grid size N, one line per ranked model, with the chance
line 1/C of each palette in view (the paper's headline picture, for every submission).

One static SVG per palette tab, written into the page when the site is built (no plotting library in the browser,
nothing fetched). The ten best models of the tab are drawn; every other ranked model is listed under them, and ticking
its box draws its line too (a few lines of script toggle what is already in the SVG). Lines follow the board's order
and colours follow rank, so the legend reads like the table above it. Drawn in a 1,000 x 430 box and scaled to the
page: at 1,100 px, beside the legend, its labels are about 12 px high. This module computes the numbers; the markup is
``templates/front_figure.html.j2``, where every name is escaped like any submission's text.
"""

from __future__ import annotations

import math

from dataset_builder.grids.configs import ZERO_SHOT_COLORS, ZERO_SHOT_SIZES

TOP = 10  # lines drawn before any box is ticked
#: Ten colours told apart in print and by most colour-blind readers (Tableau 10); models past them cycle with dashes.
LINE_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
               "#bab0ac")
BASELINE_COLOR = "#666666"
#: Each built-in baseline its own colour and dash pattern (on, off in the SVG's units), told apart from each other and
#: from every model's line (solid, or past ten dash-dot); a baseline not named here is grey and dashed.
BASELINE_STYLES = {"g2m-oracle": ("#222222", "10 4"), "g2m-random": ("#c2185b", "3 3")}
W, H = 1000, 430
LEFT, RIGHT, TOP_PAD, BOTTOM = 70, 18, 16, 58


def _x(n: int) -> float:
    lo, hi = math.log2(ZERO_SHOT_SIZES[0]), math.log2(ZERO_SHOT_SIZES[-1])
    return LEFT + (math.log2(n) - lo) / (hi - lo) * (W - LEFT - RIGHT)


def _y(v: float) -> float:
    return TOP_PAD + (1 - v) * (H - TOP_PAD - BOTTOM)


def _style(rank: int, baseline: bool, name: str = "") -> tuple[str, str]:
    """(colour, dash pattern) of the line at ``rank`` (0 = best): each baseline its own (``BASELINE_STYLES``), others
    by rank."""
    if baseline:
        return BASELINE_STYLES.get(name, (BASELINE_COLOR, "6 4"))
    return LINE_COLORS[rank % len(LINE_COLORS)], "" if rank < len(LINE_COLORS) else "8 3 2 3"


def _axes(view: str) -> dict:
    """The grid, the N ticks, the axes and the chance line of each palette in view, as numbers for the template."""
    grid = [{"x1": LEFT, "x2": W - RIGHT, "y": f"{_y(k / 5):.1f}", "tx": LEFT - 8, "ty": f"{_y(k / 5) + 4:.1f}",
             "label": f"{k / 5:.1f}"} for k in range(6)]
    ticks = [{"x": f"{_x(n):.1f}", "y1": H - BOTTOM, "y2": H - BOTTOM + 5, "ty": H - BOTTOM + 22, "label": n}
             for n in ZERO_SHOT_SIZES]
    axes = {"left": LEFT, "right": W - RIGHT, "top": TOP_PAD, "bottom": H - BOTTOM, "xlabel_x": (LEFT + W - RIGHT) / 2,
            "xlabel_y": H - 8, "ylabel_y": (TOP_PAD + H - BOTTOM) / 2}
    chance = [{"c": c, "x1": LEFT, "x2": W - RIGHT, "y": f"{_y(1 / c):.1f}", "tx": LEFT + 6,
               "ty": f"{_y(1 / c) - 5:.1f}"}
              for c in (ZERO_SHOT_COLORS if view == "all" else (int(view[1:]),))]
    return {"grid": grid, "ticks": ticks, "axes": axes, "chance": chance}


#: Marker shapes taken in turn by rank, so that two lines drawn on one another still show both (a triangle over a
#: circle); the caption names such lines too.
MARKERS = ("circle", "square", "triangle", "diamond")
MARK_SIZE = 3.4


def _mark(shape: str, x: float, y: float) -> dict:
    """One marker for the template: a circle (cx, cy, r), or a polygon's points."""
    r = MARK_SIZE
    if shape == "circle":
        return {"shape": shape, "x": f"{x:.1f}", "y": f"{y:.1f}", "r": f"{r * 0.85:.1f}"}
    corners = {"square": ((-1, -1), (1, -1), (1, 1), (-1, 1)), "triangle": ((0, -1.25), (1.1, 0.85), (-1.1, 0.85)),
               "diamond": ((0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0))}[shape]
    return {"shape": shape, "points": " ".join(f"{x + dx * r * 0.8:.1f},{y + dy * r * 0.8:.1f}" for dx, dy in corners)}


def coinciding(lines: list[dict]) -> list[list[str]]:
    """Names of the drawn lines that fall on one another (the same points), in groups of two or more, best first."""
    groups: dict[str, list[str]] = {}
    for m in lines:
        if m["shown"] and m["points"]:
            groups.setdefault(m["points"], []).append(m["name"])
    return [g for g in groups.values() if len(g) > 1]


def figure(rows: list[dict], view: str, fig_id: str) -> dict:
    """The figure for one palette tab, for ``front_figure.html.j2``: ``rows`` are the ranked rows (each with
    ``views[view]``: overall and by_n summaries), drawn best first by the view's cell accuracy, as the board ranks
    them."""
    ranked = sorted(rows, key=lambda r: -r["views"][view]["overall"]["cell_accuracy"])
    lines = []
    for rank, r in enumerate(ranked):
        color, dash = _style(rank, r["kind"] == "baseline", r["name"])
        by_n = r["views"][view]["by_n"]
        points = [(n, by_n[n]["cell_accuracy"]) for n in ZERO_SHOT_SIZES
                  if n in by_n and not math.isnan(by_n[n]["cell_accuracy"])]
        baseline = r["kind"] == "baseline"  # a reference line: drawn whatever its rank
        lines.append({"id": f"{fig_id}-line-{rank}", "name": r["name"], "rank": rank + 1,
                      "shown": rank < TOP or baseline,
                      "color": color, "dash": dash, "points": " ".join(f"{_x(n):.1f},{_y(v):.1f}" for n, v in points),
                      "marks": [_mark(MARKERS[rank % len(MARKERS)], _x(n), _y(v)) for n, v in points],
                      "overall": f"{r['views'][view]['overall']['cell_accuracy']:.3f}",
                      "baseline": baseline})
    caption = ("Cell accuracy against grid size, one line per ranked model (the ten best and the baselines drawn, "
               "each baseline its own colour and dashes; tick a name to draw it or hide it), re-scored from the raw "
               "outputs under the G2M protocol (G2M's parser, partial credit, G2M's budget); dotted: chance, 1/C.")
    same = ["; ".join(", ".join(g[:-1]) + f" and {g[-1]}" for g in coinciding(lines))]
    if same[0]:
        caption += f" Drawn on one another (the same cell accuracy at every N): {same[0]}."
    return {"id": fig_id, "width": W, "height": H, "lines": lines, "legend": [m for m in lines if m["shown"]],
            "more": [m for m in lines if not m["shown"]], "caption": caption, **_axes(view)}
