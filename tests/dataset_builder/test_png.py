"""Our PNG writer: lossless, decodable by PIL, RGB through datasets, the same bytes in every process; and the plain
reference encoder it is held to (tests/support/reference_png.py)."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.png import encode_grid_png
from dataset_builder.grids.render import PALETTE_RGB, render_indices
from g2m_base.png import SIGNATURE as PNG_SIGNATURE
from tests.support.lazy import lazy
from tests.support.reference_png import encode_palette_png

datasets = lazy("datasets")  # imported by the first test that uses it, not when collected

#: sha256 of ``encode_grid_png`` of the first matrix drawn from ``PCG64(n)``, frozen: the bytes are promised across
#: processes, machines and releases (only a change of zlib's deflate stream may move them, as the build manifest says).
GOLDEN_GRIDS = [
    (3, 512, True, "b8eb5bfb2341304df1b5d417edcf4d9590f0ad4aa7df37d8cd88afaea0004aa8"),
    (7, 101, True, "27e7f71aabf0237e5185172c5b0365089bf4484c51cd8680554fdafeea10c96d"),
    (64, 512, False, "e1f7dd17335f19951f4e8b87fef68446cf49bcc58c54c22d62869ad0df638e4c"),
]


def _matrix(n: int) -> np.ndarray:
    return np.random.Generator(np.random.PCG64(n)).integers(0, 10, (2, n, n)).astype(np.int8)[0]


@pytest.mark.parametrize(("n", "resolution", "outline"), [(3, 512, True), (64, 512, True), (7, 33, True), (1, 1, False),
                                                          (20, 101, False)])
def test_grid_pngs_decode_to_the_rendered_pixels(n, resolution, outline):
    m = _matrix(n)
    data = encode_grid_png(m, resolution, outline)
    assert data.startswith(PNG_SIGNATURE)
    want = render_indices(m, resolution, outline)
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG" and im.mode == "P" and im.size == (resolution, resolution)
        assert np.array_equal(np.asarray(im), want)
        assert np.array_equal(np.asarray(im.convert("RGB")), PALETTE_RGB[want])


def test_datasets_image_feature_decodes_to_rgb():
    m = np.zeros((8, 8), np.int8)
    m[2:5, 3] = 9
    img = datasets.Image(mode="RGB").decode_example({"bytes": encode_grid_png(m, 64), "path": None})
    assert img.mode == "RGB"
    assert np.array_equal(np.asarray(img), PALETTE_RGB[render_indices(m, 64)])


@pytest.mark.parametrize(("n", "resolution", "outline", "sha256"), GOLDEN_GRIDS)
def test_grid_png_bytes_match_the_frozen_hashes(n, resolution, outline, sha256):
    assert hashlib.sha256(encode_grid_png(_matrix(n), resolution, outline)).hexdigest() == sha256


@pytest.mark.parametrize(("h", "w"), [(512, 512), (17, 33), (1, 1), (3, 2)])
def test_the_reference_encoder_round_trips_every_index(h, w):
    idx = (np.arange(h * w).reshape(h, w) % len(PALETTE_RGB)).astype(np.uint8)
    with Image.open(io.BytesIO(encode_palette_png(idx))) as im:
        assert im.format == "PNG" and im.mode == "P" and im.size == (w, h)
        assert np.array_equal(np.asarray(im), idx)
        assert np.array_equal(np.asarray(im.convert("RGB")), PALETTE_RGB[idx])


def test_the_reference_encoders_bytes_match_the_frozen_hash():
    idx = np.random.Generator(np.random.PCG64(1)).integers(0, 11, (64, 64)).astype(np.uint8)
    digest = hashlib.sha256(encode_palette_png(idx)).hexdigest()
    assert digest == "b0b884c3f9adcb2adfe061626f869b20b91250c3c96c0c035cfa951d1f0f53df"


@pytest.mark.parametrize("bad", [np.zeros((2, 2, 3), np.uint8), np.full((2, 2), 11, np.uint8)])
def test_the_reference_encoder_refuses_what_is_not_an_index_image(bad):
    with pytest.raises(ValueError, match="2-D index image|outside the 11-entry palette"):
        encode_palette_png(bad)
