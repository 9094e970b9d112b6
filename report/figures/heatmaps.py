"""Per-cell accuracy for every grid size in one compact grid of panels, each cell drawn where it is in the release
image, with an optional patch grid over it and one colour bar for all."""

from __future__ import annotations

import math

import numpy as np

from dataset_builder.grids.render import cell_layout
from dataset_builder.grids.spec import DEFAULT_RESOLUTION
from drawing.canvas import Canvas, Image, Lines
from drawing.colours import mapped
from drawing.panel import MARGIN, Axes, colour_bar, figure_title, title_room

#: The grid's layout in inches, fixed: every panel holds the same things (a title, ticks 1..N in two-digit numbers,
#: "row" and "column"), so their room is known in advance. Panel side; room left of a panel (its row label and
#: ticks), right of it, above it (its title), below it (ticks and column label); the colour bar's band on the right
#: (the margin around all is every figure's ``MARGIN``).
_SIDE, _LEFT, _RIGHT, _ABOVE, _BELOW, _BAR = 2.0, 0.5, 0.12, 0.3, 0.42, 0.85


def draw_heatmap_grid(hms: dict[int, np.ndarray], counts: dict[int, int], title: str, patch: float | None = None,
                      input_size: float = DEFAULT_RESOLUTION, cols: int = 5) -> Canvas:
    """Per-cell accuracy for every grid size in one compact grid, each cell drawn where it is in the release image,
    axes in cell rows and columns, with an optional patch grid (``patch`` pixels at ``input_size``). Each panel gets
    the room its labels need (``_SIDE`` and the rest), so that one panel's labels never run into the next panel."""
    ns = sorted(hms)
    cols = max(1, min(cols, len(ns)))
    rows = max(1, math.ceil(len(ns) / cols))
    heading = title + (f"; white lines: {patch:g}-px patches at {input_size:g} px" if patch else "")
    top = title_room(heading)
    cell_w, cell_h = _LEFT + _SIDE + _RIGHT, _ABOVE + _SIDE + _BELOW
    canvas = Canvas(MARGIN * 2 + cols * cell_w + _BAR, top + rows * cell_h + MARGIN)
    figure_title(canvas, heading)
    side = DEFAULT_RESOLUTION
    for i, n in enumerate(ns):
        r, c = divmod(i, cols)
        ax = Axes(canvas, MARGIN + c * cell_w + _LEFT, top + r * cell_h + _ABOVE, _SIDE, _SIDE, (0, side), (0, side),
                  yflip=True)
        canvas.add(Image(ax.x0, ax.y0, ax.w, ax.h, _cells(np.asarray(hms[n], dtype=float), n, round(ax.w))))
        if patch:  # one shape for all the lines of a panel: 15 panels of 32-px patches are ~1,000 lines
            edges = np.arange(0, side + 1e-9, patch * side / input_size)
            xs, ys = ax.x(edges), ax.y(edges)
            pts = [p for x in xs for p in ((x, ax.y0), (x, ax.y0 + ax.h))]
            pts += [p for y in ys for p in ((ax.x0, y), (ax.x0 + ax.w, y))]
            canvas.add(Lines(tuple(pts), "#ffffff", 0.4, alpha=0.7, segments=True, label="patches"))
        ax.frame()
        centres, labels = _cell_ticks(n)
        ax.xticks(centres, labels, size=6)
        ax.yticks(centres, labels, size=6)
        ax.title(f"N={n} ({counts.get(n, 0)} grids)")
        ax.xlabel("column", size=7)
        ax.ylabel("row", size=7)
    if ns:
        bar_h = 0.8 * rows * cell_h - _ABOVE - _BELOW if rows > 1 else _SIDE
        bar_top = top + (rows * cell_h - bar_h) / 2
        colour_bar(canvas, MARGIN + cols * cell_w + 0.15, bar_top, 0.15, bar_h, "viridis", "cell accuracy")
    return canvas


def _cells(hm: np.ndarray, n: int, pixels: int) -> np.ndarray:
    """The panel's picture, ``pixels`` on a side: each pixel the colour of the cell under its centre in the release
    image (cells are not all the same width: 512 px rarely divides by N); a cell without a value is left white."""
    under = ((np.arange(pixels) + 0.5) * DEFAULT_RESOLUTION / pixels).astype(np.intp)  # the image pixel under each
    owner = cell_layout(n).owner[under]  # the release's own pixel -> cell map
    values = hm[np.ix_(owner, owner)]
    rgb = mapped(values, "viridis")
    rgb[np.isnan(values)] = 255  # a cell no grid had: left blank
    return rgb


def _cell_ticks(n: int) -> tuple[list[float], list[str]]:
    """Ticks in cells (1..N at cell centres; three of them past N = 4), where the cells are in the image."""
    centres = np.asarray(cell_layout(n).centres, dtype=float) + 0.5
    picks = sorted({0, n // 2, n - 1} if n > 4 else set(range(n)))
    return [float(centres[i]) for i in picks], [str(i + 1) for i in picks]
