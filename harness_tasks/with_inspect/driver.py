"""``g2m eval --harness inspect``: run the inspect tasks in this process and convert their logs into G2M's run layout.

inspect's defaults do not suit a benchmark run: it retries a failing request without limit (a server that answers
HTTP 500 keeps a run alive for hours), its OpenAI client retries twice more inside each attempt, one sample error
fails the whole task, and with ``display="none"`` a configuration error is not printed at all. Here: at most
``MAX_RETRIES`` attempts, the client's own retries off, an attempt timeout that fits the largest answer, errors
recorded per sample (``request_failed``, never scored as an answer), and a task that did not run stops
``g2m eval`` with its error. A server is reached through inspect's ``openai-api`` provider under the service name
``g2m`` (``G2M_BASE_URL``, ``G2M_API_KEY``); any other inspect model string (``vllm/...``, ``openai/...``) is passed
through with ``--model``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from g2m_base.errors import HarnessError
from harness_tasks.evaluation import data
from harness_tasks.evaluation.run_key import RunKey, folder_name, run_record
from harness_tasks.evaluation.settings import EvalSpec, Target
from harness_tasks.serving.chat import request_timeout
from harness_tasks.with_inspect.tasks import build_task, finish_reason
from scoring.catalog import budget, task_info, task_names
from scoring.replies import GenText, failed
from scoring.runs.model_args import ModelArgs
from scoring.runs.write import HarnessSample, write_run

MAX_RETRIES = 3
SERVICE = "G2M"



@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _reasoning(output) -> str | None:
    parts = getattr(getattr(output, "message", None), "content", None)
    if not isinstance(parts, list):
        return None
    text = "".join(getattr(p, "reasoning", "") or "" for p in parts if getattr(p, "type", None) == "reasoning")
    return text or None


def samples_of(log, rows: dict[str, dict]) -> list[HarnessSample]:
    """The answers of one task's log; a sample that errored is a failed request."""
    out = []
    for s in log.samples or []:
        row = rows[str(s.id)]
        if s.error is not None:
            answer = failed(str(s.error.message)[:500])
        else:
            ok = s.output is not None and bool(s.output.choices)
            answer = GenText(s.output.completion if ok else "", finish_reason(s.output.stop_reason) if ok else None,
                             _reasoning(s.output) if ok else None)
        out.append(HarnessSample(log.eval.task, row, str(answer), answer.finish_reason, answer.error, answer.reasoning))
    return out


def run(spec: EvalSpec, target: Target, provenance: dict) -> Path:
    """Evaluate with inspect; returns the G2M run folder."""
    from inspect_ai import eval as inspect_eval

    tasks = list(dict.fromkeys(task_names(spec.tasks)))
    base_url = target.v1
    model = f"openai-api/g2m/{target.served_name}" if base_url else target.backend
    model_args = (target.args.without("model") if base_url else target.args).as_dict()

    dataset = data.rows(spec.data)
    built = [build_task(name, dataset, spec.reasoning_budget) for name in tasks]
    largest = max(budget(*task_info(t)[::2]) for t in tasks) + spec.reasoning_budget
    env = {}
    if base_url:
        env = {f"{SERVICE}_BASE_URL": base_url, f"{SERVICE}_API_KEY": os.environ.get("OPENAI_API_KEY") or "EMPTY"}
        model_args = {"max_retries": 0, **model_args}  # the OpenAI client's own retries, inside each attempt
    native = Path(spec.output) / "native" / "inspect"
    folder = folder_name(spec, target.display)
    if target.link is not None:
        target.link.connect()  # no answer cache here: every request goes to the server
    key = RunKey(spec, str(ModelArgs.parse(model_args)), None, target.link, Path(spec.output) / folder)
    with _env(env):
        logs = inspect_eval(built, model=model, model_args=model_args, log_dir=str(native), log_format="json",
                            limit=spec.limit, max_connections=spec.concurrency, max_tasks=min(len(built), 4),
                            max_retries=MAX_RETRIES, attempt_timeout=int(spec.request_timeout
                                                                         or request_timeout(largest)),
                            fail_on_error=False, display="plain" if spec.progress else "none", score_display=False)
    broken = [log for log in logs if log.status != "success"]
    if broken or len(logs) != len(built):
        first = broken[0] if broken else None
        why = getattr(getattr(first, "error", None), "message", None) or (first.status if first else "missing logs")
        raise HarnessError(f"inspect did not finish {len(broken) or len(built) - len(logs)} of {len(built)} tasks "
                           f"(first: {first.eval.task if first else '?'}: {str(why)[:300]})")
    rows = data.rows_by_id(spec.data)
    samples = [s for log in logs for s in samples_of(log, rows)]
    block = {"data": provenance, "native": str(native), "model_args": model_args,
             "reasoning_budget": spec.reasoning_budget, "inspect_model": model}
    block.update(run_record(spec, target, key))
    return write_run(Path(spec.output), target.display, "inspect", samples, block,
                     {"backend": model, "backend_args": model_args}, folder)
