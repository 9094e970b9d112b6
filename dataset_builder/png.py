"""A minimal, deterministic PNG writer for palette images.

Why not ``PIL.Image.save``: the bytes then depend on Pillow's bundled zlib flavour and its filter heuristics, which
change between Pillow releases, and the release promises byte-identical files from the same seed. Here the bytes
depend only on the deflate stream of Python's ``zlib`` at a fixed level (recorded in the build manifest), and the
format is the simplest there is: 4-bit palette (our palette has 11 entries), filter type 0 on every row. It is also
several times faster than PIL, and the files are small (about 2-6 KB per 512x512 grid).

Every decoder reads it; ``datasets.Image(mode="RGB")`` hands users RGB arrays.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from dataset_builder.render import PALETTE_RGB

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ZLIB_LEVEL = 2  # measured: 2-4x faster than 6 on these images, files ~1.5x larger (2-6 KB)
_PLTE = PALETTE_RGB.tobytes()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _pack_rows(idx: np.ndarray) -> np.ndarray:
    """Filter byte 0 plus 4-bit packed pixels, one output row per input row."""
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
    ihdr = struct.pack(">IIBBBBB", width, height, 4, 3, 0, 0, 0)
    return b"".join(
        (
            PNG_SIGNATURE,
            _chunk(b"IHDR", ihdr),
            _chunk(b"PLTE", _PLTE),
            _chunk(b"IDAT", zlib.compress(raw, ZLIB_LEVEL)),
            _chunk(b"IEND", b""),
        )
    )


def encode_palette_png(indices: np.ndarray) -> bytes:
    """Encode an H x W uint8 array of palette indices (< 16) as a 4-bit palette PNG."""
    idx = _check(indices)
    return _png(idx.shape[1], idx.shape[0], _pack_rows(idx).tobytes())


def encode_palette_png_rows(rows: np.ndarray, kind: np.ndarray) -> bytes:
    """The same bytes as ``encode_palette_png(rows[kind])``, packing only the distinct rows."""
    packed = _pack_rows(_check(rows))
    return _png(rows.shape[1], len(kind), packed[kind].tobytes())


def zlib_version() -> str:
    return zlib.ZLIB_RUNTIME_VERSION
