"""The 95% intervals every score carries: Wilson for rates, a seeded percentile bootstrap for means.

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


#: Student's t 97.5 % points by degrees of freedom (1-30, then 40, 60, 120); infinity is the normal's 1.96. Between
#: table entries the value is interpolated in 1/df, which is how the quantile varies (and exact to 3 decimals here).
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
         29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: int) -> float:
    """Student's t 97.5 % point for ``df`` >= 1 degrees of freedom."""
    if df in _T975:
        return _T975[df]
    below = max(k for k in _T975 if k < df)
    above = min((k for k in _T975 if k > df), default=None)
    hi_df, hi_t = (above, _T975[above]) if above else (math.inf, 1.96)
    w = (1 / below - 1 / df) / (1 / below - (0 if hi_df == math.inf else 1 / hi_df))
    return _T975[below] + w * (hi_t - _T975[below])


def t_interval(values: np.ndarray, lo: float = -math.inf, hi: float = math.inf) -> tuple[float, float]:
    """95% Student-t interval of a mean, clipped to [lo, hi]; NaN from fewer than two values.

    For means of differences (patch alignment: one difference per grid), where a percentile bootstrap would cost a
    thousand resamples per number and, from a handful of grids, give their bare range: t widens as grids get few."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    mean = math.fsum(values.tolist()) / n  # correctly rounded: the same digits on every machine
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values.tolist()) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return (max(lo, mean - half), min(hi, mean + half))
