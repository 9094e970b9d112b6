"""The two reference answers (``scoring.baselines``): the oracle reads the same matrix from every form a row's image
takes (the release's PNG bytes, a PIL image, a ``datasets`` image dict, the rendered pixels the board passes), and
refuses an array that is not RGB pixels; the random answer is a pure function of the row."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.render import render_rgb
from scoring.baselines import image_rgb, oracle_answer, random_answer
from scoring.parsing import format_answer, parse_matrix


def _matrix(n: int, c: int) -> np.ndarray:
    return np.random.default_rng(n * 100 + c).integers(0, c, (n, n))


def _png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize(("n", "c"), [(3, 3), (7, 5), (20, 10), (64, 10)])
@pytest.mark.parametrize("form", ["array", "pil", "png bytes", "datasets dict"])
def test_the_oracle_reads_the_matrix_from_every_form_of_the_image(n, c, form):
    m = _matrix(n, c)
    pixels = render_rgb(m)
    image = {"array": pixels, "pil": Image.fromarray(pixels), "png bytes": _png(pixels),
             "datasets dict": {"bytes": _png(pixels), "path": None}}[form]
    assert oracle_answer(image, n) == format_answer(m)


@pytest.mark.parametrize("bad", [np.zeros((8, 8), np.uint8), np.zeros((8, 8, 4), np.uint8),
                                 np.zeros((8, 8, 3), np.float32)], ids=["grey", "rgba", "float"])
def test_an_array_that_is_not_rgb_pixels_is_refused(bad):
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        image_rgb(bad)


def test_the_random_answer_is_a_pure_function_of_the_row():
    first = random_answer(5, 3, "zs-000001")
    assert first == random_answer(5, 3, "zs-000001") != random_answer(5, 3, "zs-000002")
    values = np.asarray(parse_matrix(first, 5).matrix)
    assert values.shape == (5, 5) and set(values.ravel()) <= {0, 1, 2}
