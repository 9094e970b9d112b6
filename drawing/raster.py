"""A ``Canvas`` drawn as a PNG by Pillow: at ``SCALE`` times its size and then reduced, so that sloped lines, markers
and text have smooth edges (Pillow draws shapes without anti-aliasing); written by ``g2m_base.png``."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image as PILImage
from PIL import ImageDraw, __version__

from drawing.canvas import DPI, PT, SCALE, Canvas, Image, Lines, Marker, Rect, Text, font
from drawing.colours import hex_rgb
from g2m_base.png import rgb_png

_ANCHOR_H = {"left": "l", "center": "m", "right": "r"}
_ANCHOR_V = {"baseline": "s", "center": "m", "top": "t"}


def png(canvas: Canvas) -> bytes:
    """``canvas`` as PNG bytes: opaque white behind everything, the shapes in order, ``canvas.zoom`` PNG pixels to a
    figure pixel (its DPI as many times 150)."""
    k = SCALE * canvas.zoom  # drawn pixels per figure pixel
    im = PILImage.new("RGB", (canvas.width * k, canvas.height * k), "white")
    draw = ImageDraw.Draw(im, "RGBA")  # RGBA: a colour with alpha is blended over what is there
    for shape in canvas.shapes:
        if isinstance(shape, Rect):
            _rect(draw, shape, k)
        elif isinstance(shape, Lines):
            _lines(draw, shape, k)
        elif isinstance(shape, Marker):
            _marker(draw, shape, k)
        elif isinstance(shape, Text):
            _text(im, draw, shape, k)
        elif isinstance(shape, Image):
            _image(im, shape, k)
    rgb = np.asarray(im.reduce(SCALE))
    return rgb_png(rgb, DPI * canvas.zoom, {"Software": f"grid2matrix figures, Pillow {__version__}"})


def _rgba(colour: str, alpha: float = 1.0) -> tuple[int, int, int, int]:
    return (*hex_rgb(colour), round(255 * alpha))


def _px(width_pt: float, k: int = SCALE) -> int:
    return max(1, round(width_pt * PT * k))


def _rect(draw, r: Rect, k: int = SCALE) -> None:
    box = [r.x * k, r.y * k, (r.x + r.w) * k - 1, (r.y + r.h) * k - 1]
    if box[2] < box[0] or box[3] < box[1]:
        return
    draw.rectangle(box, fill=_rgba(r.fill, r.alpha) if r.fill else None,
                   outline=_rgba(r.edge, r.alpha) if r.edge else None, width=_px(r.width, k) if r.edge else 0)


def _dashed(points: list[tuple[float, float]], dash: tuple[float, ...]) -> list[list[tuple[float, float]]]:
    """The drawn pieces of a polyline under a dash pattern (lengths in pixels)."""
    pieces, current, on, k, left = [], [points[0]], True, 0, dash[0]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        seg = math.hypot(x1 - x0, y1 - y0)
        done = 0.0
        while seg - done > left:
            done += left
            p = (x0 + (x1 - x0) * done / seg, y0 + (y1 - y0) * done / seg)
            if on:
                pieces.append([*current, p])
            current = [p]
            on, k = not on, (k + 1) % len(dash)
            left = dash[k]
        left -= seg - done
        current.append((x1, y1))
    if on and len(current) > 1:
        pieces.append(current)
    return pieces


def _lines(draw, ln: Lines, k: int = SCALE) -> None:
    pts = [(x * k, y * k) for x, y in ln.points]
    colour, width = _rgba(ln.colour, ln.alpha), _px(ln.width, k)
    runs = [pts[k:k + 2] for k in range(0, len(pts) - 1, 2)] if ln.segments else [pts]
    for run in runs:
        if ln.dash:
            for piece in _dashed(run, tuple(d * PT * k for d in ln.dash)):
                draw.line(piece, fill=colour, width=width)
        else:
            draw.line(run, fill=colour, width=width, joint="curve" if len(run) > 2 else None)


def _marker(draw, m: Marker, k: int = SCALE) -> None:
    if m.shape == "o":
        x, y, r = m.x * k, m.y * k, m.radius() * k
        draw.ellipse([x - r, y - r, x + r, y + r], fill=_rgba(m.colour))
    else:
        draw.polygon([(x * k, y * k) for x, y in m.corners()], fill=_rgba(m.colour))


def _text(im, draw, t: Text, k: int = SCALE) -> None:
    f = font(max(1, round(t.size * PT * k)))
    anchor = _ANCHOR_H[t.ha] + _ANCHOR_V[t.va]
    colour = _rgba(t.colour)
    if not t.rotation:
        draw.text((t.x * k, t.y * k), t.text, fill=colour, font=f, anchor=anchor)
        return
    # turned text: drawn upright into a mask of its own box, the mask turned (grown to hold it), then the colour
    # pasted through it so that the anchor lands where the anchor was
    left, top, right, bottom = f.getbbox(t.text, anchor=anchor)
    if right <= left or bottom <= top:
        return
    mask = PILImage.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text((-left, -top), t.text, fill=255, font=f, anchor=anchor)
    turned = mask.rotate(t.rotation, resample=PILImage.Resampling.BICUBIC, expand=True)
    # the anchor relative to the mask's centre, turned the way the picture turns (y grows downwards)
    dx, dy = -left - mask.width / 2, -top - mask.height / 2
    a = math.radians(t.rotation)
    ax, ay = dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)
    at = (round(t.x * k - ax - turned.width / 2), round(t.y * k - ay - turned.height / 2))
    im.paste(colour[:3], at, turned)


def _image(im, i: Image, k: int = SCALE) -> None:
    pic = PILImage.fromarray(np.ascontiguousarray(i.rgb), "RGB")
    size = (max(1, round(i.w * k)), max(1, round(i.h * k)))
    im.paste(pic.resize(size, PILImage.Resampling.NEAREST), (round(i.x * k), round(i.y * k)))


def corners(t: Text) -> list[tuple[float, float]]:
    """The four corners, in the figure's pixels, of the box that ``t``'s glyphs cover as ``png`` draws them, turned
    as the text is: what a test needs to see that no label runs into another."""
    f = font(max(1, round(t.size * PT * SCALE)))
    left, top, right, bottom = (v / SCALE for v in f.getbbox(t.text, anchor=_ANCHOR_H[t.ha] + _ANCHOR_V[t.va]))
    a = math.radians(t.rotation)
    return [(t.x + dx * math.cos(a) + dy * math.sin(a), t.y - dx * math.sin(a) + dy * math.cos(a))
            for dx, dy in ((left, top), (right, top), (right, bottom), (left, bottom))]
