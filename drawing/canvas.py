"""A figure as a list of shapes in pixels, which ``svg`` and ``raster`` write out: the same shapes, the same places.

The report's and the board's figures are rectangles, lines, markers, text and the heatmaps' pixels, placed by the
figure itself (its margins are known in advance: every panel holds the same kinds of labels), so there is no
layout engine to run and no artist tree to walk: drawing a figure is a pass over this list, once for the PNG and
once for the SVG. That is what makes the scoring commands' figures cheap (matplotlib spent most of a report's CPU
time laying out and drawing the text of these same figures).

Coordinates are pixels of the PNG (``DPI`` per inch), from the top left; sizes of text and line widths are in
points (1/72 inch), as in any plotting library, so a figure is specified in inches and points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from g2m_base.untrusted import term

DPI = 150
PT = DPI / 72  # pixels per point
#: The PNG is drawn at this many times its size and then reduced (``raster``): smooth edges on sloped lines, markers
#: and text, which Pillow draws without anti-aliasing. Text is measured at the size it is drawn.
SCALE = 2
#: Each marker's corners on a circle of radius 1 about its centre, y downwards (a circle, "o", has none).
MARKER_CORNERS = {"s": ((-0.9, -0.9), (0.9, -0.9), (0.9, 0.9), (-0.9, 0.9)),
                  "^": ((0, -1.1), (1, 0.75), (-1, 0.75)),
                  "D": ((0, -1), (0.8, 0), (0, 1), (-0.8, 0)),
                  "*": tuple((round(r * math.sin(k * math.pi / 5), 4), round(-r * math.cos(k * math.pi / 5), 4))
                             for k, r in zip(range(10), (1.15, 0.47) * 5, strict=True))}
#: The one font of every figure: Pillow's own (Aileron), so a figure needs no font from the system and is drawn the
#: same on any machine with the same Pillow; an SVG names it first, then common sans-serif fallbacks.
FONT_FAMILY = "Aileron, DejaVu Sans, Helvetica, Arial, sans-serif"
#: The longest line one label may hold (a model's name inside a title is cut far earlier, by its caller); a text
#: of more lines than any figure writes is cut at 8.
MAX_LABEL = 300


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None = None  # "#rrggbb"; None: not filled
    edge: str | None = None
    width: float = 0.8  # of the edge, in points
    alpha: float = 1.0


@dataclass(frozen=True)
class Lines:
    """One polyline through ``points`` (``segments=False``) or separate segments, each a pair of points."""
    points: tuple[tuple[float, float], ...]
    colour: str
    width: float = 1.0  # points
    dash: tuple[float, ...] = ()  # on, off, ... in points; () solid
    alpha: float = 1.0
    segments: bool = False
    label: str = ""  # what a legend calls it (tests read it back)


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    shape: str  # "o" circle, "s" square, "^" triangle, "D" diamond, "*" star (any other shape: a diamond)
    size: float  # points across
    colour: str
    label: str = ""

    def radius(self) -> float:
        """In pixels: half its size plus a line's width, as plotting libraries draw a marker with its edge."""
        return (self.size + 1) * PT / 2

    def corners(self) -> list[tuple[float, float]]:
        """Its outline in pixels (empty for a circle)."""
        if self.shape == "o":
            return []
        r = self.radius()
        return [(self.x + dx * r, self.y + dy * r) for dx, dy in MARKER_CORNERS.get(self.shape, MARKER_CORNERS["D"])]


@dataclass(frozen=True)
class Text:
    """One line of text; ``(x, y)`` is its anchor: ``ha`` left/center/right along the text, ``va``
    baseline/center/top across it, and the text turned ``rotation`` degrees counter-clockwise about it."""
    x: float
    y: float
    text: str
    size: float  # points
    ha: str = "center"
    va: str = "baseline"
    rotation: float = 0.0
    colour: str = "#000000"


@dataclass(frozen=True)
class Image:
    """An RGB picture (an (h, w, 3) uint8 array at the figure's pixels) drawn in the box ``x, y, w, h``."""
    x: float
    y: float
    w: float
    h: float
    rgb: np.ndarray = field(repr=False, compare=False)


Shape = Rect | Lines | Marker | Text | Image


class Canvas:
    """A figure: its size in pixels and its shapes, in drawing order (``raster.png`` and ``vector.svg`` draw it).
    ``zoom``: the PNG's pixels per figure pixel (2: drawn for a screen of two device pixels per CSS pixel, its PNG
    twice as wide and as high; the shapes, the SVG and the tests' coordinates stay in figure pixels)."""

    def __init__(self, width_in: float, height_in: float, zoom: int = 1) -> None:
        self.width, self.height = round(width_in * DPI), round(height_in * DPI)
        self.zoom = max(1, int(zoom))
        self.shapes: list[Shape] = []

    def add(self, shape: Shape) -> Shape:
        self.shapes.append(shape)
        return shape

    def text(self, x: float, y: float, text: str, size: float, **kw) -> None:
        """``text`` (a title's or label's several lines, split at newlines) anchored at ``(x, y)``; each line below
        the one before, ``va`` placing the first line (a block anchored at its bottom: ``va="bottom"``)."""
        lines = [term(line, MAX_LABEL) for line in str(text).split("\n")[:8]]
        step = 1.25 * size * PT
        va = kw.pop("va", "baseline")
        if va == "bottom":  # the last line's baseline on y: the block grows upwards
            y -= step * (len(lines) - 1) + 0.25 * size * PT
            va = "baseline"
        for k, line in enumerate(lines):
            self.add(Text(x, y + k * step, line, size, va=va, **kw))

    def texts(self) -> list[str]:
        return [s.text for s in self.shapes if isinstance(s, Text)]


@cache
def font(size_px: int):
    """Pillow's own scalable font at ``size_px`` pixels (its bitmap font where Pillow has no FreeType)."""
    from PIL import ImageFont

    return ImageFont.load_default(size=size_px)


def text_width(text: str, size: float) -> float:
    """The width in pixels of ``text`` at ``size`` points, as the PNG draws it."""
    return float(font(max(1, round(size * PT * SCALE))).getlength(text)) / SCALE
