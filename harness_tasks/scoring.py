"""One score per answer: the typed result every harness hook, the report and the leaderboard adapt.

``score_answer(text, target)`` parses the text and applies the metrics (``harness_tasks.metrics``); nothing else in
the package computes a score, so the same text gets the same numbers whichever path produced it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .metrics import Grid, cell_mask, exact_match
from .parsing import Matrix, parse_matrix

Mask = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class AnswerScore:
    """The score of one answer against its N x N target."""

    exact_match: float
    cell_accuracy: float
    parse_failed: bool
    truncated: bool  # stopped inside an open structure, or the backend reported a length stop
    shape_mismatch: bool  # a matrix was read, but it is not N x N
    strategy: str  # the parse strategy that read the answer, or "none"
    reason: str | None  # why parsing failed
    mask: Mask  # N x N: 1 where the cell is right
    matrix: Matrix | None  # what was read, within the first N rows and N columns; None on a parse failure

    def metrics(self) -> dict[str, float]:
        """The numbers a harness aggregates (its metric list): every one a mean over samples."""
        return {
            "exact_match": self.exact_match,
            "cell_accuracy": self.cell_accuracy,
            "parse_failed": float(self.parse_failed),
            "truncated": float(self.truncated),
        }

    def detail(self) -> dict:
        """What a samples log keeps beside the numbers: how the answer was read, and which cells were right."""
        return {"parse_strategy": self.strategy, "parse_reason": self.reason or "",
                "cell_mask": [list(r) for r in self.mask]}


def score_answer(text: object, target: Grid, finish_reason: str | None = None) -> AnswerScore:
    """Parse ``text`` for the N x N ``target`` and score it; never raises on any text.

    ``finish_reason`` is what the backend said about why generation stopped, when it says ("length" is a cut-off).
    """
    n = len(target)
    parsed = parse_matrix(text, n)
    mask = tuple(tuple(r) for r in cell_mask(parsed.matrix, target))
    return AnswerScore(
        exact_match=exact_match(parsed.matrix, target),
        cell_accuracy=sum(map(sum, mask)) / (n * n),
        parse_failed=parsed.failed,
        truncated=parsed.truncated or finish_reason == "length",
        shape_mismatch=parsed.shape_mismatch,
        strategy=parsed.strategy,
        reason=parsed.reason,
        mask=mask,
        # only the N x N window counts; hostile text can spell a huge matrix, and a score must stay small
        matrix=None if parsed.matrix is None else tuple(r[:n] for r in parsed.matrix[:n]),
    )


def as_grid(target: Sequence[Sequence[int]]) -> list[list[int]]:
    """A target as plain nested lists of ints (numpy arrays and tuples welcome)."""
    return [[int(v) for v in row] for row in target]
