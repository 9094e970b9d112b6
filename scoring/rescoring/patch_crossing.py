"""How G2M cells meet an encoder's patch grid, computed exactly from the render rules.

Cell j owns image pixels ``b[j] .. b[j+1] - 1`` (``dataset_builder.grids.render.cell_layout``: the next cell overwrites
the shared edge). A model that resizes the 512-px image to S px and cuts it into P-px patches sees pixel x at
``x * S / 512`` (``spec.DEFAULT_RESOLUTION``). For each cell we take the share of its area inside the patch that holds
most of it; the rest, ``1 - share``, is how much of the cell crosses patch boundaries (0 for a cell inside one patch).
The grid is separable, so the 2-D share is the product of the two 1-D shares.
"""

from __future__ import annotations

import math

import numpy as np

from dataset_builder.grids.render import cell_layout
from dataset_builder.grids.spec import DEFAULT_RESOLUTION


def _axis_share(grid_size: int, patch: float, input_size: float, resolution: int) -> np.ndarray:
    b = np.asarray(cell_layout(grid_size, resolution).bounds, dtype=np.float64) * input_size / resolution
    share = np.empty(grid_size)
    for j in range(grid_size):
        lo, hi = b[j], b[j + 1]
        k0, k1 = int(np.floor(lo / patch)), int(np.ceil(hi / patch))
        edges = np.arange(k0, k1 + 1) * patch
        overlaps = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
        share[j] = overlaps.max() / (hi - lo)
    return share


def crossing_fraction(grid_size: int, patch: float, input_size: float = DEFAULT_RESOLUTION,
                      resolution: int = DEFAULT_RESOLUTION) -> np.ndarray:
    """(N, N): the fraction of each cell's area outside its dominant patch."""
    if patch <= 0 or input_size <= 0:
        raise ValueError("patch and input size must be positive")
    s = _axis_share(grid_size, patch, input_size, resolution)
    return 1.0 - np.outer(s, s)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of ``x`` and ``y``, the same float on every machine: its sums are ``math.fsum``'s correctly rounded
    ones. ``np.corrcoef`` sums through BLAS, whose kernels (picked for the CPU) add in different orders, so the last
    digits of a report would depend on the machine that wrote it."""
    xs, ys = x.tolist(), y.tolist()
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    dx, dy = [v - mx for v in xs], [v - my for v in ys]
    sxy = math.fsum(a * b for a, b in zip(dx, dy, strict=True))
    return sxy / math.sqrt(math.fsum(a * a for a in dx) * math.fsum(b * b for b in dy))


#: How every alignment interval is drawn (the report's JSON carries it, the page and docs/reports.md say it): grids
#: are resampled with replacement within each grid size, the difference recomputed from the resampled grids' answered
#: cells, and the 2.5th and 97.5th percentiles kept. Under ``minimum_grids`` grids with answers no interval is given:
#: a handful of grids cut the same way would give one of zero width around whatever they share.
INTERVAL = {"method": "percentile bootstrap over grids, within each grid size", "level": 0.95,
            "resamples": 1000, "seed": "the grid size N", "minimum_grids": 10, "cells": "answered cells only"}


def _sums(cells, more: np.ndarray) -> np.ndarray:
    """(grids, 6): per grid, right and answered cells in the more crossed half, the same in the less crossed half,
    then the cells of each half with no answer (parsed grids only)."""
    g = len(cells.correct)
    right = cells.correct.reshape(g, -1) & cells.answered.reshape(g, -1)
    ans = cells.answered.reshape(g, -1)
    parsed = cells.parsed[:, None]
    return np.stack([right[:, more].sum(1), ans[:, more].sum(1), right[:, ~more].sum(1), ans[:, ~more].sum(1),
                     (~ans[:, more] & parsed).sum(1), (~ans[:, ~more] & parsed).sum(1)], axis=1).astype(np.int64)


def _difference(totals: np.ndarray) -> np.ndarray:
    """More crossed minus less crossed accuracy among answered cells, from summed ``_sums`` (NaN: a half unanswered).
    Integer counts divided once: the same bits on every machine."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return totals[..., 0] / totals[..., 1] - totals[..., 2] / totals[..., 3]


def _resampled(sums: np.ndarray, n: int) -> np.ndarray | None:
    """``INTERVAL["resamples"]`` differences from grids drawn with replacement (seeded by N), or None under the
    minimum of grids with answers (or where resamples leave a half unanswered)."""
    if len(sums) < INTERVAL["minimum_grids"]:
        return None
    rng = np.random.Generator(np.random.PCG64(n))
    g, k = len(sums), INTERVAL["resamples"]
    draws = rng.integers(0, g, (k, g))
    # how often each grid was drawn in each resample, then its counts summed by one product: integers below 2**53
    # in float64, so every order of adding gives the same, exact, sums
    times = np.bincount((np.arange(k)[:, None] * g + draws).ravel(), minlength=k * g).reshape(k, g)
    diffs = _difference(times.astype(np.float64) @ sums[:, :4].astype(np.float64))
    return None if np.isnan(diffs).any() else diffs


def _percentiles(diffs: np.ndarray | None) -> list[float] | None:
    return None if diffs is None else [float(np.quantile(diffs, 0.025)), float(np.quantile(diffs, 0.975))]


def _share(count: int, of: int) -> float | None:
    return count / of if of else None


def alignment(cells: dict, patch: float, input_size: float = DEFAULT_RESOLUTION) -> dict:
    """Does crossing patch boundaries cost accuracy? Compared *within* each grid size, never pooled across them, and
    over the cells an answer gave a value for, never over cells it did not reach.

    Pooling sizes misleads: small cells (large N) are both the ones that fit inside one patch and the ones models read
    worst. Counting missing cells as wrong misleads too: an answer cut after half its rows "reads" the lower rows
    badly wherever they fall on the patch grid, so truncation alone shows as an alignment effect. ``cells[N]`` is
    ``rescore.Cells``. Per N, the cells are split at the median crossing fraction; ``difference`` is the accuracy of
    the answered cells of the more crossed half minus that of the less crossed half (None where a half is empty or
    unanswered), with ``difference_ci`` per ``INTERVAL``. Missing cells are reported apart (the share of each half's
    cells, over answers that parsed), as are unparseable answers. ``difference`` overall is the mean of the per-N
    differences weighted by the grids compared; its interval resamples within each size, given only where every
    compared size has enough grids.
    """
    per_n, draws = [], []
    for n, got in sorted(cells.items()):
        x = crossing_fraction(n, patch, input_size).reshape(-1)
        more = x > np.median(x) + 1e-12
        sums = _sums(got, more)
        sums = sums[sums[:, 1] + sums[:, 3] > 0]  # the grids with an answered cell: the ones compared
        t = sums.sum(axis=0)
        split = bool(more.any() and (~more).any() and t[1] and t[3])
        parsed = int(got.parsed.sum())
        row = {"grid_size": n, "grids": len(got.parsed), "grids_compared": len(sums) if split else 0,
               "unparseable_grids": len(got.parsed) - parsed, "mean_crossing": float(x.mean()),
               "inside_cells": int((x < 1e-9).sum()), "more_crossed_cells": int(more.sum()),
               "less_crossed_accuracy": _share(int(t[2]), int(t[3])),
               "more_crossed_accuracy": _share(int(t[0]), int(t[1])) if more.any() else None,
               "less_crossed_missing": _share(int(t[5]), parsed * int((~more).sum())),
               "more_crossed_missing": _share(int(t[4]), parsed * int(more.sum()))}
        row["difference"] = float(_difference(t)) if split else None
        resampled = _resampled(sums, n) if split else None
        row["difference_ci"] = _percentiles(resampled)
        # per-cell accuracy over answered cells; only where both halves hold answered cells and every cell was
        # answered somewhere: an r from a handful of cells that cross by a hair more than the rest is no finding
        right = (got.correct & got.answered).sum(axis=0).reshape(-1)
        answered = got.answered.sum(axis=0).reshape(-1)
        y = right / np.maximum(answered, 1)
        ok = split and answered.all() and x.std() > 1e-12 and y.std() > 1e-12
        row["correlation"] = pearson(x, y) if ok else None
        per_n.append(row)
        if split:
            draws.append((row["grids_compared"], row["difference"], resampled))
    total = sum(w for w, _, _ in draws)
    difference = sum(w * d for w, d, _ in draws) / total if total else None
    pooled = None
    if draws and all(r is not None for _, _, r in draws):
        pooled = sum(w * r for w, _, r in draws) / total
    return {"patch": patch, "input_size": input_size, "per_n": per_n, "difference": difference,
            "difference_ci": _percentiles(pooled), "interval": INTERVAL,
            "sizes_compared": [r["grid_size"] for r in per_n if r["difference"] is not None]}


def reads_as_none(ci: list[float] | None) -> bool:
    """A difference whose interval holds 0 (or that has none) is no evidence of an alignment effect."""
    return ci is None or ci[0] <= 0.0 <= ci[1]


def in_words(difference: float | None, ci: list[float] | None) -> str:
    """A difference with its interval, as the report's table and its figure both write it."""
    if difference is None:
        return "n/a"
    if ci is None:
        return f"{difference:+.3f} (no interval: under {INTERVAL['minimum_grids']} grids)"
    return f"{difference:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" + (": none beyond noise" if reads_as_none(ci) else "")
