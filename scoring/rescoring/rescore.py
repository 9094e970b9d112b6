"""Re-score raw model outputs with the harness's own scoring, and aggregate them with confidence intervals.

The leaderboard never reads a score from a submission: the ground truth of every ``zero_shot`` id is regenerated
from its seed (``dataset_builder``'s generator is a pure function of seed, N and C, and ``g2m verify`` proves the
release equals it), and every output is scored by ``scoring.score.score_answer``, the function behind the
lm-eval hooks. The same code scores a researcher's own lm-eval run in ``g2m report``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np

from dataset_builder.grids.configs import get_config
from dataset_builder.grids.generate import make_matrix
from g2m_base.stats import bootstrap_mean, wilson
from scoring.score import AnswerScore, as_grid, score_answer


@dataclass(frozen=True)
class Truth:
    id: str
    grid_size: int
    num_colors: int
    seed: int


@lru_cache(maxsize=1)
def zero_shot_truth() -> dict[str, Truth]:
    """Every id of the full ``zero_shot`` release, known without reading any data."""
    out = {}
    for block in get_config("zero_shot").split("test").blocks:
        for i in range(block.count):
            out[block.sample_id(i)] = Truth(block.sample_id(i), block.grid_size, block.num_colors, block.seed(i))
    return out


@lru_cache(maxsize=8192)
def truth_matrix(t: Truth) -> np.ndarray:
    """The row's N x N truth, regenerated once per process: a board re-scores every submission against the same
    4,500 zero-shot ids (about 4 MB of int8). Bounded so that a probe section's tens of thousands of rows cost at
    most ~32 MB (and only recomputation once they pass it). Read only, as it is shared by every caller."""
    m = make_matrix(t.seed, t.grid_size, t.num_colors)
    m.flags.writeable = False
    return m


@dataclass(frozen=True)
class Scored:
    """One output, re-scored: the harness's ``AnswerScore`` (``score``: its metrics, as the harness computed them)
    with the row it belongs to."""

    id: str
    grid_size: int
    num_colors: int
    target: np.ndarray  # (N, N)
    score: AnswerScore

    @property
    def mask(self) -> np.ndarray:
        """(N, N) bool: the cells read right (all of them for an exact answer, known without reading its rows)."""
        if self.score.exact_match == 1.0:
            return np.ones((self.grid_size, self.grid_size), dtype=bool)
        return np.asarray(self.score.mask, dtype=bool)

    @property
    def pred(self) -> np.ndarray:
        """(N, N): the value read for each cell, -1 where none was (clamped, so any integer fits). An exact answer read
        its target, cell for cell: a copy of it, without converting 4,096 Python ints for a 64 x 64 answer."""
        if self.score.exact_match == 1.0:
            return self.target.copy()
        n = self.grid_size
        matrix = self.score.matrix or ()
        if len(matrix) == n and all(len(row) == n for row in matrix):
            try:  # N x N (the common case): one array; a value past int64 takes the loop below, which clamps it
                return np.clip(np.asarray(matrix, dtype=np.int64), -10**9, 10**9)
            except OverflowError:
                pass
        pred = np.full((n, n), -1, dtype=np.int64)
        for r, row in enumerate(matrix[:n]):
            vals = np.clip(np.asarray(row[:n], dtype=np.float64), -1e9, 1e9).astype(np.int64)
            pred[r, : len(vals)] = vals
        return pred

    @property
    def answered(self) -> np.ndarray:
        """(N, N) bool: the cells the answer gave a value for, right or wrong. A cell past the rows or columns it
        wrote (a truncated answer) is *missing*; an unparseable answer has none: both are outcomes of their own, not
        colour confusions."""
        n = self.grid_size
        if self.score.exact_match == 1.0:
            return np.ones((n, n), dtype=bool)
        out = np.zeros((n, n), dtype=bool)
        for r, row in enumerate((self.score.matrix or ())[:n]):
            out[r, : min(len(row), n)] = True
        return out


@dataclass(frozen=True)
class Cells:
    """One grid size's outcomes, one layer per output (all palettes pooled): which cells were read right, which were
    given any value, and which outputs parsed at all."""

    correct: np.ndarray  # (grids, N, N) bool
    answered: np.ndarray  # (grids, N, N) bool: a value was written there (an unparseable output: none)
    parsed: np.ndarray  # (grids,) bool


def score_output(sample_id: str, output: object, target, num_colors: int, finish_reason: str | None = None,
                 protocol: str = "g2m") -> Scored:
    """Re-score one raw output against its target with the harness's own ``score_answer``, under ``protocol``."""
    return score_outputs(sample_id, output, target, num_colors, finish_reason, (protocol,))[0]


def score_outputs(sample_id: str, output: object, target, num_colors: int, finish_reason: str | None = None,
                  protocols: tuple[str, ...] = ("g2m", "paper")) -> list[Scored]:
    """``score_output`` under each of ``protocols`` in turn: the target read once, and a plain JSON answer decoded
    once (both parsers read one with ``literal.json_int_rows``, which keeps the last text it decoded)."""
    grid = as_grid(target)
    # an int64 array is kept as it is (read-only everywhere); anything else becomes one from the plain lists
    matrix = target if isinstance(target, np.ndarray) and target.dtype == np.int64 else np.asarray(grid, dtype=np.int64)
    rows = tuple(map(tuple, grid))  # as the parsers' answers are: the metrics compare tuple rows without copies
    return [Scored(sample_id, len(grid), num_colors, matrix, score_answer(output, rows, finish_reason, protocol))
            for protocol in protocols]


@dataclass(frozen=True)
class TaskScores:
    """Scores of a group of outputs (a task, a grid size, a whole run), each rate with its 95% interval: Wilson's for
    a counted rate, a seeded bootstrap over grids for cell accuracy; NaN for an empty group. ``as_dict`` is the
    JSON every file of ours writes (these keys, in this order)."""

    n: int
    exact_match: float
    exact_match_ci: tuple[float, float]
    cell_accuracy: float
    cell_accuracy_ci: tuple[float, float]
    cell_accuracy_strict: float
    parse_failed: float
    parse_failed_ci: tuple[float, float]
    truncated: float
    truncated_ci: tuple[float, float]
    request_failed: float
    request_failed_ci: tuple[float, float]

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def unanswered(self) -> int:
        """Outputs without an answer (the request failed)."""
        return round(self.request_failed * self.n) if self.n else 0


SCORE_KEYS = tuple(f.name for f in fields(TaskScores))


def summarise(rows: list[Scored]) -> TaskScores:
    """Scores of a group of outputs, each with its 95% interval."""
    n = len(rows)
    em = sum(r.score.exact_match for r in rows)
    pf = sum(r.score.parse_failed for r in rows)
    tr = sum(r.score.truncated for r in rows)
    rf = sum(r.score.request_failed for r in rows)
    ca = np.array([r.score.cell_accuracy for r in rows])
    strict = np.array([r.score.cell_accuracy_strict for r in rows])
    rate = (lambda k: k / n) if n else (lambda k: math.nan)
    return TaskScores(n, rate(em), wilson(em, n), float(ca.mean()) if n else math.nan, bootstrap_mean(ca),
                      float(strict.mean()) if n else math.nan, rate(pf), wilson(pf, n), rate(tr), wilson(tr, n),
                      rate(rf), wilson(rf, n))


def by_task(rows: Iterable[Scored]) -> dict[tuple[int, int], list[Scored]]:
    out: dict[tuple[int, int], list[Scored]] = {}
    for r in rows:
        out.setdefault((r.grid_size, r.num_colors), []).append(r)
    return dict(sorted(out.items()))


def cell_outcomes(rows: Iterable[Scored]) -> dict[int, Cells]:
    """Each grid size's ``Cells``: what an analysis needs to tell a wrong cell from one never answered."""
    by_n: dict[int, list[Scored]] = {}
    for r in rows:
        by_n.setdefault(r.grid_size, []).append(r)
    return {n: Cells(np.stack([r.mask for r in group]), np.stack([r.answered for r in group]),
                     np.array([not r.score.parse_failed for r in group], dtype=bool))
            for n, group in sorted(by_n.items())}


def heatmaps(outcomes: dict[int, Cells]) -> dict[int, np.ndarray]:
    """Each grid size's per-cell accuracy over its outputs (all palettes pooled; a missing cell counts as wrong)."""
    return {n: o.correct.sum(axis=0) / len(o.correct) for n, o in outcomes.items()}  # integer counts, divided once


#: The columns after a palette's colours in a confusion table: a value outside the palette, a cell the answer never
#: reached (rows or columns it did not write), and every cell of an answer that could not be read at all.
NO_COLOUR = ("other value", "missing", "unparseable")


def confusion(rows: Iterable[Scored], num_values: int = 10) -> np.ndarray:
    """(true value) x (predicted value 0..C-1, then ``NO_COLOUR``): every cell of every output counted once, so a
    model that truncates or fails to parse is told apart from one that confuses colours."""
    rows = list(rows)
    c = num_values
    width = c + len(NO_COLOUR)
    table = np.zeros(c * width, dtype=np.int64)
    read = [r for r in rows if not r.score.parse_failed]
    if read:
        true = np.concatenate([r.target.reshape(-1) for r in read])
        pred = np.concatenate([r.pred.reshape(-1) for r in read])
        answered = np.concatenate([r.answered.reshape(-1) for r in read])
        col = np.where(~answered, c + 1, np.where((pred < 0) | (pred >= c), c, pred))
        # every cell counted at once: (true, column) as one index into the flattened table
        table += np.bincount(true * width + col, minlength=c * width)
    for r in rows:
        if r.score.parse_failed:
            table += np.bincount(r.target.reshape(-1) * width + c + 2, minlength=c * width)
    return table.reshape(c, width)


def confusion_by_palette(rows: Iterable[Scored]) -> dict[int, np.ndarray]:
    """One confusion per palette size C: (true value) x (predicted value in 0..C-1, then ``NO_COLOUR``). Pooling
    palettes would show palette blocks, not confusions."""
    rows = list(rows)
    return {c: confusion([r for r in rows if r.num_colors == c], c) for c in sorted({r.num_colors for r in rows})}


def color_bias(conf: np.ndarray) -> dict:
    """How often each colour is predicted against how often it is the truth, over the cells read as a palette
    colour only, with each way of reading no colour apart: an unreadable cell is not an under-prediction of its colour.

    ``conf`` is one palette's confusion (``confusion``'s C x (C + 3)). ``bias[i]`` is predicted / actual - 1 among the
    cells read as a colour (0: neither over- nor under-predicted); ``no_colour[kind][i]`` the share of colour i's cells
    with that outcome, and ``rates[kind]`` its share of every cell.
    """
    c = conf.shape[0]
    valid = conf[:, :c].astype(np.float64)
    actual, predicted = valid.sum(1), valid.sum(0)
    total = conf.sum(1).astype(np.float64)
    all_cells = conf.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = np.where(actual > 0, predicted / np.where(actual > 0, actual, 1) - 1, np.nan)
        shares = {kind: np.where(total > 0, conf[:, c + k] / np.where(total > 0, total, 1), np.nan)
                  for k, kind in enumerate(NO_COLOUR)}
    return {"bias": [None if np.isnan(v) else float(v) for v in bias],
            "no_colour": {kind: [None if np.isnan(v) else float(v) for v in s] for kind, s in shares.items()},
            "rates": {kind: float(conf[:, c + k].sum() / all_cells) if all_cells else None
                      for k, kind in enumerate(NO_COLOUR)}}
