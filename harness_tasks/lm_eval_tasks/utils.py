"""lm-eval hooks for the G2M tasks (referenced from the YAML files as ``!function utils.<name>``).

Thin adapters: the rows come from the release (``dataset_path``), each task keeps its (N, C) with
``docs_n{NN}_c{C}``, the prompt comes from the row, the score from ``scoring.score.score_answer``. Images stay
PNG bytes in the docs (nothing is decoded up front, nothing is re-encoded to hash it for the samples log) and are
decoded only when a backend asks for them. lm-eval loads this file by path, so imports are absolute.
"""

from __future__ import annotations

from dataset_builder.grids.spec import IMAGE_PLACEHOLDER
from harness_tasks.evaluation.row_filters import image_of, process_docs_functions
from scoring.parsing import format_answer
from scoring.replies import answer_detail
from scoring.score import score_answer

globals().update(process_docs_functions())  # docs_n03_c3, ..., docs_n64_c10


def doc_to_image(doc: dict) -> list:
    """The row's image as its PNG bytes behind a PIL interface: decoded to RGB only when a backend reads pixels,
    never re-encoded (``harness_tasks.evaluation.images.PngImage``)."""
    return [image_of(doc)]


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
