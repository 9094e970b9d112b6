"""Our PNG writer: lossless, decodable by PIL, RGB through datasets, deterministic."""

from __future__ import annotations

import io

import datasets
import numpy as np
import pytest
from PIL import Image

from dataset_builder.png import PNG_SIGNATURE, encode_palette_png
from dataset_builder.render import PALETTE_RGB


@pytest.mark.parametrize(("h", "w"), [(512, 512), (17, 33), (1, 1), (3, 2)])
def test_png_round_trips_every_index(h, w):
    idx = (np.arange(h * w).reshape(h, w) % len(PALETTE_RGB)).astype(np.uint8)
    data = encode_palette_png(idx)
    assert data.startswith(PNG_SIGNATURE)
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG" and im.mode == "P" and im.size == (w, h)
        assert np.array_equal(np.asarray(im), idx)
        assert np.array_equal(np.asarray(im.convert("RGB")), PALETTE_RGB[idx])


def test_datasets_image_feature_decodes_to_rgb():
    idx = np.zeros((8, 8), np.uint8)
    idx[2:5, 3] = 10
    feature = datasets.Image(mode="RGB")
    img = feature.decode_example({"bytes": encode_palette_png(idx), "path": None})
    assert img.mode == "RGB"
    assert tuple(np.asarray(img)[3, 3]) == (60, 60, 60)


def test_png_bytes_are_deterministic():
    idx = np.random.Generator(np.random.PCG64(1)).integers(0, 11, (64, 64)).astype(np.uint8)
    assert encode_palette_png(idx) == encode_palette_png(idx.copy())


@pytest.mark.parametrize("bad", [np.zeros((2, 2, 3), np.uint8), np.full((2, 2), 11, np.uint8)])
def test_bad_index_images_are_refused(bad):
    with pytest.raises(ValueError):
        encode_palette_png(bad)


@pytest.mark.parametrize(("n", "resolution"), [(3, 512), (64, 512), (7, 101)])
def test_the_factored_encoder_gives_the_same_bytes(n, resolution):
    from dataset_builder.png import encode_palette_png_rows
    from dataset_builder.render import render_indices, render_rows

    m = np.random.Generator(np.random.PCG64(n)).integers(0, 10, (n, n)).astype(np.int8)
    rows, kind = render_rows(m, resolution)
    assert encode_palette_png_rows(rows, kind) == encode_palette_png(render_indices(m, resolution))
