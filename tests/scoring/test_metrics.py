"""Metrics are small pure functions; scoring the formatted ground truth gives 1.0."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.metrics import cell_accuracy, cell_mask, exact_match
from scoring.parsing import format_answer, parse_matrix
from tests.support.helpers import examples

T = [[0, 1, 2], [2, 0, 1], [1, 2, 0]]


@pytest.mark.parametrize(
    ("pred", "em", "ca"),
    [
        (T, 1.0, 1.0),
        ([[0, 1, 2], [2, 0, 1], [1, 2, 1]], 0.0, 8 / 9),
        ([[0, 1, 2], [2, 0, 1]], 0.0, 6 / 9),  # a missing row is wrong
        ([[0, 1], [2, 0, 1], [1, 2, 0]], 0.0, 8 / 9),  # a missing cell is wrong
        ([[0, 1, 2, 9], [2, 0, 1], [1, 2, 0]], 0.0, 1.0),  # extra columns are ignored, but it is not N x N
        ([[0, 1, 2], [2, 0, 1], [1, 2, 0], [9, 9, 9]], 0.0, 1.0),  # extra rows likewise
        (None, 0.0, 0.0),  # a parse failure scores nothing
        ([], 0.0, 0.0),
        ([[-1, -1, -1]] * 3, 0.0, 0.0),
    ],
)
def test_metric_table(pred, em, ca):
    assert exact_match(pred, T) == em
    assert cell_accuracy(pred, T) == pytest.approx(ca)
    mask = cell_mask(pred, T)
    assert len(mask) == 3 and all(len(r) == 3 for r in mask)
    assert sum(map(sum, mask)) / 9 == pytest.approx(ca)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 16).flatmap(lambda n: st.lists(st.lists(st.integers(0, 9), min_size=n, max_size=n), min_size=n,
                                                     max_size=n)))
def test_scoring_the_formatted_ground_truth_gives_one(m):
    parsed = parse_matrix(format_answer(m), len(m)).matrix
    assert exact_match(parsed, m) == 1.0 and cell_accuracy(parsed, m) == 1.0
    assert all(all(r) for r in cell_mask(parsed, m))


@pytest.mark.parametrize("bad", [[], [[1, 2]], [[1], [2]]])
def test_a_non_square_target_is_refused(bad):
    with pytest.raises(ValueError):
        cell_accuracy([[1]], bad)

