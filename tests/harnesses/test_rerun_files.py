"""A rerun of the same command leaves one copy of the run: the new files replace each earlier run they cover (and
say so), and an earlier run holding samples the new one does not (a full run beside a ``--limit`` rerun) is kept and
named, never removed."""

from __future__ import annotations

import pytest

from scoring.runs.layout import results_date, results_files
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # three g2m eval processes of the built-in oracle


def _eval(data, out, *extra):
    res = g2m("eval", "--model", "g2m-oracle", "--tasks", "g2m_n03_c3,g2m_n04_c3", "--data", str(data), "--out",
              str(out), "--quiet", *extra)
    assert res.returncode == 0, res.stderr
    return res


def test_a_rerun_replaces_what_it_covers_and_keeps_what_it_does_not(small_release, tmp_path):
    folder = tmp_path / "g2m-oracle"
    _eval(small_release, tmp_path)
    (first,) = [results_date(p) for p in results_files(folder)]
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 3  # the results file and one samples file per task

    again = _eval(small_release, tmp_path)
    (second,) = [results_date(p) for p in results_files(folder)]
    assert second != first
    assert f"g2m: replaced the earlier run of {first} (3 files): this one holds every sample it held" in again.stderr
    assert sorted(p.name for p in folder.iterdir()) == [f.replace(first, second) for f in files]

    limited = _eval(small_release, tmp_path, "--limit", "1")
    assert f"g2m: kept the earlier run of {second} beside it: it holds samples this one does not" in limited.stderr
    assert len(results_files(folder)) == 2 and len(list(folder.iterdir())) == 6  # nothing of the full run removed
    report = g2m("report", str(folder), "--out", str(tmp_path / "report"))
    assert report.returncode == 0 and "the folder holds 1 other run(s)" in report.stdout
