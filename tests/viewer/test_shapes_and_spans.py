"""Shapes of wrong answers (``viewer.shapes``) and the span the parser read (``viewer.spans``), as tables."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring.parsing import format_answer, parse_matrix
from tests.support.helpers import linear_time_failure
from viewer.shapes import SHAPE_NAMES, SHAPES, error_shape
from viewer.spans import parsed_span

T4 = [[1, 0, 1, 2], [0, 0, 2, 0], [1, 2, 0, 2], [0, 0, 0, 1]]
T5 = [[3, 0, 1, 0, 3], [0, 0, 1, 0, 3], [0, 1, 0, 1, 2], [3, 1, 0, 2, 1], [0, 1, 2, 0, 0]]
T6 = [[4, 0, 4, 1, 3, 4], [3, 2, 3, 4, 3, 2], [2, 1, 1, 1, 0, 4], [2, 4, 3, 2, 3, 2], [4, 0, 0, 4, 3, 1],
      [2, 1, 3, 3, 0, 0]]
T7 = [[2, 2, 1, 1, 2, 1, 2], [1, 2, 1, 0, 0, 1, 1], [2, 2, 0, 0, 2, 2, 1], [2, 2, 2, 1, 1, 2, 1], [2, 1, 0, 1, 1, 0, 2],
      [0, 1, 0, 0, 1, 0, 2], [0, 1, 1, 1, 0, 0, 1]]
T8 = [[6, 8, 4, 2, 6, 8, 4, 6], [5, 6, 3, 2, 1, 2, 2, 3], [3, 0, 7, 9, 2, 4, 4, 0], [2, 6, 8, 5, 9, 9, 5, 2],
      [8, 9, 0, 7, 8, 6, 6, 6], [6, 1, 7, 6, 0, 3, 1, 3], [7, 2, 1, 5, 9, 0, 1, 0], [9, 2, 8, 1, 5, 9, 0, 1]]
SYM5 = [[0, 1, 2, 0, 1], [1, 2, 0, 1, 0], [2, 0, 1, 2, 2], [0, 1, 2, 0, 1], [1, 0, 2, 1, 2]]


def grid(n: int, c: int, seed: int) -> list[list[int]]:
    """A random N x N target with C colours (rows all different, as a real grid's nearly always are)."""
    rng = random.Random(seed)
    while True:
        t = [[rng.randrange(c) for _ in range(n)] for _ in range(n)]
        if len({tuple(r) for r in t}) == n:
            return t


def tr(t):
    return [list(col) for col in zip(*t, strict=True)]


def edit(t, *cells):
    """A copy of ``t`` with ``(row, col, value)`` cells written over."""
    out = [list(r) for r in t]
    for i, j, v in cells:
        out[i][j] = v
    return out


def noisy(t, share: float, c: int, seed: int):
    """``t`` with about ``share`` of its cells misread as another random colour (scattered noise)."""
    rng = random.Random(seed)
    return [[(v + rng.randrange(1, c)) % c if rng.random() < share else v for v in row] for row in t]


def recolour(t, true: int, read: int, rows: range):
    return [[read if (v == true and i in rows) else v for v in row] for i, row in enumerate(t)]


T12, T12B, T14, T16, T16B, T20, T20B, T32 = (grid(12, 5, 2), grid(12, 3, 4), grid(14, 6, 3), grid(16, 4, 1),
                                             grid(16, 4, 6), grid(20, 6, 7), grid(20, 3, 8), grid(32, 10, 5))

SHAPE_CASES = [
    # --- row shift: a row skipped (k = +1, +2) or one added (k = -1) early; the rest follows one row off
    ("row skipped early", [T6[0], *T6[2:]], T6, "row shift"),
    ("junk first row", [[0, 0, 0, 0, 0], *T5[:4]], T5, "row shift"),
    ("two rows skipped N=16", T16[2:], T16, "row shift"),
    ("row skipped, slips N=20", [edit([r], (0, 3, (r[3] + 1) % 3))[0] if i % 4 == 0 else r
                                for i, r in enumerate([T20B[0], *T20B[2:]])], T20B, "row shift"),
    # --- rows repeated: a row written twice, the rest one row late (N rows: the last target row lost, or N + 1)
    ("row 2 twice", [*T6[:3], T6[2], *T6[3:5]], T6, "rows repeated"),
    ("row 0 twice, not a row shift", [T6[0], *T6[:5]], T6, "rows repeated"),
    ("last row twice", [*T4, T4[3]], T4, "rows repeated"),
    ("row 6 twice N=12", [*T12[:7], T12[6], *T12[7:]], T12, "rows repeated"),
    # --- column shift: every row one cell off
    ("first cell dropped", [r[1:] for r in T5], T5, "column shift"),
    ("cell added at start", [[0, *r[:-1]] for r in T6], T6, "column shift"),
    ("first cell dropped N=14", [r[1:] for r in T14], T14, "column shift"),
    ("two cells dropped in most rows N=16", [r[2:] if i % 5 else r for i, r in enumerate(T16)], T16, "column shift"),
    # --- transposition: read by columns
    ("transposed 4x4", tr(T4), T4, "transposition"),
    ("transposed 8x8", tr(T8), T8, "transposition"),
    ("transposed N=12", tr(T12B), T12B, "transposition"),
    ("transposed with slips N=20", edit(tr(T20), (0, 0, 9), (5, 7, 9), (11, 3, 9)), T20, "transposition"),
    # --- cut short: stopped early, what was written is right (or nearly)
    ("stopped in row 4", [*T6[:3], T6[3][:2]], T6, "cut short"),
    ("last row short", [*T8[:7], T8[7][:5]], T8, "cut short"),
    ("whole rows only", T7[:2], T7, "cut short"),
    ("stopped in row 21, one slip N=32", edit([*T32[:20], T32[20][:11]], (4, 4, (T32[4][4] + 1) % 10)), T32,
     "cut short"),
    # --- one colour confused: every wrong cell the same true colour read as the same other colour
    ("2 read as 3", recolour(T6, 2, 3, range(6)), T6, "one colour confused"),
    ("two cells 0 read as 1", edit(T4, (1, 0, 1), (3, 2, 1)), T4, "one colour confused"),
    ("1 read as 3 in the top half N=16", recolour(T16B, 1, 3, range(8)), T16B, "one colour confused"),
    ("symmetric target, one colour", edit(SYM5, (0, 0, 2), (3, 3, 2)), SYM5, "one colour confused"),
    # --- no shape: exact answers
    ("exact", [list(r) for r in T6], T6, None),
    ("exact tuples", tuple(map(tuple, T8)), T8, None),
    ("exact N=32", T32, T32, None),
    ("transposed symmetric is exact", tr(SYM5), SYM5, None),
    # --- no shape: parse failures
    ("parse failure", None, T4, None),
    ("parse failure, parsed", parse_matrix("I cannot read the colours in this image.", 4).matrix, T4, None),
    ("empty", (), T4, None),
    # --- no shape: realistic wrong answers that fit none
    ("one wrong cell", edit(T5, (2, 2, 3)), T5, None),
    ("scattered errors", edit(T8, (0, 1, 0), (3, 6, 1), (6, 2, 7)), T8, None),
    ("two errors, two colour pairs", edit(T4, (0, 0, 2), (2, 3, 1)), T4, None),
    ("noise 10% N=20", noisy(T20, 0.1, 6, 1), T20, None),
    ("noise 30% N=12", noisy(T12, 0.3, 5, 2), T12, None),
    ("row skipped late", [*T7[:5], T7[6]], T7, None),
    ("row twice plus a slip", [T6[0], T6[1], T6[1], T6[2], edit([T6[3]], (0, 0, 0))[0], T6[4]], T6, None),
    ("short row mid-grid", [*T5[:2], T5[2][:2] + T5[2][3:], *T5[3:]], T5, None),
    ("cut short with errors", [T6[0], edit([T6[1]], (0, 0, 0), (0, 1, 0))[0], T6[2][:3]], T6, None),
    ("symmetric transposed, one slip", edit(tr(SYM5), (1, 3, 2)), SYM5, None),
    ("transposed, then noise", noisy(tr(T12B), 0.3, 3, 3), T12B, None),
    ("too long", [*T4, [0, 1, 2, 0]], T4, None),
]


def test_shape_names():
    assert SHAPE_NAMES == ("transposition", "rows repeated", "row shift", "column shift", "cut short",
                           "one colour confused")
    assert [name for name, _ in SHAPES] == list(SHAPE_NAMES)


@pytest.mark.parametrize(("matrix", "target", "shape"), [c[1:] for c in SHAPE_CASES], ids=[c[0] for c in SHAPE_CASES])
def test_error_shape(matrix, target, shape):
    assert error_shape(matrix, target) == shape
    assert error_shape(matrix, np.array(target)) == shape  # a numpy target reads the same
    if matrix:  # the same answer written out and read back by the parser
        parsed = parse_matrix(format_answer(matrix), len(target)).matrix
        assert error_shape(parsed, target) == shape


@pytest.mark.parametrize(
    ("matrix", "target", "other", "other_fits", "shape"),
    [
        # a row written twice early is also one row off throughout, but the copy is the better explanation
        ([T6[0], *T6[:5]], T6, "row shift", True, "rows repeated"),
        ([T16[0], *T16[:15]], T16, "row shift", True, "rows repeated"),
        # a skipped row is a row shift, never rows repeated (nothing is written twice)
        ([T6[0], *T6[2:]], T6, "rows repeated", False, "row shift"),
        ([T16[0], *T16[2:]], T16, "rows repeated", False, "row shift"),
        # a symmetric target transposed is itself: never a transposition
        (tr(SYM5), SYM5, "transposition", False, None),
        (edit(tr(SYM5), (0, 0, 2), (3, 3, 2)), SYM5, "transposition", False, "one colour confused"),
    ],
)
def test_shapes_not_misread(matrix, target, other, other_fits, shape):
    assert dict(SHAPES)[other]([list(r) for r in matrix], target) is other_fits
    assert error_shape(matrix, target) == shape


# ---------------------------------------------------------------- parsed_span
FENCED = "[[0, 1, 2],\n [2, 0, 1],\n [1, 2, 0]]"
ROWS = "0 1 2\nRow 2: 2 0 1\nRow 3: 1 2 0"


@pytest.mark.parametrize(
    ("text", "n", "span"),
    [
        ("[[0, 1], [1, 0]]", 2, "[[0, 1], [1, 0]]"),
        ("Here is the grid as a matrix:\n```python\n" + FENCED + "\n```\nEach row lists the colours left to right.", 3,
         FENCED),
        ("<think>[[9,9],[9,9]]</think>\nThe answer is [[0, 1], [1, 0]].", 2, "[[0, 1], [1, 0]]"),
        ("<think>[[9,9],[9,9]] is my first guess</think>\n[[9, 9], [9, 9]]", 2, "[[9, 9], [9, 9]]"),
        ("The grid is 3x3.\nRow 1: " + ROWS + "\nThat is all.", 3, ROWS),
        ("1. 0 1 2\n2. 2 0 1\n3. 1 2 0", 3, "0 1 2\n2. 2 0 1\n3. 1 2 0"),
        ("| Row | c1 | c2 | c3 |\n|---|---|---|---|\n| Row 1 | 0 | 1 | 2 |\n| Row 2 | 2 | 0 | 1 |\n"
         "| Row 3 | 1 | 2 | 0 |", 3, "0 | 1 | 2 |\n| Row 2 | 2 | 0 | 1 |\n| Row 3 | 1 | 2 | 0"),
        ("First try: [[0, 1], [1, 0]]. Checking again, the final answer: [[0,1],[1,0]]", 2, "[[0,1],[1,0]]"),
        ("np.array([[0, 1, 2],\n          [2, 0, 1],\n          [1, 2, 0]])", 3,
         "[[0, 1, 2],\n          [2, 0, 1],\n          [1, 2, 0]]"),
        ("[0 1 2]\n[2 0 1]\n[1 2 0]\n", 3, "[0 1 2]\n[2 0 1]\n[1 2 0]"),
        ("Sizes [[0, 1], [1, 0]] ] ]", 2, "[[0, 1], [1, 0]]"),  # stray closing brackets are not taken
        ("[[0, 1], [1, 0", 2, "0, 1], [1, 0"),  # truncated: no closing brackets, so no widening
    ],
    ids=["literal", "fenced with prose", "think then answer", "think holds the same", "row labels", "numbered rows",
         "markdown table", "twice: last wins", "numpy print", "bracketed rows", "stray brackets", "truncated"],
)
def test_parsed_span(text, n, span):
    matrix = parse_matrix(text, n).matrix
    assert matrix is not None
    start = text.rindex(span)
    assert parsed_span(text, matrix) == (start, start + len(span))


@pytest.mark.parametrize(
    ("text", "matrix"),
    [
        ("[[0, 1], [2, 3]]", None),  # a parse failure has no span
        ("[[0, 1], [2, 4]]", [[0, 1], [2, 3]]),  # a value the text never has
        ("[[1, 0], [2, 3]]", [[0, 1], [2, 3]]),  # the values, not in that order
        ("[[0, 1], 7, [2, 3]]", [[0, 1], [2, 3]]),  # a stray integer breaks the run
        ("[[0.0, 1.0], [2.0, 3.0]]", [[0, 1], [2, 3]]),  # decimals: the tokens never spell it
        ("<think>[[0, 1], [2, 3]]</think> I am not sure.", [[0, 1], [2, 3]]),  # only inside the reasoning
        ("", [[0]]),
        ("[[0]]", []),
    ],
)
def test_parsed_span_none(text, matrix):
    assert parsed_span(text, matrix) is None


def test_parsed_span_finds_a_64x64_answer_among_prose_and_reasoning():
    t = grid(64, 10, 9)
    answer = format_answer(t)
    text = ("<think>" + "Row 1 looks like 3 4 5 then 6. " * 200 + "</think>\nLooking at the 64x64 grid, the colours are"
            " numbered 0 to 9.\n```python\n" + answer + "\n```\nI read all 4096 cells row by row. " * 3)
    start = text.rindex(answer)
    assert parsed_span(text, parse_matrix(text, 64).matrix) == (start, start + len(answer))


def test_parsed_span_is_linear_in_hostile_text():
    """Zeros and a matrix that nearly, but never, appears (no run), and one that appears at the very end: four times
    the text costs about four times the time (``linear_time_failure``), never a quadratic search."""
    matrix = [[0] * 64 for _ in range(64)]
    matrix[-1][-1] = 1
    assert parsed_span("1 " + "0 " * 131_071, matrix) is None
    text = "0 " * 131_071 + "1"
    assert parsed_span(text, matrix) == (len(text) - 8191, len(text))
    for make in (lambda k: "1 " + "0 " * k, lambda k: "0 " * k + "1"):
        assert linear_time_failure(lambda text: parsed_span(text, matrix), make) is None


def test_the_array_paths_name_the_same_shapes_as_the_list_paths(monkeypatch):
    """An N x N answer is checked with numpy (every row against every row and shift at C speed); a ragged one with
    the plain loops. On a seeded corpus of every kind of answer, at every N, both name the same shape."""
    import numpy as np

    import viewer.shapes as shapes

    rng = np.random.default_rng(0)
    cases = []
    for n in (3, 4, 6, 10, 16, 32, 64):
        for c in (3, 10):
            for kind in range(8):
                t = rng.integers(0, c, (n, n))
                a = [rng.integers(0, c, (n, n)), np.vstack([t[1:], t[-1:]]), np.roll(t, 1, axis=1), t.T,
                     np.vstack([t[:3], t[2:-1]]) if n > 4 else t, np.where(rng.random((n, n)) < 0.05, (t + 1) % c, t),
                     np.where(t == 1, 2, t), np.roll(t, -1, axis=0)][kind]
                cases.append((a.tolist(), t.tolist()))
    fast = [shapes.error_shape(a, t) for a, t in cases]
    monkeypatch.setattr(shapes, "_arrays", lambda a, t: None)
    assert [shapes.error_shape(a, t) for a, t in cases] == fast
    assert len(set(fast)) == len(shapes.SHAPE_NAMES)  # every shape but "cut short" (a square answer), and None
