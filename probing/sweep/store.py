"""Where a sweep keeps its features: memory-mapped float16 shards per point, one per chunk of rows.

Measured on the tiny VLM and estimated for the real ones (``benchmarks/bench_sweep.py``, ``--dry-run``), this is the
layout that fits: grids already fitted to the probe's N x N input (``probing.core.features.fit_to_probe``), in the
store's dtype, one ``.npy`` shard per point, split and chunk of rows (``<point>/<split>/<chunk>.npy``), memory-mapped
when read, so a point's probe reads only its own files and the host holds one batch of features at a time. Training all
probes while streaming would need the encoder again for every epoch (the authors' schedule walks the train split 20
times); one pooled vector per image is what the pooled probes read (``--probe mean|cls``), and the store keeps exactly
that (1 x 1 x D) for them.

A chunk (``chunk_rows`` rows) is the unit of work and of resumption. Its shards are filled batch by batch under a
temporary name (its disk space reserved first), renamed when the chunk is done and then given its record (point,
chunk, rows, shape, dtype, store, sha256), so a shard counts only once it is whole and proven this store's: an
interrupted sweep redoes only unfinished (or damaged) chunks, a sweep asked for more points later computes only the
missing shards, and a killed writer's temporary files are removed by the next sweep on its host. Chunks are shared
out round-robin across data-parallel ranks (``torchrun`` / ``accelerate launch``); every shard has one writer, so any
shared file system works, and the result does not depend on how many processes made it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from g2m_base.bounded_json import Rejected, read_json
from g2m_base.errors import StorageError
from g2m_base.files import durable_replace

SPLITS = ("train", "validation", "test")
SHARD_FORMAT = "g2m-sweep-shard/1"
#: This machine's name in temporary file names, so a cleanup removes only the leftovers of this host's dead writers.
HOST = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname()) or "host"


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
    """The shards of one store key. A shard counts only with its record (``<chunk>.json`` beside ``<chunk>.npy``):
    the store it belongs to, its point, split, chunk, row range, shape, dtype and the sha256 of its bytes. ``missing``
    and ``complete`` check a shard against its record (and that its values are finite) the first time they meet it,
    and delete one that fails, with a warning, so that it is extracted again; ``features`` refuses one in one line.
    A shard is never trained on unless it is exactly what this store wrote for that point and chunk."""

    def __init__(self, folder: Path, rows: dict[str, int], chunk_rows: int, cache_dtype: str = "float16",
                 shapes: dict[str, tuple[int, ...]] | None = None) -> None:
        self.folder, self.rows, self.chunk_rows, self.cache_dtype = Path(folder), rows, chunk_rows, cache_dtype
        self.shapes = dict(shapes or {})  # each point's stored shape of one image, where the caller knows it
        self._partial, self._good = {}, set()  # name -> (memmap, temp path, final path); shards found whole
        remove_stale_partials(self.folder)

    def chunks(self) -> list[Chunk]:
        """Every chunk of every split, in one global order (ranks take every world-th)."""
        return [Chunk(s, i, start, min(self.rows[s], start + self.chunk_rows))
                for s in SPLITS for i, start in enumerate(range(0, self.rows[s], self.chunk_rows))]

    def shard(self, name: str, chunk: Chunk) -> Path:
        return self.folder / name / chunk.split / f"{chunk.index:05d}.npy"

    def record(self, name: str, chunk: Chunk, shape: tuple[int, ...]) -> dict:
        """What the shard of ``name`` at ``chunk`` must say of itself (its checksum apart)."""
        return {"format": SHARD_FORMAT, "store": self.folder.name, "point": name, "split": chunk.split,
                "chunk": chunk.index, "rows": [chunk.start, chunk.stop], "shape": list(shape),
                "dtype": self.cache_dtype}

    def problem(self, name: str, chunk: Chunk) -> str | None:
        """Why the shard of ``name`` at ``chunk`` cannot be used ("missing" when it was never written), or None."""
        path = self.shard(name, chunk)
        if path in self._good:
            return None
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise StorageError(f"feature shard {path} is not a regular file; remove it and rerun to extract it again")
        if not path.exists():
            return "missing"
        try:
            rec = read_json(path.with_suffix(".json"), 1 << 16, "feature shard record")
        except (OSError, Rejected):
            return "has no readable record"
        stored = rec.get("shape") if isinstance(rec, dict) else None
        if not isinstance(stored, list) or not stored:
            return "has a damaged record"
        want = self.record(name, chunk, (chunk.stop - chunk.start, *self.shapes.get(name, stored[1:])))
        wrong = [k for k, v in want.items() if rec.get(k) != v]
        if wrong:
            return f"is not this store's shard of {name} {chunk.split} chunk {chunk.index} ({', '.join(wrong)} differ)"
        try:
            with open(path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as e:
            return f"is unreadable ({str(e)[:100]})"
        if digest != rec.get("sha256"):
            return "does not match its checksum"
        if list(arr.shape) != want["shape"] or arr.dtype != np.dtype(self.cache_dtype):
            return f"holds {arr.dtype} {list(arr.shape)}, not {self.cache_dtype} {want['shape']}"
        if not all(np.isfinite(arr[a : a + 64]).all() for a in range(0, len(arr), 64)):
            return "holds values that are not finite"
        self._good.add(path)
        return None

    def usable(self, name: str, chunk: Chunk) -> bool:
        """Whether the shard is whole and this store's; a damaged one is deleted (said on stderr), to be made again."""
        why = self.problem(name, chunk)
        if why not in (None, "missing"):
            path = self.shard(name, chunk)
            print(f"g2m: warning: feature shard {path} {why}; extracting it again", file=sys.stderr)
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)
        return why is None

    def missing(self, chunk: Chunk, names: list[str]) -> list[str]:
        return [n for n in names if not self.usable(n, chunk)]

    def complete(self, name: str) -> bool:
        return all([self.usable(name, c) for c in self.chunks()])  # a list: every damaged shard is seen at once

    def begin(self, chunk: Chunk, shapes: dict[str, tuple[int, ...]]) -> None:
        """Open a temporary shard for each point of ``shapes`` (rows of the chunk x the point's stored shape), its
        space reserved on disk first: a memory map over a sparse file meets a full disk as SIGBUS, so the disk's
        refusal has to come before (ENOSPC, a ``StorageError`` naming the file)."""
        self._partial, self._chunk = {}, chunk
        for name, shape in shapes.items():
            self.shapes.setdefault(name, tuple(shape))
            final = self.shard(name, chunk)
            tmp = final.with_name(f".{final.name}.{HOST}.{os.getpid()}.partial")
            try:
                final.parent.mkdir(parents=True, exist_ok=True)
                with open(tmp, "wb") as f:
                    self._partial[name] = (None, tmp, final)
                    np.lib.format.write_array_header_1_0(f, {"descr": np.lib.format.dtype_to_descr(np.dtype(
                        self.cache_dtype)), "fortran_order": False, "shape": (chunk.stop - chunk.start, *shape)})
                    offset = f.tell()
                size = offset + (chunk.stop - chunk.start) * math.prod(shape) * np.dtype(self.cache_dtype).itemsize
                fd = os.open(tmp, os.O_RDWR)
                try:
                    os.posix_fallocate(fd, 0, size)
                finally:
                    os.close(fd)
                mm = np.lib.format.open_memmap(tmp, mode="r+")
            except OSError as e:
                raise StorageError(f"cannot write feature shard {tmp}: {e.strerror or e}") from None
            self._partial[name] = (mm, tmp, final)

    def write(self, offset: int, arrays: dict[str, np.ndarray]) -> None:
        for name, block in arrays.items():
            self._partial[name][0][offset : offset + len(block)] = block

    def finish(self) -> None:
        """Flush the chunk's shards, rename them into place and write their records: from then on they count."""
        for name, (mm, tmp, final) in self._partial.items():
            shape = mm.shape
            mm.flush()
            record = final.with_suffix(".json")
            rtmp = record.with_name(f".{record.name}.{HOST}.{os.getpid()}.partial")
            try:
                with open(tmp, "rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
                record.unlink(missing_ok=True)  # an old record never vouches for the new bytes
                durable_replace(tmp, final)
                text = json.dumps({**self.record(name, self._chunk, shape), "sha256": digest}, indent=1) + "\n"
                rtmp.write_text(text)
                durable_replace(rtmp, record)
            except OSError as e:
                rtmp.unlink(missing_ok=True)
                raise StorageError(f"cannot write feature shard {final}: {e.strerror or e}") from None
            self._good.add(final)
        self._partial = {}

    def abandon(self) -> None:
        for _, tmp, _ in self._partial.values():
            tmp.unlink(missing_ok=True)
        self._partial = {}

    def features(self, name: str, split: str) -> ShardedArray:
        """The point's split for training: every shard checked (``problem``), a failing one refused in one line."""
        chunks = [c for c in self.chunks() if c.split == split]
        for c in chunks:
            if (why := self.problem(name, c)) is not None:
                raise StorageError(f"feature shard {self.shard(name, c)} {why}; rerun the sweep to extract it again")
        return ShardedArray([self.shard(name, c) for c in chunks], self.chunk_rows)

    def bytes_of(self, name: str) -> int:
        return sum(p.stat().st_size for p in (self.folder / name).rglob("*.npy"))


def remove_stale_partials(folder: Path) -> int:
    """Delete the temporary shards and records (``.<name>.<host>.<pid>.partial``) of writers on this host that are
    gone: a sweep killed mid-chunk leaves its own, which nothing else would ever remove. A live writer's are kept, and
    so are another host's (its writers cannot be seen from here)."""
    count = 0
    for p in folder.glob("*/*/.*.partial") if folder.is_dir() else ():
        parts = p.name.rsplit(".", 3)  # ".00000.npy", host, pid, "partial" (before hosts: ".00000", "npy", pid, ...)
        if len(parts) != 4 or not parts[2].isdigit() or parts[1] not in (HOST, "npy"):
            continue
        if not _alive(int(parts[2])):
            p.unlink(missing_ok=True)
            count += 1
    return count


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
