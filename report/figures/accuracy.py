"""Accuracy against grid size: cell accuracy and exact match against N, one curve per palette size, with their 95%
intervals and the chance line 1/C, and the probes' curves where there are any (the Digital Agnosia gap)."""

from __future__ import annotations

import math

import numpy as np

from drawing.canvas import DPI, Canvas
from drawing.panel import (
    Axes,
    boxes,
    figure_title,
    legend,
    nice_ticks,
    nothing_to_show,
    panel_title_room,
    tick_labels,
)

COLOURS = {3: "#c44e52", 5: "#4c72b0", 10: "#55a868"}
MARKERS = {3: "o", 5: "s", 10: "^"}
#: Each palette's points sit a little apart along N (a factor 2**offset on the log axis), so equal values stay visible.
X_OFFSETS = {3: -0.06, 5: 0.0, 10: 0.06}
DOTTED, DASHED = (1.0, 1.65), (3.7, 1.6)  # points on, off
OTHER = "#8172b3"  # a palette size outside the three of the release


def coinciding(curves: dict[int, list[float]]) -> list[list[int]]:
    """Groups of palette sizes whose curves are equal at every grid size (each group sorted, two or more)."""
    groups: list[list[int]] = []
    for c in sorted(curves):
        for g in groups:
            if len(curves[g[0]]) == len(curves[c]) and np.allclose(curves[g[0]], curves[c], rtol=0, atol=1e-9):
                g.append(c)
                break
        else:
            groups.append([c])
    return [g for g in groups if len(g) > 1]


def _same_note(name: str, groups: list[list[int]]) -> str:
    return "; ".join(" and ".join(f"C={c}" for c in g) + f" have the same {name}" for g in groups)


#: What a panel says in place of its marks when every value is 0 (what no grid or no cell right means).
ALL_ZERO = {"exact_match": "exact match is 0 on every task\n(no grid transcribed whole)",
            "cell_accuracy": "cell accuracy is 0 on every task\n(no cell read right)"}


def empty_message(tasks: dict, key: str, name: str, probes: dict | None = None) -> str:
    """What the panel of ``key`` says instead of drawing, or "" when it has something to draw: "no data" without a
    value, the ``ALL_ZERO`` sentence when every value is 0 (a cell accuracy panel with probes' curves draws them)."""
    if key == "cell_accuracy" and probes:
        return ""
    values = [t[key] for t in tasks.values()]
    if not nothing_to_show(values):
        return ""
    return ALL_ZERO.get(key, f"{name} is 0 on every task") if any(v == 0 for v in values) else "no data"


def draw_accuracy_vs_n(tasks: dict[tuple[int, int], dict], probes: dict | None = None, title: str = "") -> Canvas:
    """Cell accuracy and exact match against N, one curve per palette size, with the chance line 1/C.

    Each palette has its own marker and sits a little apart along N, its 95% intervals drawn as capped bars per point
    (a shaded band of several palettes reads as one solid bar); a panel's title names the palettes whose curves are
    equal. ``probes`` maps (C, readout) -> {N: probe cell accuracy}, drawn on the left panel (the Digital Agnosia gap).
    """
    canvas = Canvas(10, 4.4)
    palettes = sorted({c for _, c in tasks})
    sizes = sorted({n for n, _ in tasks})
    metrics = (("cell_accuracy", "cell accuracy"), ("exact_match", "exact match"))
    notes = {key: _same_note(name, coinciding({c: [tasks[(n, cc)][key] for n, cc in sorted(tasks) if cc == c]
                                               for c in palettes})) for key, name in metrics}
    empty = {key: empty_message(tasks, key, name, probes) for key, name in metrics}
    notes = {key: "" if empty[key] else note for key, note in notes.items()}
    entries = [(f"C={c} end-to-end", {"colour": COLOURS.get(c, OTHER), "marker": MARKERS.get(c, "D"), "bar": True})
               for c in palettes]
    entries += [(f"chance 1/{c}", {"colour": COLOURS.get(c, OTHER), "dash": DOTTED, "width": 1.0}) for c in palettes]
    entries += [(f"C={c} probe ({readout})"[:80], {"colour": COLOURS.get(c, OTHER), "marker": "s", "dash": DASHED})
                for c, readout in sorted(probes or {})]
    if all(empty.values()):
        entries = []  # nothing drawn: nothing to name
    legend_rows = math.ceil(len(entries) / 4)
    top = figure_title(canvas, title or "Accuracy against grid size")
    top += panel_title_room(2 if any(notes.values()) else 1)
    xs_all = [n * 2 ** X_OFFSETS.get(c, 0.0) for n, c in tasks] or [1.0]
    lo, hi = math.log2(min(xs_all)), math.log2(max(xs_all))
    pad = 0.05 * max(hi - lo, 1.0)
    xlim = (2 ** (lo - pad), 2 ** (hi + pad))
    (row,) = boxes(canvas, 1, 2, left=0.67, right=0.15, top=top, bottom=0.62 + 0.17 * legend_rows, wspace=0.66)
    for box, (key, name) in zip(row, metrics, strict=True):
        ax = Axes(canvas, *box, xlim=xlim, ylim=(-0.03, 1.03), xlog=True)
        if empty[key]:  # nothing to show: said in words, not drawn as a forest of identical intervals
            ax.message(empty[key])
        for c in palettes if not empty[key] else ():
            ns = sorted(n for n, cc in tasks if cc == c)
            vals = np.array([tasks[(n, c)][key] for n in ns], dtype=float)
            ci = np.array([tasks[(n, c)][f"{key}_ci"] for n in ns], dtype=float).reshape(-1, 2)
            xs = np.array(ns, dtype=float) * 2 ** X_OFFSETS.get(c, 0.0)
            colour = COLOURS.get(c, OTHER)
            if key == "cell_accuracy":
                ax.hline(1 / c, colour, 1.0, DOTTED, label=f"chance 1/{c}")
            ax.errorbars(xs, np.minimum(ci[:, 0], vals), np.maximum(ci[:, 1], vals), colour)
            ax.curve(xs, vals, colour, marker=MARKERS.get(c, "D"), label=f"C={c} end-to-end")
        if key == "cell_accuracy" and not empty[key]:
            for (c, readout), curve in sorted((probes or {}).items()):
                ns = sorted(curve)
                ax.curve(ns, [curve[n] for n in ns], COLOURS.get(c, OTHER), dash=DASHED, marker="s",
                         label=f"C={c} probe ({readout})"[:80])
        ax.frame()
        ax.xticks(sizes, [str(n) for n in sizes], size=7)
        ticks = nice_ticks(0.0, 1.0, 6)
        ax.yticks(ticks, tick_labels(ticks))
        ax.xlabel("grid size N")
        ax.ylabel(name)
        ax.title(name if empty[key] else f"{name} (bars: 95% intervals)" + (f"\n{notes[key]}" if notes[key] else ""))
    legend(canvas, entries, canvas.width / 2, canvas.height - (0.06 + 0.17 * legend_rows) * DPI)
    return canvas
