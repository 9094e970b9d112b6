"""``g2m verify``: prove that a release folder is exactly what its seeds say it is.

Three layers, each catching what the one before cannot:
1. files: the folder holds exactly the planned shards and the README, every path stays inside it, every file has
   its sha256, and the README points ``load_dataset`` at those shards only (``layout.py``);
2. rows: the row regenerated from its seed (id, seed, sizes, colours, prompt, matrix, and the PNG bytes rendered
   from that matrix) is compared with the stored row. The build is byte-deterministic, so a row of an untouched
   release matches byte for byte, and that proves its pixels too: the fast path, which costs what the build spent
   rendering and encoding that row;
3. pixels, only where a row does not match: the image is decoded, the matrix read back from the cell centres must
   equal the ``matrix`` column, and re-rendering that matrix must reproduce every pixel (so even a one-pixel edit on
   an outline is seen, also when the manifest was edited to match), and then the row must equal its seed's. A copy
   re-encoded elsewhere (the same pixels in other bytes) is reported as such.

By default every row goes through layers 2 and 3. ``--sample K`` regenerates only K rows per config, spread evenly
over it, and costs what those rows cost: every other row is vouched for by its file's sha256 in the manifest alone
(layer 1), which proves the file is the one the build wrote, but not that a manifest edited to match is honest.
The report counts both kinds, so the summary never claims more than was checked.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from dataset_builder.grids.configs import get_config
from dataset_builder.grids.generate import RenderOptions
from dataset_builder.grids.spec import MANIFEST_NAME
from dataset_builder.release.build import BuildParams, ShardTask, plan_config
from dataset_builder.release.layout import check_paths, check_readme
from dataset_builder.release.provenance import load_manifest, manifest_configs
from dataset_builder.release.rows import check_shard
from g2m_base.errors import BuildError
from g2m_base.flags import check_int
from g2m_base.workers import check_workers
from g2m_base.workers import pool as worker_pool


@dataclass
class VerifyReport:
    files: int = 0  # files hashed against the manifest
    rows: int = 0  # rows the release holds (all of them vouched for by their files' hashes once ``files`` pass)
    regenerated: int = 0  # rows regenerated from their seeds and compared with the stored row
    decoded: int = 0  # of those, rows whose bytes differed from their regeneration, checked pixel by pixel
    sample: int | None = None  # --sample K: rows regenerated per config (None: every row)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """One line that claims exactly what was checked."""
        line = f"OK: {self.files} files hashed against the manifest; "
        if self.regenerated == self.rows:
            line += f"all {self.rows:,} rows regenerated from their seeds and matched byte for byte"
        else:
            line += (f"{self.regenerated:,} of {self.rows:,} rows (up to {self.sample:,} per config) regenerated from "
                     f"their seeds and matched byte for byte, the other {self.rows - self.regenerated:,} checked by "
                     f"their "
                     "files' hashes only")
        if self.decoded:
            line += f" ({self.decoded:,} of them after decoding pixel by pixel)"
        return line


def _params(manifest: dict) -> BuildParams:
    try:
        p = manifest["params"]
        return BuildParams(scale=p["scale"], render=RenderOptions(**p["render"]), rows_per_shard=p["rows_per_shard"])
    except (KeyError, TypeError, ValueError) as e:
        raise BuildError(f"manifest: its build parameters do not read ({type(e).__name__}: {e})") from None


def planned_shards(manifest: dict) -> list[ShardTask]:
    """The shards the manifest's own configs and parameters plan (what the folder must hold, no more)."""
    params = _params(manifest)
    return [t for name in manifest_configs(manifest)
            for t in plan_config(get_config(name).scaled(params.scale), params.render, params.rows_per_shard)]


def check_files(root: Path, manifest: dict, allow_extra: bool = False) -> list[str]:
    """Layout first (no path outside the folder is ever opened), then every listed file's sha256, then the README."""
    tasks = planned_shards(manifest)
    problems = check_paths(root, manifest, {t.relpath for t in tasks}, allow_extra)
    if problems:
        return problems
    planned_rows = {t.relpath: t.rows for t in tasks}
    for rel, entry in sorted(manifest["files"].items()):
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in the manifest but missing")
            continue
        data = path.read_bytes()
        if not isinstance(entry, dict) or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            problems.append(f"{rel}: sha256 differs from the manifest (the file was changed after the build)")
        elif type(entry.get("size")) is not int or entry["size"] != len(data):
            problems.append(f"{rel}: the manifest gives its size as {str(entry.get('size'))[:40]!r}, the file has "
                            f"{len(data):,} bytes")
        elif rel in planned_rows and entry.get("rows") != planned_rows[rel]:
            problems.append(f"{rel}: the manifest gives {str(entry.get('rows'))[:40]!r} rows, the build plans "
                            f"{planned_rows[rel]:,}")
    if problems:
        return problems
    configs = manifest_configs(manifest)
    listed = set()
    for name in configs:
        for split in manifest["configs"][name].values():
            listed |= set(split["files"])
    if {t.relpath for t in tasks} != listed:
        return ["manifest: the shard files it lists are not the ones its parameters plan"]
    for name in configs:  # the row counts the card (and load_dataset's split info) are written from
        for split_name, split in manifest["configs"][name].items():
            want = sum(planned_rows[f] for f in split["files"])
            if split.get("rows") != want:
                problems.append(f"manifest: {name}/{split_name} gives {str(split.get('rows'))[:40]!r} rows, the "
                                f"build plans {want:,}")
    if problems:
        return problems
    return check_readme(root, manifest, configs)


def _sampled_rows(tasks: Sequence[ShardTask], sample: int) -> dict[str, frozenset[int]]:
    """``sample`` rows of each config, spread evenly over it, as row numbers per shard (shards without one left out)."""
    out: dict[str, set[int]] = {}
    by_config: dict[str, list[tuple[str, int]]] = {}
    for t in tasks:
        by_config.setdefault(t.config, []).extend((t.relpath, k) for k in range(t.rows))
    for rows in by_config.values():
        pick = rows if sample >= len(rows) else [rows[int(j)] for j in np.linspace(0, len(rows) - 1, sample)]
        for rel, k in pick:
            out.setdefault(rel, set()).add(k)
    return {rel: frozenset(ks) for rel, ks in out.items()}


def verify(root: str | os.PathLike, sample: int | None = None, workers: int | None = None,
           progress: bool = True) -> VerifyReport:
    """Check the folder at ``root``: every file's hash, then every row regenerated from its seed, or with ``sample``
    only that many rows per config (the others vouched for by their files' hashes alone)."""
    root = Path(root)
    if sample is not None:
        check_int("--sample", sample, 0)
    manifest = load_manifest(root)
    if manifest is None:
        raise BuildError(f"{root / MANIFEST_NAME} is missing: not a finished g2m build")
    report = VerifyReport(files=len(manifest.get("files") or {}), sample=sample)
    tasks = planned_shards(manifest)
    if sample is None:
        jobs = [(t, None) for t in tasks]
        cost = sum(t.cost for t in tasks)
    else:
        picked = _sampled_rows(tasks, sample)
        jobs = [(t, picked[t.relpath]) for t in tasks if t.relpath in picked]
        cost = sum(t.cost * len(rows) // max(1, t.rows) for t, rows in jobs)
    workers = (os.cpu_count() or 1) if workers is None else check_workers(workers)
    # a pool costs a second or so to start: worth it only for work that takes longer (its workers start while files
    # are hashed)
    pool = worker_pool(workers) if workers > 1 and len(jobs) > 1 and cost > 1_000_000 else None
    bar = None
    try:
        report.problems += check_files(root, manifest)
        if report.problems:
            return report
        report.rows = sum(t.rows for t in tasks)
        bar = tqdm(total=sum(t.rows if rows is None else len(rows) for t, rows in jobs), unit="img",
                   desc="g2m verify", disable=not progress)
        args = [(t, str(root), rows) for t, rows in jobs]
        if pool is None:
            outcomes = (check_shard(*a) for a in args)
        else:
            futures: list = [None] * len(args)
            for k in sorted(range(len(args)), key=lambda k: -jobs[k][0].cost):  # the costliest first
                futures[k] = pool.submit(check_shard, *args[k])
            outcomes = (f.result() for f in futures)
        for regenerated, decoded, problem in outcomes:  # in release order: the first problem is the first bad row
            report.regenerated += regenerated
            report.decoded += decoded
            bar.update(regenerated)
            if problem:
                report.problems.append(problem)
                break
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return report
