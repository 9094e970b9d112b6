"""Small helpers shared by tests (not fixtures)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every visible file below ``root`` (the lock file is ignored: it is empty and hidden)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.startswith(".g2m-build.lock"):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def g2m(*args: str, check: bool = False, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run the installed CLI entry point the way a user would (``python -m`` keeps it in this venv)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "dataset_builder.cli", *args], capture_output=True, text=True,
                          check=check, timeout=timeout, env=env, cwd=kw.pop("cwd", REPO), **kw)
