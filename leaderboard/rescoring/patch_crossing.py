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
from g2m_base.stats import t_interval


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


def _interval(values: np.ndarray | None) -> list[float] | None:
    """A difference's 95% interval over grids, or None where fewer than two grids were compared."""
    if values is None or len(values) < 2:
        return None
    return list(t_interval(values, -1.0, 1.0))


def alignment(heatmaps: dict[int, np.ndarray], weights: dict[int, int], patch: float,
              input_size: float = DEFAULT_RESOLUTION, grids: dict[int, np.ndarray] | None = None) -> dict:
    """Does crossing patch boundaries cost accuracy? Compared *within* each grid size, never pooled across them.

    Pooling misleads: small cells (large N) are both the ones that fit inside one patch and the ones models read
    worst, so a run whose errors depend only on N shows a strong pooled "alignment effect". Within one N, cells differ
    only in where they fall on the patch grid. ``heatmaps[N]`` is the mean correctness of each cell over
    ``weights[N]`` grids. Per N, the cells are split at the median crossing fraction: the accuracy of the more
    crossed half minus that of the less crossed half (``difference``), and the correlation between crossing fraction
    and accuracy; both None where one half is empty (every cell, or all but a few, crossing by the
    largest share). ``difference`` overall is the mean of the
    per-N differences weighted by grids.

    ``grids[N]``, each grid's (N, N) correctness (``rescore.grid_masks``), gives each difference its 95% interval
    over grids (``difference_ci``; the overall one over every compared grid), so that an effect whose interval holds
    0 reads as none: one grid's difference is a grid's, not the model's.
    """
    per_n, pooled = [], []
    for n, hm in sorted(heatmaps.items()):
        x = crossing_fraction(n, patch, input_size).reshape(-1)
        y = np.asarray(hm, dtype=np.float64).reshape(-1)
        more = x > np.median(x) + 1e-12
        row = {"grid_size": n, "grids": int(weights.get(n, 1)), "mean_crossing": float(x.mean()),
               "inside_cells": int((x < 1e-9).sum()), "more_crossed_cells": int(more.sum()),
               "less_crossed_accuracy": float(y[~more].mean()),
               "more_crossed_accuracy": float(y[more].mean()) if more.any() else None}
        row["difference"] = row["more_crossed_accuracy"] - row["less_crossed_accuracy"] if more.any() else None
        each = None
        if grids is not None and n in grids and more.any():
            g = np.asarray(grids[n], dtype=np.float64).reshape(len(grids[n]), -1)
            each = g[:, more].mean(axis=1) - g[:, ~more].mean(axis=1)  # one difference per grid
            pooled.append(each)
        row["difference_ci"] = _interval(each)
        # Only where both halves hold cells: where they do not, the sizes' cells are not compared, and an r drawn
        # from a handful of cells that cross by a hair more than the rest would read as a finding beside a "-".
        split = more.any() and (~more).any()
        row["correlation"] = pearson(x, y) if split and x.std() > 1e-12 and y.std() > 1e-12 else None
        per_n.append(row)
    compared = [r for r in per_n if r["difference"] is not None]
    total = sum(r["grids"] for r in compared)
    difference = sum(r["difference"] * r["grids"] for r in compared) / total if total else None
    return {"patch": patch, "input_size": input_size, "per_n": per_n, "difference": difference,
            "difference_ci": _interval(np.concatenate(pooled)) if pooled else None,
            "sizes_compared": [r["grid_size"] for r in compared]}


def reads_as_none(ci: list[float] | None) -> bool:
    """A difference whose interval holds 0 (or that has none) is no evidence of an alignment effect."""
    return ci is None or ci[0] <= 0.0 <= ci[1]


def in_words(difference: float | None, ci: list[float] | None) -> str:
    """A difference with its interval, as the report's table and its figure both write it."""
    if difference is None:
        return "n/a"
    if ci is None:
        return f"{difference:+.3f} (fewer than 2 grids: no interval)"
    return f"{difference:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" + (": none beyond noise" if reads_as_none(ci) else "")
