"""``g2m eval``: run the G2M tasks in lm-eval, lmms-eval or inspect, with samples always logged, failed requests
kept apart, and the provenance a leaderboard needs (data source and revision, package versions) in the results.

One way through, each step in one module: settle the run (``evaluation.settings.resolve``: model arguments, the
served model, the display name), link it to its server (``serving.link``: a running one is asked what it is; a
``vllm serve`` is started when the first request needs it, ``serving.launcher``), hand the target to the one
harness driver that runs it (``with_lm_eval``, ``with_lmms_eval`` or ``with_inspect``; each writes the same run
layout, in the folder ``evaluation.run_key`` names), and read back the results it wrote.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from pathlib import Path

from g2m_base.bounded_json import read_json
from g2m_base.errors import MissingDependency
from g2m_base.files import folder_lock, safe_name
from g2m_base.installs import install_hint
from harness_tasks.evaluation import data
from harness_tasks.evaluation.run_key import earlier_server, folder_name, run_key
from harness_tasks.evaluation.settings import (
    BASELINES,
    CHAT,
    DRIVERS,
    HARNESS_EXTRAS,
    HARNESSES,
    EvalSpec,
    Target,
    resolve,
    versions,
)
from harness_tasks.serving.endpoints import chat_url
from harness_tasks.serving.link import ServerLink
from scoring.budget import suggest_max_model_len
from scoring.catalog import max_budget
from scoring.runs.layout import MAX_RESULTS_BYTES, results_files
from scoring.runs.model_args import model_name

__all__ = ["BASELINES", "CHAT", "HARNESSES", "EvalSpec", "Target", "load_results", "model_name", "run_eval", "run_key",
           "versions"]
#: One run per output folder at a time: a second is refused at once, before any request is sent.
RUN_LOCK = ".g2m-eval.lock"
BUSY = ("another g2m eval is running with --out {root}; wait for it to finish, or give this run another --out "
        "(two runs on one folder would send the same requests twice and race for the answer cache)")


def run_eval(spec: EvalSpec) -> dict:
    """Evaluate and save ``results_*.json`` and ``samples_*.jsonl`` under ``spec.output/<model>/``."""
    from harness_tasks.with_lm_eval.fixes import quiet_datasets

    driver = _driver(spec.harness)  # a missing harness fails here, before any data is read or server started
    with folder_lock(Path(spec.output), RUN_LOCK, BUSY), quiet_datasets():
        provenance = {**data.provenance(spec.data), "config": data.CONFIG,
                      "content_sha256": data.content_sha256(spec.data)}
        if spec.serve:
            from harness_tasks.serving.launcher import Server, ServeSpec, find_vllm

            budget = (max_budget(spec.tasks) or 0) + spec.reasoning_budget
            serve = ServeSpec(spec.serve, suggest_max_model_len(budget), ServeSpec.parse_extra(spec.serve_args),
                              executable=find_vllm(spec.vllm), startup_timeout=spec.serve_timeout,
                              log_path=Path(spec.output) / "logs" / f"vllm-serve-{safe_name(spec.serve)}.log")
            server = Server(serve)  # a port and a URL; started when a request needs it (serving.link)
            served = {"vllm_serve": spec.serve, "serve_args": list(serve.extra), "max_model_len": serve.max_model_len}
            target = resolve(spec, chat_url(server.url), serve.served_name, served)
            folder = Path(spec.output) / folder_name(spec, target.display)
            link = ServerLink(target.url, serve.served_name, server, serve.launch(),
                              earlier_server(folder, serve.launch()))
            try:
                return load_results(driver.run(spec, replace(target, link=link), provenance))
            finally:
                link.close()
        target: Target = resolve(spec, chat_url(spec.base_url) if spec.base_url else None)
        if target.url:
            target = replace(target, link=ServerLink.running(target.url, target.served_name))
        return load_results(driver.run(spec, target, provenance))


def _driver(harness: str):
    """The driver of ``harness``, imported now (with lm-eval itself): a missing harness names its extra."""
    try:
        if harness == "lm-eval":
            import_module("lm_eval")
        return import_module(f"{__package__}.{DRIVERS[harness]}.driver")
    except ModuleNotFoundError as e:
        if (e.name or "").startswith(__package__):
            raise
        module = (e.name or "").split(".")[0]
        raise MissingDependency(f"--harness {harness} needs {module!r}", HARNESS_EXTRAS[harness], module=module or None,
                                hint=install_hint(module, HARNESS_EXTRAS[harness]) if module else None) from e


def load_results(folder: Path) -> dict:
    """The newest results file of a run folder, as ``run_eval`` returns it."""
    path = results_files(folder)[-1]
    results = read_json(path, MAX_RESULTS_BYTES, "results file")
    results["output_dir"] = str(folder)
    return results
