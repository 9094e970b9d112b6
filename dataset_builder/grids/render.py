"""Grid rendering: a fast vectorised renderer that is pixel-identical to the authors' per-cell PIL drawing.

The authors draw cell (r, c) in row-major order as an inclusive PIL rectangle
``[b[c], b[r], b[c+1], b[r+1]]`` with ``b[j] = round(j * R / N)``, filled with the cell colour and outlined in dark
grey. Neighbouring rectangles share their edge pixels and the later one wins. That makes the picture separable: a
pixel row belongs to the *last* cell row whose start is at or above it, a pixel column likewise, and a pixel is grey
when it lies within the outline width of its owner's edge along either axis. So one image is one fancy-indexing
gather plus two masks, instead of N*N PIL calls; better still, the image has only N + 1 distinct rows
(``render_rows``). See ``benchmarks/bench_build.py`` for the ratios.

``render_reference`` keeps the slow per-cell PIL path; the tests hold the two together for every N from 3 to 64.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from dataset_builder.grids.spec import DEFAULT_RESOLUTION, OUTLINE_INDEX, OUTLINE_RGB, PALETTE, check_grid_size
from g2m_base.errors import UsageError
from g2m_base.flags import check_int

#: RGB of every palette index used in our images (values 0..9, then the outline).
PALETTE_RGB = np.array([c.rgb for c in PALETTE] + [OUTLINE_RGB], dtype=np.uint8)


def outline_width(resolution: int, grid_size: int, outline: bool = True) -> int:
    """The authors' rule: none under 4 px, 2 px under 20 px, else int(5% of the cell) clamped to 2..10."""
    if not outline:
        return 0
    cell = resolution / grid_size
    if cell < 4:
        return 0
    if cell < 20:
        return 2
    return min(10, max(2, int(0.05 * cell)))


@dataclass(frozen=True)
class CellLayout:
    """Where each cell lands in the picture, along one axis (rows and columns are the same): the cell pixel layout
    every renderer, decoder and encoder of a grid image reads."""

    resolution: int
    grid_size: int
    width: int  # outline width in pixels
    bounds: tuple[int, ...]  # b[0..N]: cell j is drawn from b[j] to b[j+1] inclusive
    owner: np.ndarray  # owner[p] = the cell that pixel p shows
    on_outline: np.ndarray  # on_outline[p] = pixel p is grey along this axis
    centres: tuple[int, ...]  # one pixel per cell that shows the cell colour (the middle of its interior)

    @property
    def cell_px(self) -> float:
        return self.resolution / self.grid_size


def _bounds(resolution: int, n: int) -> tuple[int, ...]:
    # Python's round() of the exact ratio; written out in integers so no float can tip a tie.
    out = []
    for j in range(n + 1):
        q, r = divmod(j * resolution, n)
        if 2 * r > n or (2 * r == n and q % 2 == 1):
            q += 1
        out.append(q)
    return tuple(out)


@lru_cache(maxsize=512)
def cell_layout(grid_size: int, resolution: int = DEFAULT_RESOLUTION, outline: bool = True) -> CellLayout:
    """The exact per-axis cell layout; raises ``ValueError`` when some cell would show no pixel of its own colour."""
    check_grid_size(grid_size)
    check_int("resolution", resolution, 1)
    if grid_size > resolution:
        raise UsageError(f"a {grid_size}x{grid_size} grid does not fit in {resolution}x{resolution} pixels")
    w = outline_width(resolution, grid_size, outline)
    b = _bounds(resolution, grid_size)
    p = np.arange(resolution)
    owner = np.searchsorted(np.asarray(b), p, side="right") - 1
    bb = np.asarray(b)
    on_outline = ((p - bb[owner]) < w) | ((bb[owner + 1] - p) < w)
    centres = []
    for j in range(grid_size):
        inside = np.flatnonzero((owner == j) & ~on_outline)
        if inside.size == 0:
            raise UsageError(
                f"a {grid_size}x{grid_size} grid does not fit in {resolution}x{resolution} pixels: "
                f"cell {j} is {b[j + 1] - b[j]} px wide and its {w} px outline covers it"
            )
        centres.append(int(inside[inside.size // 2]))
    owner.setflags(write=False)
    on_outline.setflags(write=False)
    return CellLayout(resolution, grid_size, w, b, owner, on_outline, tuple(centres))


def check_fits(grid_size: int, resolution: int = DEFAULT_RESOLUTION, outline: bool = True) -> None:
    cell_layout(grid_size, resolution, outline)


def render_rows(matrix: np.ndarray, resolution: int = DEFAULT_RESOLUTION,
                outline: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The picture in factored form: ``rows[kind]`` is the full index image.

    A grid image has only N + 1 distinct pixel rows (each cell row's interior, and the all-grey outline row), so we
    build those and say which one every image row repeats. The PNG encoder packs N + 1 rows instead of R.
    """
    m = np.asarray(matrix, dtype=np.uint8)
    n = m.shape[0]
    g = cell_layout(n, resolution, outline)
    rows = np.empty((n + 1, resolution), dtype=np.uint8)
    rows[:n] = m[:, g.owner]
    rows[:n, g.on_outline] = OUTLINE_INDEX
    rows[n] = OUTLINE_INDEX
    kind = np.where(g.on_outline, n, g.owner)
    return rows, kind


def render_indices(matrix: np.ndarray, resolution: int = DEFAULT_RESOLUTION, outline: bool = True) -> np.ndarray:
    """Palette-index image (uint8, H x W): matrix values, and ``OUTLINE_INDEX`` on outlines."""
    rows, kind = render_rows(matrix, resolution, outline)
    return rows[kind]


def render_rgb(matrix: np.ndarray, resolution: int = DEFAULT_RESOLUTION, outline: bool = True) -> np.ndarray:
    """H x W x 3 uint8 image; coloured row by row from the factored form (a row gather, not a pixel gather)."""
    rows, kind = render_rows(matrix, resolution, outline)
    return PALETTE_RGB[rows][kind]


def render_reference(matrix: np.ndarray, resolution: int = DEFAULT_RESOLUTION, outline: bool = True) -> Image.Image:
    """The authors' per-cell PIL drawing, kept as the reference the fast renderer must equal pixel for pixel."""
    m = np.asarray(matrix)
    n = m.shape[0]
    b = _bounds(resolution, n)
    w = outline_width(resolution, n, outline)
    img = Image.new("RGB", (resolution, resolution), tuple(PALETTE_RGB[0].tolist()))
    draw = ImageDraw.Draw(img)
    for r in range(n):
        for c in range(n):
            draw.rectangle(
                [b[c], b[r], b[c + 1], b[r + 1]], fill=PALETTE[int(m[r, c])].rgb, outline=OUTLINE_RGB, width=w
            )
    return img


def rgb_to_indices(rgb: np.ndarray) -> np.ndarray:
    """Map an H x W x 3 image to palette indices; a colour outside the palette becomes -1."""
    a = np.asarray(rgb, dtype=np.uint8)
    if a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"expected an H x W x 3 RGB array, got shape {a.shape}")
    key = (a[..., 0].astype(np.int32) << 16) | (a[..., 1].astype(np.int32) << 8) | a[..., 2]
    pk = (PALETTE_RGB[:, 0].astype(np.int32) << 16) | (PALETTE_RGB[:, 1].astype(np.int32) << 8) | PALETTE_RGB[:, 2]
    out = np.full(key.shape, -1, dtype=np.int16)
    for i, k in enumerate(pk):
        out[key == k] = i
    return out


def image_to_indices(image: Image.Image) -> np.ndarray:
    """Palette indices of a decoded image (-1 where a pixel is not a palette colour).

    Our own PNGs decode in palette mode with our palette, which maps straight to indices; anything else (an RGB
    image handed over by a harness, a re-encoded or edited file) goes through the RGB comparison.
    """
    if image.mode == "P" and (image.getpalette() or [])[: PALETTE_RGB.size] == PALETTE_RGB.reshape(-1).tolist():
        idx = np.asarray(image).astype(np.int16)
        idx[idx >= len(PALETTE_RGB)] = -1
        return idx
    return rgb_to_indices(np.asarray(image.convert("RGB")))


def decode_indices(indices: np.ndarray, grid_size: int, outline: bool = True) -> np.ndarray:
    """Read the matrix from a palette-index image: the index at each cell's interior centre.

    Returns int16 values; -1 marks a cell whose centre is not a matrix colour (off-palette, or the outline grey).
    """
    idx = np.asarray(indices)
    if idx.ndim != 2 or idx.shape[0] != idx.shape[1]:
        raise ValueError(f"expected a square image, got shape {idx.shape}")
    g = cell_layout(grid_size, idx.shape[0], outline)
    centres = np.asarray(g.centres)
    out = idx[centres[:, None], centres[None, :]].astype(np.int16)
    out[out == OUTLINE_INDEX] = -1
    return out


def decode_matrix(rgb: np.ndarray, grid_size: int, outline: bool = True) -> np.ndarray:
    """Read the matrix back from an RGB array (see ``decode_indices``)."""
    a = np.asarray(rgb)
    if a.ndim != 3 or a.shape[0] != a.shape[1]:
        raise ValueError(f"expected a square RGB image, got shape {a.shape}")
    g = cell_layout(grid_size, a.shape[0], outline)
    centres = np.asarray(g.centres)
    out = rgb_to_indices(a[centres[:, None], centres[None, :]])
    out[out == OUTLINE_INDEX] = -1
    return out
