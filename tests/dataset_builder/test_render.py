"""The fast renderer against the authors' per-cell PIL drawing, and reading grids back from pixels."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.render import (
    cell_layout,
    decode_indices,
    decode_matrix,
    image_to_indices,
    outline_width,
    render_indices,
    render_reference,
    render_rgb,
)
from tests.support.reference_png import encode_palette_png


def _random_matrix(n: int, c: int = 10, seed: int = 0) -> np.ndarray:
    return np.random.Generator(np.random.PCG64(seed)).integers(0, c, (n, n)).astype(np.int8)


@pytest.mark.parametrize("n", range(3, 65))
def test_fast_renderer_equals_pil_reference_at_512(n):
    m = _random_matrix(n, seed=n)
    assert np.array_equal(render_rgb(m), np.asarray(render_reference(m)))


@pytest.mark.parametrize(("n", "resolution", "outline"),
                         [(7, 100, True), (13, 333, True), (9, 224, False), (30, 97, True), (5, 17, False)])
def test_fast_renderer_equals_pil_reference_at_other_sizes(n, resolution, outline):
    m = _random_matrix(n, seed=resolution)
    assert np.array_equal(render_rgb(m, resolution, outline), np.asarray(render_reference(m, resolution, outline)))


@pytest.mark.parametrize(("n", "width"), [(3, 8), (4, 6), (5, 5), (8, 3), (10, 2), (25, 2), (26, 2), (64, 2)])
def test_outline_width_follows_the_authors_rule(n, width):
    assert outline_width(512, n) == width


def test_cells_tile_the_image_and_later_cells_win_shared_edges():
    g = cell_layout(9)
    assert g.bounds[0] == 0 and g.bounds[-1] == 512
    assert g.owner[g.bounds[1]] == 1  # the shared edge pixel belongs to the next cell


@pytest.mark.parametrize(("n", "resolution"), [(64, 32), (600, 512), (20, 16)])
def test_grids_that_do_not_fit_are_refused(n, resolution):
    with pytest.raises(ValueError, match="does not fit"):
        cell_layout(n, resolution)


@pytest.mark.parametrize("n", [3, 9, 20, 33, 48, 64])
def test_decoding_the_pixels_gives_back_the_matrix(n):
    m = _random_matrix(n, seed=100 + n)
    assert np.array_equal(decode_matrix(render_rgb(m), n), m)
    with Image.open(io.BytesIO(encode_palette_png(render_indices(m)))) as im:
        assert np.array_equal(decode_indices(image_to_indices(im), n), m)


def test_off_palette_pixels_are_reported_not_guessed():
    m = _random_matrix(5)
    rgb = render_rgb(m).copy()
    c = cell_layout(5).centres[2]
    rgb[c, c] = (1, 2, 3)
    out = decode_matrix(rgb, 5)
    assert out[2, 2] == -1 and (np.delete(out.reshape(-1), 12) == np.delete(m.reshape(-1), 12)).all()
