"""lm-eval hooks for the G2M tasks (referenced from the YAML files as ``!function utils.<name>``).

Thin adapters: the prompt comes from the dataset row, the score from ``harness_tasks.scoring.score_answer``.
lm-eval loads this file by path, so imports are absolute.
"""

from __future__ import annotations

from collections import Counter

from dataset_builder.spec import IMAGE_PLACEHOLDER
from harness_tasks import data
from harness_tasks.parsing import format_answer
from harness_tasks.scoring import score_answer


def load_docs(grid_size: int, num_colors: int, g2m_data: str | None = None, g2m_revision: str | None = None, **_):
    """``custom_dataset``: lm-eval passes task metadata, model args and --metadata too, hence ``**_``."""
    return data.select(grid_size, num_colors, g2m_data, g2m_revision)


def doc_to_image(doc: dict) -> list:
    image = doc["image"]
    return [image if image.mode == "RGB" else image.convert("RGB")]


def doc_to_text(doc: dict) -> str:
    return IMAGE_PLACEHOLDER + doc["prompt"]


def doc_to_target(doc: dict) -> str:
    return format_answer(doc["matrix"])


def process_results(doc: dict, results: list) -> dict:
    text = results[0]
    # only backends that report why generation stopped carry a finish_reason (g2m's own models do)
    return score_answer(text, doc["matrix"], getattr(text, "finish_reason", None)).metrics()


def count(items: list) -> int:
    """Aggregation for per-sample logs (the cell masks): how many were logged."""
    return len(items)


def tally(items: list) -> str:
    """Aggregation for per-sample labels: 'list_literal:97 none:3'."""
    return " ".join(f"{k}:{v}" for k, v in sorted(Counter(i for i in items if i).items())) or "-"
