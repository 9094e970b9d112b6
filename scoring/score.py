"""One score per answer: the typed result every harness hook, the report and the leaderboard adapt.

``score_answer(text, target, protocol=...)`` parses the text and applies the metrics; nothing else in the package
computes a score, so the same text gets the same numbers whichever path produced it. Two protocols:

- ``"g2m"`` (the default): G2M's parser cascade (``parsing``), with partial credit for answers that are not N x N
  (missing cells wrong, extra ones ignored). ``cell_accuracy_strict`` applies the authors' rule to the same parse: an
  answer that is not exactly N x N scores 0 cells.
- ``"paper"``: the authors' parser and scoring, reproduced exactly (``paper``): their cascade, no reasoning handling,
  and an answer that is not N x N is a parse error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.metrics import Grid, exact_match, mask_rows
from scoring.paper import parse_paper
from scoring.parsing import Matrix, looks_truncated, parse_matrix

Mask = tuple[tuple[int, ...], ...]
PROTOCOLS = ("g2m", "paper")
#: Each protocol in words, as the score table and every figure's title name it.
PROTOCOL_TITLES = {"g2m": "G2M protocol (G2M's parser, partial credit, G2M's budget)",
                   "paper": "paper protocol (the authors' parser and scoring, budget min(4N^2+20N+50, 2048))"}
#: Metric names every protocol reports (the numbers of a task's metric_list), and those where lower is better.
METRICS = ("exact_match", "cell_accuracy", "cell_accuracy_strict", "parse_failed", "truncated", "request_failed")
LOWER_IS_BETTER = frozenset({"parse_failed", "truncated", "request_failed"})
#: The ``finish_reason`` of an answer that never came: the request failed after its retries. Its text (empty, or
#: whatever a client put there) is never parsed; it scores 0 and is counted apart from parse failures.
REQUEST_FAILED = "request_failed"
#: The finish reasons a logged or submitted answer may carry (anything else is never trusted); only "length" and
#: ``REQUEST_FAILED`` change a score.
FINISH_REASONS = frozenset({"stop", "length", "content_filter", "tool_calls", REQUEST_FAILED})


@dataclass(frozen=True)
class AnswerScore:
    """The score of one answer against its N x N target, under one protocol."""

    protocol: str
    exact_match: float
    cell_accuracy: float
    cell_accuracy_strict: float  # 0 unless the answer read is exactly N x N (the authors' rule)
    parse_failed: bool
    truncated: bool  # stopped inside an open structure, or the backend reported a length stop
    request_failed: bool  # no answer came back (the request failed after its retries): nothing was parsed
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
            "cell_accuracy_strict": self.cell_accuracy_strict,
            "parse_failed": float(self.parse_failed),
            "truncated": float(self.truncated),
            "request_failed": float(self.request_failed),
        }

    def detail(self) -> dict:
        """What a samples log keeps beside the numbers: how the answer was read, and which cells were right."""
        return {"protocol": self.protocol, "parse_strategy": self.strategy, "parse_reason": self.reason or "",
                "cell_mask": [list(r) for r in self.mask]}


def score_answer(text: object, target: Grid, finish_reason: str | None = None, protocol: str = "g2m") -> AnswerScore:
    """Parse ``text`` for the N x N ``target`` and score it under ``protocol``; never raises on any text.

    ``finish_reason`` is what the backend said about why generation stopped, when it says ("length" is a cut-off;
    ``REQUEST_FAILED`` means no answer came, and the text is not read at all).
    """
    n = len(target)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if finish_reason == REQUEST_FAILED:
        zeros = tuple((0,) * n for _ in range(n))
        return AnswerScore(protocol, 0.0, 0.0, 0.0, parse_failed=False, truncated=False, request_failed=True,
                           shape_mismatch=False, strategy="none", reason="the request failed: no answer to read",
                           mask=zeros, matrix=None)
    if protocol == "g2m":
        parsed = parse_matrix(text, n)
        matrix, strategy, reason = parsed.matrix, parsed.strategy, parsed.reason
        mismatch, truncated = parsed.shape_mismatch, parsed.truncated
    else:
        matrix, strategy, reason = parse_paper(text, n)
        mismatch, truncated = False, isinstance(text, str) and looks_truncated(text)
    mask = mask_rows(matrix, target)
    accuracy = sum(map(sum, mask)) / (n * n)
    return AnswerScore(
        protocol=protocol,
        exact_match=exact_match(matrix, target),
        cell_accuracy=accuracy,
        cell_accuracy_strict=0.0 if matrix is None or mismatch else accuracy,
        parse_failed=matrix is None,
        truncated=truncated or finish_reason == "length",
        request_failed=False,
        shape_mismatch=mismatch,
        strategy=strategy,
        reason=reason,
        mask=mask,
        # only the N x N window counts; hostile text can spell a huge matrix, and a score must stay small
        matrix=None if matrix is None else tuple(r[:n] for r in matrix[:n]),
    )


def as_grid(target: Sequence[Sequence[int]]) -> list[list[int]]:
    """A target as plain nested lists of ints (numpy arrays and tuples welcome)."""
    if getattr(getattr(target, "dtype", None), "kind", None) in ("i", "u") and getattr(target, "ndim", 0) == 2:
        return target.tolist()  # an integer numpy array: the same Python ints, without a loop over the cells
    return [list(map(int, row)) for row in target]  # int() by C's map: a 64 x 64 answer is 4,096 cells
