"""The plain PNG encoder the build's fast one is held to: any H x W palette-index image, packed row by row.

Written straight from the PNG specification (signature, IHDR, PLTE, one zlib IDAT, IEND; 4-bit palette, filter type 0
on every row), with nothing shared with ``dataset_builder/grids/png.py`` but the palette and the zlib level, which the
format promises. The build never calls it: ``encode_grid_png(s)`` builds the same bytes from the N x N matrix.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from dataset_builder.grids.png import ZLIB_LEVEL
from dataset_builder.grids.render import PALETTE_RGB


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _pack_rows(idx: np.ndarray) -> np.ndarray:
    """Filter byte 0 plus 4-bit packed pixels (the high nibble first), one output row per input row."""
    h, w = idx.shape
    if w % 2:
        idx = np.concatenate([idx, np.zeros((h, 1), np.uint8)], axis=1)
    raw = np.zeros((h, (w + 1) // 2 + 1), dtype=np.uint8)  # leading 0 = filter type None
    raw[:, 1:] = (idx[:, 0::2] << 4) | idx[:, 1::2]
    return raw


def _check(idx: np.ndarray) -> np.ndarray:
    idx = np.asarray(idx, dtype=np.uint8)
    if idx.ndim != 2:
        raise ValueError(f"expected a 2-D index image, got shape {idx.shape}")
    if idx.size and int(idx.max()) >= len(PALETTE_RGB):
        raise ValueError(f"palette index {int(idx.max())} is outside the {len(PALETTE_RGB)}-entry palette")
    return idx


def _png(width: int, height: int, raw: bytes) -> bytes:
    return b"".join((b"\x89PNG\r\n\x1a\n",
                     _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 4, 3, 0, 0, 0)),  # 4-bit palette
                     _chunk(b"PLTE", PALETTE_RGB.tobytes()),
                     _chunk(b"IDAT", zlib.compress(raw, ZLIB_LEVEL)),
                     _chunk(b"IEND", b"")))


def encode_palette_png(indices: np.ndarray) -> bytes:
    """Encode an H x W uint8 array of palette indices (< 16) as a 4-bit palette PNG."""
    idx = _check(indices)
    return _png(idx.shape[1], idx.shape[0], _pack_rows(idx).tobytes())

