"""The report's analyses tell one failure from another: scripted readers, scored by the harness's own code.

A reader that reads every cell right but stops after half the rows must show no patch-alignment effect and a
confusion diagonal of 1 (its failure is *missing* cells, reported apart); a reader that misreads the cells crossing
patch boundaries must show the effect, truncating or not; unparseable answers are their own share.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.parsing import format_answer
from scoring.rescoring import patch_crossing
from scoring.rescoring.patch_crossing import INTERVAL, crossing_fraction, reads_as_none
from scoring.rescoring.rescore import cell_outcomes, color_bias, confusion_by_palette, heatmaps, score_output

SIZES, COLOURS, GRIDS, PATCH = (24, 64), 5, 16, 14


def _exact(target, rng):
    return target


def _truncates(target, rng):
    return target[: len(target) // 2]  # every row it writes is right; the rest is never written


def _misreads_crossing_cells(target, rng):
    """Each cell is read as another colour with the probability of its area outside its dominant 14-px patch."""
    out = target.copy()
    wrong = rng.random(target.shape) < crossing_fraction(len(target), PATCH)
    out[wrong] = (out[wrong] + 1) % COLOURS
    return out


def _misreads_and_truncates(target, rng):
    return _truncates(_misreads_crossing_cells(target, rng), rng)


def _rows(reader, unparseable: int = 0, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    rows = []
    for n in SIZES:
        for k in range(GRIDS + unparseable):
            target = rng.integers(0, COLOURS, (n, n))
            text = format_answer(reader(target, rng)) if k < GRIDS else "I cannot read this image."
            rows.append(score_output(f"zs-n{n:02d}-c{COLOURS}-{k:04d}", text, target, COLOURS))
    return rows


@pytest.mark.parametrize(("name", "reader", "unparseable", "effect", "missing", "diagonal_one"), [
    ("reads every cell", _exact, 0, False, 0.0, True),
    ("only truncates", _truncates, 0, False, 0.5, True),
    ("only truncates, some answers unparseable", _truncates, 3, False, 0.5, True),
    ("misreads cells that cross patches", _misreads_crossing_cells, 0, True, 0.0, False),
    ("misreads crossing cells and truncates", _misreads_and_truncates, 0, True, 0.5, False),
])
def test_each_failure_shows_as_itself(name, reader, unparseable, effect, missing, diagonal_one):
    rows = _rows(reader, unparseable)
    outcomes = cell_outcomes(rows)
    res = patch_crossing.alignment(outcomes, PATCH)
    compared = [r for r in res["per_n"] if r["difference"] is not None]
    assert [r["grid_size"] for r in compared] == list(SIZES), name
    for r in compared:
        assert r["grids_compared"] == GRIDS and r["unparseable_grids"] == unparseable
        assert r["difference_ci"] is not None and r["difference_ci"][0] <= r["difference"] <= r["difference_ci"][1]
        assert reads_as_none(r["difference_ci"]) != effect, (name, r)
        if not effect:
            assert r["difference"] == 0.0 and r["less_crossed_accuracy"] == r["more_crossed_accuracy"] == 1.0
        # missing cells are their own outcome: their share over the parsed answers, per half
        both = (r["less_crossed_missing"] * (r["grid_size"] ** 2 - r["more_crossed_cells"])
                + r["more_crossed_missing"] * r["more_crossed_cells"]) / r["grid_size"] ** 2
        assert both == pytest.approx(missing), (name, r)
    assert reads_as_none(res["difference_ci"]) != effect and res["interval"] == INTERVAL

    conf = confusion_by_palette(rows)[COLOURS]
    among_read = conf[:, :COLOURS] / conf[:, :COLOURS].sum(1, keepdims=True)
    assert np.allclose(np.diag(among_read), 1.0) == diagonal_one, (name, np.diag(among_read))
    rates = color_bias(conf)["rates"]
    cells = sum(n * n * (GRIDS + unparseable) for n in SIZES)
    parsed_cells = sum(n * n * GRIDS for n in SIZES)
    assert rates["missing"] == pytest.approx(missing * parsed_cells / cells), name
    assert rates["unparseable"] == pytest.approx((cells - parsed_cells) / cells) and rates["other value"] == 0.0


def test_counting_missing_cells_as_wrong_would_show_an_effect_truncation_alone_causes():
    """What the comparison over answered cells replaces: over every cell (a missing one as wrong) the halves differ
    only because the lower half of the rows was never written, which falls on the patch grid unevenly."""
    outcomes = cell_outcomes(_rows(_truncates))
    hms = heatmaps(outcomes)
    x = crossing_fraction(64, PATCH).reshape(-1)
    more = x > np.median(x) + 1e-12
    over_every_cell = hms[64].reshape(-1)[more].mean() - hms[64].reshape(-1)[~more].mean()
    assert over_every_cell == pytest.approx(0.02989, abs=5e-5)  # the "effect" the report showed at N = 64
    assert [r["difference"] for r in patch_crossing.alignment(outcomes, PATCH)["per_n"]] == [0.0, 0.0]
