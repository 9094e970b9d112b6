"""A canvas written out: the PNG and, unless asked not to, the SVG beside it, each atomically (a figure is never half
written, and a reader never sees a PNG of one drawing beside the SVG of another's last write)."""

from __future__ import annotations

from pathlib import Path

from drawing.canvas import Canvas
from drawing.raster import png
from drawing.vector import svg as svg_text
from g2m_base.files import atomic_write_bytes, atomic_write_text


def write(canvas: Canvas, path: Path, svg: bool = True) -> str:
    """The PNG at ``path`` and, with ``svg``, the SVG beside it; returns the PNG's file name."""
    atomic_write_bytes(path, png(canvas))
    if svg:
        atomic_write_text(path.with_suffix(".svg"), svg_text(canvas))
    return path.name
