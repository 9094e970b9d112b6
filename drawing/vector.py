"""A ``Canvas`` written as SVG, through a Jinja2 template with autoescape: every text of a figure (a model's name in
a title, too) is escaped as XML, like every page of ours. The heatmaps' pixels are embedded as PNG, as a plotting
library embeds a rasterised mesh. The same canvas gives the same bytes: no date, no random ids."""

from __future__ import annotations

import base64
from pathlib import Path

from drawing.canvas import DPI, FONT_FAMILY, PT, Canvas, Image, Lines, Marker, Rect, Text
from drawing.html import render
from g2m_base.png import rgb_png

TEMPLATES = Path(__file__).with_name("templates")
_ANCHOR = {"left": "start", "center": "middle", "right": "end"}
_BASELINE = {"baseline": "alphabetic", "center": "central", "top": "hanging"}


def _n(v: float) -> str:
    """A coordinate to a hundredth of a pixel, without trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def svg(canvas: Canvas) -> str:
    """``canvas`` as an SVG document, sized in points like the PNG is in pixels at ``DPI``."""
    shapes = [_item(s) for s in canvas.shapes]
    return render(TEMPLATES, "figure.svg.j2", width=canvas.width, height=canvas.height, font=FONT_FAMILY,
                  width_pt=_n(canvas.width * 72 / DPI), height_pt=_n(canvas.height * 72 / DPI), shapes=shapes)


def _item(s) -> dict:
    if isinstance(s, Rect):
        return {"kind": "rect", "x": _n(s.x), "y": _n(s.y), "w": _n(s.w), "h": _n(s.h), "fill": s.fill or "none",
                "edge": s.edge or "none", "sw": _n(s.width * PT if s.edge else 0), "alpha": _n(s.alpha)}
    if isinstance(s, Lines):
        pts = s.points
        if s.segments:
            d = " ".join(f"M{_n(a[0])} {_n(a[1])}L{_n(b[0])} {_n(b[1])}" for a, b in zip(pts[::2], pts[1::2],
                                                                                          strict=False))
        else:
            d = "M" + "L".join(f"{_n(x)} {_n(y)}" for x, y in pts)
        dash = ",".join(_n(v * PT) for v in s.dash) or "none"
        return {"kind": "path", "d": d, "colour": s.colour, "sw": _n(s.width * PT), "dash": dash, "alpha": _n(s.alpha)}
    if isinstance(s, Marker):
        if s.shape == "o":
            return {"kind": "circle", "x": _n(s.x), "y": _n(s.y), "r": _n(s.radius()), "colour": s.colour}
        return {"kind": "polygon", "points": " ".join(f"{_n(x)},{_n(y)}" for x, y in s.corners()), "colour": s.colour}
    if isinstance(s, Text):
        turn = f"rotate({_n(-s.rotation)} {_n(s.x)} {_n(s.y)})" if s.rotation else ""
        return {"kind": "text", "x": _n(s.x), "y": _n(s.y), "size": _n(s.size * PT), "anchor": _ANCHOR[s.ha],
                "baseline": _BASELINE[s.va], "colour": s.colour, "transform": turn, "text": s.text}
    if isinstance(s, Image):
        href = "data:image/png;base64," + base64.b64encode(rgb_png(s.rgb, DPI, {})).decode("ascii")
        return {"kind": "image", "x": _n(s.x), "y": _n(s.y), "w": _n(s.w), "h": _n(s.h), "href": href}
    raise TypeError(f"not a shape: {type(s).__name__}")
