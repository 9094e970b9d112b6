"""Where a sweep keeps its features: memory-mapped float16 shards per point, one per chunk of rows.

Measured on the tiny VLM and estimated for the real ones (``benchmarks/bench_sweep.py``, ``--dry-run``), this is the
layout that fits: grids already fitted to the probe's N x N input (``probing.core.features.fit_to_probe``), in the
store's dtype, one ``.npy`` shard per point, split and chunk of rows (``<point>/<split>/<chunk>.npy``), memory-mapped
when read, so a point's probe reads only its own files and the host holds one batch of features at a time. Training all
probes while streaming would need the encoder again for every epoch (the authors' schedule walks the train split 20
times); one pooled vector per image is what the pooled probes read (``--probe mean|cls``), and the store keeps exactly
that (1 x 1 x D) for them.

A chunk (``chunk_rows`` rows) is the unit of work and of resumption. Its shards are filled batch by batch under a
temporary name and renamed when the chunk is done, so a shard that exists is complete: an interrupted sweep redoes
only unfinished chunks, and a sweep asked for more points later computes only the missing shards. Chunks are shared
out round-robin across data-parallel ranks (``torchrun`` / ``accelerate launch``); every shard has one writer, so any
shared file system works, and the result does not depend on how many processes made it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Dist:
    """This process's place in a data-parallel run (``torchrun`` / ``accelerate launch`` set RANK, WORLD_SIZE and
    LOCAL_RANK); one process is rank 0 of 1."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    owned: bool = False  # we started the process group, so we end it

    @classmethod
    def from_env(cls, device: str = "cpu") -> Dist:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if world == 1:
            return cls()
        import torch.distributed as dist

        owned = not dist.is_initialized()
        if owned:
            dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
        return cls(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")), owned)

    def close(self) -> None:
        if self.owned:
            import torch.distributed as dist

            dist.destroy_process_group()

    def device(self, device: str) -> str:
        """Each rank's own GPU under data parallelism ("cuda" -> "cuda:LOCAL_RANK"); anything else as given."""
        return f"cuda:{self.local_rank}" if device == "cuda" and self.world > 1 else device

    def barrier(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            dist.barrier()

    def mine(self, items: list) -> list:
        return items[self.rank :: self.world]

    def total(self, values: list[int]) -> list[int]:
        """``values`` summed over the ranks."""
        if self.world == 1:
            return list(values)
        import torch
        import torch.distributed as dist

        t = torch.tensor(values, dtype=torch.int64, device="cuda" if dist.get_backend() == "nccl" else "cpu")
        dist.all_reduce(t)
        return t.tolist()


@dataclass(frozen=True)
class Chunk:
    split: str
    index: int
    start: int
    stop: int


class ShardedArray:
    """A point's split as one array over its shards: ``len``, ``shape``, ``nbytes``, ``arr[sorted_indices]`` and
    ``np.asarray(arr)`` (what ``probe.FeatureSet`` needs to preload it or read it batch by batch)."""

    def __init__(self, paths: list[Path], chunk_rows: int) -> None:
        self.parts = [np.load(p, mmap_mode="r") for p in paths]
        self.chunk_rows = chunk_rows
        n = sum(len(p) for p in self.parts)
        self.shape = (n, *self.parts[0].shape[1:])
        self.dtype = self.parts[0].dtype
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index) -> np.ndarray:
        index = np.atleast_1d(np.asarray(index))
        shard, offset = np.divmod(index, self.chunk_rows)
        return np.stack([self.parts[s][o] for s, o in zip(shard.tolist(), offset.tolist(), strict=True)])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.concatenate(self.parts)
        return out if dtype is None else out.astype(dtype, copy=False)


class Store:
    def __init__(self, folder: Path, rows: dict[str, int], chunk_rows: int, cache_dtype: str = "float16") -> None:
        self.folder, self.rows, self.chunk_rows, self.cache_dtype = Path(folder), rows, chunk_rows, cache_dtype
        self._partial: dict[str, tuple[np.memmap, Path, Path]] = {}

    def chunks(self) -> list[Chunk]:
        """Every chunk of every split, in one global order (ranks take every world-th)."""
        return [Chunk(s, i, start, min(self.rows[s], start + self.chunk_rows))
                for s in SPLITS for i, start in enumerate(range(0, self.rows[s], self.chunk_rows))]

    def shard(self, name: str, chunk: Chunk) -> Path:
        return self.folder / name / chunk.split / f"{chunk.index:05d}.npy"

    def missing(self, chunk: Chunk, names: list[str]) -> list[str]:
        return [n for n in names if not self.shard(n, chunk).is_file()]

    def complete(self, name: str) -> bool:
        return all(self.shard(name, c).is_file() for c in self.chunks())

    def begin(self, chunk: Chunk, shapes: dict[str, tuple[int, ...]]) -> None:
        """Open a temporary shard for each point of ``shapes`` (rows of the chunk x the point's stored shape)."""
        self._partial = {}
        for name, shape in shapes.items():
            final = self.shard(name, chunk)
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = final.with_name(f".{final.name}.{os.getpid()}.partial")
            mm = np.lib.format.open_memmap(tmp, mode="w+", dtype=self.cache_dtype, shape=(chunk.stop - chunk.start, *shape))
            self._partial[name] = (mm, tmp, final)

    def write(self, offset: int, arrays: dict[str, np.ndarray]) -> None:
        for name, block in arrays.items():
            self._partial[name][0][offset : offset + len(block)] = block

    def finish(self) -> None:
        """Flush the chunk's shards and rename them into place: from now on they count as done."""
        for mm, tmp, final in self._partial.values():
            mm.flush()
            del mm
            os.replace(tmp, final)
        self._partial = {}

    def abandon(self) -> None:
        for _, tmp, _ in self._partial.values():
            tmp.unlink(missing_ok=True)
        self._partial = {}

    def features(self, name: str, split: str) -> ShardedArray:
        return ShardedArray([self.shard(name, c) for c in self.chunks() if c.split == split], self.chunk_rows)

    def bytes_of(self, name: str) -> int:
        return sum(p.stat().st_size for p in (self.folder / name).rglob("*.npy"))
