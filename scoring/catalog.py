"""The G2M tasks, defined once: names, cells, protocols, answer budgets, tags, metrics and the task version.

One task per (N, C) of the ``zero_shot`` config and protocol: ``g2m_n{NN}_c{C}`` (G2M's protocol: its parser, partial
credit, its answer budget) and ``g2m_paper_n{NN}_c{C}`` (the authors': their parser and scoring, their budget
min(4N^2 + 20N + 50, 2048)), on the same rows with the same prompt. The sets ``g2m``, ``g2m_c3``, ``g2m_c5``,
``g2m_c10`` and ``g2m_lite`` (N <= 12), and the same with ``g2m_paper``, are *tags*: lm-eval 0.4.13 refuses any two
requested groups that share a task ("Duplicate task"), so with groups ``--tasks g2m,g2m_lite`` could never run; tags
can be combined freely. Every harness's task files (``with_lm_eval.taskgen``, ``with_lmms_eval.taskgen``,
``with_inspect.tasks``), the runners, the report and the leaderboard read the tasks from here.
"""

from __future__ import annotations

import re

from dataset_builder.grids.configs import ZERO_SHOT_COLORS, ZERO_SHOT_SIZES
from dataset_builder.grids.spec import cell_key
from scoring.budget import max_gen_toks
from scoring.paper import max_gen_toks as paper_max_gen_toks
from scoring.score import LOWER_IS_BETTER, PROTOCOLS
from scoring.score import METRICS as SCORE_METRICS

#: Bump on any change that can move a score or change what a run records; log it in tasks/README.md.
TASK_VERSION = 2.2
LITE_MAX_N = 12
#: (metric, higher is better). Only numbers: per-sample detail is logged with each sample (utils.process_results).
METRICS = tuple((m, m not in LOWER_IS_BETTER) for m in SCORE_METRICS)
TASK_NAME = re.compile(r"^g2m_(paper_)?n(\d+)_c(\d+)$")


def task_name(grid_size: int, num_colors: int, protocol: str = "g2m") -> str:
    return f"g2m{'_paper' if protocol == 'paper' else ''}_{cell_key(grid_size, num_colors)}"


def all_tasks(protocol: str = "g2m") -> list[tuple[str, int, int]]:
    """(name, N, C) of every task of one protocol: g2m_n09_c3, or g2m_paper_n09_c3 for the paper's."""
    return [(task_name(n, c, protocol), n, c) for n in ZERO_SHOT_SIZES for c in ZERO_SHOT_COLORS]


def task_info(name: str) -> tuple[int, int, str] | None:
    """(N, C, protocol) of a task name, or None when it is not a G2M task."""
    m = TASK_NAME.fullmatch(name.strip(" -"))
    if m is None or (int(m.group(2)), int(m.group(3))) not in {(n, c) for _, n, c in all_tasks()}:
        return None
    return int(m.group(2)), int(m.group(3)), "paper" if m.group(1) else "g2m"


def budget(grid_size: int, protocol: str = "g2m") -> int:
    """A task's answer budget in tokens: G2M's, or the authors' min(4N^2 + 20N + 50, 2048)."""
    return paper_max_gen_toks(grid_size) if protocol == "paper" else max_gen_toks(grid_size)


def tags_of(grid_size: int, num_colors: int, protocol: str = "g2m") -> list[str]:
    base = "g2m_paper" if protocol == "paper" else "g2m"
    return [base, f"{base}_c{num_colors}"] + ([f"{base}_lite"] if grid_size <= LITE_MAX_N else [])


def tags() -> dict[str, list[str]]:
    """Tag -> its tasks, in release order: G2M's sets, then the paper protocol's."""
    out: dict[str, list[str]] = {}
    for protocol in PROTOCOLS:
        base = "g2m_paper" if protocol == "paper" else "g2m"
        for t in (base, f"{base}_lite", *(f"{base}_c{c}" for c in ZERO_SHOT_COLORS)):
            out[t] = []
        for name, n, c in all_tasks(protocol):
            for tag in tags_of(n, c, protocol):
                out[tag].append(name)
    return out


def task_names(tasks: tuple[str, ...]) -> list[str]:
    """The G2M tasks a request names (tags expanded)."""
    return [m for t in tasks for m in tags().get(t, [t]) if task_info(m)]


def grid_sizes(tasks: tuple[str, ...]) -> list[int]:
    return sorted({task_info(m)[0] for m in task_names(tasks)})


def max_budget(tasks: tuple[str, ...]) -> int | None:
    """The largest answer budget among the requested tasks (None when no G2M task is named)."""
    budgets = [budget(n, protocol) for n, _, protocol in map(task_info, task_names(tasks))]
    return max(budgets, default=None)
