"""The 95% intervals every score carries: Wilson for rates, a seeded percentile bootstrap for means (and, in
``scoring.rescoring.patch_crossing``, over grids).

One home for both, so the report's tables and the probes' results (``g2m probe``, ``g2m probe sweep``) state their
uncertainty the same way.
"""

from __future__ import annotations

import math

import numpy as np


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (well behaved at 0 and 1, unlike the normal approximation)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(values: np.ndarray, iters: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of a mean (seeded, so the same run gives the same report). None (NaN) from
    fewer than two values: resampling one value gives it back every time, an interval of zero width that would claim a
    certainty one grid cannot give."""
    if len(values) < 2:
        return (math.nan, math.nan)
    if values.min() == values.max():  # every resample is this same array: its mean, without the draws (same bits)
        m = float(values.mean())
        return (m, m)
    rng = np.random.Generator(np.random.PCG64(seed))
    means = values[rng.integers(0, len(values), (iters, len(values)))].mean(axis=1)
    return (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))
