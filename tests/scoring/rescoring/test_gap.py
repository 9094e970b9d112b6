"""The Digital Agnosia gap of a leaderboard row (``scoring.rescoring.gap``), and the check a cached row's gap must
pass (``leaderboard.gap_board.well_formed``). Fast: re-scored sections as ``probe_section.rescore`` returns them, and
real scored outputs."""

from __future__ import annotations

import copy
from functools import cache

import numpy as np
import pytest

from leaderboard import gap_board
from scoring.parsing import format_answer
from scoring.rescoring import gap
from scoring.rescoring.rescore import score_output, truth_matrix, zero_shot_truth


def _section(kind: str, config: str, n: int, c: int, readouts: list[tuple[str, str, float]]) -> dict:
    """A re-scored section: (point, role, re-scored cell accuracy) per read-out; its submitted points, in depth order
    (the reverse of the read-outs'), carry other numbers, which must never be used."""
    points = [{"point": p, "stage": "llm" if p.startswith("llm") else "projector", "layer": k,
               "cell_accuracy": 0.999, "cell_accuracy_ci": [0.99, 1.0], "exact_match": 0.999}
              for k, (p, _, _) in enumerate(reversed(readouts))]
    return {"kind": kind, "config": config, "grid_size": n, "num_colors": c, "rows": 30, "scale": 1.0,
            "probed_as": "m", "points": points, "best": None,
            "readouts": [{"point": p, "role": role, "cell_accuracy": a, "cell_accuracy_ci": [a, a], "exact_match": 0.0,
                          "exact_match_ci": [0.0, 0.1]} for p, role, a in readouts]}


@cache
def _scored(wrong_at: tuple[int, int]) -> tuple:
    """Real scored outputs of the first id of each task: right, but an empty answer at ``wrong_at``."""
    first = {}
    for t in zero_shot_truth().values():
        first.setdefault((t.grid_size, t.num_colors), t)
    return tuple(score_output(t.id, "" if k == wrong_at else format_answer(truth_matrix(t)), truth_matrix(t),
                              t.num_colors) for k, t in first.items() if k[0] <= 20)


SECTIONS = {
    "n20 sweep": _section("sweep", "probe_n20_c3", 20, 3, [("llm.002", "best LLM layer", 0.7),
                                                          ("projector", "projector", 0.6)]),
    "n20 probe": _section("probe", "probe_n20_c3", 20, 3, [("vision", "probe read-out", 0.9)]),
    "n20 c5 probe": _section("probe", "probe_n20_c5", 20, 5, [("vision", "probe read-out", 0.5)]),
    "n28 sweep": _section("sweep", "probe_n28_c3", 28, 3, [("llm.001", "last LLM layer", 0.8)]),
}


@pytest.mark.parametrize(("names", "section", "point"), [
    (["n20 probe", "n20 sweep"], 1, "llm.002"),  # the same N and C: the sweep before the single probe
    (["n20 sweep", "n20 c5 probe"], 1, "vision"),  # the same N: the larger C
    (["n28 sweep", "n20 sweep"], 1, "llm.002"),  # N = 28 has no end-to-end task: never the headline
    (["n28 sweep"], None, None),
])
def test_the_headline_is_the_largest_n_with_an_end_to_end_counterpart_at_its_best_read_out(names, section, point):
    g = gap.summary([SECTIONS[n] for n in names], _scored((20, 5)))
    h = g["headline"]
    if section is None:
        assert h is None and g["sections"][0]["end_to_end"] is None and g["sections"][0]["readouts"][0]["gap"] is None
        return
    s = g["sections"][section]
    assert (h["section"], h["point"]) == (section, point)
    assert h["gap"] == h["probe_cell_accuracy"] - h["end_to_end_cell_accuracy"] == s["readouts"][
        [q["point"] for q in s["readouts"]].index(point)]["gap"]
    assert h["end_to_end_cell_accuracy"] == (0.0 if s["num_colors"] == 5 else 1.0)


def test_sections_use_only_re_scored_numbers_in_depth_order():
    (s,) = gap.sections([SECTIONS["n20 sweep"]], gap.cell_accuracy_by_task(_scored((0, 0))))
    assert [q["point"] for q in s["readouts"]] == ["projector", "llm.002"]  # the submitted points' order
    assert [q["cell_accuracy"] for q in s["readouts"]] == [0.6, 0.7]  # never the submitted 0.999
    assert [q["layer"] for q in s["readouts"]] == [0, 1] and s["figure"] == "sweep_0.png"
    assert s["readouts"][1]["gap"] == pytest.approx(0.7 - 1.0)


def test_end_to_end_is_summarises_cell_accuracy():
    from scoring.rescoring.rescore import by_task, summarise

    scored = _scored((20, 3))
    assert gap.cell_accuracy_by_task(scored) == {k: summarise(v).cell_accuracy for k, v in by_task(scored).items()}


@cache
def _summary() -> dict:
    return gap.summary([SECTIONS["n20 sweep"], SECTIONS["n28 sweep"]], _scored((20, 3)))


def _good() -> tuple[dict, set[str]]:
    return copy.deepcopy(_summary()), {"models/s/sweep_0.png", "models/s/sweep_1.png"}


def _mutate(how: str) -> tuple[object, set[str]]:
    g, files = _good()
    s, q = g["sections"][0], g["sections"][0]["readouts"][0]
    if how == "extra key":
        g["forged"] = 1
    elif how == "gap out of range":
        q["gap"] = 7.0
    elif how == "nan accuracy":
        q["cell_accuracy"] = float("nan")
    elif how == "role":
        q["role"] = "<script>"
    elif how == "figure missing":
        files.discard("models/s/sweep_0.png")
    elif how == "figure path":
        s["figure"] = "../../index.html"
    elif how == "headline forged":
        g["headline"]["gap"] = 0.5
    elif how == "headline elsewhere":
        g["headline"]["section"] = 5
    elif how == "not a probing config":
        s["config"] = "zero_shot"
    elif how == "interval":
        q["cell_accuracy_ci"] = [0.1]
    return g, files


def test_a_probe_on_a_scaled_build_is_never_the_headline_and_is_kept_apart_with_its_scale():
    """A probe trained and tested on 1 % of a config (100 test rows) is a noisier number than one on the release's
    config: it never heads a row's gap (never ranked), and the row keeps it apart, with its scale and row count."""
    small = {**SECTIONS["n20 probe"], "scale": 0.01, "rows": 100}
    g = gap.summary([SECTIONS["n20 sweep"], small], _scored((20, 5)))
    assert (g["headline"]["section"], g["headline"]["scale"]) == (0, 1.0)
    assert (g["scaled"]["section"], g["scaled"]["scale"], g["scaled"]["rows"]) == (1, 0.01, 100)
    only = gap.summary([small], _scored((20, 5)))
    assert only["headline"] is None and only["scaled"]["probe_cell_accuracy"] == 0.9
    row = {"name": "m", "gap": only}
    assert gap_board.csv_cells(row)[:3] == ["probe_n20_c3", "0.01", "100"]  # the CSV says how small it is
    assert gap_board.scaled_rows([row]) == [["m", "probe_n20_c3 (N = 20, C = 3)", "0.01", "100", "0.900 (vision, "
                                             "probe read-out)", "1.000", "-0.100"]]
    assert gap_board.gap_order([row, {"gap": g}]) == [1, 0]
    forged = copy.deepcopy(only)  # a cached row whose scaled probe was moved into the ranked headline
    forged["headline"], forged["scaled"] = forged["scaled"], None
    assert not gap_board.well_formed(forged, "s", {"models/s/sweep_0.png"})
    assert gap_board.well_formed(only, "s", {"models/s/sweep_0.png"})


@pytest.mark.parametrize("how", ["extra key", "gap out of range", "nan accuracy", "role", "figure missing",
                                 "figure path", "headline forged", "headline elsewhere", "not a probing config",
                                 "interval"])
def test_a_cached_gap_of_another_shape_is_refused(how):
    assert gap_board.well_formed(_good()[0], "s", _good()[1])
    assert gap_board.well_formed(None, "s", set())
    g, files = _mutate(how)
    assert not gap_board.well_formed(g, "s", files)


def test_the_gap_board_orders_by_gap_and_puts_rows_without_one_last():
    rows = [{"gap": None}, {"gap": {"headline": {"gap": 0.1}}}, {}, {"gap": {"headline": {"gap": 0.4}}},
            {"gap": {"headline": None}}]
    assert gap_board.gap_order(rows) == [3, 1, 0, 2, 4]
    assert gap_board.csv_cells({"gap": None}) == [""] * 6
    g, _ = _good()
    cells = gap_board.csv_cells({"gap": g})
    assert cells[:3] == ["probe_n20_c3", "1", "30"] and cells[5] == f"{np.float64(0.7) - 0.0:.6f}"
