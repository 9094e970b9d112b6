"""One truncation rule for every reader: a run whose server stopped answers for length (their text looking whole)
gives the same rates in ``g2m report``, ``g2m validate`` and the board's table."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a report, a submission and a site of a real lm-eval run

#: (samples of these grid sizes stopped for length, the overall truncation rate every reader must give)
CASES = [
    pytest.param((), 0.0, id="no-length-stops"),
    pytest.param((12, 16, 20, 24, 32, 48, 64), 7 / 15, id="length-stops-from-N=12"),
]


def _length_stopped(run: Path, folder: Path, sizes: tuple[int, ...]) -> Path:
    """A copy of ``run`` whose samples at ``sizes`` say the backend stopped them for length, text unchanged."""
    copy = folder / "run"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("report", "submission*"))
    for f in sorted(copy.glob("samples_*.jsonl")):
        rows = [json.loads(line) for line in f.read_text().splitlines()]
        for row in rows:
            row["doc"]["g2m"]["finish_reason"] = "length" if row["doc"]["grid_size"] in sizes else "stop"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return copy


@pytest.mark.parametrize(("sizes", "rate"), CASES)
def test_report_validate_and_board_give_the_same_truncation_rates(random_run, tmp_path, sizes, rate):
    from leaderboard.build import build_site
    from report.report import build_report
    from submission.submission import submit_run, validate

    run = _length_stopped(random_run, tmp_path, sizes)
    report = build_report(run, tmp_path / "report")
    path = submit_run(run, tmp_path / "subs" / "length-stops.json.gz",  # a baseline's own name is refused
                      model_info={"id": "length-stops"}).path
    checked = validate(path)
    assert checked.ok, checked.reason
    build_site(tmp_path / "subs", tmp_path / "site", progress=False)
    with open(tmp_path / "site" / "leaderboard.csv", newline="") as fh:
        board = next(r for r in csv.DictReader(fh) if r["model"] == "length-stops")

    assert report.overall.truncated == pytest.approx(rate)
    assert checked.scores["overall"]["truncated"] == report.overall.truncated
    assert float(board["truncated"]) == pytest.approx(report.overall.truncated, abs=5e-7)  # 6 decimals
    by_task = {(t["grid_size"], t["num_colors"]): t["truncated"] for t in report.document["tasks"]}
    assert {k: v["truncated"] for k, v in checked.scores["by_task"].items()} == \
        {f"n{n:02d}_c{c}": v for (n, c), v in by_task.items()}
    # the texts look whole: without the finish reason, no reader would see a truncation
    assert report.overall.parse_failed == checked.scores["overall"]["parse_failed"]


@pytest.mark.parametrize(("value", "reason"), [
    ("eos", "finish_reason 'eos' is not one of content_filter, length, stop, tool_calls"),
    ("request_failed", "finish_reason 'request_failed' is not one of"),  # a failed request has no record
    (["length"], "finish_reason \"['length']\" is not one of"),
    (7, "finish_reason '7' is not one of"),
])
def test_a_finish_reason_outside_the_known_ones_is_refused(tmp_path, value, reason):
    from submission.submission import validate
    from tests.support.helpers import submission_doc, write_file

    doc = submission_doc()
    doc["records"][5]["finish_reason"] = value
    v = validate(write_file(tmp_path, doc))
    assert not v.ok and reason in v.reason, v.reason
