"""Re-score raw model outputs with the harness's own scoring, and aggregate them with confidence intervals.

The leaderboard never reads a score from a submission: the ground truth of every ``zero_shot`` id is regenerated
from its seed (``dataset_builder``'s generator is a pure function of seed, N and C, and ``g2m verify`` proves the
release equals it), and every output is scored by ``scoring.score.score_answer``, the function behind the
lm-eval hooks. The same code scores a researcher's own lm-eval run in ``g2m report``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
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


def truth_matrix(t: Truth) -> np.ndarray:
    return make_matrix(t.seed, t.grid_size, t.num_colors)


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


def summarise(rows: list[Scored]) -> dict:
    """Scores of a group of outputs, each with its 95% interval."""
    n = len(rows)
    em = sum(r.score.exact_match for r in rows)
    pf = sum(r.score.parse_failed for r in rows)
    tr = sum(r.score.truncated for r in rows)
    rf = sum(r.score.request_failed for r in rows)
    ca = np.array([r.score.cell_accuracy for r in rows])
    strict = np.array([r.score.cell_accuracy_strict for r in rows])
    return {
        "n": n,
        "exact_match": em / n if n else math.nan, "exact_match_ci": wilson(em, n),
        "cell_accuracy": float(ca.mean()) if n else math.nan, "cell_accuracy_ci": bootstrap_mean(ca),
        "cell_accuracy_strict": float(strict.mean()) if n else math.nan,
        "parse_failed": pf / n if n else math.nan, "parse_failed_ci": wilson(pf, n),
        "truncated": tr / n if n else math.nan, "truncated_ci": wilson(tr, n),
        "request_failed": rf / n if n else math.nan, "request_failed_ci": wilson(rf, n),
    }


def by_task(rows: Iterable[Scored]) -> dict[tuple[int, int], list[Scored]]:
    out: dict[tuple[int, int], list[Scored]] = {}
    for r in rows:
        out.setdefault((r.grid_size, r.num_colors), []).append(r)
    return dict(sorted(out.items()))


def grid_masks(rows: Iterable[Scored]) -> dict[int, np.ndarray]:
    """Each grid size's (grids, N, N) correctness, one layer per output (all palettes pooled)."""
    layers: dict[int, list[np.ndarray]] = {}
    for r in rows:
        layers.setdefault(r.grid_size, []).append(r.mask)
    return {n: np.stack(layers[n]) for n in sorted(layers)}


def heatmaps(rows: Iterable[Scored] | dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Mean per-cell correctness for each grid size (all palettes pooled), of scored rows or of their
    ``grid_masks`` when the caller has them already."""
    masks = rows if isinstance(rows, dict) else grid_masks(rows)
    return {n: m.sum(axis=0) / len(m) for n, m in masks.items()}  # integer counts, divided once: exact


def confusion(rows: Iterable[Scored], num_values: int = 10) -> np.ndarray:
    """(true value) x (predicted value, then one last column for anything outside 0..9 or missing), over the cells
    of parsed outputs."""
    read = [r for r in rows if not r.score.parse_failed]
    if not read:
        return np.zeros((num_values, num_values + 1), dtype=np.int64)
    true = np.concatenate([r.target.reshape(-1) for r in read])
    pred = np.concatenate([r.pred.reshape(-1) for r in read])
    pred = np.where((pred < 0) | (pred >= num_values), num_values, pred)  # the last column: invalid or missing
    # every cell counted at once: (true, predicted) as one index into the flattened table
    cells = np.bincount(true * (num_values + 1) + pred, minlength=num_values * (num_values + 1))
    return cells.reshape(num_values, num_values + 1).astype(np.int64)


def confusion_by_palette(rows: Iterable[Scored]) -> dict[int, np.ndarray]:
    """One confusion per palette size C: (true value) x (predicted value in 0..C-1, then "invalid": missing, or a
    value outside the palette). Pooling palettes would show palette blocks, not confusions."""
    rows = list(rows)
    return {c: confusion([r for r in rows if r.num_colors == c], c) for c in sorted({r.num_colors for r in rows})}


def color_bias(conf: np.ndarray) -> dict:
    """How often each colour is predicted against how often it is the truth, over the cells read as a palette
    colour only, with the invalid rate apart: an unreadable cell is not an under-prediction of its colour.

    ``conf`` is one palette's confusion (C x (C + 1), last column invalid). ``bias[i]`` is predicted / actual - 1
    among valid cells (0: neither over- nor under-predicted); ``invalid[i]`` is the share of colour i's cells read as
    nothing valid.
    """
    c = conf.shape[0]
    valid = conf[:, :c].astype(np.float64)
    actual, predicted = valid.sum(1), valid.sum(0)
    total = conf.sum(1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = np.where(actual > 0, predicted / np.where(actual > 0, actual, 1) - 1, np.nan)
        invalid = np.where(total > 0, conf[:, c] / np.where(total > 0, total, 1), np.nan)
    all_cells = conf.sum()
    return {"bias": [None if np.isnan(v) else float(v) for v in bias],
            "invalid": [None if np.isnan(v) else float(v) for v in invalid],
            "invalid_rate": float(conf[:, c].sum() / all_cells) if all_cells else None}
