"""Worker processes of build and verify never outlive their parent, however it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dataset_builder.release.build import BuildParams, build
from tests.support.helpers import REPO, ended, wait_for

pytestmark = pytest.mark.slow  # starts real builds and kills them


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the workers")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("command", ["build", "verify"])
def test_workers_die_with_their_parent(tmp_path, command, how):
    if command == "build":
        args = ["build", "--out", str(tmp_path / "b"), "--configs", "probe_n64_c10", "--scale", "0.5", "--workers", "2"]
    else:  # verify starts a pool only for more than a second of work: 4,000 64 x 64 grids are about 1.5 s
        build(tmp_path / "v", "probe_n64_c10", BuildParams(scale=0.2), workers=2, progress=False)
        args = ["verify", str(tmp_path / "v"), "--workers", "2"]
    proc = subprocess.Popen([sys.executable, "-m", "g2m_cli", *args, "--quiet"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: len(_children(proc.pid)) >= 2, f"{command}'s two workers to start", proc=proc)
    except AssertionError:
        proc.kill()
        raise
    workers = _children(proc.pid)
    time.sleep(0.3)  # let them pick up work (not needed for the check: a worker dies with its parent, busy or not)
    os.kill(proc.pid, how)
    ended(proc, f"the signalled {command}")
    try:
        wait_for(lambda: not any(_alive(w) for w in workers), "the workers to die with their parent", timeout=60)
    except AssertionError:
        raise AssertionError("workers outlived their parent") from None
