"""G2M as inspect tasks: one ``Task`` per G2M task name, scored by G2M's own scoring.

The same rows, prompt, budgets and greedy decoding as the lm-eval and lmms-eval tasks; sample ids are the row ids;
the image is the release's PNG as a data URL (inspect passes data URLs to the server unchanged); the scorer is a thin
adapter over ``scoring.score.score_answer``, with inspect's ``stop_reason`` ("max_tokens", "model_length")
as the finish reason, so ``truncated`` is a fact here. A sample whose generation failed after its retries never
reaches the scorer: ``g2m eval --harness inspect`` records it as ``request_failed``.

From inspect's command line::

    inspect eval harness_tasks/with_inspect/tasks.py@g2m_task -T name=g2m_n09_c3 -T data=DIR --model
    openai-api/vllm/MODEL

and programmatically ``inspect_ai.eval(g2m_tasks("g2m_lite"), model=...)``. Tags (``g2m``, ``g2m_lite``, ...) are
stored on each task (inspect has no groups); ``g2m eval`` aggregates them like every other harness.
"""

from __future__ import annotations

import base64

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from g2m_base.errors import UsageError
from harness_tasks.evaluation import data
from harness_tasks.evaluation.row_filters import select_cell
from harness_tasks.with_inspect.paths import user_path
from scoring.catalog import TASK_VERSION, budget, tags_of, task_info, task_names
from scoring.parsing import format_answer
from scoring.replies import GenText, answer_detail
from scoring.score import METRICS, score_answer

#: inspect's stop reasons that mean "cut at the budget or the context".
LENGTH_STOPS = frozenset({"max_tokens", "model_length"})


def finish_reason(stop_reason: str | None) -> str | None:
    return "length" if stop_reason in LENGTH_STOPS else stop_reason


def _sample(row: dict) -> Sample:
    url = "data:image/png;base64," + base64.b64encode(row["image"]["bytes"]).decode("ascii")
    return Sample(id=row["id"], input=[ChatMessageUser(content=[ContentImage(image=url),
                                                                ContentText(text=row["prompt"])])],
                  target=format_answer(row["matrix"]),
                  metadata={"grid_size": row["grid_size"], "num_colors": row["num_colors"], "matrix": row["matrix"]})


def score_state(state: TaskState, protocol: str) -> Score:
    """The G2M score of one finished sample (the scorer's body, kept apart so every harness's hook can be compared)."""
    output = state.output
    ok = output is not None and bool(output.choices)
    text = output.completion if ok else ""
    finish = finish_reason(output.stop_reason) if ok else None
    answer = GenText(text, finish)
    score = score_answer(answer, state.metadata["matrix"], finish, protocol)
    return Score(value=score.metrics(), answer=text, explanation=score.reason or score.strategy,
                 metadata={**score.detail(), **answer_detail(answer)})


@scorer(metrics={m: [mean()] for m in METRICS})
def g2m_scorer(protocol: str = "g2m"):
    async def score(state: TaskState, target: Target) -> Score:
        return score_state(state, protocol)

    return score


def build_task(name: str, dataset, reasoning_budget: int = 0) -> Task:
    """One G2M task over ``dataset`` (the zero_shot split, images as PNG bytes)."""
    info = task_info(name)
    if info is None:
        raise UsageError(f"{name!r} is not a G2M task (they look like g2m_n09_c3 or g2m_paper_n09_c3)")
    n, c, protocol = info
    rows = select_cell(dataset, n, c)
    return Task(dataset=MemoryDataset([_sample(r) for r in rows], name=name), solver=generate(),
                scorer=g2m_scorer(protocol), name=name, version=str(TASK_VERSION), tags=tags_of(n, c, protocol),
                config=GenerateConfig(max_tokens=budget(n, protocol) + reasoning_budget, temperature=0.0),
                metadata={"grid_size": n, "num_colors": c, "protocol": protocol})


@task
def g2m_task(name: str = "g2m_n03_c3", data: str | None = None, reasoning_budget: int = 0) -> Task:
    """One G2M task by name, on the Hub release (or a local build: ``-T data=DIR``)."""
    return build_task(name, _dataset(data), int(reasoning_budget))


def g2m_tasks(tasks: str = "g2m", data: str | None = None, reasoning_budget: int = 0) -> list[Task]:
    """Every task a comma-separated list of tags and task names selects, each once."""
    names = list(dict.fromkeys(task_names(tuple(t.strip() for t in tasks.split(",") if t.strip()))))
    if not names:
        raise UsageError(f"no G2M task in {tasks!r}")
    dataset = _dataset(data)
    return [build_task(n, dataset, reasoning_budget) for n in names]


def _dataset(source: str | None):
    return data.rows(user_path(source))
