"""``g2m build``: write a release folder laid out exactly as ``push_to_hub`` would lay it out.

Layout: ``DIR/<config>/<split>-XXXXX-of-YYYYY.parquet``, ``DIR/README.md`` (YAML front matter + dataset card) and
``DIR/manifest.json`` (sha256 of every file and the build parameters; written last, so its presence means the build
finished).

Shards are the unit of work, of resumption and of parallelism. A shard's rows are fixed by the plan alone, so the
bytes do not depend on the worker count. Each shard is written to a hidden temporary file and renamed into place, so
a crash or Ctrl-C never leaves a partial file under a visible name; a rerun skips the shards already there once their
footer proves they are the ones this plan wants, and rebuilds anything else.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from dataset_builder import __version__
from dataset_builder.grids.configs import (
    CONFIG_NAMES,
    ROWS_PER_SHARD,
    Block,
    ConfigSpec,
    check_scale,
    get_config,
    select_configs,
)
from dataset_builder.grids.generate import RenderOptions, SampleRun, make_run
from dataset_builder.release.table import read_shard_metadata, runs_to_table, table_to_parquet_bytes
from g2m_base.errors import BuildError, UsageError
from g2m_base.files import atomic_write_bytes, build_lock, remove_stale_temp_files
from g2m_base.flags import check_int
from g2m_base.workers import check_workers
from g2m_base.workers import pool as worker_pool


@dataclass(frozen=True)
class ShardTask:
    """One parquet file: its place in the release and the (block, start, stop) runs of rows it holds."""

    config: str
    split: str
    index: int
    num_shards: int
    runs: tuple[tuple[Block, int, int], ...]
    render: RenderOptions = field(default_factory=RenderOptions)

    @property
    def relpath(self) -> str:
        return f"{self.config}/{self.split}-{self.index:05d}-of-{self.num_shards:05d}.parquet"

    @property
    def rows(self) -> int:
        return sum(stop - start for _, start, stop in self.runs)

    @property
    def cost(self) -> int:
        """Roughly the microseconds one core spends on it (an image costs about 250 + 2N): pools start the costliest
        shards first, so that no worker is left finishing a big one alone at the end."""
        return sum((stop - start) * (250 + 2 * b.grid_size) for b, start, stop in self.runs)

    def descriptor(self) -> dict:
        """What the footer records, so a resumed build recognises a finished shard by content, not by name."""
        first_block, first, _ = self.runs[0]
        last_block, _, last = self.runs[-1]
        return {
            "generator": f"grid2matrix {__version__}",
            "path": self.relpath,
            "rows": self.rows,
            "first_id": first_block.sample_id(first),
            "last_id": last_block.sample_id(last - 1),
            "render": asdict(self.render),
        }

    def generate(self) -> list[SampleRun]:
        return [make_run(block, start, stop, self.render) for block, start, stop in self.runs]


@dataclass(frozen=True)
class ShardResult:
    relpath: str
    sha256: str
    size: int
    rows: int
    num_bytes: int  # in-memory arrow size, what ``dataset_info.splits[].num_bytes`` reports
    reused: bool = False


def plan_config(config: ConfigSpec, render: RenderOptions, rows_per_shard: int = ROWS_PER_SHARD) -> list[ShardTask]:
    """Cut each split of an (already scaled) config into contiguous, evenly sized shards."""
    tasks = []
    for split in config.splits:
        rows = [(b, i) for b in split.blocks for i in range(b.count)]
        num = max(1, math.ceil(len(rows) / rows_per_shard))
        base, extra = divmod(len(rows), num)
        pos = 0
        for k in range(num):
            take = base + (1 if k < extra else 0)
            chunk = rows[pos : pos + take]
            pos += take
            runs: list[tuple[Block, int, int]] = []
            for b, i in chunk:
                if runs and runs[-1][0] is b and runs[-1][2] == i:
                    runs[-1] = (b, runs[-1][1], i + 1)
                else:
                    runs.append((b, i, i + 1))
            tasks.append(ShardTask(config.name, split.name, k, num, tuple(runs), render))
    return tasks


def write_shard(task: ShardTask, out: str) -> ShardResult:
    """Generate, encode and atomically place one shard. Runs in worker processes."""
    table = runs_to_table(task.generate())
    data = table_to_parquet_bytes(table, task.descriptor())
    atomic_write_bytes(Path(out) / task.relpath, data)
    return ShardResult(task.relpath, hashlib.sha256(data).hexdigest(), len(data), task.rows, table.nbytes)


def check_existing_shard(task: ShardTask, out: Path, expected_sha: str | None) -> ShardResult | None:
    """A finished shard from an earlier (interrupted) run, if the file at ``task.relpath`` is exactly it."""
    path = out / task.relpath
    if not path.is_file():
        return None
    try:
        rows, meta, num_bytes = read_shard_metadata(path)
    except Exception:
        return None
    if rows != task.rows or meta != task.descriptor():
        return None
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if expected_sha is not None and sha != expected_sha:
        return None
    return ShardResult(task.relpath, sha, len(data), rows, num_bytes, reused=True)


@dataclass(frozen=True)
class BuildParams:
    scale: float = 1.0
    render: RenderOptions = field(default_factory=RenderOptions)
    rows_per_shard: int = ROWS_PER_SHARD

    def __post_init__(self) -> None:
        check_scale(self.scale)
        check_int("rows_per_shard", self.rows_per_shard, 1)

    def to_json(self) -> dict:
        return {"scale": self.scale, "render": asdict(self.render), "rows_per_shard": self.rows_per_shard}


def build(
    out: str | os.PathLike,
    configs: str | Sequence[str] | None = None,
    params: BuildParams = BuildParams(),
    workers: int | None = None,
    progress: bool = True,
) -> dict:
    """Build (or resume, or extend) a release folder; returns the manifest."""
    from dataset_builder.release.provenance import describe_params, load_manifest, manifest_configs

    out = Path(out)
    requested = select_configs(configs)
    workers = (os.cpu_count() or 1) if workers is None else check_workers(workers)
    for cfg in requested:
        for n in cfg.grid_sizes:
            try:
                params.render.check(n)
            except ValueError as e:
                raise UsageError(f"config {cfg.name}: {e}") from None
    with build_lock(out):
        remove_stale_temp_files(out)
        previous = load_manifest(out)
        names = [c.name for c in requested]
        if previous is not None:
            if previous.get("params") != params.to_json():
                raise BuildError(
                    f"{out} already holds a release built with {describe_params(previous.get('params', {}))}; "
                    "build into an empty folder, or delete that one first"
                )
            names = [n for n in CONFIG_NAMES if n in set(names) | set(manifest_configs(previous))]
        known_sha = {p: f["sha256"] for p, f in (previous or {}).get("files", {}).items()}
        specs = [get_config(n).scaled(params.scale) for n in names]
        tasks = [t for cfg in specs for t in plan_config(cfg, params.render, params.rows_per_shard)]
        results = _run(tasks, out, known_sha, workers, progress)
        from dataset_builder.release.card import write_release_metadata  # imported while the shards were written (_run)

        return write_release_metadata(out, specs, tasks, results, params)


def _run(tasks: list[ShardTask], out: Path, known_sha: dict, workers: int, progress: bool) -> dict[str, ShardResult]:
    results: dict[str, ShardResult] = {}
    todo = []
    for t in tasks:
        r = check_existing_shard(t, out, known_sha.get(t.relpath))
        if r is None:
            todo.append(t)
        else:
            results[t.relpath] = r
    total = sum(t.rows for t in tasks)
    done = sum(r.rows for r in results.values())
    bar = tqdm(total=total, initial=done, unit="img", desc="g2m build", disable=not progress, smoothing=0.05)
    try:
        if workers == 1 or len(todo) <= 1:
            for t in todo:
                results[t.relpath] = write_shard(t, str(out))
                bar.update(t.rows)
        else:
            with worker_pool(min(workers, len(todo))) as pool:
                todo.sort(key=lambda t: -t.cost)
                futures = {pool.submit(write_shard, t, str(out)): t for t in todo}
                import dataset_builder.release.card  # noqa: F401  (the README's imports, a second of work, while workers run)

                try:
                    for fut in as_completed(futures):
                        r = fut.result()
                        results[r.relpath] = r
                        bar.update(r.rows)
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
    finally:
        bar.close()
        remove_stale_temp_files(out)
    return results
