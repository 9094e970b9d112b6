"""What every harness's task hooks share: each task's rows, and its image.

A task keeps the rows of one (N, C) cell with a ``process_docs`` filter named ``docs_n{NN}_c{C}``. Harnesses call the
filter several times per task (lm-eval five times: for its test docs, its eval docs, ...) and every task of a run on
the same rows, so the work is done once per dataset and once per cell, not once per call: the two size columns are
read once per dataset (a row-by-row scan of 4,500 rows costs 0.15 s each time), the image column is cast to PNG bytes
once per dataset, and each cell's selection is kept and handed out again. Every ``datasets`` transform fingerprints
and deep-copies the table's state, about 30 ms a call, which over 225 calls was most of a small run's set-up. The
image stays PNG bytes, decoded only when a backend reads pixels (``PngImage``).
"""

from __future__ import annotations

from collections import OrderedDict

from dataset_builder.grids.configs import ZERO_SHOT_COLORS, ZERO_SHOT_SIZES
from dataset_builder.grids.spec import cell_key
from harness_tasks.evaluation.images import PngImage

#: Datasets (by fingerprint and length) whose cells are kept: a run reads one; a test process a handful.
KEEP_DATASETS = 8
_indexed: OrderedDict[tuple, tuple] = OrderedDict()  # dataset key -> (dataset with PNG bytes, cell -> row indices)
_cells: dict[tuple, object] = {}  # (dataset key, N, C) -> the cell's rows
computed = {"cells": 0}  # how many cells were selected in this process (benchmarks/bench_eval_setup.py reads it)


def _index(dataset) -> tuple:
    """The dataset with its images as PNG bytes, and the row indices of every (N, C) it holds, in row order.

    ``datasets`` fingerprints a dataset from its state (its table, or its files and their modification times), so
    the fingerprint names the rows; the length is checked as well."""
    import datasets
    import numpy as np

    key = (dataset._fingerprint, len(dataset))
    if key in _indexed:
        _indexed.move_to_end(key)
        return key, _indexed[key]
    table = dataset.select_columns(["grid_size", "num_colors"]).with_format("arrow")[:]
    sizes, colors = table.column("grid_size").to_numpy(), table.column("num_colors").to_numpy()
    cells = {(int(n), int(c)): np.flatnonzero((sizes == n) & (colors == c)).tolist()
             for n, c in np.unique(np.stack([sizes, colors], axis=1), axis=0)}
    _indexed[key] = dataset.cast_column("image", datasets.Image(decode=False)), cells
    while len(_indexed) > KEEP_DATASETS:
        old, _ = _indexed.popitem(last=False)
        for cell in [k for k in _cells if k[0] == old]:
            del _cells[cell]
    return key, _indexed[key]


def select_cell(dataset, grid_size: int, num_colors: int):
    """The rows of ``dataset`` with this (N, C), in the dataset's order, images as PNG bytes (the same ``Dataset``
    for every call on the same rows: ``datasets`` transforms return new datasets, so sharing it is safe)."""
    key, (with_bytes, cells) = _index(dataset)
    cell = (key, grid_size, num_colors)
    if cell not in _cells:
        computed["cells"] += 1
        _cells[cell] = with_bytes.select(cells.get((grid_size, num_colors), []))
    return _cells[cell]


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
