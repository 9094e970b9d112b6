"""Throughput of the release builder, as ratios measured in one run on this machine.

    python benchmarks/bench_build.py            # ~1-2 minutes
    python benchmarks/bench_build.py --full     # also times the full 324,500-image release (several minutes)

Compared on the same rows (a mix weighted like the release: most images are 20x20..64x64 probing grids):
  limit  - render + PNG encode only, in one process: what the build could reach if parquet, hashing and process
           management cost nothing;
  naive  - the authors' approach: one PIL rectangle per cell, then PIL's PNG encoder;
  build  - the real ``g2m build`` path (generation, parquet, atomic writes, manifest), with 1 and with all workers.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset_builder.build import BuildParams, build, plan_config  # noqa: E402
from dataset_builder.configs import CONFIGS, get_config  # noqa: E402
from dataset_builder.generate import RenderOptions, make_image, make_matrix  # noqa: E402
from dataset_builder.render import render_reference  # noqa: E402

MIX = "zero_shot,probe_n20_c3,probe_n32_c10,probe_n48_c3,probe_n64_c10"
SCALE = 0.1


def _rows(configs: str, scale: float):
    out = []
    for name in configs.split(","):
        for task in plan_config(get_config(name).scaled(scale), RenderOptions()):
            for block, start, stop in task.runs:
                out += [(block.seed(i), block.grid_size, block.num_colors) for i in range(start, stop)]
    return out


def _rate(fn, items) -> float:
    t = time.perf_counter()
    for it in items:
        fn(it)
    return len(items) / (time.perf_counter() - t)


def _naive(item) -> bytes:
    seed, n, c = item
    buf = io.BytesIO()
    render_reference(make_matrix(seed, n, c)).save(buf, "PNG")
    return buf.getvalue()


def _build_rate(workers: int, configs: str, scale: float) -> tuple[float, float]:
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-"))
    try:
        t = time.perf_counter()
        m = build(tmp / "rel", configs, BuildParams(scale=scale), workers=workers, progress=False)
        dt = time.perf_counter() - t
        rows = sum(s["rows"] for c in m["configs"].values() for s in c.values())
        return rows / dt, dt
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also build the whole release once and report its time")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    rows = _rows(MIX, SCALE)
    matrices = [(make_matrix(*r), r) for r in rows]
    print(f"machine: {cores} cores; mix: {MIX} at scale {SCALE} = {len(rows)} images")

    limit = _rate(lambda mr: make_image(mr[0]), matrices)
    naive = _rate(_naive, rows[:: max(1, len(rows) // 300)])
    build1, _ = _build_rate(1, MIX, SCALE)
    buildn, _ = _build_rate(cores, MIX, SCALE)
    print(f"limit  render+PNG, 1 process : {limit:8.1f} img/s")
    print(f"naive  per-cell PIL + PIL PNG: {naive:8.1f} img/s")
    print(f"build  1 worker              : {build1:8.1f} img/s  = {build1 / limit:.2f}x limit, {build1 / naive:.1f}x naive")
    print(f"build  {cores} workers             : {buildn:8.1f} img/s  = {buildn / limit:.2f}x limit, {buildn / naive:.1f}x naive")
    total = sum(s.rows for c in CONFIGS for s in c.splits)
    print(f"projected full release ({total:,} images) at {cores} workers: {total / buildn / 60:.1f} min")
    if args.full:
        rate, dt = _build_rate(cores, ",".join(c.name for c in CONFIGS), 1.0)
        print(f"full release measured: {dt / 60:.1f} min ({rate:.1f} img/s, {cores} workers)")


if __name__ == "__main__":
    main()
