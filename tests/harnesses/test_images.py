"""PngImage: the release's PNG bytes behind a PIL interface, decoded only while a backend reads pixels."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.generate import make_image, make_matrix
from harness_tasks.evaluation.images import PngImage, release_images


@pytest.fixture(scope="module")
def png() -> bytes:
    return make_image(make_matrix(7, 9, 5))


def test_it_is_an_rgb_image_with_the_pixels_of_the_png(png):
    image = PngImage(png)
    assert isinstance(image, Image.Image) and image.mode == "RGB" and image.size == (512, 512)
    with Image.open(io.BytesIO(png)) as im:
        want = np.asarray(im.convert("RGB"))
    assert np.array_equal(np.asarray(image), want)
    assert np.array_equal(np.asarray(image.convert("L")), np.asarray(Image.fromarray(want).convert("L")))
    assert np.array_equal(np.asarray(image.resize((64, 64), Image.NEAREST)),
                          np.asarray(Image.fromarray(want).resize((64, 64), Image.NEAREST)))
    assert image.getpixel((0, 0)) == tuple(want[0, 0])


def test_saving_as_png_writes_the_original_bytes_and_anything_else_encodes(png, tmp_path):
    image = PngImage(png)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    assert buf.getvalue() == png  # what lm-eval hashes and a chat client sends: the release's own bytes
    image.save(tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes() == png
    other = io.BytesIO()
    image.save(other, format="PNG", compress_level=9)  # options ask for PIL's encoder: same pixels
    with Image.open(other) as im:
        assert np.array_equal(np.asarray(im.convert("RGB")), np.asarray(image))
    bmp = io.BytesIO()
    image.save(bmp, format="BMP")
    assert bmp.getvalue()[:2] == b"BM"


def test_pixels_are_released_and_come_back(png):
    image = PngImage(png)
    assert image._im is None  # nothing decoded on construction
    first = np.asarray(image).copy()
    assert image._im is not None

    class Req:
        args = ("ctx", {}, {"visual": [image]})

    release_images([Req()])
    assert image._im is None
    assert np.array_equal(np.asarray(image), first)


def test_copies_and_pickles_keep_the_bytes(png):
    image = PngImage(png)
    for twin in (image.copy(), pickle.loads(pickle.dumps(image))):
        assert isinstance(twin, PngImage) and twin.png == png
        assert np.array_equal(np.asarray(twin), np.asarray(image))
    assert repr(image) == f"<PngImage mode=RGB size=512x512 {len(png):,} PNG bytes>"


@pytest.mark.parametrize("data", [b"", b"GIF89a....", b"\xff\xd8\xff\xe0 jpeg"])
def test_anything_but_png_bytes_is_refused(data):
    with pytest.raises(ValueError, match="not PNG"):
        PngImage(data)
