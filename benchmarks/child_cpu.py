"""The CPU seconds a child process used, which the benchmarks compare: on a shared machine wall time counts the
waiting too. Imported by the ``bench_*.py`` scripts beside it (run as ``python benchmarks/bench_x.py``)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def child(args: list[str], env: dict) -> tuple[float, str]:
    """CPU seconds and stdout of ``python ARGS`` run from the repository; a failure ends the benchmark, naming it."""
    cpu = _children_cpu()
    res = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(args)[:200]} failed:\n{res.stderr[-3000:]}")
    return _children_cpu() - cpu, res.stdout
