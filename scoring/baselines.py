"""The two reference answers, as pure functions of a row: what ``g2m-oracle`` and ``g2m-random`` write.

They bracket every real model. The oracle reads each cell's colour at its centre pixel (the physical limit, 100% on
every task); the random model writes uniform values in 0..C-1 (chance, cell accuracy 1/C), seeded by the row id, so
any of its answers can be regenerated alone. The lm-eval models (``harness_tasks.with_lm_eval.baseline_models``) and the
leaderboard's reference rows call these same functions; neither needs lm-eval.
"""

from __future__ import annotations

import hashlib
import io

import numpy as np
from PIL import Image

from dataset_builder.grids.render import decode_matrix
from scoring.parsing import format_answer


def image_rgb(image) -> np.ndarray:
    """An H x W x 3 uint8 array from a PIL image, PNG bytes, a ``datasets`` image dict ({"bytes": ...}), or such an
    array itself (the board's baselines pass the rendered pixels: a PIL round trip would copy them twice)."""
    if isinstance(image, np.ndarray):
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an H x W x 3 uint8 RGB array, got {image.dtype} {image.shape}")
        return image
    if isinstance(image, dict):
        image = image.get("bytes")
    if isinstance(image, (bytes, bytearray)):
        with Image.open(io.BytesIO(image)) as im:
            return np.asarray(im.convert("RGB"))
    return np.asarray(image if image.mode == "RGB" else image.convert("RGB"))


def oracle_answer(image, grid_size: int) -> str:
    """The matrix read from the pixels: every cell's colour at its centre."""
    return format_answer(decode_matrix(image_rgb(image), grid_size))


def random_answer(grid_size: int, num_colors: int, key: str, seed: int = 0) -> str:
    """Uniform random values in 0..C-1 from an RNG seeded by (``seed``, ``key``); ``key`` is the row id."""
    digest = hashlib.sha256(f"g2m-random\0{seed}\0{key}".encode()).digest()
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest[:8], "little")))
    return format_answer(rng.integers(0, num_colors, (grid_size, grid_size)))
