"""The two protocols side by side: a table of answer shapes with hand-worked scores, the paper parser against a
plain reading of the authors' rules, and its linear time."""

from __future__ import annotations

import ast
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness_tasks import score_answer
from scoring.literal import LiteralError, json_int_rows, read_literal, small_ints
from scoring.paper import first_list_of_lists, max_gen_toks, parse_paper
from scoring.parsing import format_answer
from tests.support import reference_paper
from tests.support.adversarial_outputs import FAMILIES
from tests.support.helpers import examples, linear_time_failure

#: A 9x9 target: row r is (r + c) % 3.
T9 = [[(r + c) % 3 for c in range(9)] for r in range(9)]
CANON = format_answer(T9)
ROWS = "\n".join(" ".join(map(str, row)) for row in T9)


def _cut(rows: int) -> str:
    return "[" + ", ".join(format_answer([row])[1:-1] for row in T9[:rows])  # the answer stops after `rows` rows


ONE_MISSING = format_answer(T9[:8] + [T9[8][:8]])
EXTRA_ROW = format_answer(T9 + [[0] * 9])
WRONG_CELL = format_answer(T9[:8] + [T9[8][:8] + [(T9[8][8] + 1) % 3]])
TABLE = "| c1 | c2 | c3 | c4 | c5 | c6 | c7 | c8 | c9 |\n|---|---|---|---|---|---|---|---|---|\n" + "\n".join(
    "| " + " | ".join(map(str, row)) + " |" for row in T9)
FLOATS = "[" + ", ".join("[" + ", ".join(f"{v}.0" for v in row) + "]" for row in T9) + "]"
QUOTED = "[" + ", ".join("[" + ", ".join(f"'{v}'" for v in row) + "]" for row in T9) + "]"
NEGATIVE_FIRST = format_answer([[-1] + T9[0][1:]] + T9[1:])  # "-1" where the target has 0
ROW_LABELS = "\n".join(f"ROW{i + 1}=[{', '.join(map(str, row))}]" for i, row in enumerate(T9))

#: (name, answer, G2M (exact, cell, strict, parse failed), paper (exact, cell, parse failed)), worked by hand.
SHAPES = [
    ("canonical", CANON, (1, 1, 1, False), (1, 1, False)),
    ("fenced", f"```python\n{CANON}\n```", (1, 1, 1, False), (1, 1, False)),
    ("cut after 6 of 9 rows", _cut(6), (0, 54 / 81, 0, False), (0, 0, True)),  # paper: 54 digit runs, not 81
    ("8 of 9 rows", format_answer(T9[:8]), (0, 72 / 81, 0, False), (0, 0, True)),
    ("one missing cell", ONE_MISSING, (0, 80 / 81, 0, False), (0, 0, True)),  # ragged literal, 80 runs
    ("N + 1 rows", EXTRA_ROW, (0, 1, 0, False), (0, 0, True)),  # 10x9 literal, 90 runs
    ("one wrong cell", WRONG_CELL, (0, 80 / 81, 80 / 81, False), (0, 80 / 81, False)),
    ("the prompt's example echoed first", f"Following the format [[1, 0], [2, 1]], the answer is {CANON}",
     (1, 1, 1, False), (0, 0, True)),  # paper: the first list is 2x2; 4 + 81 digit runs
    ("plain rows after a 9x9 preamble", f"The 9x9 grid:\n{ROWS}", (1, 1, 1, False), (0, 0, True)),  # 2 + 81 runs
    ("plain rows alone", ROWS, (1, 1, 1, False), (1, 1, False)),  # paper: exactly 81 digit runs
    ("markdown table", TABLE, (1, 1, 1, False), (0, 0, True)),  # paper: 9 header digits + 81
    ("floats", FLOATS, (0, 0, 0, True), (1, 1, False)),  # G2M: decimals are not cells; paper: truncated to ints
    ("quoted cells", QUOTED, (1, 1, 1, False), (1, 1, False)),  # paper: numpy reads '1' as 1
    ("a negative cell", NEGATIVE_FIRST, (0, 80 / 81, 80 / 81, False), (0, 80 / 81, False)),  # paper: -1 stays -1
    ("ROW labels", ROW_LABELS, (1, 1, 1, False), (1, 1, False)),
    ("reasoning with a draft", f"<think>[[9, 9], [9, 9]] is wrong</think>{CANON}", (1, 1, 1, False), (0, 0, True)),
    ("refusal", "I cannot read this image.", (0, 0, 0, True), (0, 0, True)),
]


@pytest.mark.parametrize(("answer", "g2m", "paper"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_answer_shapes_under_both_protocols(answer, g2m, paper):
    ours, theirs = score_answer(answer, T9), score_answer(answer, T9, protocol="paper")
    assert (ours.exact_match, ours.cell_accuracy, ours.cell_accuracy_strict, ours.parse_failed) == pytest.approx(g2m)
    assert (theirs.exact_match, theirs.cell_accuracy, theirs.parse_failed) == pytest.approx(paper)
    assert theirs.cell_accuracy_strict == theirs.cell_accuracy  # an N x N matrix or nothing, by construction


def test_the_paper_budget_is_the_authors():
    assert [max_gen_toks(n) for n in (3, 9, 19, 20, 64)] == [146, 554, 1874, 2048, 2048]


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(["[", "]", ",", " ", "\n", "1", "0", "-2", "2.5", "x", "[[", "]]", "], [", "ROW1=",
                                 "ROW2=", "```", "```python", "9x9", "\u0663", "'1'", "(", ")", "True", "'1_0'",
                                 "' 2 '", "'\u0663'", "b'1'", "'1.0'"]), max_size=30),
       st.integers(1, 3))
def test_the_paper_parser_agrees_with_a_plain_reading_of_the_rules(pieces, n):
    text = "".join(pieces)
    matrix, strategy, _ = parse_paper(text, n)
    assert (matrix, strategy) == reference_paper.parse(text, n), text


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="[], \n1x\u00a0", max_size=40))
def test_the_first_list_of_lists_is_the_regular_expressions_first_match(text):
    m = reference_paper.LIST_OF_LISTS.search(text)
    assert first_list_of_lists(text) == (m.span() if m else None)


def _literal_eval_or_none(text: str) -> str | None:
    with warnings.catch_warnings():  # "invalid escape sequence" and friends: literal_eval still gives its value
        warnings.simplefilter("ignore")
        try:
            return repr(ast.literal_eval(text))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None


def _read_literal_or_none(text: str) -> str | None:
    try:
        return repr(read_literal(text))
    except LiteralError:
        return None


#: Tokens of a literal; string escapes as Python reads them: the one-character escapes, a lone
#: ``\0``, and backslashes that are no escape (``\u`` and ``\N`` in bytes, everything in raw strings).
LITERAL_PIECES = ["[", "]", "(", ")", ",", " ", "\n", "1", "07", "1.5", "-", "1e3", "0x1F", "1_0", "'3'", "True",
                  "None",
                  "x", "#c\n", "2j", "u'1'", "--1", "-(1)", "(1,)", "b'1'", "rb'2'", "Br'\\3'", "b'\u0663'",
                  "'\\n'", "'\\t'", "'\\''", '"\\""', "'\\\\'", "'\\0'", "b'\\u0031'", "b'\\N{DIGIT ONE}'", "r'\\x31'",
                  "rb'\\061'"]
#: The numeric escapes: hexadecimal, Unicode, named and octal, well-formed or not.
NUMERIC_ESCAPES = ["'\\x31'", '"\\x32"', "'\\u0031'", "'\\U00000031'", "'\\N{DIGIT ONE}'", "'\\061'", "'\\1'", "'\\01'",
                   "'\\777'", "b'\\x31'", "b'\\061'", "'\\x3'", "'\\u12'", "'\\N{NO SUCH NAME}'"]
@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.sampled_from(LITERAL_PIECES), max_size=12))
@example(["]", ",", "["])  # "[],[]": top-level commas make a tuple (found by CI's longer run)
@example(["]", ","])  # "[],": and so does a trailing one
def test_the_literal_reader_reads_what_literal_eval_reads(pieces):
    _agree("[" + "".join(pieces) + "]")


def _agree(text: str) -> None:
    want, got = _literal_eval_or_none(text), _read_literal_or_none(text)
    if want is not None and "j" in want:
        return  # complex numbers: literal_eval builds them, numpy then refuses them; we refuse them at once
    assert got == want, text


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.sampled_from(LITERAL_PIECES + NUMERIC_ESCAPES), max_size=12))
@example(["'\\x31'"])  # always tried first
def test_the_literal_reader_reads_every_escape_as_literal_eval_does(pieces):
    _agree("[" + "".join(pieces) + "]")


@pytest.mark.parametrize("escape", NUMERIC_ESCAPES)
def test_each_numeric_escape_is_read_as_literal_eval_reads_it(escape):
    _agree(f"[{escape}, {escape}]")


def test_the_paper_protocol_reads_escaped_digits_as_the_authors_code_does():
    """The authors' ``ast.literal_eval`` reads ``'\\x31'`` as ``'1'``: a matrix of escaped digit strings is right."""
    answer = "[['\\x31', '\\x32'], ['\\x30', '\\x31']]"
    assert ast.literal_eval(answer) == [["1", "2"], ["0", "1"]]
    score = score_answer(answer, [[1, 2], [0, 1]], protocol="paper")
    assert (score.exact_match, score.cell_accuracy, score.parse_failed) == (1, 1, False)


@pytest.mark.slow  # a timing ratio: noisy on a busy machine, so not in the fast lane
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_paper_parser_is_linear_in_the_input(family):
    assert linear_time_failure(lambda text: parse_paper(text, 64), FAMILIES[family]) is None, family


@pytest.mark.parametrize(("text", "rows", "small"), [
    ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]], True),
    (" [[ -1 ,2 ],\r\n\t[]] ", [[-1, 2], []], True),  # JSON's four blanks, a sign, an empty row
    ("[[999999999999999999]]", [[999999999999999999]], True),  # 18 digits: under 10**18
    ("[[1000000000000000000]]", [[10**18]], False),  # 19 digits: the values must be looked at
    ("[[-1000000000000000000, 1]]", [[-10**18, 1]], False),
    ("[[1, 23], [456, 7890123]]", [[1, 23], [456, 7890123]], True),
    ("[[1, 23], [456, 7890123456789012]]", [[1, 23], [456, 7890123456789012]], False),  # 18 spare digits in all:
    # each value fits, but the count cannot tell, so they are looked at
    ("[[1, [2]]]", None, None),  # a list deeper than a row
    ("[[1], 2]", None, None),  # a row that is not a list
    ("[[1.0]]", None, None), ("[[1e2]]", None, None), ("[[true]]", None, None), ("[[null]]", None, None),
    ('[["1"]]', None, None), ("[[1], {}]", None, None), ("[[NaN]]", None, None), ("[[Infinity]]", None, None),
    ("[[1]] x", None, None), ("[[01]]", None, None), ("[[+1]]", None, None), ("[[1,]]", None, None),
    ("[[1]\u2003]", None, None),  # a blank JSON does not allow
    ("{}", None, None), ("7", None, None), ("", None, None),
])
def test_a_plain_json_matrix_is_known_from_its_characters(text, rows, small):
    """The scorer's fast path: ``json_int_rows`` gives a list of lists of ints exactly when the text is one in JSON
    (what the literal reader would read), and ``small_ints`` says whether its values fit without looking at them."""
    got = json_int_rows(text)
    assert got == rows and (got is None or all(type(v) is int for r in got for v in r))
    if rows is not None:
        assert small_ints(text, got) is small
        assert read_literal(text.replace("\r", "")) == rows  # the full reader agrees


def test_hostile_text_is_a_parse_error_not_an_exception():
    for text in ("9" * 5000 + " 1 2 3", "[[" + "9" * 5000 + "]]", "ROW1=[" + "9" * 5000 + "]", "[" * 200_000, "\ud800"):
        matrix, strategy, reason = parse_paper(text, 2)
        assert matrix is None or strategy != "none"


@pytest.mark.parametrize("protocol", ["g2m", "paper"])
@pytest.mark.parametrize("text", [CANON, "[... REQUEST_FAILED after 3 retries] ...", ""])
def test_a_failed_request_is_never_read_whatever_its_text(text, protocol):
    s = score_answer(text, T9, "request_failed", protocol)
    assert (s.request_failed, s.parse_failed, s.exact_match, s.cell_accuracy, s.strategy) == (True, False, 0, 0, "none")
    assert s.metrics()["request_failed"] == 1.0 and score_answer(text, T9, "stop", protocol).request_failed is False
