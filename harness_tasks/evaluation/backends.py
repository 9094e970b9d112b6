"""Backend-specific defaults, kept to the minimum: our vLLM path is lm-eval's own ``vllm-vlm``.

The one thing vLLM cannot guess is ``max_model_len``: too small and the 64x64 answers are cut (or rejected), too
large and the KV cache does not fit. We size it from the largest grid in the selected tasks
(``budget.suggest_max_model_len`` of the largest answer budget) unless the user set it, and cap images per
prompt at the one G2M sends.
"""

from __future__ import annotations

import re

from g2m_base.errors import MissingDependency
from harness_tasks.answers.budget import suggest_max_model_len
from harness_tasks.answers.catalog import budget, tags, task_info

#: The package extra that brings each backend's dependencies (default: ``harness``).
EXTRAS = {"vllm-vlm": "vllm", "vllm": "vllm"}


def missing_backend(model: str, error: ImportError) -> MissingDependency:
    """The error for a backend whose optional dependencies are not installed, naming the extra that installs them."""
    return MissingDependency(f"the {model} backend needs {getattr(error, 'name', None) or error}",
                             EXTRAS.get(model, "harness"))


def task_names(tasks: tuple[str, ...]) -> list[str]:
    """The G2M tasks a request names (tags expanded)."""
    return [m for t in tasks for m in tags().get(t, [t]) if task_info(m)]


def grid_sizes(tasks: tuple[str, ...]) -> list[int]:
    return sorted({task_info(m)[0] for m in task_names(tasks)})


def max_budget(tasks: tuple[str, ...]) -> int | None:
    """The largest answer budget among the requested tasks (None when no G2M task is named)."""
    budgets = [budget(n, protocol) for n, _, protocol in map(task_info, task_names(tasks))]
    return max(budgets, default=None)


def effective_model_args(model: str, model_args: str, tasks: tuple[str, ...]) -> str:
    """``model_args`` with vLLM's context length and image limit filled in when the user left them out."""
    if model != "vllm-vlm":
        return model_args
    keys = {m.group(1) for m in re.finditer(r"(?:^|,)\s*([A-Za-z_]+)\s*=", model_args)}
    extra = []
    if not keys & {"max_model_len", "max_length"} and max_budget(tasks):
        extra.append(f"max_model_len={suggest_max_model_len(max_budget(tasks))}")
    if "max_images" not in keys:
        extra.append("max_images=1")
    return ",".join([a for a in [model_args.strip(",")] if a] + extra)
