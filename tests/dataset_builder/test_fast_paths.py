"""The build's fast paths give exactly what the plain ones give: generators seeded for a run of seeds at once, and
PNGs packed straight from the matrix (the golden hashes of tests/dataset_builder/test_generate.py hold the plain
ones)."""

from __future__ import annotations

import numpy as np
import pytest

from dataset_builder.grids import generate, png
from dataset_builder.grids.configs import CONFIGS, get_config
from dataset_builder.grids.generate import _pcg64_states, make_matrices, make_matrix, make_sample, make_samples
from dataset_builder.grids.png import encode_grid_png, encode_grid_pngs
from dataset_builder.grids.render import render_indices
from g2m_base.errors import UsageError
from tests.support.reference_png import encode_palette_png

BLOCKS = [b for c in CONFIGS for s in c.splits for b in s.blocks]


@pytest.mark.parametrize("seeds",
                         [[0, 1, 2, 2**32 - 1], [b.seed(0) for b in BLOCKS], [b.seed(b.count - 1) for b in BLOCKS],
                                   np.random.default_rng(0).integers(0, 2**32, 300).tolist()],
                         ids=["edges", "first of every block", "last of every block", "random"])
def test_seeding_many_at_once_gives_numpys_own_generators(seeds):
    want = [np.random.PCG64(s).state["state"] for s in seeds]
    assert _pcg64_states(seeds) == [(w["state"], w["inc"]) for w in want]


@pytest.mark.parametrize(("grid_size", "num_colors"), [(1, 3), (2, 10), (3, 3), (3, 10), (4, 10), (9, 5), (20, 3),
                                                       (64, 10)])
@pytest.mark.parametrize("chunk", [1 << 14, 50], ids=["release chunks", "many small chunks"])
def test_a_run_of_matrices_is_the_matrices_one_by_one(grid_size, num_colors, chunk, monkeypatch):
    monkeypatch.setattr(generate, "_CHUNK_DRAWS", chunk)
    seeds = list(range(3_0000_00000 + 7 * grid_size, 3_0000_00000 + 7 * grid_size + 40))
    got = make_matrices(seeds, grid_size, num_colors)
    assert got.shape == (40, grid_size, grid_size) and got.dtype == np.int8
    for one, seed in zip(got, seeds, strict=True):
        assert np.array_equal(one, make_matrix(seed, grid_size, num_colors))
    assert make_matrices([], grid_size, num_colors).shape == (0, grid_size, grid_size)


def test_seeds_beyond_32_bits_take_the_plain_path():
    seeds = [2**32, 2**40 + 5]
    assert all(np.array_equal(a, make_matrix(s, 9, 5)) for a, s in zip(make_matrices(seeds, 9, 5), seeds, strict=True))


def test_a_run_of_samples_is_the_samples_one_by_one():
    block = get_config("zero_shot").split("test").blocks[7]
    for sample, i in zip(make_samples(block, 3, 9), range(3, 9), strict=True):
        one = make_sample(block, i)
        assert (sample.id, sample.seed, sample.png) == (one.id, one.seed, one.png)
        assert np.array_equal(sample.matrix, one.matrix)


@pytest.mark.parametrize(("grid_size", "resolution"),
                         [(n, r) for r in (512, 101, 33) for n in (1, 2, 3, 7, 20, 32, 33, 64)
                                                       if 2 * n <= r] + [(5, 2048), (3, 2049), (3, 4096)])
@pytest.mark.parametrize("outline", [True, False])
def test_the_grid_encoder_gives_the_reference_bytes(grid_size, resolution, outline):
    m = np.random.Generator(np.random.PCG64(grid_size)).integers(0, 10, (grid_size, grid_size)).astype(np.int8)
    assert encode_grid_png(m, resolution, outline) == encode_palette_png(render_indices(m, resolution, outline))


@pytest.mark.parametrize(("grid_size", "resolution", "message"), [
    (65, 64, "does not fit in 64x64 pixels"), (3, 0, "resolution must be an integer of at least 1"),
])
def test_a_size_the_renderer_refuses_the_grid_encoder_refuses_in_the_same_words(grid_size, resolution, message):
    m = np.zeros((grid_size, grid_size), np.int8)
    for encode in (render_indices, encode_grid_png):
        with pytest.raises(UsageError, match=message):
            encode(m, resolution, True)


@pytest.mark.parametrize(("grid_size", "resolution"), [(1, 512), (7, 101), (20, 512), (64, 512), (3, 4096)])
@pytest.mark.parametrize(("chunk", "block"), [(1 << 19, 64), (1, 3), (1 << 30, 4)],
                         ids=["release chunks", "one image per chunk, blocks of 3", "blocks of 4, one chunk each"])
def test_a_stack_of_grids_encodes_to_the_images_one_by_one(grid_size, resolution, chunk, block, monkeypatch):
    monkeypatch.setattr(png, "_CHUNK_BYTES", chunk)
    monkeypatch.setattr(png, "_BLOCK_IMAGES", block)
    count = 11 if resolution < 4096 else 5  # 16 MP images: 5 still span two blocks of 3 or 4
    stack = make_matrices(list(range(count)), grid_size, 10)
    want = [encode_palette_png(render_indices(m, resolution, True)) for m in stack]
    assert encode_grid_pngs(stack, resolution) == want
    assert encode_grid_pngs(stack[:0], resolution) == []


@pytest.mark.parametrize("bad", [np.full((2, 3, 3), 11), np.full((1, 3, 3), -1), np.zeros((2, 3)), np.zeros((2, 2, 3))])
def test_a_stack_that_is_not_palette_grids_is_refused(bad):
    with pytest.raises(ValueError):
        encode_grid_pngs(bad, 512)


@pytest.mark.parametrize("bad", [np.full((3, 3), 11), np.full((3, 3), 200), np.zeros((2, 3)), np.zeros((2, 2, 2))])
def test_the_grid_encoder_refuses_what_is_not_a_palette_grid(bad):
    with pytest.raises(ValueError):
        encode_grid_png(bad, 512)
