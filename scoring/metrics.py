"""Scores of one parsed answer against its target: small pure functions, shared by the harness and the leaderboard.

A prediction is a sequence of rows (possibly ragged, too short or too long) or ``None`` for a parse failure. Cells
are compared by position: a missing cell is wrong, cells past row N or column N are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import eq

Grid = Sequence[Sequence[int]]


def _n(target: Grid) -> int:
    n = len(target)
    if n == 0 or set(map(len, target)) != {n}:  # every row's length, taken by a C loop
        raise ValueError("target must be a non-empty N x N matrix")
    return n


def cell_mask(pred: Grid | None, target: Grid) -> list[list[int]]:
    """1 where the predicted cell equals the target cell, 0 where it differs or is missing."""
    return [list(row) for row in mask_rows(pred, target)]


def mask_rows(pred: Grid | None, target: Grid) -> tuple[tuple[int, ...], ...]:
    """``cell_mask`` as the tuples a score keeps. A row read right, the most common row of all, is one comparison of
    two tuples in C and the one shared row of ones: most answers are mostly right, and a 64 x 64 answer is 4,096
    cells to compare and copy one by one otherwise."""
    n = _n(target)
    got = tuple(tuple(row[:n]) for row in (pred or ())[:n])
    wanted = tuple(map(tuple, target))
    ones = (1,) * n
    if got == wanted:
        return (ones,) * n  # every row read right: one comparison
    out = []
    for r in range(n):
        row = got[r] if r < len(got) else ()
        want = wanted[r]
        if len(row) == n and row == want:
            out.append(ones)  # every cell equal, as ``eq`` says of each pair below
            continue
        try:
            hits = bytes(map(eq, row, want))  # a byte per cell, 1 where equal: compared and counted in C loops
        except TypeError:  # cells whose == gives no plain bool (numpy scalars)
            hits = bytes(map(bool, map(eq, row, want)))
        out.append((*hits, *((0,) * (n - len(hits)))))
    return tuple(out)


def cell_accuracy(pred: Grid | None, target: Grid) -> float:
    """Correct cells / N^2."""
    n = _n(target)
    if not pred:
        return 0.0
    correct = sum(sum(map(eq, pred[r][:n], target[r])) for r in range(min(n, len(pred))))
    return correct / (n * n)


def exact_match(pred: Grid | None, target: Grid) -> float:
    """1.0 only for an N x N prediction with every cell right."""
    n = _n(target)
    if pred is None or len(pred) != n or set(map(len, pred)) != {n}:
        return 0.0
    return float(tuple(map(tuple, pred)) == tuple(map(tuple, target)))  # row by row, cell by cell, in C (a tuple
    # row is itself: an answer read as tuples against a target given as tuples is compared without a copy)
