"""Small file systems of their own (tmpfs mounts, as root): a full or read-only disk on demand.

Where a mount cannot be made (not root, no tmpfs) a case is skipped, unless ``G2M_REQUIRE_ROOT`` is set, as CI sets
it: then it fails. Tests that mount carry the ``needs_root`` marker (conftest applies the same rule to it up front).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest


def cannot(reason: str) -> None:
    """Skip a full-disk case where it cannot run, or fail it where it must (``G2M_REQUIRE_ROOT``, set by CI)."""
    if os.environ.get("G2M_REQUIRE_ROOT"):
        pytest.fail(f"{reason}, and G2M_REQUIRE_ROOT is set: the full- and read-only-disk tests must run")
    pytest.skip(reason)


@contextlib.contextmanager
def tmpfs(size: str):
    """A small file system of its own (a full disk on demand); ``remount(where, options)`` resizes or freezes it."""
    if os.geteuid() != 0:
        cannot("tmpfs mounts need root")
    where = Path(tempfile.mkdtemp(prefix="g2m-tmpfs-"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]).returncode:
        where.rmdir()
        cannot("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)])
        with contextlib.suppress(OSError):
            where.rmdir()


def remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True)


def one_line_error(res) -> str:
    """The one ``g2m: error:`` line of a failed command (no traceback)."""
    assert res.returncode != 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("g2m: error:")]
    assert len(errors) == 1, res.stderr
    return errors[0]
