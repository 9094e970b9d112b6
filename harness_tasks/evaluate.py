"""``g2m eval``: run the G2M tasks in lm-eval, lmms-eval or inspect, with samples always logged, failed requests
kept apart, and the provenance a leaderboard needs (data source and revision, package versions) in the results.

Three ways to reach a model: a harness's own backend (``model``); a server that is already running (``base_url``:
any OpenAI-compatible endpoint); or one ``vllm serve`` started for the run (``serve``). Each harness has its runner
(``lm_eval_run``, ``lmms_run``, ``inspect_run``); every run lands in the same layout.
"""

from __future__ import annotations

import json
import re
from importlib import import_module
from pathlib import Path

from g2m_base.errors import MissingDependency, UsageError
from g2m_base.files import safe_name
from harness_tasks.answers.budget import suggest_max_model_len
from harness_tasks.evaluation import data
from harness_tasks.evaluation.backends import effective_model_args, max_budget, task_names
from harness_tasks.evaluation.settings import (
    BASELINES,
    CHAT,
    HARNESS_EXTRAS,
    HARNESSES,
    RUNNERS,
    EvalSpec,
    chat_model_args,
    join_args,
    model_name,
    run_key,
    task_folder,
    versions,
)
from harness_tasks.serving.endpoints import chat_url, served_models

__all__ = ["BASELINES", "CHAT", "HARNESSES", "EvalSpec", "load_results", "model_name", "run_eval", "run_key",
           "task_folder", "versions"]


def run_eval(spec: EvalSpec) -> dict:
    """Evaluate and save ``results_*.json`` and ``samples_*.jsonl`` under ``spec.output/<model>/``."""
    from harness_tasks.with_lm_eval.fixes import quiet_datasets

    _harness_module(spec.harness)  # a missing harness fails here, before any data is read or server started
    with quiet_datasets():
        provenance = {**data.provenance(spec.data), "config": data.CONFIG, "content_sha256": data.content_sha256(spec.data)}
        if spec.serve:
            from harness_tasks.serving.launcher import Server, ServeSpec

            budget = (max_budget(spec.tasks) or 0) + spec.reasoning_budget
            serve = ServeSpec(spec.serve, suggest_max_model_len(budget), ServeSpec.parse_extra(spec.serve_args),
                              startup_timeout=spec.serve_timeout,
                              log_path=Path(spec.output) / "logs" / f"vllm-serve-{safe_name(spec.serve)}.log")
            with Server(serve) as server:
                return _dispatch(spec, provenance, chat_url(server.url), serve.served_name,
                                 {"vllm_serve": spec.serve, "serve_args": list(serve.extra),
                                  "max_model_len": serve.max_model_len})
        if spec.base_url:
            return _dispatch(spec, provenance, chat_url(spec.base_url), None)
        return _dispatch(spec, provenance, None, None)


def _dispatch(spec: EvalSpec, provenance: dict, url: str | None, served_name: str | None,
              served: dict | None = None) -> dict:
    """Run the requested harness against a server (``url``) or with its own backend."""
    if spec.harness == "lm-eval":
        args = chat_model_args(spec, url, served_name) if url else effective_model_args(spec.model, spec.model_args,
                                                                                           spec.tasks)
        from harness_tasks.with_lm_eval.driver import run

        return run(spec, args, provenance, served)
    runner = _harness_module(spec.harness)
    tasks = list(dict.fromkeys(task_names(spec.tasks)))
    v1 = url[: -len("/chat/completions")] if url else None
    if url and served_name is None:
        served_name = _served_name(spec, url)
    # with a server, model= names the served model; the harness gets it its own way
    user_args = ",".join(p for p in spec.model_args.split(",") if p.strip() and not (url and p.startswith("model=")))
    if spec.harness == "lmms-eval":
        if url:
            model, args = "openai", join_args(user_args, [f"model_version={served_name}", f"base_url={v1}",
                                                      f"num_concurrent={spec.concurrency}", "max_retries=3"])
        else:
            model, args = spec.model, spec.model_args
        folder = runner.run(spec, tasks, model, args, provenance, served)
    else:
        extra = dict(p.split("=", 1) for p in user_args.split(",") if "=" in p)
        model = f"openai-api/g2m/{served_name}" if url else spec.model
        folder = runner.run(spec, tasks, model, extra, provenance, base_url=v1, served=served)
    return load_results(folder)


def _harness_module(harness: str):
    """The module that runs ``harness`` (lm-eval itself for lm-eval), imported now: a missing one names its extra."""
    try:
        if harness == "lm-eval":
            return import_module("lm_eval")
        return import_module(f".{RUNNERS[harness]}", __package__)
    except ModuleNotFoundError as e:
        if (e.name or "").startswith(__package__):
            raise
        raise MissingDependency(f"--harness {harness} needs {(e.name or '').split('.')[0]!r}",
                                HARNESS_EXTRAS[harness]) from e


def _served_name(spec: EvalSpec, url: str) -> str:
    m = re.search(r"(?:^|,)model=([^,]+)", spec.model_args)
    if m:
        return m.group(1)
    names = served_models(url)
    if len(names) != 1:
        raise UsageError(f"{url} serves {len(names)} models ({', '.join(names) or 'none'}); "
                         "name one with --model-args model=NAME")
    return names[0]


def load_results(folder: Path) -> dict:
    """The newest results file of a run folder, as ``run_eval`` returns it."""
    path = sorted(Path(folder).glob("results_*.json"))[-1]
    results = json.loads(path.read_text(encoding="utf-8"))
    results["output_dir"] = str(folder)
    return results
