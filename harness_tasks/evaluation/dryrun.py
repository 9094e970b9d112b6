"""``g2m eval --dry-run``: what a run will ask of a model before it starts, computed without loading anything.

Row counts come from the config definitions (the release's ``zero_shot`` has 100 rows per (N, C)), or from a local
build's manifest scale; budgets from the task definitions. Expected answer tokens assume 3 tokens per cell, what
Qwen's tokenizer spends on a Python list of lists (``budget.py``): a model that answers in that form uses about this
many; the budget is the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from dataset_builder.grids.configs import get_config
from dataset_builder.release.provenance import load_manifest
from dataset_builder.release.source import resolve_source
from g2m_base.errors import G2MError
from scoring.budget import IMAGE_TOKS, PROMPT_TOKS, suggest_max_model_len
from scoring.catalog import budget, task_info, task_names

TOKENS_PER_CELL = 3


@dataclass(frozen=True)
class TaskPlan:
    task: str
    grid_size: int
    num_colors: int
    requests: int
    budget: int  # answer tokens per request, reasoning budget included

    @property
    def budget_tokens(self) -> int:
        return self.requests * self.budget

    @property
    def expected_tokens(self) -> int:
        return self.requests * TOKENS_PER_CELL * self.grid_size**2


def _scale(data: str | None) -> float:
    source, revision = resolve_source(data)
    if revision is not None:
        return 1.0
    try:
        return float(load_manifest(source)["params"]["scale"])
    except (G2MError, KeyError, TypeError, ValueError):
        return 1.0


def plan(tasks: tuple[str, ...], data: str | None = None, limit: int | None = None,
         reasoning_budget: int = 0) -> list[TaskPlan]:
    """One line per task the request names (tags expanded, each task once)."""
    blocks = {(b.grid_size, b.num_colors): b.count
              for b in get_config("zero_shot").scaled(_scale(data)).split("test").blocks}
    out = []
    for name in dict.fromkeys(task_names(tasks)):
        n, c, protocol = task_info(name)
        rows = blocks.get((n, c), 0) if limit is None else min(limit, blocks.get((n, c), 0))
        out.append(TaskPlan(name, n, c, rows, budget(n, protocol) + reasoning_budget))
    return out


def report(plans: list[TaskPlan], reasoning_budget: int = 0) -> str:
    """The dry-run printout: totals, the context length needed, and one line per grid size."""
    if not plans:
        return "no G2M tasks selected"
    requests = sum(p.requests for p in plans)
    budget_total = sum(p.budget_tokens for p in plans)
    expected = sum(p.expected_tokens for p in plans)
    largest = max(plans, key=lambda p: p.budget)
    context = suggest_max_model_len(largest.budget)
    lines = [
        f"tasks                  {len(plans):>14,}",
        f"requests               {requests:>14,}   (one image each)",
        f"answer-token budget    {budget_total:>14,}   (the most the model may write; largest {largest.budget:,} "
        f"at {largest.grid_size}x{largest.grid_size}"
        f"{f', {reasoning_budget:,} of it for reasoning' if reasoning_budget else ''})",
        f"expected answer tokens {expected:>14,}   ({TOKENS_PER_CELL} tokens per cell, a Python list of lists"
        f"{', before any reasoning' if reasoning_budget else ''})",
        f"context length needed  {context:>14,}   (max_model_len: {largest.budget:,} answer + {IMAGE_TOKS:,} image + "
        f"{PROMPT_TOKS} prompt, rounded up)",
        "",
        "| N | tasks | requests | budget per request | budget tokens | expected tokens |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sorted({p.grid_size for p in plans}):
        rows = [p for p in plans if p.grid_size == n]
        budgets = sorted({p.budget for p in rows})
        lines.append(f"| {n} | {len(rows)} | {sum(p.requests for p in rows):,} | "
                     f"{' / '.join(f'{b:,}' for b in budgets)} | {sum(p.budget_tokens for p in rows):,} | "
                     f"{sum(p.expected_tokens for p in rows):,} |")
    return "\n".join(lines)
