"""Samples are pure functions of (seed, N, C); seeds and ids never collide; the bytes never drift."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from dataset_builder.grids.configs import CONFIGS, get_config
from dataset_builder.grids.generate import RenderOptions, make_image, make_matrix, make_sample
from dataset_builder.grids.prompt import build_prompt
from scoring.parsing import format_answer

GOLDEN = Path(__file__).parents[1] / "support" / "golden" / "samples.json"


def _golden_cases():
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda c: c["id"])
def test_samples_match_the_golden_bytes(case):
    """Frozen sha256 of a few rows: any change to RNG use, rendering or PNG encoding shows up here."""
    cfg = get_config(case["config"])
    block = next(b for s in cfg.splits if s.name == case["split"] for b in s.blocks
                 if b.grid_size == case["grid_size"] and b.num_colors == case["num_colors"])
    s = make_sample(block, case["index"])
    assert s.id == case["id"] and s.seed == case["seed"]
    assert format_answer(s.matrix) == case["answer"]
    assert hashlib.sha256(s.png).hexdigest() == case["png_sha256"]


@pytest.mark.parametrize(("n", "c"), [(3, 3), (3, 5), (3, 10), (4, 10), (9, 5), (64, 10)])
def test_every_color_appears_when_the_grid_has_room(n, c):
    for seed in range(50):
        m = make_matrix(seed, n, c)
        assert m.shape == (n, n) and m.dtype == np.int8
        assert m.min() >= 0 and m.max() < c
        if n * n >= c:
            assert set(np.unique(m)) == set(range(c))


def test_values_are_close_to_uniform():
    m = np.concatenate([make_matrix(s, 32, 5).reshape(-1) for s in range(20)])
    freq = np.bincount(m, minlength=5) / m.size
    assert np.allclose(freq, 0.2, atol=0.01)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_same_seed_same_sample_different_seed_different_sample():
    """Seed 7 gives the frozen matrix and images in every process; another seed or no outline gives others."""
    m = make_matrix(7, 16, 3)
    assert _sha256(m.tobytes()) == "00da941daea855b577f9853cd9638714b90d42de7edfdbeca2ca67990bcf433d"
    assert _sha256(make_image(m)) == "18d4c7d786805a52b6254b9ce721b58f7352e7ca224f6786b9703ecfff32401e"
    assert _sha256(make_image(m, RenderOptions(outline=False))) == (
        "cf7b769dec6182880c625121e315cb674b2e0b8f22609f0b89cd68682693706d")
    assert not np.array_equal(m, make_matrix(8, 16, 3))


def test_seeds_and_ids_are_unique_across_the_whole_release():
    seeds, ids, rows = set(), set(), 0
    for cfg in CONFIGS:
        for split in cfg.splits:
            for b in split.blocks:
                seeds.update(range(b.seed_base, b.seed_base + b.count))
                ids.update({b.sample_id(0), b.sample_id(b.count - 1)})
                rows += b.count
    assert rows == 324_500
    assert len(seeds) == rows  # no image can be in two splits
    assert len(ids) == 2 * sum(len(s.blocks) for c in CONFIGS for s in c.splits)


def test_release_sizes_match_the_spec():
    zs = get_config("zero_shot")
    assert zs.split("test").rows == 4_500
    probes = [c for c in CONFIGS if c.name.startswith("probe_")]
    assert len(probes) == 16
    assert {s.name: s.rows for s in probes[0].splits} == {"train": 8_000, "validation": 2_000, "test": 10_000}


def test_a_scaled_config_is_a_prefix_of_the_full_one():
    full = get_config("zero_shot").split("test").blocks[4]
    small = get_config("zero_shot").scaled(0.03).split("test").blocks[4]
    assert small.count == 3
    for i in range(small.count):
        assert make_sample(small, i).png == make_sample(full, i).png


def test_prompt_names_the_grid_and_the_mapping_in_value_order():
    p = build_prompt(9, 5)
    assert "9x9" in p and "exactly 9 rows" in p
    assert p.index("White: 0") < p.index("Red: 1") < p.index("Orange: 4")
    assert "Purple" not in p


def test_the_prompts_example_is_written_in_the_answer_format():
    assert f"for example {format_answer([[1, 0], [2, 1]])} for a 2x2 grid" in build_prompt(3, 3)


@pytest.mark.parametrize(("seed", "n", "c"), [(-1, 3, 3), (1, 0, 3), (1, 3, 2), (1, 3, 11), (1.5, 3, 3)])
def test_bad_generator_arguments_raise_value_error(seed, n, c):
    with pytest.raises(ValueError):
        make_matrix(seed, n, c)
