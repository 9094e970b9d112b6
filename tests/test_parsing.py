"""The cascading parser: golden model outputs, table cases, round trips, and hostile text."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_tasks.parsing import MAX_ABS, MAX_ANSWER_CHARS, ParseResult, format_answer, parse_matrix

GOLDEN = json.loads((Path(__file__).parent / "golden" / "model_outputs.json").read_text())


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: c["name"])
def test_golden_model_outputs(case):
    r = parse_matrix(case["output"], case["grid_size"])
    assert (None if r.matrix is None else [list(row) for row in r.matrix]) == case["matrix"]
    assert (r.strategy, r.truncated, r.shape_mismatch, r.reason) == (
        case["strategy"], case["truncated"], case["shape_mismatch"], case["reason"])


@pytest.mark.parametrize(
    ("text", "n", "expected", "strategy"),
    [
        # an N x N literal beats a later literal of another shape, and the last N x N one wins
        ("[[1, 1], [1, 1]] then [[0, 1, 2], [2, 0, 1], [1, 2, 0]] then [[5]]", 3, [[0, 1, 2], [2, 0, 1], [1, 2, 0]], "list_literal"),
        ("[[1, 2]] and later [[3, 4]]", 3, [[3, 4]], "list_literal"),
        # row labels are not cells
        ("Row 1: 1 1\nRow 2: 0 1", 2, [[1, 1], [0, 1]], "rows"),
        ("R1 = 1 0\nR2 = 0 1", 2, [[1, 0], [0, 1]], "rows"),
        # a single line of integers falls through to strategy 3, sizes like 2x2 are not cells
        ("The 2x2 grid is 1 0 0 1", 2, [[1, 0], [0, 1]], "integers"),
        # the last block of N rows wins over an earlier draft
        ("draft:\n1 1\n1 1\nfinal:\n0 1\n1 0", 2, [[0, 1], [1, 0]], "rows"),
        ("1, 2, 3\n4, 5, 6", 2, [[1, 2, 3], [4, 5, 6]], "rows"),
    ],
)
def test_strategy_table(text, n, expected, strategy):
    r = parse_matrix(text, n)
    assert [list(row) for row in r.matrix] == expected and r.strategy == strategy


def test_partial_answers_are_kept_and_flagged():
    r = parse_matrix("[[1, 2, 0], [0, 1, 2], [2, 0", 3)
    assert r.matrix == ((1, 2, 0), (0, 1, 2), (2, 0)) and r.truncated and r.shape_mismatch and not r.failed


@pytest.mark.parametrize("bad", [None, 12, b"[[1]]", ["[[1]]"]])
def test_non_text_is_a_failure_with_a_reason(bad):
    r = parse_matrix(bad, 3)
    assert r.failed and r.reason == "output is not text"


@pytest.mark.parametrize("n", [0, -1, 2.5, "3"])
def test_bad_grid_size_raises(n):
    with pytest.raises(ValueError):
        parse_matrix("[[1]]", n)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 24).flatmap(lambda n: st.lists(st.lists(st.integers(0, 9), min_size=n, max_size=n), min_size=n, max_size=n)))
def test_format_then_parse_round_trips(m):
    n = len(m)
    for text in (format_answer(m), str(np.array(m)), "\n".join(" ".join(map(str, r)) for r in m)):
        r = parse_matrix(text, n)
        assert [list(row) for row in r.matrix] == m, text
        assert not (r.truncated or r.shape_mismatch)
    assert parse_matrix(format_answer(m), n).strategy == "list_literal"


STRUCTURE = st.text(alphabet="[](),;|&\\$`-0123456789 \n\txrowROW:.<>/thinkbegin{}", max_size=400)


@settings(max_examples=400, deadline=None)
@given(STRUCTURE, st.integers(1, 64))
def test_never_raises_and_returns_ints(text, n):
    r = parse_matrix(text, n)
    assert isinstance(r, ParseResult)
    assert r.failed == (r.matrix is None) and (r.reason is not None) == r.failed
    if r.matrix is not None:
        assert all(type(v) is int and abs(v) <= MAX_ABS for row in r.matrix for v in row)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(1, 64))
def test_never_raises_on_any_unicode(text, n):
    assert isinstance(parse_matrix(text, n), ParseResult)


HOSTILE = {
    "2 MB of digits": "7" * 2_000_000,
    "2 MB of brackets": "[" * 1_000_000 + "]" * 1_000_000,
    "deep nesting at the cap": "[" * 100_000 + "1" + "]" * 100_000,
    "integer with 5,000 digits": "[[" + "9" * 5_000 + ", 1], [2, 3]]",
    "many rows at the cap": "1 2\n\n" * 50_000,
    "many literals at the cap": "[[1]]" * 52_000,
    "whitespace run": "[[1 " + " " * 250_000 + "x",
    "pipes at the cap": "|" * 260_000 + "x",
    "unclosed reasoning": "<think>" + "a" * 2_000_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_is_answered_quickly(name):
    t = time.perf_counter()
    r = parse_matrix(HOSTILE[name], 64)
    assert time.perf_counter() - t < 2.0  # generous for CI; bench_parse.py measures the real figures
    assert isinstance(r, ParseResult)


def test_answers_longer_than_the_cap_fail_with_a_reason():
    r = parse_matrix("1 " * MAX_ANSWER_CHARS, 3)
    assert r.failed and "over the 262,144" in r.reason
    # reasoning does not count towards the cap
    ok = parse_matrix("<think>" + "x" * (2 * MAX_ANSWER_CHARS) + "</think>[[1]]", 1)
    assert ok.matrix == ((1,),)


def test_negative_and_huge_integers():
    assert parse_matrix("[[-3, 2], [1, -0]]", 2).matrix == ((-3, 2), (1, 0))
    assert parse_matrix("[[" + "-" + "8" * 40 + "]]", 1).matrix == ((-MAX_ABS,),)
