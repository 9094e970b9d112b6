"""Samples as pure functions of (seed, N, C): any row of any config can be regenerated on its own.

Every sample owns a ``numpy.random.PCG64(seed)`` (the bit generator behind ``default_rng``); nothing touches a global
RNG. We read its raw 64-bit stream rather than ``Generator.integers``: NumPy guarantees the bit streams across
versions but not the algorithms of its distribution methods, and we promise the same bytes on any machine. Draws are
``raw % k``; for k <= 4096 the bias is below 1e-15.

The matrix is uniform over the C values, except that when the grid has at least C cells every colour is guaranteed to
appear: C distinct cells (a partial Fisher-Yates shuffle) receive a random permutation of the C values.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dataset_builder.grids.configs import Block
from dataset_builder.grids.png import encode_grid_png, encode_grid_pngs
from dataset_builder.grids.prompt import build_prompt
from dataset_builder.grids.render import check_fits
from dataset_builder.grids.spec import DEFAULT_RESOLUTION, check_grid_size, check_num_colors, color_names
from g2m_base.errors import UsageError
from g2m_base.flags import check_int


@dataclass(frozen=True)
class RenderOptions:
    """How images are drawn. The release uses the defaults; other values are for experiments."""

    resolution: int = DEFAULT_RESOLUTION
    outline: bool = True

    def __post_init__(self) -> None:
        check_int("resolution", self.resolution, 16, 8192)

    def check(self, grid_size: int) -> None:
        check_fits(grid_size, self.resolution, self.outline)


def make_matrix(seed: int, grid_size: int, num_colors: int) -> np.ndarray:
    """The N x N matrix of one sample (int8, values 0..C-1)."""
    check_num_colors(num_colors)
    check_grid_size(grid_size)
    check_int("seed", seed, 0)
    return _matrix(np.random.PCG64(seed), grid_size, num_colors)


def make_matrices(seeds: Sequence[int], grid_size: int, num_colors: int) -> np.ndarray:
    """``np.stack([make_matrix(s, grid_size, num_colors) for s in seeds])`` as one (len(seeds), N, N) int8 array.

    A build's rows come in runs of consecutive seeds, so the work is done for the whole run at once: the generators
    are seeded together (numpy's seeding is most of the cost of a small matrix), and the modulo and both shuffles
    run on arrays over the run instead of once per matrix. ``make_matrix`` stays the one-at-a-time reference, and
    ``tests/dataset_builder/test_fast_paths.py`` holds the two equal.
    """
    check_num_colors(num_colors)
    check_grid_size(grid_size)
    cells = grid_size * grid_size
    if not all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds):
        return np.stack([make_matrix(s, grid_size, num_colors) for s in seeds])  # not empty: all([]) holds
    out = np.empty((len(seeds), cells), dtype=np.int8)
    extra = np.empty((len(seeds), 2 * num_colors), dtype=np.uint64)
    states = _pcg64_states(seeds)
    bg, c = np.random.PCG64(0), np.uint64(num_colors)
    step = max(1, _CHUNK_DRAWS // cells)  # rows per pass: the temporaries stay in cache
    raw = np.empty((min(step, len(seeds)), cells + 2 * num_colors), dtype=np.uint64)
    for first in range(0, len(seeds), step):
        part = states[first:first + step]
        for k, (state, inc) in enumerate(part):
            bg.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc}, "has_uint32": 0, "uinteger": 0}
            raw[k] = bg.random_raw(cells + 2 * num_colors)
        draws = raw[:len(part), :cells]
        # draws % c: numpy divides by a scalar without a division per element, and takes the remainder with one
        np.subtract(draws, draws // c * c, out=out[first:first + len(part)], casting="unsafe")
        extra[first:first + len(part)] = raw[:len(part), cells:]
    if cells >= num_colors and len(seeds):
        positions, values = _shuffles(extra, cells, num_colors)
        np.put_along_axis(out, positions, values, axis=1)
    return out.reshape(len(seeds), grid_size, grid_size)


_CHUNK_DRAWS = 1 << 14


def _shuffles(extra: np.ndarray, cells: int, num_colors: int) -> tuple[np.ndarray, np.ndarray]:
    """``_matrix``'s two Fisher-Yates shuffles for a whole run: the partial one picks C distinct cells, the full one
    permutes the C values. A slot's value is the last value written to it (or the slot itself), so C steps of
    array operations replace the per-matrix dictionary."""
    rows = len(extra)
    written: list[tuple[np.ndarray, np.ndarray]] = []  # (slot, value) per row, in order

    def value_at(slot: np.ndarray) -> np.ndarray:
        out = slot.copy()
        for where, what in written:
            out = np.where(where == slot, what, out)
        return out

    positions = np.empty((rows, num_colors), dtype=np.int64)
    for k in range(num_colors):
        j = (k + extra[:, k] % np.uint64(cells - k)).astype(np.int64)
        here = np.full(rows, k, dtype=np.int64)
        at_k, at_j = value_at(here), value_at(j)
        written += [(here, at_j), (j, at_k)]
        positions[:, k] = at_j
    values = np.tile(np.arange(num_colors, dtype=np.int8), (rows, 1))
    every = np.arange(rows)
    for k in range(num_colors - 1, 0, -1):
        j = (extra[:, num_colors + k] % np.uint64(k + 1)).astype(np.int64)
        at_k = values[:, k].copy()
        values[:, k] = values[every, j]
        values[every, j] = at_k
    return positions, values


def _matrix(bg: np.random.PCG64, grid_size: int, num_colors: int) -> np.ndarray:
    cells = grid_size * grid_size
    raw = bg.random_raw(cells + 2 * num_colors)
    draws, c = raw[:cells], np.uint64(num_colors)
    flat = (draws - draws // c * c).astype(np.int8)  # draws % c: numpy divides by a scalar without a division per
                                                     # element
    if cells >= num_colors:
        extra = raw[cells:].tolist()
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


#: numpy's SeedSequence constants (numpy/random/bit_generator.pyx) and PCG64's multiplier (pcg64.h).
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _MASK32, _MASK128 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF, (1 << 128) - 1
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645


def _pcg64_states(seeds: Sequence[int]) -> list[tuple[int, int]]:
    """The (state, inc) of ``numpy.random.PCG64(seed)`` for seeds below 2**32, computed for all seeds at once.

    ``PCG64(seed)`` hashes the seed with a ``SeedSequence`` (a pool of four 32-bit words, mixed, then eight words
    drawn from it), then seeds PCG64 from those words. The hashing works word by word with multipliers that do not
    depend on the data, so it runs on arrays of seeds here; ``tests/dataset_builder/test_generate.py`` holds the
    result equal to numpy's own for seeds of every config. NumPy guarantees this seeding across versions (its stream
    policy).
    """
    u32 = np.uint32
    mult = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal mult
        value = value ^ u32(mult)
        mult = (mult * _MULT_A) & _MASK32
        value = value * u32(mult)
        return value ^ (value >> u32(16))

    words = np.asarray(seeds, dtype=np.uint32)
    pool = [hashmix(words)] + [hashmix(np.zeros_like(words)) for _ in range(3)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                mixed = u32(_MIX_L) * pool[dst] - u32(_MIX_R) * hashmix(pool[src])
                pool[dst] = mixed ^ (mixed >> u32(16))
    mult, state = _INIT_B, []
    for i in range(8):  # generate_state(4, uint64): eight words, little-endian pairs
        value = pool[i % 4] ^ u32(mult)
        mult = (mult * _MULT_B) & _MASK32
        value = value * u32(mult)
        state.append((value ^ (value >> u32(16))).astype(np.uint64))
    s_hi, s_lo, i_hi, i_lo = ((state[2 * j] | (state[2 * j + 1] << np.uint64(32))).tolist() for j in range(4))
    out = []
    for a, b, c, d in zip(s_hi, s_lo, i_hi, i_lo, strict=True):
        inc = (((c << 64 | d) << 1) | 1) & _MASK128  # pcg_setseq_128_srandom_r: step, add the seed, step
        out.append((((inc + (a << 64 | b)) * _PCG_MULT + inc) & _MASK128, inc))
    return out


def make_image(matrix: np.ndarray, options: RenderOptions = RenderOptions()) -> bytes:
    """PNG bytes of a matrix."""
    return encode_grid_png(matrix, options.resolution, options.outline)


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


@dataclass(frozen=True)
class SampleRun:
    """Rows ``start`` .. ``start + len(seeds)`` of one block, column by column: what a shard is made of, without an
    object per row (``make_samples`` gives the same rows one by one)."""

    block: Block
    start: int
    seeds: list[int]
    matrices: np.ndarray  # (rows, N, N) int8
    pngs: list[bytes]

    def __len__(self) -> int:
        return len(self.seeds)

    @property
    def ids(self) -> list[str]:
        return [self.block.sample_id(i) for i in range(self.start, self.start + len(self.seeds))]


def make_run(block: Block, start: int, stop: int, options: RenderOptions = RenderOptions()) -> SampleRun:
    """Samples ``start`` .. ``stop`` of ``block``, generated and encoded together (the same bytes as one by one)."""
    if not 0 <= start <= stop <= block.count:
        raise UsageError(f"rows {start}..{stop} are outside the block of {block.count} samples")
    seeds = [block.seed(i) for i in range(start, stop)]
    matrices = make_matrices(seeds, block.grid_size, block.num_colors)
    return SampleRun(block, start, seeds, matrices, encode_grid_pngs(matrices, options.resolution, options.outline))


def make_samples(block: Block, start: int, stop: int, options: RenderOptions = RenderOptions()) -> Iterator[Sample]:
    """``make_sample(block, i, options)`` for ``i`` in ``range(start, stop)``: the same samples, made as one run."""
    run = make_run(block, start, stop, options)
    for sid, seed, m, png in zip(run.ids, run.seeds, run.matrices, run.pngs, strict=True):
        yield Sample(sid, seed, block.grid_size, block.num_colors, m, png)
