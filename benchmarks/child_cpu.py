"""The CPU seconds a child process used, which the benchmarks compare: on a shared machine wall time counts the
waiting too. Imported by the ``bench_*.py`` scripts beside it (run as ``python benchmarks/bench_x.py``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
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


def scratch(keep: str | None, name: str, **extra: str) -> tuple[Path, dict]:
    """The benchmark's folder (``keep``, reused, or a new temporary one) and the environment its ``g2m`` children run
    in: offline, datasets' cache inside that folder, this repository first on the path; ``extra`` added."""
    tmp = Path(keep or tempfile.mkdtemp(prefix=f"g2m-bench-{name}-"))
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp, {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp / "hf"),
                 "PYTHONPATH": str(REPO), **extra}
