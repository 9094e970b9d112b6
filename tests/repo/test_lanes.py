"""The fast lane stays fast: collecting it imports none of the heavy libraries (each xdist worker collects every
file, so one top-level ``import torch`` costs every worker seconds), and files that are slow as a whole are not
imported at all."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.helpers import REPO

pytestmark = pytest.mark.slow  # runs pytest's collection in a child process

HEAVY = ("torch", "transformers", "datasets", "matplotlib", "pandas", "inspect_ai", "lmms_eval")
PLUGIN = f'''
import sys
def pytest_collection_finish(session):
    loaded = [m for m in {HEAVY!r} if m in sys.modules]
    tests = sorted(m for m in sys.modules if m.startswith("tests.") and ".test_" in m)
    print("LOADED", loaded, file=sys.__stderr__)
    print("TESTS", tests, file=sys.__stderr__)
'''


def test_collecting_the_fast_lane_imports_no_heavy_library_and_skips_whole_slow_files(tmp_path):
    (tmp_path / "lane_probe.py").write_text(PLUGIN)
    res = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p", "lane_probe"],
                         cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": f"{tmp_path}:{REPO}"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in res.stderr.splitlines()
             if line.startswith(("LOADED ", "TESTS "))}
    assert lines["LOADED"] == "[]", f"collecting the fast lane imported {lines['LOADED']}"
    assert "'tests.probing.test_sweep'" not in lines["TESTS"]  # marked slow as a whole: never imported
    assert "'tests.probing.test_sweep_parts'" in lines["TESTS"]  # fast tests; torch imported only when they run
