"""A panel of a figure (``Axes``: a box with data limits, its frame, ticks, labels and title) and the parts around
panels (a legend, a colour bar), drawn onto a ``Canvas`` with the sizes a reader of plots expects: frame and ticks
0.8 pt, ticks 3.5 pt long, a tick label 3.5 pt from its tick, an axis label 4 pt beyond the tick labels, a panel's
title 6 pt above it."""

from __future__ import annotations

import math

import numpy as np

from drawing.canvas import DPI, PT, Canvas, Image, Lines, Marker, Rect, text_width
from drawing.colours import mapped

TICK, PAD, LABEL_PAD, TITLE_PAD, FRAME = 3.5, 3.5, 4.0, 6.0, 0.8  # points


class Axes:
    """A panel at ``left, top`` (inches from the figure's top left), ``width`` x ``height`` inches, showing
    ``xlim`` x ``ylim`` of data (``xlog``: x on a log-2 scale; ``yflip``: y grows downwards, as in an image)."""

    def __init__(self, canvas: Canvas, left: float, top: float, width: float, height: float,
                 xlim: tuple[float, float], ylim: tuple[float, float], xlog: bool = False, yflip: bool = False):
        self.c = canvas
        self.x0, self.y0, self.w, self.h = left * DPI, top * DPI, width * DPI, height * DPI
        self.xlog, self.yflip = xlog, yflip
        self.xlim = tuple(math.log2(v) for v in xlim) if xlog else xlim
        self.ylim = ylim
        self.below = 0.0  # pixels under the frame that tick labels take (the x label goes past them)
        self.beside = 0.0  # pixels left of the frame that tick labels take

    def x(self, v):
        v = np.log2(np.asarray(v, dtype=float)) if self.xlog else np.asarray(v, dtype=float)
        return self.x0 + (v - self.xlim[0]) / (self.xlim[1] - self.xlim[0]) * self.w

    def y(self, v):
        f = (np.asarray(v, dtype=float) - self.ylim[0]) / (self.ylim[1] - self.ylim[0])
        return self.y0 + (f if self.yflip else 1 - f) * self.h

    def frame(self) -> None:
        self.c.add(Rect(self.x0, self.y0, self.w, self.h, edge="#000000", width=FRAME))

    def xticks(self, values, labels, size: float = 10, rotation: float = 0) -> None:
        xs = self.x(values)
        bottom = self.y0 + self.h
        self.c.add(Lines(tuple(p for x in xs for p in ((x, bottom), (x, bottom + TICK * PT))), "#000000", FRAME,
                         segments=True))
        top = bottom + (TICK + PAD) * PT
        deepest = size * PT
        for x, label in zip(xs, labels, strict=True):
            if rotation:
                self.c.text(x, top, label, size, ha="right", va="top", rotation=rotation)
                turn = math.radians(rotation)
                deepest = max(deepest, text_width(label, size) * math.sin(turn) + size * PT * math.cos(turn))
            else:
                self.c.text(x, top, label, size, va="top")
        self.below = top - bottom + deepest

    def yticks(self, values, labels, size: float = 10) -> None:
        ys = self.y(values)
        self.c.add(Lines(tuple(p for y in ys for p in ((self.x0, y), (self.x0 - TICK * PT, y))), "#000000", FRAME,
                         segments=True))
        right = self.x0 - (TICK + PAD) * PT
        for y, label in zip(ys, labels, strict=True):
            self.c.text(right, y, label, size, ha="right", va="center")
        self.beside = (TICK + PAD) * PT + max((text_width(t, size) for t in labels), default=0)

    def xlabel(self, text: str, size: float = 10) -> None:
        self.c.text(self.x0 + self.w / 2, self.y0 + self.h + self.below + LABEL_PAD * PT, text, size, va="top")

    def ylabel(self, text: str, size: float = 10) -> None:
        """Turned a quarter; a label of several lines grows away from the panel."""
        lines = text.split("\n")
        x = self.x0 - self.beside - LABEL_PAD * PT - size * PT * 0.25
        for k, line in enumerate(reversed(lines)):
            self.c.text(x - k * 1.25 * size * PT, self.y0 + self.h / 2, line, size, rotation=90)

    def title(self, text: str, size: float = 8) -> None:
        self.c.text(self.x0 + self.w / 2, self.y0 - TITLE_PAD * PT, text, size, va="bottom")

    def message(self, text: str, size: float = 9) -> None:
        """A panel with nothing to draw says so: ``text`` centred in its frame (lines of it split at newlines), in
        grey, in place of marks that would show nothing (intervals of values that are all 0, or no values)."""
        lines = text.split("\n")
        step = 1.25 * size * PT
        top = self.y0 + self.h / 2 - (len(lines) - 1) * step / 2
        wide = max(text_width(line, size) for line in lines) + 2 * size * PT
        high = len(lines) * step + 0.8 * size * PT
        self.c.add(Rect(self.x0 + (self.w - wide) / 2, self.y0 + (self.h - high) / 2, wide, high, fill="#ffffff",
                        edge="#cccccc", width=0.5))  # the message over the panel's shading and lines, read at once
        self.c.text(self.x0 + self.w / 2, top, text, size, va="center", colour="#555555")

    def hline(self, v: float, colour: str, width: float = 1.0, dash: tuple[float, ...] = (), label: str = "") -> None:
        y = float(self.y(v))
        self.c.add(Lines(((self.x0, y), (self.x0 + self.w, y)), colour, width, dash, label=label))

    def errorbars(self, xs, lo, hi, colour: str, width: float = 0.9, cap: float = 2.5) -> None:
        """A vertical bar from ``lo`` to ``hi`` at each x, with a cap ``cap`` points wide each side at both ends; a
        point without an interval (NaN: one grid) gets no bar."""
        px, ylo, yhi = self.x(xs), self.y(lo), self.y(hi)
        keep = [(x, a, b) for x, a, b in zip(px, ylo, yhi, strict=True) if np.isfinite((x, a, b)).all()]
        if not keep:
            return
        self.c.add(Lines(tuple(p for x, a, b in keep for p in ((x, a), (x, b))), colour, width, segments=True,
                         label="interval"))
        half = cap * PT
        ends = [p for x, a, b in keep for y in (a, b) for p in ((x - half, y), (x + half, y))]
        self.c.add(Lines(tuple(ends), colour, width, segments=True, label="cap"))

    def curve(self, xs, ys, colour: str, width: float = 1.2, dash: tuple[float, ...] = (), marker: str = "",
              size: float = 4.5, label: str = "") -> None:
        """A line through the points, broken where a value is missing (NaN), with ``marker`` at each point."""
        points = [(x, y) for x, y in zip(self.x(xs), self.y(ys), strict=True)]
        run: list[tuple[float, float]] = []
        for p in [*points, (np.nan, np.nan)]:
            if np.isfinite(p).all():
                run.append(p)
                continue
            if len(run) > 1:
                self.c.add(Lines(tuple(run), colour, width, dash, label=label))
            for x, y in run if marker else ():
                self.c.add(Marker(x, y, marker, size, colour, label=label))
            run = []

    def bars(self, xs, heights, colours: list[str | None], width: float = 0.8, edge: str = "#000000") -> None:
        """Bars from 0, centred on ``xs`` (data units), ``width`` data units wide; a colour of None: edge only."""
        for x, h, colour in zip(xs, heights, colours, strict=True):
            if not np.isfinite(h):
                continue
            left, right = self.x(x - width / 2), self.x(x + width / 2)
            a, b = sorted((float(self.y(0)), float(self.y(h))))
            self.c.add(Rect(left, a, right - left, b - a, fill=colour, edge=edge, width=FRAME))


def nothing_to_show(values) -> bool:
    """Whether a panel's values leave nothing to draw: none of them, none finite, or every one 0."""
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v)]
    return not v.size or bool(np.all(v == 0))


def nice_ticks(lo: float, hi: float, most: int = 9) -> list[float]:
    """Round values from ``lo`` to ``hi``, steps of 1, 2, 2.5 or 5 times a power of ten, at most ``most`` of them."""
    span = max(hi - lo, 1e-12)
    for k in range(math.floor(math.log10(span / most)), 20):
        for m in (1, 2, 2.5, 5):
            step = m * 10.0 ** k
            first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
            if last - first + 1 <= most:
                return [round(i * step, 12) for i in range(first, last + 1)]
    return [lo, hi]


def tick_labels(values: list[float]) -> list[str]:
    """Each value with as many decimals as the step between them needs (the figures' font has no minus sign of its
    own: negatives keep the hyphen-minus)."""
    step = min((b - a for a, b in zip(values, values[1:], strict=False)), default=1.0)
    digits = max(1, -math.floor(math.log10(step) + 1e-9) + (1 if round(step / 10 ** math.floor(math.log10(step)), 6)
                                                              == 2.5 else 0))
    return [f"{v:.{digits}f}" if round(v, digits) else f"{0:.{digits}f}" for v in values]


def legend(canvas: Canvas, entries: list[tuple[str, dict]], centre_x: float, top: float, size: float = 7,
           ncol: int = 4) -> None:
    """``entries`` (label, style: colour, and ``marker``, ``dash``, ``bar`` for an interval) in ``ncol`` columns
    centred on ``centre_x``, rows from ``top`` (pixels), each row 1.5 lines apart, as a plotting library lays out
    a frameless legend."""
    if not entries:
        return
    em = size * PT
    cols = max(1, min(ncol, len(entries)))
    widths = [max(text_width(label, size) for label, _ in entries[c::cols]) for c in range(cols)]
    col_w = [2.0 * em + 0.8 * em + w for w in widths]
    x = centre_x - (sum(col_w) + 2.0 * em * (cols - 1)) / 2
    for c in range(cols):
        for r, (label, style) in enumerate(entries[c::cols]):
            y = top + (r + 0.5) * 1.5 * em
            colour = style["colour"]
            canvas.add(Lines(((x, y), (x + 2 * em, y)), colour, style.get("width", 1.2), style.get("dash", ()),
                             label=f"legend: {label}"))
            if style.get("bar"):
                canvas.add(Lines(((x + em, y - 0.6 * em), (x + em, y + 0.6 * em)), colour, 0.9))
            if style.get("marker"):
                canvas.add(Marker(x + em, y, style["marker"], 4.5, colour))
            canvas.text(x + 2.8 * em, y, label, size, ha="left", va="center")
        x += col_w[c] + 2.0 * em


def colour_bar(canvas: Canvas, left: float, top: float, width: float, height: float, cmap: str, label: str,
               size: float = 10) -> None:
    """A vertical colour bar for values 0..1 in the box (inches), ticked every 0.2 on its right, ``label`` beside."""
    ramp = mapped(np.linspace(1, 0, max(2, round(height * DPI)))[:, None].repeat(2, axis=1), cmap)
    canvas.add(Image(left * DPI, top * DPI, width * DPI, height * DPI, ramp))
    bar = Axes(canvas, left, top, width, height, (0, 1), (0, 1))
    bar.frame()
    values = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    x1 = bar.x0 + bar.w
    canvas.add(Lines(tuple(p for y in bar.y(values) for p in ((x1, y), (x1 + TICK * PT, y))), "#000000", FRAME,
                     segments=True))
    for y, text in zip(bar.y(values), tick_labels(values), strict=True):
        canvas.text(x1 + (TICK + PAD) * PT, y, text, size, ha="left", va="center")
    far = x1 + (TICK + PAD + LABEL_PAD) * PT + text_width("0.0", size) + size * PT
    canvas.text(far, bar.y0 + bar.h / 2, label, size, rotation=90)


#: Inches: the margin around a figure, and one line of its title (10 pt) and of a panel's title (8 pt).
MARGIN, TITLE_LINE, PANEL_LINE = 0.08, 0.19, 0.14


def title_room(title: str) -> float:
    """Inches from the figure's top that its title takes, margins included (known before the figure's height is)."""
    return MARGIN + TITLE_LINE * (title.count("\n") + 1) + MARGIN


def figure_title(canvas: Canvas, title: str, size: float = 10) -> float:
    """``title`` centred over the figure; returns ``title_room``."""
    canvas.text(canvas.width / 2, MARGIN * DPI, title, size, va="top")
    return title_room(title)


def panel_title_room(lines: int) -> float:
    """Inches above a panel for a title of ``lines`` lines at 8 pt and its gap."""
    return TITLE_PAD / 72 + PANEL_LINE * lines


def boxes(canvas: Canvas, rows: int, cols: int, left: float, right: float, top: float, bottom: float,
          wspace: float = 0.0, hspace: float = 0.0, ratios: tuple[float, ...] = ()) -> list[list[tuple]]:
    """The panels' boxes (left, top, width, height in inches), row by row, for margins and gaps in inches;
    ``ratios``: the columns' relative widths (equal by default)."""
    width, height = canvas.width / DPI, canvas.height / DPI
    ratios = ratios or (1.0,) * cols
    free_w = width - left - right - (cols - 1) * wspace
    panel_h = (height - top - bottom - (rows - 1) * hspace) / rows
    widths = [free_w * r / sum(ratios) for r in ratios]
    lefts = [left + sum(widths[:c]) + c * wspace for c in range(cols)]
    return [[(lefts[c], top + r * (panel_h + hspace), widths[c], panel_h) for c in range(cols)] for r in range(rows)]
