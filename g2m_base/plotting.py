"""Matplotlib for figures written to files: the one place that picks the non-interactive backend, and writes a figure
as PNG (and SVG) with its layout solved once; and ``png_bytes``, the PNG writer every figure of ours uses.

The probes' figures (a probe's curve and heatmap, a sweep's map) draw with matplotlib, imported only when one is
drawn (an optional dependency, in the ``probing`` and ``report`` extras); the report's and the board's own figures
are drawn without it (``report.figures``).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from g2m_base.files import atomic_write_bytes

#: No creation date in an SVG (with ``pyplot()``'s fixed id salt, the same figure is the same bytes).
SVG_METADATA = {"Date": None}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend: files only, no display is needed or touched. SVG ids are salted
    with a constant rather than at random, so that a figure is the same bytes every time it is drawn. An SVG's text
    is written as text (in the figure's font, DejaVu Sans, then the usual sans-serif fallbacks) rather than as the
    outline of every glyph: a third of what writing the SVG cost, a smaller file, and text a reader can select
    and search."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "g2m"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def write(fig, path: Path, dpi: float | None = None, svg: bool = True) -> None:
    """``fig`` written to ``path`` as PNG at ``dpi`` (default: the figure's), with ``svg`` beside it as SVG too, then
    closed.

    Its layout engine (``tight_layout()``'s or constrained layout) is run once, at the PNG's dpi, and then switched
    off: left to ``savefig``, every save draws the whole figure once more just to lay it out again, while measuring
    text and ticks is most of what a figure costs to draw. Both files get the layout the PNG would have had on its
    own."""
    dpi = dpi or fig.dpi
    engine = fig.get_layout_engine()
    own = fig.dpi
    fig.set_dpi(dpi)
    try:
        if engine is not None:
            engine.execute(fig)  # a no-op once tight_layout() has placed the axes
        fig.set_layout_engine(None)
        _png(fig, path, dpi)
    finally:
        fig.set_dpi(own)
    if svg:
        import io

        buf = io.BytesIO()  # drawn whole, then written atomically: never half an SVG
        fig.savefig(buf, format="svg", metadata=SVG_METADATA)
        atomic_write_bytes(path.with_suffix(".svg"), buf.getvalue())
    pyplot().close(fig)


def _png(fig, path: Path, dpi: float) -> None:
    """``fig`` drawn by Agg at its dpi, written as an RGB PNG (``png_bytes``): what ``savefig`` draws, without the
    round trip through its printing machinery."""
    import numpy as np
    from matplotlib import __version__
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    software = f"Matplotlib version{__version__}, https://matplotlib.org/"  # as savefig writes it
    atomic_write_bytes(path, png_bytes(rgba[:, :, :3], dpi, {"Software": software}))


def png_bytes(rgb, dpi: float, text: dict[str, str]) -> bytes:
    """An (H, W, 3) uint8 image as PNG bytes: every row unfiltered, deflated by Python's zlib at level 6, with its
    dpi and ``text`` (Latin-1) in the header. A figure is large areas of one colour, which deflate finds without a
    filter's help; Pillow tried every filter on every row (its adaptive choice) and wrote the alpha channel too
    (a figure's background is opaque: every alpha 255), which took about twice as long for files of the same size."""
    import numpy as np

    height, width, _ = rgb.shape
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0  # filter type None
    # each row's pixels, written in place through a view (the RGBA buffer's RGB is not contiguous: no copy of it)
    np.lib.stride_tricks.as_strided(rows[:, 1:], (height, width, 3), (rows.strides[0], 3, 1))[...] = rgb
    per_metre = int(dpi / 0.0254 + 0.5)
    return b"".join((b"\x89PNG\r\n\x1a\n",
                     _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
                     _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
                     *(_chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1")) for k, v in text.items()),
                     _chunk(b"IDAT", zlib.compress(rows, 6)), _chunk(b"IEND", b"")))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))
