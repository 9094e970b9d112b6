"""Colour confusion per palette size: the row-normalised confusion (with an "invalid" column), and each colour's over-
or under-prediction among the cells read as a palette colour, with the invalid rate apart."""

from __future__ import annotations

import numpy as np

from dataset_builder.grids.spec import PALETTE
from leaderboard.figures.canvas import Canvas, Image
from leaderboard.figures.colours import mapped, rgb_hex
from leaderboard.figures.panel import Axes, boxes, colour_bar, figure_title, nice_ticks, panel_title_room, tick_labels

BAR_SHARE, BAR_PAD = 0.15, 0.05  # of the left panel's width: its colour bar's band, and the gap before it


def draw_confusion(by_palette: dict[int, np.ndarray], biases: dict[int, dict], title: str) -> Canvas:
    """Per palette size, a row of two panels: the confusion of true against predicted colour (rows sum to 1), and
    the over/under prediction of each colour among valid cells, its invalid rate in the title."""
    cs = sorted(by_palette)
    canvas = Canvas(11, 3.6 * max(1, len(cs)))
    top = figure_title(canvas, title) + panel_title_room(1)
    # below each row: tick labels turned 45 degrees and the axis label, then the next row's title
    rows = boxes(canvas, max(1, len(cs)), 2, left=0.9, right=0.2, top=top, bottom=0.8, wspace=0.75, hspace=0.95,
                 ratios=(1.3, 1.0))
    for (left_box, right_box), c in zip(rows, cs, strict=False):
        names = [PALETTE[i].name for i in range(c)]
        _matrix(canvas, left_box, by_palette[c].astype(float), names, c)
        _bias(canvas, right_box, biases[c], names, c)
    return canvas


def _matrix(canvas: Canvas, box: tuple, conf: np.ndarray, names: list[str], c: int) -> None:
    """The confusion as square cells, fitted in the box less its colour bar's band, against that band (where the
    bar is, at the box's right)."""
    left, top, width, height = box
    room = width * (1 - BAR_SHARE - BAR_PAD)
    cell = min(room / (c + 1), height / c)
    img_w, img_h = cell * (c + 1), cell * c
    ax = Axes(canvas, left + room - img_w, top + (height - img_h) / 2, img_w, img_h, (-0.5, c + 0.5),
              (-0.5, c - 0.5), yflip=True)
    norm = conf / np.maximum(conf.sum(1, keepdims=True), 1)
    canvas.add(Image(ax.x0, ax.y0, ax.w, ax.h, mapped(norm, "magma")))
    ax.frame()
    ax.xticks(list(range(c + 1)), [*names, "invalid"], size=7, rotation=45)
    ax.yticks(list(range(c)), names, size=7)
    ax.xlabel("predicted")
    ax.ylabel("true")
    ax.title(f"C={c}: confusion (rows sum to 1)")
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
    rate = bias["invalid_rate"]
    ax.title(f"C={c}: over/under prediction (valid cells); invalid: {'-' if rate is None else f'{rate:.1%}'}")

