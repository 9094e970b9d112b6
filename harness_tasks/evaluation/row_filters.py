"""What every harness's task hooks share: each task's rows, and its image.

A task keeps the rows of one (N, C) cell with a ``process_docs`` filter named ``docs_n{NN}_c{C}``. The filter reads
the two size columns at once (harnesses call it several times per task; a row-by-row scan of 4,500 rows costs
0.15 s each time) and keeps the image as PNG bytes, decoded only when a backend reads pixels (``PngImage``).
"""

from __future__ import annotations

from dataset_builder.grids.configs import ZERO_SHOT_COLORS, ZERO_SHOT_SIZES
from dataset_builder.grids.spec import cell_key
from harness_tasks.evaluation.images import PngImage


def select_cell(dataset, grid_size: int, num_colors: int):
    """The rows of ``dataset`` with this (N, C), images as PNG bytes."""
    import datasets
    import numpy as np

    table = dataset.select_columns(["grid_size", "num_colors"]).with_format("arrow")[:]
    sizes, colors = table.column("grid_size").to_numpy(), table.column("num_colors").to_numpy()
    keep = np.flatnonzero((sizes == grid_size) & (colors == num_colors)).tolist()
    return dataset.select(keep).cast_column("image", datasets.Image(decode=False))


def process_docs_functions() -> dict:
    """``docs_n{NN}_c{C}`` for every zero_shot cell: the names the task YAMLs refer to."""
    out = {}
    for n in ZERO_SHOT_SIZES:
        for c in ZERO_SHOT_COLORS:
            def process_docs(dataset, _n=n, _c=c):
                return select_cell(dataset, _n, _c)

            process_docs.__name__ = process_docs.__qualname__ = f"docs_{cell_key(n, c)}"
            out[process_docs.__name__] = process_docs
    return out


def image_of(doc: dict):
    """The row's image for a backend: the release's PNG bytes behind a PIL interface, or an RGB image."""
    image = doc["image"]
    if isinstance(image, dict):
        return PngImage(image["bytes"])
    return image if image.mode == "RGB" else image.convert("RGB")
