"""``g2m export vlmevalkit`` on a full disk: one line naming the file, and no partial file left to keep the disk
full. Real tmpfs mounts, as root (``needs_root``: skipped elsewhere, by
tests/support/disks.py and conftest)."""

from __future__ import annotations

import pytest

from tests.support.disks import remount, tmpfs
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # builds a release and mounts file systems


@pytest.mark.needs_root
def test_export_on_a_full_disk_names_the_file_and_leaves_nothing(small_release):
    with tmpfs("100k") as out:  # the small release's TSV is about 300 KB
        target = out / "Grid2Matrix.tsv"
        res = g2m("export", "vlmevalkit", "--data", str(small_release), "--out", str(target))
        assert res.returncode == 1, res.stdout + res.stderr  # StorageError: as a full disk anywhere else
        assert "Traceback" not in res.stderr
        errors = [line for line in res.stderr.splitlines() if line.startswith("g2m: error:")]
        assert errors == [f"g2m: error: could not write {target}: No space left on device"], res.stderr
        assert sorted(p.name for p in out.iterdir()) == []  # no .Grid2Matrix.tsv.partial holding the space
        remount(out, "size=4m")
        again = g2m("export", "vlmevalkit", "--data", str(small_release), "--out", str(target))
        assert again.returncode == 0, again.stderr
        assert sorted(p.name for p in out.iterdir()) == ["Grid2Matrix.tsv"]
