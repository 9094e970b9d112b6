"""The rerun rule, on real run folders: a run written whole replaces each earlier run of its folder that it covers,
and keeps every other one beside it, saying why in one line; a run with failed requests never replaces anything
(its answers are missing), and a clean rerun replaces the run whose requests failed. The end-to-end rerun of
``g2m eval`` is tests/harnesses/test_rerun_files.py."""

from __future__ import annotations

import json

import pytest

from scoring.runs.layout import results_date, results_files, results_name
from scoring.runs.write import save_run

TASKS = ("g2m_n03_c3", "g2m_n04_c3")


def _lines(n: int) -> list[str]:
    return [json.dumps({"doc_id": i}) + "\n" for i in range(n)]


def _save(folder, date: str, counts: dict[str, int], failed: int = 0) -> None:
    save_run(folder, date, {t: _lines(n) for t, n in counts.items()}, {"g2m": {"request_failed": failed}})


def _unreadable(folder, date: str) -> None:
    (folder / results_name(date)).write_text("{not json")


def _uncounted(folder, date: str) -> None:  # a results file from before runs counted their samples
    (folder / results_name(date)).write_text(json.dumps({"g2m": {"request_failed": 0}}))


FULL = dict.fromkeys(TASKS, 2)

# (earlier run, this run's sample counts, this run's failed requests, kept?, what the line says)
CASES = {
    "the same run again": (lambda f, d: _save(f, d, FULL), FULL, 0, False,
                           "replaced the earlier run of {d} (3 files): this one holds every sample it held"),
    "a clean rerun of a run whose requests failed": (lambda f, d: _save(f, d, FULL, failed=2), FULL, 0, False,
                                                     "replaced the earlier run of {d} (3 files)"),
    "a rerun with failed requests": (lambda f, d: _save(f, d, FULL), FULL, 1, True,
                                     "kept the earlier run of {d} beside it: this one has 1 failed request(s), so it "
                                     "cannot stand for it (g2m report reads the newest; --run DATE chooses)"),
    "a --limit rerun": (lambda f, d: _save(f, d, FULL), {"g2m_n03_c3": 1, "g2m_n04_c3": 2}, 0, True,
                        "kept the earlier run of {d} beside it: it holds samples this one does not"),
    "a rerun of fewer tasks": (lambda f, d: _save(f, d, FULL), {"g2m_n03_c3": 2}, 0, True,
                               "it holds samples this one does not"),
    "an unreadable earlier results file": (_unreadable, FULL, 0, True, "its results file cannot be read"),
    "an earlier run that does not count its samples": (_uncounted, FULL, 0, True,
                                                       "does not record how many samples it holds (g2m.samples)"),
}


@pytest.mark.parametrize(("earlier", "counts", "failed", "kept", "says"), CASES.values(), ids=CASES.keys())
def test_a_rerun_replaces_only_what_it_covers_and_says_why_it_kept_the_rest(tmp_path, capsys, earlier, counts,
                                                                             failed, kept, says):
    before, now = "2026-12-07T09-00-00.000000", "2026-12-07T10-00-00.000000"
    earlier(tmp_path, before)
    held = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _save(tmp_path, now, counts, failed)
    line = capsys.readouterr().err
    assert line.startswith("g2m: ") and line.count("\n") == 1, line
    assert says.format(d=before) in line
    assert "g2m report reads the newest; --run DATE chooses" in line if kept else "kept" not in line
    dates = [results_date(p) for p in results_files(tmp_path)]
    assert dates == ([before, now] if kept else [now])
    left = {p.name: p.read_bytes() for p in tmp_path.iterdir() if before in p.name}
    assert left == (held if kept else {})  # what is kept is kept byte for byte; what is replaced leaves nothing


def test_each_earlier_run_is_judged_on_its_own_and_the_line_names_both(tmp_path, capsys):
    first, second, now = "2026-12-07T08-00-00.000000", "2026-12-07T09-00-00.000000", "2026-12-07T10-00-00.000000"
    _save(tmp_path, first, {"g2m_n04_c3": 2})
    _save(tmp_path, second, {"g2m_n03_c3": 2, "g2m_n05_c5": 2})  # holds a task the rerun leaves out, lacks one of first
    capsys.readouterr()
    _save(tmp_path, now, FULL)
    line = capsys.readouterr().err
    assert line == (f"g2m: replaced the earlier run of {first} (2 files): this one holds every sample it held; "
                    f"kept the earlier run of {second} beside it: it holds samples this one does not (g2m report reads "
                    "the newest; --run DATE chooses)\n")
    assert [results_date(p) for p in results_files(tmp_path)] == [second, now]


def test_the_first_run_of_a_folder_says_nothing(tmp_path, capsys):
    _save(tmp_path, "2026-12-07T10-00-00.000000", FULL)
    assert capsys.readouterr().err == ""
