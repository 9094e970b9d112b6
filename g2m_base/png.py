"""The one PNG writer: the format's signature and chunks, and an RGB image as PNG bytes (every figure's PNG, and the
pictures embedded in an SVG). The release's grid images are written through the same chunks by
``dataset_builder.grids.png``, which packs a palette image straight from its matrix (the build's hot path).

Why not ``PIL.Image.save``: its bytes depend on Pillow's bundled zlib and its filter heuristics, which change between
Pillow releases; here they depend only on Python's ``zlib`` at a fixed level, so the same picture is the same bytes.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Deflate level of an RGB image: a figure is large areas of one colour, which level 6 finds without a filter's help.
RGB_LEVEL = 6


def chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, and the CRC of type and data."""
    return b"".join((struct.pack(">I", len(data)), kind, data, struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))))


def rgb_png(rgb, dpi: float, text: dict[str, str]) -> bytes:
    """An (H, W, 3) uint8 image as PNG bytes: every row unfiltered, deflated at ``RGB_LEVEL``, with its dpi and
    ``text`` (Latin-1) in the header. Pillow tried every filter on every row (its adaptive choice) and wrote an alpha
    channel too (a figure's background is opaque), which took about twice as long for files of the same size."""
    import numpy as np

    height, width, _ = rgb.shape
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0  # filter type None
    # each row's pixels, written in place through a view (an RGBA buffer's RGB is not contiguous: no copy of it)
    np.lib.stride_tricks.as_strided(rows[:, 1:], (height, width, 3), (rows.strides[0], 3, 1))[...] = rgb
    per_metre = int(dpi / 0.0254 + 0.5)
    return b"".join((SIGNATURE,
                     chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
                     chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
                     *(chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1")) for k, v in text.items()),
                     chunk(b"IDAT", zlib.compress(rows, RGB_LEVEL)), chunk(b"IEND", b"")))
