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
    if n == 0 or any(len(row) != n for row in target):
        raise ValueError("target must be a non-empty N x N matrix")
    return n


def cell_mask(pred: Grid | None, target: Grid) -> list[list[int]]:
    """1 where the predicted cell equals the target cell, 0 where it differs or is missing."""
    n = _n(target)
    pred = pred or ()
    out = []
    for r in range(n):
        row = pred[r][:n] if r < len(pred) else ()
        try:
            hits = bytes(map(eq, row, target[r]))  # a byte per cell, 1 where equal: compared and counted in C loops
        except TypeError:  # cells whose == gives no plain bool (numpy scalars)
            hits = bytes(map(bool, map(eq, row, target[r])))
        out.append([*hits, *([0] * (n - len(hits)))])
    return out


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
    if pred is None or len(pred) != n or any(len(row) != n for row in pred):
        return 0.0
    return float(all(list(p) == list(t) for p, t in zip(pred, target, strict=True)))
