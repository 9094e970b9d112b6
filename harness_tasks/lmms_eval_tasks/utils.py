"""lmms-eval hooks for the G2M tasks (referenced from the YAML files as ``!function utils.<name>``).

Thin adapters over the same code as the lm-eval hooks: the rows and their (N, C) filter, the prompt from the row, the
image as the release's PNG bytes (``PngImage``: lmms-eval's PNG encoder writes those bytes unchanged), and the score
from ``scoring.score.score_answer``, so the same text gets the same numbers in both harnesses. lmms-eval puts
a failed request's error text where the answer should be ("[LMMS_EVAL_REQUEST_FAILED after N retries] ..."): that is
a ``request_failed`` outcome, never parsed. lmms-eval loads this file by path, so imports are absolute.
"""

from __future__ import annotations

from harness_tasks.evaluation.row_filters import image_of, process_docs_functions
from scoring.parsing import format_answer
from scoring.replies import answer_detail, from_lmms_eval
from scoring.score import score_answer

globals().update(process_docs_functions())  # docs_n03_c3, ..., docs_n64_c10


def doc_to_visual(doc: dict) -> list:
    return [image_of(doc)]


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    return doc["prompt"]  # lmms-eval puts the image before the text itself: no placeholder


def doc_to_target(doc: dict) -> str:
    return format_answer(doc["matrix"])


def _results(doc: dict, results: list, protocol: str) -> dict:
    answer = from_lmms_eval(results[0])
    score = score_answer(answer, doc["matrix"], answer.finish_reason, protocol)
    sample = {"id": doc["id"], "grid_size": doc["grid_size"], "num_colors": doc["num_colors"], **score.detail(),
              **answer_detail(answer)}
    sample.pop("cell_mask")  # rebuilt from the text by g2m; the line stays small
    if results[0] is None:  # a null content: lmms-eval logs it as the text "None"; g2m reads it as the empty answer
        sample["answer_was_null"] = True
    return {**score.metrics(), "g2m_sample": sample}


def process_results(doc: dict, results: list) -> dict:
    """G2M's protocol. ``g2m_sample`` (row id and parse detail) is logged on the sample's line."""
    return _results(doc, results, "g2m")


def process_results_paper(doc: dict, results: list) -> dict:
    return _results(doc, results, "paper")


def count_samples(items: list) -> int:
    """The aggregate of ``g2m_sample``: how many rows were scored."""
    return len(items)
