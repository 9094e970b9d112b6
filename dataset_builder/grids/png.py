"""The release's grid images as PNG, packed straight from their matrices, through the one PNG writer's chunks
(``g2m_base.png``: why not Pillow is said there).

The release promises byte-identical files from the same seed: the bytes depend only on the deflate stream of Python's
``zlib`` at a fixed level (recorded in the build manifest), and the format is the simplest there is: 4-bit palette
(our palette has 11 entries), filter type 0 on every row. It is several times faster than PIL, and the files are
small (about 2-6 KB per 512x512 grid).

Every decoder reads it; ``datasets.Image(mode="RGB")`` hands users RGB arrays. The plain encoder of any index image,
row by row, lives in ``tests/support/reference_png.py``: the build never calls it, the tests hold this one to its bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dataset_builder.grids.render import PALETTE_RGB, cell_layout
from dataset_builder.grids.spec import OUTLINE_INDEX
from g2m_base.png import SIGNATURE
from g2m_base.png import chunk as _chunk

ZLIB_LEVEL = 2  # measured: 2-4x faster than 6 on these images, files ~1.5x larger (2-6 KB)
_PLTE = PALETTE_RGB.tobytes()
_BLOCK_IMAGES = 64  # images whose matrices are extended and checksummed in one pass
_CHUNK_BYTES = 1 << 19  # image rows gathered per pass (512 kB: four 512 px images, in cache for zlib)


#: What ``zlib.compress`` writes before the deflate stream at our level (the stream itself does not depend on it).
_ZLIB_HEADER = zlib.compress(b"", ZLIB_LEVEL)[:2]
_IEND = _chunk(b"IEND", b"")
_IDAT_CRC = zlib.crc32(_ZLIB_HEADER, zlib.crc32(b"IDAT"))  # an IDAT chunk's CRC covers its type, then its data


@lru_cache(maxsize=16)
def _head(side: int) -> bytes:
    """Signature, IHDR and PLTE of a square image: the same bytes for every image of one size."""
    return SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 4, 3, 0, 0, 0)) + _chunk(b"PLTE", _PLTE)


@dataclass(frozen=True)
class _RowPlan:
    """How the rows of a grid image are made from its matrix, for one cell layout.

    A grid row is drawn from one matrix row extended by two columns, ``N`` (the outline) and ``N + 1`` (0, the pad
    nibble of an odd width); row ``N`` of the extended matrix is the all-outline row. Byte ``b`` of a packed row
    holds pixel ``2b`` (extended column ``hi[b]``) and pixel ``2b + 1`` (column ``lo[b]``), after the filter byte.
    ``kind`` says which of the N + 1 packed rows every image row repeats.

    The zlib stream ends in the Adler-32 of the image rows, which zlib would compute byte by byte (a fifth of the
    encoder's time). It is a weighted sum of the bytes, so it follows from the extended matrix by two dot products:
    ``col_weights`` turn a matrix column into the sum (and the position-weighted sum) of the bytes it fills in one
    packed row, ``row_weights`` count how often each packed row appears (and weigh where).
    """

    hi: np.ndarray
    lo: np.ndarray
    kind: np.ndarray
    col_weights: np.ndarray  # (2, N + 2): bytes filled per extended column, and the same weighted by position
    row_weights: np.ndarray  # (N + 1, 2): rows of each kind, and the sum of (stream length - row start) over them
    length: int  # bytes of image rows (filter bytes included)
    exact: bool  # the dot products stay below 2**53 (exact in floating point): up to 2048 px a side


@lru_cache(maxsize=512)
def _row_plan(grid_size: int, resolution: int, outline: bool) -> _RowPlan:
    g = cell_layout(grid_size, resolution, outline)
    n, w = grid_size, resolution
    source = np.where(g.on_outline, n, g.owner).astype(np.intp)  # pixel column -> extended matrix column
    hi = source[0::2].copy()
    lo = np.full(len(hi), n + 1, dtype=np.intp)
    lo[: w // 2] = source[1::2]
    kind = source  # a pixel row is an outline row exactly where a pixel column is an outline column
    row_len = len(hi) + 1
    position = np.arange(1, row_len, dtype=np.float64)  # byte b sits at position b + 1 of its row
    col_weights = np.stack([np.bincount(hi, minlength=n + 2) * 16.0 + np.bincount(lo, minlength=n + 2),
                            np.bincount(hi, position * 16, minlength=n + 2) + np.bincount(lo, position, n + 2)])
    length = len(kind) * row_len
    starts = length - np.arange(len(kind), dtype=np.float64) * row_len
    row_weights = np.stack([np.bincount(kind, minlength=n + 1).astype(np.float64),
                            np.bincount(kind, starts, minlength=n + 1)], axis=1)
    for a in (hi, lo, kind, col_weights, row_weights):
        a.setflags(write=False)
    exact = len(kind) * length * 255 * row_len < 2**53  # the largest weighted sum, every byte 255
    return _RowPlan(hi, lo, kind, col_weights, row_weights, length, exact)


def encode_grid_png(matrix: np.ndarray, resolution: int, outline: bool = True) -> bytes:
    """The PNG of the grid image of an N x N matrix, built straight from the matrix (see ``encode_grid_pngs``): the
    same bytes as the plain reference encoder in ``tests/support/reference_png.py`` gives for ``render_indices``."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {m.shape}")
    return encode_grid_pngs(m[None], resolution, outline)[0]


def encode_grid_pngs(matrices: np.ndarray, resolution: int, outline: bool = True) -> list[bytes]:
    """``[encode_grid_png(m, resolution, outline) for m in matrices]`` for a (B, N, N) stack, the array work done
    for a few images at a time: the N + 1 distinct rows of each image are packed column-wise (whole columns of the
    transposed matrix are gathered, a copy of contiguous memory, not one gather per byte); the image rows are one
    gather of packed rows, deflated raw by zlib at the same level, and wrapped in zlib's header and the Adler-32
    ``_RowPlan`` computes. Only zlib runs once per image."""
    ms = np.asarray(matrices)
    if ms.ndim != 3 or ms.shape[1] != ms.shape[2]:
        raise ValueError(f"expected a stack of square matrices, got shape {ms.shape}")
    for bad in (int(ms.min()), int(ms.max())) if ms.size else ():
        if not 0 <= bad < len(PALETTE_RGB):
            raise ValueError(f"palette index {bad} is outside the {len(PALETTE_RGB)}-entry palette")
    n = ms.shape[1]
    plan = _row_plan(n, resolution, outline)
    head, out = _head(resolution), []
    step = max(1, _CHUNK_BYTES // max(1, plan.length))
    for block in range(0, len(ms), _BLOCK_IMAGES):
        cols = _extended_columns(ms[block:block + _BLOCK_IMAGES])
        tails = _adler_tails(cols, plan) if plan.exact else None
        for first in range(0, len(cols), step):
            part = cols[first:first + step]
            packed = np.empty((len(part), n + 1, len(plan.hi) + 1), dtype=np.uint8)
            packed[:, :, 0] = 0  # filter type None
            packed[:, :, 1:] = ((part.take(plan.hi, axis=1) << 4) | part.take(plan.lo, axis=1)).transpose(0, 2, 1)
            rows = packed.take(plan.kind, axis=1)
            for k in range(len(part)):  # the IDAT chunk in place: length, type, zlib header, deflate, Adler-32, CRC
                body = zlib.compress(rows[k], ZLIB_LEVEL, -15)
                tail = tails[4 * (first + k):4 * (first + k + 1)] if tails else zlib.adler32(rows[k]).to_bytes(4, "big")
                crc = zlib.crc32(tail, zlib.crc32(body, _IDAT_CRC))
                out.append(b"".join((head, (len(body) + 6).to_bytes(4, "big"), b"IDAT", _ZLIB_HEADER, body, tail,
                                     crc.to_bytes(4, "big"), _IEND)))
    return out


def _extended_columns(ms: np.ndarray) -> np.ndarray:
    """The extended matrices (see ``_RowPlan``), transposed: one row per extended column, (images, N + 2, N + 1)."""
    n = ms.shape[1]
    cols = np.empty((len(ms), n + 2, n + 1), dtype=np.uint8)
    cols[:, :n, :n] = ms.transpose(0, 2, 1)
    cols[:, n] = OUTLINE_INDEX
    cols[:, :n, n] = OUTLINE_INDEX
    cols[:, n + 1] = 0
    return cols


def _adler_tails(cols: np.ndarray, plan: _RowPlan) -> bytes:
    """The big-endian Adler-32 of every image's rows, 4 bytes each, from two dot products per image."""
    per_col = cols @ plan.row_weights  # (images, N + 2, 2)
    total = (per_col[:, :, 0] @ plan.col_weights.T).astype(np.int64)
    weighted = (per_col[:, :, 1] @ plan.col_weights[0]).astype(np.int64)
    adler = ((plan.length + weighted - total[:, 1]) % 65521) << 16 | (1 + total[:, 0]) % 65521
    return adler.astype(">u4").tobytes()
