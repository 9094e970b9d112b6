"""The release's configs, splits and seeds.

A split is a sequence of *blocks*; a block is a run of samples with one (N, C). Sample ``i`` of a block has seed

    seed = split_code * 10**9 + N * 10**7 + C * 10**5 + i
        (split_code: zero_shot 0, train 1, validation 2, test 3)

so the decimal digits spell out where a sample comes from, and no two samples anywhere share a seed (N < 100,
C < 100, i < 10**5). Since every image is a pure function of (seed, N, C), no image can appear in two splits.
``--scale`` keeps the first ``round(count * scale)`` samples of each block, so a scaled build is a subset of the full
release, row for row.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dataset_builder.grids.spec import MAX_GRID_SIZE, check_grid_size, check_num_colors
from g2m_base.errors import UsageError

ZERO_SHOT_SIZES = (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32, 48, 64)
ZERO_SHOT_COLORS = (3, 5, 10)
ZERO_SHOT_PER_CELL = 100
PROBE_SIZES = (20, 24, 28, 32, 40, 48, 56, 64)
PROBE_COLORS = (3, 10)
PROBE_SPLITS = (("train", 8_000), ("validation", 2_000), ("test", 10_000))
SPLIT_CODES = {"zero_shot": 0, "train": 1, "validation": 2, "test": 3}
MAX_BLOCK = 10**5
#: Rows per parquet file: the unit of parallel work and of resumption (~5-15 MB of PNGs).
ROWS_PER_SHARD = 2_500


@dataclass(frozen=True)
class Block:
    """A run of ``count`` consecutive samples with one grid size and palette size."""

    grid_size: int
    num_colors: int
    count: int
    seed_base: int
    id_prefix: str
    id_digits: int

    def __post_init__(self) -> None:
        check_grid_size(self.grid_size, maximum=MAX_GRID_SIZE)
        check_num_colors(self.num_colors)
        if not isinstance(self.count, int) or not 1 <= self.count < MAX_BLOCK:
            raise UsageError(f"a block holds 1 to {MAX_BLOCK - 1} samples, got {self.count!r}")

    def seed(self, index: int) -> int:
        return self.seed_base + index

    def sample_id(self, index: int) -> str:
        return f"{self.id_prefix}-{index:0{self.id_digits}d}"

    def scaled(self, scale: float) -> Block:
        return Block(self.grid_size, self.num_colors, max(1, round(self.count * scale)), self.seed_base,
                     self.id_prefix, self.id_digits)


@dataclass(frozen=True)
class SplitSpec:
    name: str
    blocks: tuple[Block, ...]

    @property
    def rows(self) -> int:
        return sum(b.count for b in self.blocks)

    def scaled(self, scale: float) -> SplitSpec:
        return SplitSpec(self.name, tuple(b.scaled(scale) for b in self.blocks))


@dataclass(frozen=True)
class ConfigSpec:
    name: str
    description: str
    splits: tuple[SplitSpec, ...]

    @property
    def grid_sizes(self) -> tuple[int, ...]:
        return tuple(sorted({b.grid_size for s in self.splits for b in s.blocks}))

    def split(self, name: str) -> SplitSpec:
        for s in self.splits:
            if s.name == name:
                return s
        raise UsageError(f"config {self.name!r} has no split {name!r}; it has {[s.name for s in self.splits]}")

    def scaled(self, scale: float) -> ConfigSpec:
        check_scale(scale)
        return ConfigSpec(self.name, self.description, tuple(s.scaled(scale) for s in self.splits))


def seed_base(split_code: int, grid_size: int, num_colors: int) -> int:
    return split_code * 10**9 + grid_size * 10**7 + num_colors * 10**5


def _zero_shot() -> ConfigSpec:
    blocks = tuple(
        Block(n, c, ZERO_SHOT_PER_CELL, seed_base(SPLIT_CODES["zero_shot"], n, c), f"zs-n{n:02d}-c{c}", 4)
        for n in ZERO_SHOT_SIZES
        for c in ZERO_SHOT_COLORS
    )
    return ConfigSpec("zero_shot", "End-to-end evaluation: 100 grids per (N, C).", (SplitSpec("test", blocks),))


def _probe(n: int, c: int) -> ConfigSpec:
    splits = tuple(
        SplitSpec(split, (Block(n, c, count, seed_base(SPLIT_CODES[split], n, c), f"pr-n{n:02d}-c{c}-{split}", 5),))
        for split, count in PROBE_SPLITS
    )
    return ConfigSpec(f"probe_n{n}_c{c}", f"Encoder probing on {n}x{n} grids with {c} colours.", splits)


CONFIGS: tuple[ConfigSpec, ...] = (_zero_shot(),) + tuple(_probe(n, c) for n in PROBE_SIZES for c in PROBE_COLORS)
CONFIG_NAMES: tuple[str, ...] = tuple(c.name for c in CONFIGS)


def check_scale(scale: float) -> None:
    if not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise UsageError(f"--scale must be in (0, 1], got {scale!r}")


def get_config(name: str) -> ConfigSpec:
    for c in CONFIGS:
        if c.name == name:
            return c
    raise UsageError(f"unknown config {name!r}; known configs: {', '.join(CONFIG_NAMES)}")


def select_configs(patterns: str | Sequence[str] | None) -> list[ConfigSpec]:
    """Configs named by comma-separated names or globs (``zero_shot,probe_n3*``), in release order."""
    if patterns is None:
        return list(CONFIGS)
    items: Iterable[str] = patterns.split(",") if isinstance(patterns, str) else patterns
    wanted: set[str] = set()
    for raw in items:
        pat = raw.strip()
        if not pat:
            continue
        hits = fnmatch.filter(CONFIG_NAMES, pat)
        if not hits:
            raise UsageError(f"unknown config {pat!r}; known configs: {', '.join(CONFIG_NAMES)} "
                             f"(globs like 'probe_*' work)")
        wanted.update(hits)
    if not wanted:
        raise UsageError("no config selected")
    return [c for c in CONFIGS if c.name in wanted]
