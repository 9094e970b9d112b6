"""Name the *shape* of a wrong answer: what the sample viewer shows and filters by.

A wrong answer is rarely noise. Models skip a row and carry on one row off, write a row twice, drop the first cell of
every row, read the grid column by column, stop mid-grid, or read one colour as another. ``error_shape`` tries an
ordered list of named checks, one function per shape; the first that fits names the answer (the order puts the more
specific explanation first, as ``scoring.parsing`` orders its strategies):

1. ``transposition``: the N x N answer is the target transposed (nearly), the target is not symmetric, and the answer
   is at least twice as close to the transpose as to the target.
2. ``rows repeated``: every answer row is the next target row or a copy of the answer row before it, with at least
   one copy where the target moves on: a row written twice, the rows after it one target row late.
3. ``row shift``: for one k with 1 <= |k| <= N/2, at least 2/3 of the compared rows (at least 2) are
   ``target[i + k]``, and more than are ``target[i]``: a row skipped (or one added) early.
4. ``column shift``: the same within rows: at least 2/3 of the rows (at least 2) are ``target[i]`` shifted left or
   right by the same k cells, and more rows than match unshifted: a cell dropped (or added) at the start of each row.
5. ``cut short``: fewer than N rows, or N rows with the last one short; every row but the last is whole, none is
   longer than N, and at least 95% of the cells given are right: a run that stopped early.
6. ``one colour confused``: an N x N answer whose wrong cells (at least 2) all have the same true colour and the same
   read colour.

"Matches a row" allows slips: two rows of the same length match when at most 10% of their cells differ (none below
N = 10, 1 at N = 12, 6 at N = 64), so a shape is still seen through a few misread cells. An exact answer, a parse
failure (no matrix) and an answer that fits no shape have no shape: ``None``, never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import ne

import numpy as np

from scoring.score import as_grid

Grid = list[list[int]]

#: Share of a row's cells that may differ while the row still "matches" (transcription slips).
ROW_SLACK = 0.1
#: Share of the compared rows that must fit one shift for a row or column shift.
SHIFT_SHARE = 2 / 3
#: Share of the given cells that must be right for a short answer to be "cut short".
CUT_SHORT_RIGHT = 0.95
#: How much closer to the transpose than to the target a transposition must be.
TRANSPOSE_RATIO = 2
#: Fewest wrong cells that can show one colour confused for another.
CONFUSED_MIN_WRONG = 2

__all__ = ["CONFUSED_MIN_WRONG", "CUT_SHORT_RIGHT", "ROW_SLACK", "SHAPES", "SHAPE_NAMES", "SHIFT_SHARE",
           "TRANSPOSE_RATIO", "error_shape"]


def _wrong(a: Sequence[int], b: Sequence[int]) -> int:
    """Cells that differ between two rows of the same length."""
    return sum(map(ne, a, b))


def _near(a: Sequence[int], b: Sequence[int]) -> bool:
    """Same length and at most ROW_SLACK of the cells differ: a row read right but for slips."""
    return len(a) == len(b) and (a == b or _wrong(a, b) <= int(len(a) * ROW_SLACK))


def _square(a: Grid, n: int) -> bool:
    return len(a) == n and all(len(row) == n for row in a)


def _max_shift(n: int) -> int:
    """A shift moves by at most half the grid: further, too little overlaps to tell a shift from chance."""
    return max(1, n // 2)


#: A check's ``arr`` by default: the arrays are computed by the check itself (``error_shape`` computes them once and
#: hands them to every check: converting a 64 x 64 answer is most of what a check costs).
COMPUTE = object()


def _given(arr, a: Grid, t: Grid):
    """The (answer, target) arrays a caller passed (None: there are none, compare lists), else ``_arrays``'."""
    return _arrays(a, t) if arr is COMPUTE else arr


def _transposition(a: Grid, t: Grid, arr=COMPUTE) -> bool:
    """Read column by column: the answer is nearer the transpose, and the target is not symmetric (else the two read
    the same and nothing shows a transposition)."""
    n = len(t)
    if (arr := _given(arr, a, t)) is not None:
        x, y = arr
        if (y == y.T).all():
            return False
        off_t, off = int((x != y.T).sum()), int((x != y).sum())
        return off_t <= int(n * n * ROW_SLACK) and off > TRANSPOSE_RATIO * off_t
    tt = [list(col) for col in zip(*t, strict=True)]
    if not _square(a, n) or tt == t:
        return False
    off_t = sum(_wrong(x, y) for x, y in zip(a, tt, strict=True))
    off = sum(_wrong(x, y) for x, y in zip(a, t, strict=True))
    return off_t <= int(n * n * ROW_SLACK) and off > TRANSPOSE_RATIO * off_t


def _rows_repeated(a: Grid, t: Grid, arr=COMPUTE) -> bool:  # compares lists: no use for arrays
    """Walk the answer against the target: each row is the next target row, or a copy of the row before where the
    target moves on (the target row is then written one row late). One copy at least, nothing unexplained."""
    j = copies = 0
    for i, row in enumerate(a):
        if j < len(t) and _near(row, t[j]):
            j += 1
        elif i and _near(row, a[i - 1]):
            copies += 1
        else:
            return False
    return copies > 0


def _arrays(a: Grid, t: Grid):
    """(answer, target) as int64 arrays when the answer is exactly N x N and fits: the shift checks compare every
    row with every row or shift, which numpy does at C speed (the Python loops below give the same answers for a
    ragged or huge-valued answer). None otherwise."""
    if not _square(a, len(t)):
        return None
    try:
        return np.asarray(a, dtype=np.int64), np.asarray(t, dtype=np.int64)
    except OverflowError:
        return None


def _row_shift_fast(arr, t: Grid) -> bool:
    a, tt = arr
    n = len(t)
    near = (a[:, None, :] != tt[None, :, :]).sum(axis=2) <= int(n * ROW_SLACK)  # near[i, j]: answer row i ~ row j
    rows = np.arange(n)
    # every diagonal's sum at once: hits[k + n - 1] is near's trace at offset k (row j = i + k of the target)
    hits = np.bincount((rows[None, :] - rows[:, None] + n - 1).ravel(), near.ravel(), 2 * n - 1).astype(np.int64)
    same = hits[n - 1]
    k = np.array([d for d in range(1, _max_shift(n) + 1) for d in (d, -d)])
    hits, compared = hits[k + n - 1], n - np.abs(k)
    return bool(((compared >= 2) & (hits >= 2) & (hits >= SHIFT_SHARE * compared) & (hits > same)).any())


def _column_shift_fast(arr, t: Grid) -> bool:
    a, tt = arr
    n = len(t)
    same = int(((a != tt).sum(axis=1) <= int(n * ROW_SLACK)).sum())
    # every shift at once: skew[i, j, k + n - 1] is 1 where a[i, j] != tt[i, j + k], written through a view that
    # puts each (j, j + k) pair on its shift's column (pairs off the grid stay 0)
    skew = np.zeros((n, n, 2 * n - 1), dtype=np.int8)
    pairs = np.lib.stride_tricks.as_strided(skew[:, :, n - 1:], (n, n, n),
                                            (skew.strides[0], skew.strides[1] - skew.strides[2], skew.strides[2]))
    pairs[...] = a[:, :, None] != tt[:, None, :]
    off = skew.sum(axis=1)  # off[i, k + n - 1]: row i's cells that differ from the target's shifted by k
    k = np.array([d for d in range(1, _max_shift(n) + 1) for d in (d, -d)])
    width = n - np.abs(k)
    k, width = k[width >= max(2, math.ceil(n / 2))], width[width >= max(2, math.ceil(n / 2))]
    hits = (off[:, k + n - 1] <= (width * ROW_SLACK).astype(np.int64)).sum(axis=0)
    return bool(((hits >= 2) & (hits >= SHIFT_SHARE * n) & (hits > same)).any())


def _row_shift(a: Grid, t: Grid, arr=COMPUTE) -> bool:
    """Rows one (or k) off: most compared rows are ``target[i + k]`` for one k, and more than are ``target[i]``."""
    if (arr := _given(arr, a, t)) is not None:
        return _row_shift_fast(arr, t)
    n = len(t)
    same = sum(_near(row, t[i]) for i, row in enumerate(a[:n]))
    for k in (s * d for d in range(1, _max_shift(n) + 1) for s in (1, -1)):
        lo, hi = max(0, -k), min(len(a), n - k)
        compared = hi - lo
        if compared < 2:
            continue
        hits = sum(_near(a[i], t[i + k]) for i in range(lo, hi))
        if hits >= 2 and hits >= SHIFT_SHARE * compared and hits > same:
            return True
    return False


def _row_shifted_by(row: Sequence[int], target_row: Sequence[int], k: int) -> bool:
    """``row[j] == target_row[j + k]`` wherever both exist (at least half the row overlaps)."""
    n = len(target_row)
    lo, hi = max(0, -k), min(len(row), n - k)
    if hi - lo < max(2, math.ceil(n / 2)):
        return False
    return _near(row[lo:hi], target_row[lo + k : hi + k])


def _column_shift(a: Grid, t: Grid, arr=COMPUTE) -> bool:
    """Cells one (or k) off within rows, the same k in most rows: a cell dropped or added at each row's start."""
    if (arr := _given(arr, a, t)) is not None:
        return _column_shift_fast(arr, t)
    n = len(t)
    rows = list(zip(a, t, strict=False))
    same = sum(_near(row, trow) for row, trow in rows)
    if len(rows) < 2:
        return False
    for k in (s * d for d in range(1, _max_shift(n) + 1) for s in (1, -1)):
        hits = sum(_row_shifted_by(row, trow, k) for row, trow in rows)
        if hits >= 2 and hits >= SHIFT_SHARE * len(rows) and hits > same:
            return True
    return False


def _cut_short(a: Grid, t: Grid, arr=COMPUTE) -> bool:  # compares lists: no use for arrays
    """Stopped early: whole rows, then perhaps a part row, then nothing; what was written is (nearly) right."""
    n = len(t)
    if not a or len(a) > n or any(len(row) != n for row in a[:-1]) or len(a[-1]) > n:
        return False
    if len(a) == n and len(a[-1]) == n:
        return False  # nothing is missing
    given = sum(map(len, a))
    wrong = sum(_wrong(row, trow) for row, trow in zip(a, t, strict=False))
    return given > 0 and given - wrong >= CUT_SHORT_RIGHT * given


def _one_colour_confused(a: Grid, t: Grid, arr=COMPUTE) -> bool:
    """Every wrong cell is the same true colour read as the same other colour (a palette mix-up, not noise)."""
    if not _square(a, len(t)):
        return False
    if (arr := _given(arr, a, t)) is not None:
        x, y = arr
        wrong = x != y
        if int(wrong.sum()) < CONFUSED_MIN_WRONG:
            return False
        return len(set(zip(y[wrong].tolist(), x[wrong].tolist(), strict=True))) == 1
    pairs = [(y, x) for row, trow in zip(a, t, strict=True) for x, y in zip(row, trow, strict=True) if x != y]
    return len(pairs) >= CONFUSED_MIN_WRONG and len(set(pairs)) == 1


#: The checks, in order: (name, fits). Each takes the answer and the target as lists of lists of ints (and, from
#: ``error_shape``, their arrays: ``_arrays``).
SHAPES: tuple[tuple[str, Callable[..., bool]], ...] = (
    ("transposition", _transposition),
    ("rows repeated", _rows_repeated),
    ("row shift", _row_shift),
    ("column shift", _column_shift),
    ("cut short", _cut_short),
    ("one colour confused", _one_colour_confused),
)
#: Every name ``error_shape`` can return (besides None).
SHAPE_NAMES: tuple[str, ...] = tuple(name for name, _ in SHAPES)


def error_shape(matrix: Sequence[Sequence[int]] | None, target: Sequence[Sequence[int]]) -> str | None:
    """The first shape that fits a wrong answer; None for an exact answer, a parse failure or no shape."""
    if matrix is None:
        return None
    a, t = as_grid(matrix), as_grid(target)  # ragged rows kept as they are
    if not a or a == t:
        return None
    arr = _arrays(a, t)
    return next((name for name, fits in SHAPES if fits(a, t, arr)), None)
