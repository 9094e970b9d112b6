"""The whole zero_shot config (4,500 rows) through lm_eval with g2m-oracle: wall time and peak memory, one run.

    python benchmarks/bench_eval.py [--data DIR]

Targets (issue: evaluation at scale): under 30 s and under 2 GB peak RSS on 2 cores, against the 89 s and 14.6 GB
measured before (every image decoded up front and re-encoded to hash it). The run is ``g2m eval`` in a child
process, as a user runs it, without the resume cache; its peak RSS is the kernel's figure for that child alone
(``wait4``). Builds the zero_shot config first unless --data is given (the build is not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEFORE_SECONDS, BEFORE_GB = 89.0, 14.6
TARGET_SECONDS, TARGET_GB = 30.0, 2.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-eval-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp / "hf")}
    g2m = [sys.executable, "-m", "g2m_cli"]
    data = args.data
    if data is None:
        t = time.perf_counter()
        subprocess.run([*g2m, "build", "--out", str(tmp / "data"), "--configs", "zero_shot"], cwd=REPO, env=env,
                       check=True, capture_output=True)
        data = str(tmp / "data")
        print(f"built zero_shot (4,500 rows) in {time.perf_counter() - t:.1f} s (not counted)")
    t = time.perf_counter()
    proc = subprocess.Popen([*g2m, "eval", "--model", "g2m-oracle", "--data", data, "--output", str(tmp / "runs"),
                             "--no-resume", "--no-progress"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"g2m eval failed:\n{proc.stderr.read().decode(errors='replace')}")
    gb = usage.ru_maxrss * 1024 / 1e9  # Linux reports kilobytes
    results = json.loads(next((tmp / "runs" / "g2m-oracle").glob("results_*.json")).read_text())
    em = results["results"]["g2m_n64_c10"]["exact_match,none"]
    print(f"g2m eval --model g2m-oracle on zero_shot: {seconds:.1f} s, peak RSS {gb:.2f} GB (64x64 C=10 exact match "
          f"{em:.3f})")
    print(f"  time        : {seconds:6.1f} s   before {BEFORE_SECONDS:.0f} s   ratio {BEFORE_SECONDS / seconds:4.1f}x "
          f"faster   target < {TARGET_SECONDS:.0f} s: {'met' if seconds < TARGET_SECONDS else 'MISSED'}")
    print(f"  peak memory : {gb:6.2f} GB  before {BEFORE_GB} GB ratio {BEFORE_GB / gb:4.1f}x smaller  "
          f"target < {TARGET_GB:.0f} GB: {'met' if gb < TARGET_GB else 'MISSED'}")


if __name__ == "__main__":
    main()
