"""Samples as pure functions of (seed, N, C): any row of any config can be regenerated on its own.

Every sample owns a ``numpy.random.PCG64(seed)`` (the bit generator behind ``default_rng``); nothing touches a global
RNG. We read its raw 64-bit stream rather than ``Generator.integers``: NumPy guarantees the bit streams across
versions but not the algorithms of its distribution methods, and we promise the same bytes on any machine. Draws are
``raw % k``; for k <= 4096 the bias is below 1e-15.

The matrix is uniform over the C values, except that when the grid has at least C cells every colour is guaranteed to
appear: C distinct cells (a partial Fisher-Yates shuffle) receive a random permutation of the C values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dataset_builder.configs import Block
from dataset_builder.png import encode_palette_png_rows
from dataset_builder.prompt import build_prompt
from dataset_builder.render import check_fits, render_rows
from dataset_builder.spec import DEFAULT_RESOLUTION, check_grid_size, check_num_colors, color_names
from g2m_base.errors import UsageError


@dataclass(frozen=True)
class RenderOptions:
    """How images are drawn. The release uses the defaults; other values are for experiments."""

    resolution: int = DEFAULT_RESOLUTION
    outline: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.resolution, int) or not 16 <= self.resolution <= 8192:
            raise UsageError(f"resolution must be an integer from 16 to 8192, got {self.resolution!r}")

    def check(self, grid_size: int) -> None:
        check_fits(grid_size, self.resolution, self.outline)


def make_matrix(seed: int, grid_size: int, num_colors: int) -> np.ndarray:
    """The N x N matrix of one sample (int8, values 0..C-1)."""
    check_num_colors(num_colors)
    check_grid_size(grid_size)
    if not isinstance(seed, int) or seed < 0:
        raise UsageError(f"seed must be a non-negative integer, got {seed!r}")
    cells = grid_size * grid_size
    raw = np.random.PCG64(seed).random_raw(cells + 2 * num_colors)
    flat = (raw[:cells] % np.uint64(num_colors)).astype(np.int8)
    if cells >= num_colors:
        extra = [int(x) for x in raw[cells:]]
        swapped: dict[int, int] = {}  # partial Fisher-Yates over range(cells), storing only the touched slots
        for k in range(num_colors):
            j = k + extra[k] % (cells - k)
            swapped[k], swapped[j] = swapped.get(j, j), swapped.get(k, k)
        positions = [swapped.get(k, k) for k in range(num_colors)]
        values = list(range(num_colors))
        for k in range(num_colors - 1, 0, -1):  # full Fisher-Yates over the C values
            j = extra[num_colors + k] % (k + 1)
            values[k], values[j] = values[j], values[k]
        flat[positions] = values
    return flat.reshape(grid_size, grid_size)


def make_image(matrix: np.ndarray, options: RenderOptions = RenderOptions()) -> bytes:
    """PNG bytes of a matrix."""
    return encode_palette_png_rows(*render_rows(matrix, options.resolution, options.outline))


@dataclass(frozen=True)
class Sample:
    id: str
    seed: int
    grid_size: int
    num_colors: int
    matrix: np.ndarray
    png: bytes

    @property
    def colors(self) -> list[str]:
        return color_names(self.num_colors)

    @property
    def prompt(self) -> str:
        return build_prompt(self.grid_size, self.num_colors)


def make_sample(block: Block, index: int, options: RenderOptions = RenderOptions()) -> Sample:
    """Sample ``index`` of ``block``: the same bytes on every machine and in every build."""
    if not 0 <= index < block.count:
        raise UsageError(f"index {index} is outside the block of {block.count} samples")
    seed = block.seed(index)
    m = make_matrix(seed, block.grid_size, block.num_colors)
    return Sample(block.sample_id(index), seed, block.grid_size, block.num_colors, m, make_image(m, options))
