"""How G2M cells meet an encoder's patch grid, computed exactly from the render rules.

Cell j owns image pixels ``b[j] .. b[j+1] - 1`` (``dataset_builder.render.geometry``: the next cell overwrites the
shared edge). A model that resizes the 512-px image to S px and cuts it into P-px patches sees pixel x at
``x * S / 512`` (``spec.DEFAULT_RESOLUTION``). For each cell we take the share of its area inside the patch that holds most of it; the rest,
``1 - share``, is how much of the cell crosses patch boundaries (0 for a cell inside one patch). The grid is
separable, so the 2-D share is the product of the two 1-D shares.
"""

from __future__ import annotations

import numpy as np

from dataset_builder.render import geometry
from dataset_builder.spec import DEFAULT_RESOLUTION


def _axis_share(grid_size: int, patch: float, input_size: float, resolution: int) -> np.ndarray:
    b = np.asarray(geometry(grid_size, resolution).bounds, dtype=np.float64) * input_size / resolution
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


BINS = (0.0, 1e-9, 0.25, 0.5, 0.75, 1.0)
BIN_LABELS = ("0 (inside one patch)", "(0, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, 1]")


def alignment(heatmaps: dict[int, np.ndarray], weights: dict[int, int], patch: float,
              input_size: float = DEFAULT_RESOLUTION) -> dict:
    """Cell accuracy by how much of the cell crosses patch boundaries, pooled over grid sizes.

    ``heatmaps[N]`` is the mean correctness of each cell over ``weights[N]`` samples. Returns the accuracy and cell
    count per crossing bin, and the correlation between crossing and accuracy over all cells.
    """
    xs, ys, ws = [], [], []
    for n, hm in heatmaps.items():
        xs.append(crossing_fraction(n, patch, input_size).reshape(-1))
        ys.append(hm.reshape(-1))
        ws.append(np.full(n * n, weights.get(n, 1), dtype=np.float64))
    x, y, w = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
    idx = np.digitize(x, BINS[1:-1], right=True)
    bins = []
    for k, label in enumerate(BIN_LABELS):
        sel = idx == k
        bins.append({"bin": label, "cells": int(sel.sum()),
                     "cell_accuracy": float(np.average(y[sel], weights=w[sel])) if sel.any() else None})
    corr = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else None
    return {"patch": patch, "input_size": input_size, "bins": bins, "correlation": corr}
