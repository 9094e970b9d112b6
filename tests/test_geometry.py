"""Patch alignment geometry against brute-force pixel counting, and the confidence intervals."""

from __future__ import annotations

import numpy as np
import pytest

from dataset_builder.render import geometry
from leaderboard.geometry import alignment, crossing_fraction
from leaderboard.scoring import bootstrap_mean, wilson


def _brute_force(n: int, patch: float, input_size: float) -> np.ndarray:
    """Pixel by pixel: each 512-px pixel covers [p, p+1) * input_size / 512 of the model's input; add its exact
    overlap with every patch to the cell that owns the pixel, then take each cell's largest patch share."""
    g = geometry(n)
    scale = input_size / 512
    patches = int(np.ceil(input_size / patch)) + 1
    per_cell = np.zeros((n, patches))
    edges = np.arange(patches + 1) * patch
    for p in range(512):
        lo, hi = p * scale, (p + 1) * scale
        per_cell[g.owner[p]] += np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
    share = per_cell.max(1) / per_cell.sum(1)
    return 1 - np.outer(share, share)


@pytest.mark.parametrize(("n", "patch", "input_size"), [(3, 16, 512), (9, 14, 504), (20, 16, 512), (24, 28, 448),
                                                        (48, 16, 512), (64, 14, 504), (12, 32, 512)])
def test_crossing_fraction_matches_brute_force(n, patch, input_size):
    assert np.allclose(crossing_fraction(n, patch, input_size), _brute_force(n, patch, input_size), atol=1e-9)


def test_aligned_and_straddling_grids():
    assert crossing_fraction(32, 16).max() == 0  # 16-px cells on 16-px patches
    assert np.allclose(crossing_fraction(16, 16), 0.75)  # 32-px cells cover 2x2 patches: a quarter in each
    assert crossing_fraction(20, 16).mean() > 0.3


def test_alignment_bins_weight_cells_by_samples():
    res = alignment({32: np.ones((32, 32)), 16: np.zeros((16, 16))}, {32: 10, 16: 10}, 16)
    first, last = res["bins"][0], res["bins"][-1]
    assert first["cells"] == 32 * 32 and first["cell_accuracy"] == 1.0
    assert res["bins"][3]["cells"] == 16 * 16 and res["bins"][3]["cell_accuracy"] == 0.0 and last["cells"] == 0
    assert res["correlation"] == pytest.approx(-1.0)


def test_wilson_and_bootstrap():
    lo, hi = wilson(0, 100)
    assert lo == 0 and 0.03 < hi < 0.04
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    v = np.random.default_rng(0).random(200)
    assert bootstrap_mean(v) == bootstrap_mean(v)  # seeded: the same report twice
    lo, hi = bootstrap_mean(v)
    assert lo < v.mean() < hi
