"""The cascading parser: golden model outputs, table cases, round trips, and hostile text."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import scan
from scoring.parsing import MAX_ABS, MAX_ANSWER_CHARS, ParseResult, format_answer, parse_matrix
from tests.support import reference_rows
from tests.support.adversarial_outputs import FAMILIES
from tests.support.helpers import examples, linear_time_failure

GOLDEN = json.loads((Path(__file__).parents[1] / "support" / "golden" / "model_outputs.json").read_text())


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
        ("[[1, 1], [1, 1]] then [[0, 1, 2], [2, 0, 1], [1, 2, 0]] then [[5]]", 3, [[0, 1, 2], [2, 0, 1], [1, 2, 0]],
         "list_literal"),
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


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 24).flatmap(lambda n: st.lists(st.lists(st.integers(0, 9), min_size=n, max_size=n), min_size=n,
                                                     max_size=n)))
def test_format_then_parse_round_trips(m):
    n = len(m)
    for text in (format_answer(m), str(np.array(m)), "\n".join(" ".join(map(str, r)) for r in m)):
        r = parse_matrix(text, n)
        assert [list(row) for row in r.matrix] == m, text
        assert not (r.truncated or r.shape_mismatch)
    assert parse_matrix(format_answer(m), n).strategy == "list_literal"


STRUCTURE = st.text(alphabet="[](),;|&\\$`-0123456789 \n\txrowROW:.<>/thinkbegin{}", max_size=400)


@settings(max_examples=examples(400), deadline=None)
@given(STRUCTURE, st.integers(1, 64))
def test_never_raises_and_returns_ints(text, n):
    r = parse_matrix(text, n)
    assert isinstance(r, ParseResult)
    assert r.failed == (r.matrix is None) and (r.reason is not None) == r.failed
    if r.matrix is not None:
        assert all(type(v) is int and abs(v) <= MAX_ABS for row in r.matrix for v in row)


@settings(max_examples=examples(200), deadline=None)
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
    "lone surrogates and controls": "\ud800[[1, 2]\x00\x1b[31m, [3\udfff, 4]]\x85\u2028" * 1000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_never_raises(name):
    r = parse_matrix(HOSTILE[name], 64)
    assert isinstance(r, ParseResult) and r.failed == (r.reason is not None)


@pytest.mark.slow  # a timing ratio: noisy on a busy machine, so not in the fast lane
@pytest.mark.parametrize("family", list(FAMILIES))
def test_parse_time_grows_linearly_with_the_input(family):
    """Four times the input may cost about four times the time; a pattern that backtracks costs sixteen."""
    assert linear_time_failure(lambda text: parse_matrix(text, 64), FAMILIES[family]) is None, family


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from([
    "1 2", "0 1 2", "| 1 | 2 |", "|---|---|", "|:-:|:-:|", "Row 1: 1 2", "2. 1 0", "3) 1 2", "r1=[1, 2]", "\\hline",
    "$$", "\\begin{bmatrix}", "\\end{bmatrix}", "1 & 2 \\\\", "x", "", " ", "-1, 2", "1 -2", "1-2", "[1, 2],",
    "\\begin{pmatrix} 1 & 2", "3 4 \\end{pmatrix}", "1 \\Begin{x} 2", "9x9", "| Row 2 | 1 | 2 |", "- 1", "--1",
    "1.5 2", "R 2", "line 3 - 1 2", "1 2 3 4", "\\begin{a}\\begin{b} 1", "1 \\end{a}\\end{b}", "\\end{a} -1",
    "\\\\ 1 \\\\", "\u0663 1", "\x05 1 2", "1\x002", "|  1|2|", "| R 3 | 1 2",
]), max_size=14), st.integers(1, 4))
def test_the_row_scanner_agrees_with_a_line_by_line_reading(lines, n):
    text = "\n".join(lines)
    assert scan.rows_block(text, n) == reference_rows.rows_block(text, n), text


def test_every_decimal_digit_python_knows_is_read_as_its_value():
    everything = "".join(map(chr, range(0x80, sys.maxunicode + 1)))
    known = {ord(c): ord("0") + unicodedata.decimal(c) for c in re.findall(r"\d", everything)}
    assert scan.decimal_digits() == known
    assert parse_matrix("[[\u0663, \u0661], [\uff10, \U0001d7ce]]", 2).matrix == ((3, 1), (0, 0))


def test_answers_longer_than_the_cap_fail_with_a_reason():
    r = parse_matrix("1 " * MAX_ANSWER_CHARS, 3)
    assert r.failed and "over the 262,144" in r.reason
    # reasoning does not count towards the cap
    ok = parse_matrix("<think>" + "x" * (2 * MAX_ANSWER_CHARS) + "</think>[[1]]", 1)
    assert ok.matrix == ((1,),)


def test_negative_and_huge_integers():
    assert parse_matrix("[[-3, 2], [1, -0]]", 2).matrix == ((-3, 2), (1, 0))
    assert parse_matrix("[[" + "-" + "8" * 40 + "]]", 1).matrix == ((-MAX_ABS,),)
