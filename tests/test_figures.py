"""The report's colour figures on scripted runs whose true answer is known: per-palette confusion, colour bias over
valid cells only, and every figure written as PNG and SVG with a title."""

from __future__ import annotations

import numpy as np
import pytest

from harness_tasks.answers.parsing import format_answer
from leaderboard.reports import figures
from leaderboard.rescoring import patch_crossing
from leaderboard.rescoring.rescore import color_bias, confusion_by_palette, heatmaps, score_output


def _rows(num_colors: int, answer_of, grids: int = 40, n: int = 6, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(grids):
        target = rng.integers(0, num_colors, (n, n))
        out.append(score_output(f"zs-n{n:02d}-c{num_colors}-{k:04d}", answer_of(target, rng), target, num_colors))
    return out


def _with_missing_cells(target: np.ndarray, rng) -> str:
    """Every cell it writes is right; 40% of the rows are simply missing (unreadable, not a colour)."""
    n = len(target)
    return format_answer(target[: n - round(0.4 * n)])


def test_missing_cells_do_not_count_as_under_predicting_any_color():
    rows = _rows(5, _with_missing_cells)
    conf = confusion_by_palette(rows)[5]
    bias = color_bias(conf)
    assert bias["bias"] == pytest.approx([0.0] * 5, abs=1e-12)  # every valid cell was read right
    assert bias["invalid_rate"] == pytest.approx(2 / 6)  # 2 of 6 rows missing
    old = conf[:, :5].sum(0) / conf.sum(1) - 1  # the pooled bar this replaces: every colour "under-predicted"
    assert np.all(old < -0.3)


def test_a_color_the_model_prefers_is_over_predicted_among_valid_cells():
    def likes_red(target, rng):
        pred = target.copy()
        pred[rng.random(target.shape) < 0.3] = 1
        return format_answer(pred)

    bias = color_bias(confusion_by_palette(_rows(3, likes_red))[3])
    assert bias["bias"][1] > 0.3 and bias["bias"][0] < -0.1 and bias["bias"][2] < -0.1 and bias["invalid_rate"] == 0


def test_each_palette_gets_its_own_confusion_and_a_value_outside_it_is_invalid():
    rand = lambda t, rng: format_answer(rng.integers(0, 10, t.shape))  # noqa: E731  (values past the palette)
    by_c = confusion_by_palette(_rows(3, rand) + _rows(10, rand, seed=1))
    assert sorted(by_c) == [3, 10] and by_c[3].shape == (3, 4) and by_c[10].shape == (10, 11)
    share_invalid = by_c[3][:, 3].sum() / by_c[3].sum()
    assert 0.6 < share_invalid < 0.8  # 7 of 10 values are not C=3 colours
    rows = by_c[10] / by_c[10].sum(1, keepdims=True)
    assert np.allclose(rows[:, :10], 0.1, atol=0.05)  # uniform within the palette: no palette blocks


def test_every_figure_is_png_and_svg(tmp_path):
    rows = _rows(3, lambda t, rng: format_answer(t)) + _rows(5, _with_missing_cells)
    hms = heatmaps(rows)
    counts = {n: 80 for n in hms}
    conf = confusion_by_palette(rows)
    names = [figures.heatmap_grid(hms, counts, tmp_path / "h.png", "title", 16),
             figures.confusion(conf, {c: color_bias(m) for c, m in conf.items()}, tmp_path / "c.png", "title"),
             figures.alignment([patch_crossing.alignment(hms, counts, p) for p in (14, 16)], tmp_path / "a.png", "title")]
    for name in names:
        png, svg = tmp_path / name, (tmp_path / name).with_suffix(".svg")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg.read_bytes()[:500]
        assert b"title" in svg.read_bytes()  # the title is in the figure
