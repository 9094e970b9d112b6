"""The whole zero_shot config (4,500 rows) through lm_eval with g2m-oracle, timed in one run.

    python benchmarks/bench_eval.py [--data DIR]

Target (issue: harness tasks): at most 3 minutes on 2 cores. Builds the zero_shot config first unless --data is
given (the build is not counted).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-eval-"))
    os.environ["HF_DATASETS_CACHE"] = str(tmp / "hf")
    from dataset_builder.build import build
    from harness_tasks.evaluate import EvalSpec, run_eval

    data = args.data
    if data is None:
        t = time.perf_counter()
        build(tmp / "data", "zero_shot", progress=False)
        data = str(tmp / "data")
        print(f"built zero_shot (4,500 rows) in {time.perf_counter() - t:.1f} s (not counted)")
    t = time.perf_counter()
    res = run_eval(EvalSpec(model="g2m-oracle", tasks=("g2m",), data=data, output=str(tmp / "runs"), resume=False))
    dt = time.perf_counter() - t
    n = res["results"]["g2m"]["sample_len"]
    em = res["results"]["g2m"]["exact_match,none"]
    print(f"lm_eval + g2m-oracle on g2m: {n:,} rows in {dt:.1f} s ({n / dt:.0f} rows/s), exact match {em:.3f}"
          "  (target <= 180 s)")


if __name__ == "__main__":
    main()
