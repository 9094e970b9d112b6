"""Throughput of the release builder and of ``g2m verify``, as ratios measured in one run on this machine.

    python benchmarks/bench_build.py            # a release-weighted mix of 8,450 images, ~1-2 minutes
    python benchmarks/bench_build.py --full     # also the full 324,500-image release: build, then verify (minutes)

Compared on the same rows (a mix weighted like the release: most images are 20x20..64x64 probing grids):
  limit  - render + PNG encode only (batched by grid size, as the build does), in one process: what the build could
           reach if parquet, hashing and process management cost nothing (with K cores, K times this rate);
  naive  - the authors' approach: one PIL rectangle per cell, then PIL's PNG encoder;
  build  - the real ``g2m build`` path (generation, parquet, atomic writes, manifest), with 1 and with all workers;
  verify - the real ``g2m verify`` of that build, all workers: every file hashed, every row regenerated from its seed
           and compared byte for byte; and ``g2m verify --sample 5`` of the same build (every file hashed, 5 rows per
           config regenerated), with its speed-up over the full verify.

Targets (issue: verify as fast as build): the full release built in at most 60 s on 2 cores, and verified in at most
1.2x its build time. Wall times depend on what else the machine runs, so the CPU seconds of the build's own processes
are printed too, and their share of the cores ("core time": CPU seconds / cores, what the wall time would be if the
build had the cores to itself and its processes never waited for each other).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset_builder.grids.configs import CONFIGS, get_config  # noqa: E402
from dataset_builder.grids.generate import RenderOptions, make_matrix  # noqa: E402
from dataset_builder.grids.png import encode_grid_pngs  # noqa: E402
from dataset_builder.grids.render import render_reference  # noqa: E402
from dataset_builder.release.build import BuildParams, build, plan_config  # noqa: E402
from dataset_builder.release.verify import verify  # noqa: E402

MIX = "zero_shot,probe_n20_c3,probe_n32_c10,probe_n48_c3,probe_n64_c10"
SCALE = 0.1
MAX_FULL_SECONDS = 60.0
MAX_VERIFY_RATIO = 1.2
SAMPLE = 5  # g2m verify --sample 5


def _rows(configs: str, scale: float):
    out = []
    for name in configs.split(","):
        for task in plan_config(get_config(name).scaled(scale), RenderOptions()):
            for block, start, stop in task.runs:
                out += [(block.seed(i), block.grid_size, block.num_colors) for i in range(start, stop)]
    return out


def _encode_rate(rows) -> float:
    """Images per second of the encoder alone (render + PNG, as the build runs it: a stack of one size at a time)."""
    stacks: dict[int, list] = {}
    for r in rows:
        stacks.setdefault(r[1], []).append(make_matrix(*r))
    stacks = {n: np.stack(ms) for n, ms in stacks.items()}
    t = time.perf_counter()
    for stack in stacks.values():
        encode_grid_pngs(stack, RenderOptions().resolution)
    return len(rows) / (time.perf_counter() - t)


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


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the worker pools)."""
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))


def _timed(fn):
    cpu, t = _cpu(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t, _cpu() - cpu


def _build_and_verify(workers: int, configs: str, scale: float, check: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-"))
    try:
        m, build_s, build_cpu = _timed(lambda: build(tmp / "rel", configs, BuildParams(scale=scale), workers=workers,
                                                     progress=False))
        rows = sum(s["rows"] for c in m["configs"].values() for s in c.values())
        out = {"rows": rows, "build_s": build_s, "build_cpu": build_cpu}
        if check:
            report, out["verify_s"], out["verify_cpu"] = _timed(lambda: verify(tmp / "rel", workers=workers,
                                                                                progress=False))
            if not report.ok or report.decoded:
                sys.exit(f"verify did not pass on the fast path: {report}")
            report, out["sample_s"], out["sample_cpu"] = _timed(lambda: verify(tmp / "rel", sample=SAMPLE,
                                                                                workers=workers, progress=False))
            if not report.ok:
                sys.exit(f"verify --sample {SAMPLE} did not pass: {report}")
            out["sampled"] = report.regenerated
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _sample_line(run: dict, cores: int) -> str:
    return (f"verify --sample {SAMPLE}, {cores} workers: {run['sample_s']:.2f} s for {run['sampled']:,} of "
            f"{run['rows']:,} rows regenerated, the rest hashed = {run['verify_s'] / run['sample_s']:.1f}x faster than "
            f"the full verify ({run['verify_s']:.2f} s; {run['sample_cpu']:.1f} against {run['verify_cpu']:.1f} CPU-s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also build and verify the whole release once")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    rows = _rows(MIX, SCALE)
    print(f"machine: {cores} cores; mix: {MIX} at scale {SCALE} = {len(rows)} images")

    limit = _encode_rate(rows)
    naive = _rate(_naive, rows[:: max(1, len(rows) // 300)])
    one = _build_and_verify(1, MIX, SCALE, check=False)
    many = _build_and_verify(cores, MIX, SCALE, check=True)
    build1, buildn = one["rows"] / one["build_s"], many["rows"] / many["build_s"]
    verifyn = many["rows"] / many["verify_s"]
    print(f"limit  render+PNG, 1 process : {limit:8.1f} img/s")
    print(f"naive  per-cell PIL + PIL PNG: {naive:8.1f} img/s")
    print(f"build  1 worker              : {build1:8.1f} img/s  = {build1 / limit:.2f}x limit, {build1 / naive:.1f}x "
          f"naive")
    print(f"build  {cores} workers             : {buildn:8.1f} img/s  = {buildn / limit:.2f}x limit, "
          f"{buildn / naive:.1f}x naive ({many['build_cpu']:.1f} CPU-s)")
    print(f"verify {cores} workers             : {verifyn:8.1f} img/s  = {many['verify_s'] / many['build_s']:.2f}x the "
          f"build's time ({many['verify_cpu']:.1f} CPU-s, {many['verify_cpu'] / many['build_cpu']:.2f}x its CPU)")
    print(_sample_line(many, cores))
    total = sum(s.rows for c in CONFIGS for s in c.splits)
    print(f"projected full release ({total:,} images) at {cores} workers: {total / buildn:.0f} s")
    if args.full:
        full_limit = total / (_encode_rate(_rows(",".join(c.name for c in CONFIGS), 0.01)) * cores)
        load = os.getloadavg()[0]
        full = _build_and_verify(cores, ",".join(c.name for c in CONFIGS), 1.0, check=True)
        ratio = full["verify_s"] / full["build_s"]
        print(f"full release, {full['rows']:,} images, {cores} workers (load average {load:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after: other processes share these cores):")
        print(f"  encoder-only limit : {full_limit:6.1f} s  (render + PNG of a 1% sample of every config, "
              f"1 process, times {cores} cores)")
        own = full["build_cpu"] / cores
        print(f"  build              : {full['build_s']:6.1f} s  = {full['build_s'] / full_limit:.2f}x the limit; "
              f"{full['build_cpu']:.0f} CPU-s = {own:.1f} s of {cores} cores ({own / full_limit:.2f}x the limit); "
              f"target <= {MAX_FULL_SECONDS:.0f} s: {'met' if full['build_s'] <= MAX_FULL_SECONDS else 'MISSED'} in "
              f"wall time, {'met' if own <= MAX_FULL_SECONDS else 'MISSED'} in core time")
        print(f"  verify             : {full['verify_s']:6.1f} s  = {ratio:.2f}x the build ({full['verify_cpu']:.0f} "
              f"CPU-s); target <= {MAX_VERIFY_RATIO}x: {'met' if ratio <= MAX_VERIFY_RATIO else 'MISSED'}")
        print("  " + _sample_line(full, cores))


if __name__ == "__main__":
    main()
