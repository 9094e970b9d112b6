"""Patch alignment geometry against brute-force pixel counting, and the confidence intervals."""

from __future__ import annotations

import numpy as np
import pytest

from dataset_builder.grids.render import cell_layout
from g2m_base.stats import bootstrap_mean, wilson
from scoring.rescoring.patch_crossing import INTERVAL, alignment, crossing_fraction, pearson, reads_as_none
from scoring.rescoring.rescore import Cells


def _brute_force(n: int, patch: float, input_size: float) -> np.ndarray:
    """Pixel by pixel: each 512-px pixel covers [p, p+1) * input_size / 512 of the model's input; add its exact
    overlap with every patch to the cell that owns the pixel, then take each cell's largest patch share."""
    g = cell_layout(n)
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


def _cells(correct: np.ndarray, answered: np.ndarray | None = None) -> Cells:
    """One size's outcomes from its (grids, N, N) correctness; every cell answered unless told otherwise."""
    answered = np.ones_like(correct, dtype=bool) if answered is None else answered
    return Cells(correct & answered, answered, np.ones(len(correct), dtype=bool))


def _scripted(accuracy_of, grids: int = 300, seed: int = 0) -> dict[int, Cells]:
    """A scripted run: each cell of each grid read right with probability ``accuracy_of(N, crossing)``."""
    rng = np.random.default_rng(seed)
    return {n: _cells(rng.random((grids, n, n)) < accuracy_of(n, crossing_fraction(n, 16)))
            for n in (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32, 48, 64)}


def test_errors_that_depend_only_on_n_show_no_alignment_effect():
    cells = _scripted(lambda n, x: np.full(x.shape, max(0.05, 1 - n / 70)))
    # the pooled view this replaces: small cells are both inside patches and read worse, so pooling shows an effect
    x = np.concatenate([crossing_fraction(n, 16).ravel() for n in cells])
    y = np.concatenate([c.correct.mean(axis=0).ravel() for c in cells.values()])
    assert abs(np.corrcoef(x, y)[0, 1]) > 0.2
    res = alignment(cells, 16)
    assert len(res["sizes_compared"]) >= 8
    assert abs(res["difference"]) < 0.02
    assert all(abs(r["difference"]) < 0.08 for r in res["per_n"] if r["difference"] is not None)


def test_errors_caused_by_crossing_patches_are_found_within_each_n():
    res = alignment(_scripted(lambda n, x: np.where(x > 0.5, 0.5, 0.9)), 16)  # cells mostly outside one patch
    by_n = {r["grid_size"]: r for r in res["per_n"]}
    for n in (24, 48):  # sizes whose cells on a 16-px grid fall on both sides of the 0.5 threshold
        assert by_n[n]["difference"] < -0.15 and by_n[n]["correlation"] < -0.5, by_n[n]
    assert res["difference"] < -0.05


def test_sizes_where_all_cells_are_alike_are_not_compared():
    res = alignment({32: _cells(np.ones((10, 32, 32), bool)), 16: _cells(np.zeros((10, 16, 16), bool))}, 16)
    assert res["sizes_compared"] == [] and res["difference"] is None  # 32: all inside; 16: all cross by 0.75
    assert [r["inside_cells"] for r in res["per_n"]] == [0, 32 * 32]


@pytest.mark.parametrize("n", [24, 48, 64])
def test_the_correlation_is_one_float_whatever_order_its_cells_are_added_in(n):
    """A report's numbers must not depend on the machine: BLAS kernels (np.corrcoef's sums) add in an order picked
    for the CPU, and reports written on two machines differed in their last digits. Correctly rounded sums give one
    float for any order, which a shuffle stands in for here; the value is still Pearson's r."""
    rng = np.random.default_rng(n)
    x = crossing_fraction(n, 14, 504).reshape(-1)
    y = np.clip(0.8 - 0.1 * x + rng.normal(0, 0.2, x.size), 0, 1)
    r = pearson(x, y)
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(x.size)
        assert pearson(x[order], y[order]) == r
    assert r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    assert pearson(x, 2 * x + 1) == pytest.approx(1.0, abs=1e-15) and pearson(x, -x) == pytest.approx(-1.0, abs=1e-15)


def test_wilson_and_bootstrap():
    lo, hi = wilson(0, 100)
    assert lo == 0 and 0.03 < hi < 0.04
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    v = np.random.default_rng(0).random(200)
    lo, hi = bootstrap_mean(v)  # seeded: the same report in every process, frozen here
    assert (lo, hi) == pytest.approx((0.49713195161108087, 0.5830970587816267), rel=1e-12)
    assert lo < v.mean() < hi
    assert bootstrap_mean(v, seed=1) == pytest.approx((0.4970204443155408, 0.5792225979432317), rel=1e-12)


@pytest.mark.parametrize(("values", "shown"), [
    ([0.556], "0.556 (one grid: no interval)"),  # resampling one grid gives it back every time: no width to claim
    ([0.2, 0.8], "0.500 [0.200, 0.800]"),
    ([], "- [-, -]"),
])
def test_no_interval_from_one_grid(values, shown):
    from drawing.html import fmt_ci

    v = np.asarray(values, dtype=float)
    ci = bootstrap_mean(v)
    assert (np.isnan(ci[0]) and np.isnan(ci[1])) == (len(values) < 2)
    assert fmt_ci(float(v.mean()) if len(v) else float("nan"), ci) == shown
    assert wilson(1, 1)[0] < 0.25  # a rate from one grid keeps its (wide) Wilson interval


@pytest.mark.parametrize("n", [2, 7, 100, 101, 4500])
@pytest.mark.parametrize("value", [0.0, 1.0, 1 / 3, 2 / 9, 0.123456789, 5 / 11])
def test_a_constant_sample_skips_the_draws_and_gives_their_very_bits(n, value):
    """All values equal: every resample is the same array, so the interval is its mean, bit for bit what the 1,000
    draws give (the scorer of an oracle run skips them; the golden numbers must not move)."""
    v = np.full(n, value)
    rng = np.random.Generator(np.random.PCG64(0))
    means = v[rng.integers(0, n, (1000, n))].mean(axis=1)
    drawn = (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))
    assert bootstrap_mean(v) == drawn


SIZES = (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32, 48, 64)


def _grids(accuracy_of, grids: int, seed: int = 0) -> dict[int, Cells]:
    """Each grid's correctness in a scripted run: every cell read right with probability ``accuracy_of(N, crossing)``,
    independently per grid."""
    rng = np.random.default_rng(seed)
    return {n: _cells(rng.random((grids, n, n)) < accuracy_of(n, crossing_fraction(n, 16))) for n in SIZES}


@pytest.mark.parametrize(("name", "accuracy_of", "grids", "overall_is_none", "effects_at"), [
    # a random guesser: any "effect" is noise, and its interval says so
    ("guesser, 300 grids", lambda n, x: np.full(x.shape, 0.2), 300, True, ()),
    ("guesser, 6 grids", lambda n, x: np.full(x.shape, 0.2), 6, True, ()),
    # a reader that only gets worse with N: no alignment effect at all
    ("worse with N only", lambda n, x: np.full(x.shape, max(0.05, 1 - n / 70)), 100, True, ()),
    # a reader whose errors come from crossing patches: found, and outside the noise, where halves differ
    ("crossing costs", lambda n, x: np.where(x > 0.5, 0.5, 0.9), 100, False, (24, 48)),
])
def test_alignment_differences_carry_intervals_that_read_noise_as_none(name, accuracy_of, grids, overall_is_none,
                                                                      effects_at):
    res = alignment(_grids(accuracy_of, grids), 16)
    assert reads_as_none(res["difference_ci"]) == overall_is_none, (name, res["difference"], res["difference_ci"])
    by_n = {r["grid_size"]: r for r in res["per_n"]}
    for n in effects_at:
        assert not reads_as_none(by_n[n]["difference_ci"]) and by_n[n]["difference_ci"][1] < 0, by_n[n]
    compared = [r for r in res["per_n"] if r["difference"] is not None]
    for r in compared:  # an interval only from enough grids, and then around its own difference
        ci = r["difference_ci"]
        assert (ci is None) == (r["grids_compared"] < INTERVAL["minimum_grids"]), r
        assert ci is None or ci[0] <= r["difference"] <= ci[1]
    if not effects_at:  # noise: at most the odd size of the 15 outside its interval by chance (5% each)
        assert sum(not reads_as_none(r["difference_ci"]) for r in compared) <= 2, name


@pytest.mark.parametrize("grids", [1, 2, INTERVAL["minimum_grids"] - 1])
def test_a_handful_of_grids_gives_no_interval_however_alike_they_are(grids):
    """Grids cut the same way give the same difference: under the minimum, no interval (not one of zero width)."""
    same = np.zeros((grids, 24, 24), bool)
    same[:, :, :12] = True
    res = alignment({24: _cells(same), 48: _cells(np.ones((grids, 48, 48), bool))}, 16)
    assert all(r["difference_ci"] is None for r in res["per_n"]) and res["difference_ci"] is None
    assert res["difference"] is not None and res["interval"] == INTERVAL


def test_the_interval_is_the_same_bits_in_any_order_of_sizes():
    cells = _grids(lambda n, x: np.where(x > 0.5, 0.6, 0.8), 12)
    backwards = dict(reversed(list(cells.items())))
    assert alignment(cells, 16) == alignment(backwards, 16)
