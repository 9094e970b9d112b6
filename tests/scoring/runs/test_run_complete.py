"""A run folder is complete or it says so: report, submit and validate check every task's samples against what the
run recorded, and print no score over a run that does not match unless it says PARTIAL next to the numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scoring.rescoring.load import load_run
from scoring.runs.run import RunError
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow


def _cut_last_line(f: Path) -> None:
    f.write_bytes(f.read_bytes()[:-40])


def _drop_a_line(f: Path) -> None:
    f.write_text("".join(f.read_text().splitlines(keepends=True)[1:]))


def _delete(f: Path) -> None:
    f.unlink()


@pytest.mark.parametrize(("damage", "says"), [
    (_cut_last_line, "the last line of its samples file is cut short"),
    (_drop_a_line, "1 of the 2 samples the run recorded are logged"),
    (_delete, "its samples file (samples_g2m_n05_c5_"),
])
def test_a_run_whose_samples_do_not_match_its_record_is_refused_or_marked_partial(random_run, tmp_path, damage, says):
    run = tmp_path / "run"
    shutil.copytree(random_run, run)
    damage(next(run.glob("samples_g2m_n05_c5_*.jsonl")))
    with pytest.raises(RunError, match="g2m_n05_c5: " + says.replace("(", r"\(")):
        load_run(run)
    for command in (("report", str(run), "--out", str(tmp_path / "r")), ("submit", str(run), "--out",
                                                                         str(tmp_path / "s.json"), "--no-input")):
        res = g2m(*command)
        assert res.returncode != 0 and "incomplete" in res.stderr and "g2m_n05_c5" in res.stderr
        assert "exact match" not in res.stdout  # no score printed over it
    res = g2m("report", str(run), "--out", str(tmp_path / "r"), "--allow-partial")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("PARTIAL run (1 task(s) incomplete)")
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["partial"] and "g2m_n05_c5" in report["partial"][0]
    page = (tmp_path / "r" / "index.html").read_text()
    assert "(PARTIAL run)</h1>" in page and "PARTIAL RUN: 1 task(s) are incomplete" in page
    assert "PARTIAL RUN" in (tmp_path / "r" / "index.md").read_text()
    svg = (tmp_path / "r" / "accuracy_vs_n.svg").read_text()
    assert "PARTIAL" in svg  # every figure's title says it too


def test_a_complete_run_records_its_samples_per_task(random_run):
    results = json.loads(sorted(Path(random_run).glob("results_*.json"))[-1].read_text())
    assert results["g2m"]["samples"] == {t: v["effective"] for t, v in results["n-samples"].items()}
    assert load_run(random_run).incomplete == ()
