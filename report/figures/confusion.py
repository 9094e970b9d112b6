"""Colour confusion per palette size: the confusion among the cells read as a palette colour (rows sum to 1), beside
it and apart the share of each colour's cells read as no colour (another value, missing, unparseable), and each
colour's over- or under-prediction among the cells read as a colour.

A model that reads every cell right but stops after half the rows has a diagonal of 1 and a "missing" column of 0.5:
what it failed at is shown as what it is, not as a colour confusion."""

from __future__ import annotations

import numpy as np

from dataset_builder.grids.spec import PALETTE
from drawing.canvas import Canvas, Image
from drawing.colours import mapped, rgb_hex
from drawing.panel import Axes, boxes, colour_bar, figure_title, nice_ticks, panel_title_room, tick_labels
from scoring.rescoring.rescore import NO_COLOUR

BAR_SHARE, BAR_PAD = 0.15, 0.05  # of the left panel's width: its colour bar's band, and the gap before it


def draw_confusion(by_palette: dict[int, np.ndarray], biases: dict[int, dict], title: str) -> Canvas:
    """Per palette size, a row of two panels: the confusion of true against predicted colour among the cells read as
    a colour (rows sum to 1) with the ``NO_COLOUR`` shares of all cells apart on its right, and the over/under
    prediction of each colour among the cells read as a colour, the no-colour rates in its title."""
    cs = sorted(by_palette)
    canvas = Canvas(11, 3.75 * max(1, len(cs)))
    top = figure_title(canvas, title) + panel_title_room(2)  # the bias panel's title: two lines
    # below each row: tick labels turned 45 degrees and the axis label, then the next row's title
    rows = boxes(canvas, max(1, len(cs)), 2, left=0.9, right=0.2, top=top, bottom=0.8, wspace=0.75, hspace=1.1,
                 ratios=(1.3, 1.0))
    for (left_box, right_box), c in zip(rows, cs, strict=False):
        names = [PALETTE[i].name for i in range(c)]
        _matrix(canvas, left_box, by_palette[c].astype(float), names, c)
        _bias(canvas, right_box, biases[c], names, c)
    return canvas


def _matrix(canvas: Canvas, box: tuple, conf: np.ndarray, names: list[str], c: int) -> None:
    """The confusion as square cells, a blank column, then the no-colour columns, fitted in the box less its colour
    bar's band (at the box's right)."""
    left, top, width, height = box
    room = width * (1 - BAR_SHARE - BAR_PAD)
    columns = c + 1 + len(NO_COLOUR)
    cell = min(room / columns, height / c)
    img_w, img_h = cell * columns, cell * c
    ax = Axes(canvas, left + room - img_w, top + (height - img_h) / 2, img_w, img_h, (-0.5, columns - 0.5),
              (-0.5, c - 0.5), yflip=True)
    colours = conf[:, :c]
    among_read = colours / np.maximum(colours.sum(1, keepdims=True), 1)  # rows sum to 1 (0 where none was read)
    of_all = conf[:, c:] / np.maximum(conf.sum(1, keepdims=True), 1)
    rgb = np.concatenate([mapped(among_read, "magma"), np.full((c, 1, 3), 255, np.uint8), mapped(of_all, "magma")],
                         axis=1)
    canvas.add(Image(ax.x0, ax.y0, ax.w, ax.h, rgb))
    ax.frame()
    ax.xticks([*range(c), *range(c + 1, columns)], [*names, *NO_COLOUR], size=7, rotation=45)
    ax.yticks(list(range(c)), names, size=7)
    ax.xlabel("predicted")
    ax.ylabel("true")
    ax.title(f"C={c}: confusion of cells read as a colour (rows sum to 1); right: share of all cells", size=7)
    colour_bar(canvas, left + width * (1 - BAR_SHARE), top, height / 20, height, "magma",
               "share of the true colour's cells")


def _bias(canvas: Canvas, box: tuple, bias: dict, names: list[str], c: int) -> None:
    values = [v if v is not None else 0.0 for v in bias["bias"]]
    lim = max(0.25, 1.15 * max(map(abs, values), default=0))  # noise of a few per mille must look like noise
    ax = Axes(canvas, *box, xlim=(-0.6, c - 0.4), ylim=(-lim, lim))
    ax.bars(list(range(c)), values, [rgb_hex(PALETTE[i].rgb) for i in range(c)])
    ax.hline(0, "#000000", 0.8)
    ax.frame()
    ax.xticks(list(range(c)), names, size=7, rotation=45)
    ticks = nice_ticks(-lim, lim, 7)
    ax.yticks(ticks, tick_labels(ticks))
    ax.ylabel("predicted / actual - 1")
    rates = "; ".join(f"{kind} {'-' if v is None else f'{v:.1%}'}" for kind, v in bias["rates"].items())
    ax.title(f"C={c}: over/under prediction (cells read as a colour)\n{rates}", size=7)
