"""lm-eval hooks for the G2M tasks (referenced from the YAML files as ``!function utils.<name>``).

Thin adapters: the rows come from the release (``dataset_path``), each task keeps its (N, C) with
``docs_n{NN}_c{C}``, the prompt comes from the row, the score from ``harness_tasks.scoring.score_answer``. Images stay
PNG bytes in the docs (nothing is decoded up front, nothing is re-encoded to hash it for the samples log) and are
decoded only when a backend asks for them. lm-eval loads this file by path, so imports are absolute.
"""

from __future__ import annotations

from dataset_builder.configs import ZERO_SHOT_COLOURS, ZERO_SHOT_SIZES
from dataset_builder.spec import IMAGE_PLACEHOLDER
from harness_tasks.answers import answer_detail
from harness_tasks.images import PngImage
from harness_tasks.parsing import format_answer
from harness_tasks.scoring import score_answer


def _docs_of(grid_size: int, num_colors: int):
    def process_docs(dataset):
        """The rows of one (N, C) cell, with their images kept as PNG bytes (read column-wise: lm-eval calls this
        several times per task, and a row-by-row scan of 4,500 rows costs 0.15 s each time)."""
        import datasets
        import numpy as np

        table = dataset.select_columns(["grid_size", "num_colors"]).with_format("arrow")[:]
        sizes, colours = table.column("grid_size").to_numpy(), table.column("num_colors").to_numpy()
        keep = np.flatnonzero((sizes == grid_size) & (colours == num_colors)).tolist()
        return dataset.select(keep).cast_column("image", datasets.Image(decode=False))

    process_docs.__name__ = process_docs.__qualname__ = f"docs_n{grid_size:02d}_c{num_colors}"
    return process_docs


for _n in ZERO_SHOT_SIZES:
    for _c in ZERO_SHOT_COLOURS:
        globals()[f"docs_n{_n:02d}_c{_c}"] = _docs_of(_n, _c)


def doc_to_image(doc: dict) -> list:
    """The row's image as its PNG bytes behind a PIL interface: decoded to RGB only when a backend reads pixels,
    never re-encoded (``harness_tasks.images.PngImage``)."""
    image = doc["image"]
    if isinstance(image, dict):
        return [PngImage(image["bytes"])]
    return [image if image.mode == "RGB" else image.convert("RGB")]


def doc_to_text(doc: dict) -> str:
    return IMAGE_PLACEHOLDER + doc["prompt"]


def doc_to_target(doc: dict) -> str:
    return format_answer(doc["matrix"])


def _results(doc: dict, results: list, protocol: str) -> dict:
    text = results[0]
    # only backends that report why generation stopped carry a finish_reason (g2m-chat and g2m's own models do);
    # a failed request's text is never parsed
    score = score_answer(text, doc["matrix"], getattr(text, "finish_reason", None), protocol)
    doc["g2m"] = {**score.detail(), **answer_detail(text)}
    return score.metrics()


def process_results(doc: dict, results: list) -> dict:
    """The numbers lm-eval aggregates, under G2M's protocol. The per-sample detail (parse strategy, reason, cell
    mask) is not a metric: it is attached to the doc, which lm-eval writes into the samples log as it is."""
    return _results(doc, results, "g2m")


def process_results_paper(doc: dict, results: list) -> dict:
    """The same, under the paper's protocol (the authors' parser and scoring)."""
    return _results(doc, results, "paper")
