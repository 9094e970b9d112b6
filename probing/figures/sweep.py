"""A sweep's map: the probe's test cell accuracy at every depth, tower -> projector -> LLM, against chance and the
model's own end-to-end answers (the Digital Agnosia gap, layer by layer), and its exact match in a panel below."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from drawing.canvas import DPI, PT, Canvas, Lines, Marker, Rect
from drawing.files import write
from drawing.panel import Axes, legend, nice_ticks, nothing_to_show, tick_labels

STAGE_LABELS = {"tower": "vision tower", "projector": "projector", "llm": "LLM (image positions)"}
STAGE_TINTS = {"tower": "#eef3fb", "projector": "#fbf3e6", "llm": "#eef8ef"}
ACCURACY, EXACT, READOUT, STREAM, CHANCE, ANSWER = "#4c72b0", "#55a868", "#dd8452", "#8172b3", "#808080", "#c44e52"
DASHED, DOTTED = (3.7, 1.6), (1.0, 1.65)
#: An interval shorter than this (in accuracy, on the 0..1.1 axis about 3 px at the page's size) hides behind its
#: marker: such intervals are said in the accuracy's legend entry instead of getting an entry of their own.
VISIBLE_INTERVAL = 0.02
#: PNG pixels per figure pixel: the map is read on screens of two device pixels per CSS pixel (and zoomed into).
ZOOM = 2
#: What the exact match panel says in place of its curve when every point's exact match is 0.
NO_EXACT = "probe exact match is 0 at every depth (no test grid read whole)"
#: Each axis's label: one metric each.
CELL_LABEL, EXACT_LABEL = "probe cell accuracy\n(test)", "probe exact match\n(test)"
#: Inches: the panels' left edge (a two-line axis label and tick labels), right margin, heights and the gap.
_LEFT, _RIGHT, _CELL_H, _EXACT_H, _GAP = 0.85, 0.2, 2.7, 1.0, 0.12


def _ci(p: dict) -> tuple[float, float]:
    a = p["cell_accuracy"]
    lo, hi = p.get("cell_accuracy_ci") or (a, a)
    return min(lo, a), max(hi, a)


def sample_line(points: list[dict], n: int | None) -> str:
    """The figure's line on what every point is over: ``n`` test grids (or the points' own ``test_rows``)."""
    if n is None:
        n = next((p["test_rows"] for p in points if isinstance(p.get("test_rows"), int)), None)
    if n is None:
        return "each point: the probe's score on the config's test grids (their number was not given)"
    return (f"each point: the probe's score on the same n = {n:,} test grid{'s' if n != 1 else ''} "
            "(95% intervals over them)")


def draw_sweep(points: list[dict], title: str, chance: float, reference: dict | None = None,
               n: int | None = None) -> Canvas:
    """Cell accuracy by depth: each point's test cell accuracy with its 95% interval (a capped bar per point), the
    stages shaded and divided, chance (1/C) dashed, the authors' read-outs starred, DeepStack streams where they
    enter the LLM, and with ``reference`` the model's own end-to-end cell accuracy at this N. Exact match has its own
    panel below (one metric per axis), or a sentence in its place when every point's is 0. ``n``: the test grids every
    point is scored on, said under the title. The PNG is drawn at ``ZOOM`` times the figure's pixels. The legend sits
    below the panels, so it never covers a point, and lists only what is drawn."""
    streams = [p for p in points if p["stage"] == "deepstack"]  # drawn apart, where they enter the LLM
    points = [p for p in points if p["stage"] != "deepstack"]
    width = max(6.0, min(16.0, 0.16 * len(points) + 4))
    heading = "\n".join(textwrap.wrap(title, int(width * 13))) or " "
    lines = heading.count("\n") + 1
    top = 0.08 + 0.19 * lines + 0.16 + 0.42  # the title, n, then the stages' names (two lines of 8 pt) over the panel
    canvas = Canvas(width, top + _CELL_H + _GAP + _EXACT_H + 1.25, zoom=ZOOM)
    canvas.text(canvas.width / 2, 0.08 * DPI, heading, 10, va="top")
    canvas.text(canvas.width / 2, (0.08 + 0.19 * lines + 0.03) * DPI, sample_line(points, n), 8, va="top",
                colour="#333333")
    xlim = (-0.5, len(points) - 0.5)
    cell = Axes(canvas, _LEFT, top, width - _LEFT - _RIGHT, _CELL_H, xlim, (-0.04, 1.1))
    exact = Axes(canvas, _LEFT, top + _CELL_H + _GAP, width - _LEFT - _RIGHT, _EXACT_H, xlim, (-0.06, 1.06))
    _stages(canvas, points, (cell, exact))
    x = np.arange(len(points), dtype=float)
    acc = np.array([p["cell_accuracy"] for p in points], dtype=float)
    lo, hi = (np.array(v, dtype=float) for v in zip(*map(_ci, points), strict=True)) if points else (acc, acc)
    visible = bool(len(points)) and float(np.max(hi - lo)) >= VISIBLE_INTERVAL
    accuracy = "probe cell accuracy" + ("" if visible else " (95% intervals within the markers)")
    entries = [(accuracy, {"colour": ACCURACY, "marker": "o", "bar": visible})]
    if visible:
        cell.errorbars(x, lo, hi, ACCURACY)
        entries.append(("95% interval", {"colour": ACCURACY, "bar": True, "width": 0.01}))
    cell.hline(chance, CHANCE, 1.0, DASHED, label=f"chance (1/C = {chance:.2f})")
    entries.append((f"chance (1/C = {chance:.2f})", {"colour": CHANCE, "dash": DASHED, "width": 1.0}))
    if reference:
        label = f"end-to-end answer: {reference['cell_accuracy']:.3f} ({reference.get('source', 'run')})"[:90]
        cell.hline(reference["cell_accuracy"], ANSWER, 1.6, label=label)
        entries.append((label, {"colour": ANSWER, "width": 1.6}))
    cell.curve(x, acc, ACCURACY, marker="o", size=3.5, label=accuracy)
    starred = [i for i, p in enumerate(points) if p.get("readout")]
    for i in starred:
        canvas.add(Marker(float(cell.x(i)), float(cell.y(acc[i])), "*", 11, READOUT,
                          label="the authors' read-outs (g2m probe)"))
    if starred:
        entries.append(("the authors' read-outs (g2m probe)", {"colour": READOUT, "marker": "*", "width": 0.01}))
    for p in streams:
        xi = _entry(p, points)
        canvas.add(Marker(float(cell.x(xi)), float(cell.y(p["cell_accuracy"])), "D", 7, STREAM,
                          label="DeepStack stream, where it enters the LLM"))
        canvas.text(float(cell.x(xi)) + 5 * PT, float(cell.y(p["cell_accuracy"])) - 4 * PT, f"DS{p['layer']}", 7,
                    ha="left", colour=STREAM)
    if streams:
        entries.append(("DeepStack stream, where it enters the LLM", {"colour": STREAM, "marker": "D", "width": 0.01}))
    if nothing_to_show(p["exact_match"] for p in points):
        exact.message(NO_EXACT if points else "no data", size=8)
    else:
        exact.curve(x, [p["exact_match"] for p in points], EXACT, dash=DOTTED, marker="^", size=4,
                    label="probe exact match")
        entries.append(("probe exact match", {"colour": EXACT, "marker": "^", "dash": DOTTED}))
    ticks = [i for i, p in enumerate(points) if p["layer"] is None or len(points) <= 40 or p["layer"] % 5 == 0
             or i in (0, len(points) - 1)]
    for ax, name, values in ((cell, CELL_LABEL, nice_ticks(0, 1, 6)), (exact, EXACT_LABEL, [0.0, 0.5, 1.0])):
        ax.frame()
        ax.yticks(values, tick_labels(values), size=8)
        ax.ylabel(name, size=8)
    cell.xticks([float(i) for i in ticks], [""] * len(ticks), size=7)
    exact.xticks([float(i) for i in ticks], ["P" if points[i]["layer"] is None else str(points[i]["layer"])
                                             for i in ticks], size=7)
    exact.xlabel("depth: vision block -> projector (P) -> LLM decoder layer", size=8)
    legend(canvas, entries, canvas.width / 2, exact.y0 + exact.h + exact.below + 0.3 * DPI, ncol=2)
    return canvas


def _stages(canvas: Canvas, points: list[dict], panels: tuple[Axes, ...]) -> None:
    """Each stage's span shaded in both panels and named over the top one (with its token grid), a dashed line
    where one stage gives way to the next."""
    first = panels[0]
    for stage, name in STAGE_LABELS.items():
        idx = [i for i, p in enumerate(points) if p["stage"] == stage]
        if not idx:
            continue
        left, right = float(first.x(idx[0] - 0.5)), float(first.x(idx[-1] + 0.5))
        for ax in panels:
            canvas.add(Rect(left, ax.y0, right - left, ax.h, fill=STAGE_TINTS[stage]))
            if idx[0] > 0:
                canvas.add(Lines(((left, ax.y0), (left, ax.y0 + ax.h)), "#555555", 0.9, DASHED, label="stage"))
        grid = points[idx[0]].get("feature_grid")
        label = name + (f"\n{grid[0]}x{grid[1]} tokens" if grid else "")
        canvas.text((left + right) / 2, first.y0 - 4 * PT, label, 8, va="bottom")


def _entry(stream: dict, points: list[dict]) -> float:
    """Where a DeepStack stream is drawn: at the LLM layer it is added after, else just past the projector."""
    at = [i for i, q in enumerate(points) if q["stage"] == "llm" and q["layer"] == stream["layer"]]
    proj = [i for i, q in enumerate(points) if q["stage"] == "projector"]
    return float(at[0]) if at else (proj[0] + 0.5 if proj else len(points) - 0.5)


def saved_test_rows(folder: Path, points: list[dict]) -> int | None:
    """How many test grids the points were scored on, read from the test predictions a sweep saves beside its figure
    (``points/<point>/test_predictions.npy``, one row per test grid; its header only); None where there are none."""
    for p in points:
        f = folder / "points" / str(p.get("point", "")) / "test_predictions.npy"
        try:
            return int(np.load(f, mmap_mode="r", allow_pickle=False).shape[0])
        except (OSError, ValueError, IndexError):
            continue
    return None


def plot_sweep(points: list[dict], path: Path, title: str, chance: float, reference: dict | None = None,
               n: int | None = None) -> list[str]:
    """``draw_sweep`` written as PNG to ``path`` and as SVG beside it; returns both names. Without ``n``, the test
    grids are counted from the sweep's saved predictions beside ``path`` (``g2m probe sweep``'s folder)."""
    n = n if n is not None else saved_test_rows(path.parent, points)
    write(draw_sweep(points, title, chance, reference, n), path)
    return [path.name, path.with_suffix(".svg").name]
