"""The slow lane's work sharing (``tests/support/scheduling.py``): units, their order, and costs read from pytest's
own report."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support import scheduling
from tests.support.scheduling import COSTS, FAST_COSTS, cost_order, costs_from_report, load_costs, scope_of

PAGE = "tests/docs/test_docs_run.py::test_the_page_runs_as_written[docs/probing.md]"


@pytest.mark.parametrize(("nodeid", "scope"), [
    ("tests/leaderboard/test_site.py::test_rows", "tests/leaderboard/test_site.py"),
    ("tests/scoring/test_parsing.py::test_x[a::b]", "tests/scoring/test_parsing.py"),
    (PAGE, PAGE),  # a docs page is a unit of its own
    ("tests/probing/test_sweep.py::test_x", "tests/probing/test_sweep.py"),
])
def test_the_unit_of_a_test(nodeid, scope):
    assert scope_of(nodeid, fast=False) == scope


@pytest.mark.parametrize(("nodeid", "scope"), [
    ("tests/probing/test_probe_heads.py::test_x[1]", "tests/probing/"),  # torch's importers: one unit, one worker
    ("tests/probing/sweep/test_y.py::test_z", "tests/probing/"),
    ("tests/scoring/test_parsing.py::test_x", "tests/scoring/test_parsing.py"),
])
def test_the_unit_of_a_fast_lane_test(nodeid, scope):
    assert scope_of(nodeid, fast=True) == scope


def test_costliest_units_first_and_each_unit_kept_together_in_its_order():
    ids = ["tests/a.py::t1", "tests/b.py::t1", "tests/a.py::t2", "tests/c.py::t1", "tests/b.py::t2", PAGE]
    items = [SimpleNamespace(nodeid=n) for n in ids]
    costs = {"tests/b.py": 50.0, PAGE: 80.0, "tests/a.py": 5.0}
    assert [i.nodeid for i in cost_order(items, costs)] == [
        PAGE, "tests/b.py::t1", "tests/b.py::t2", "tests/a.py::t1", "tests/a.py::t2", "tests/c.py::t1"]
    assert [i.nodeid for i in cost_order(items, {})] == [  # no costs: units in collection order
        "tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/b.py::t2", "tests/c.py::t1", PAGE]


def test_costs_are_summed_per_unit_from_a_durations_report(tmp_path):
    report = ["============ slowest durations ============",
              "12.50s call     tests/a.py::t1", "2.00s setup    tests/a.py::t1", "0.60s teardown tests/a.py::t2",
              f"190.25s call     {PAGE}", "(3 durations < 0.005s hidden.)", "1 passed in 3.0s"]
    assert costs_from_report(report) == {PAGE: 190.2, "tests/a.py": 15.1}
    bad = tmp_path / "costs.json"
    bad.write_text("[1, 2]")
    assert load_costs(bad) == {} and load_costs(tmp_path / "missing.json") == {}


def test_the_measured_costs_name_units_that_exist():
    from tests.support.helpers import REPO

    for path in (COSTS, FAST_COSTS):
        assert load_costs(path), f"{path.name} is empty"
        for scope in load_costs(path):
            assert scope == scheduling.FAST_TORCH_UNIT or (REPO / scope.split("::", 1)[0]).is_file(), (
                f"{scope}: no such test file (refresh {path.name})")
