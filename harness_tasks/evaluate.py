"""``g2m eval``: ``lm_eval.simple_evaluate`` on the installed G2M task folder, with samples always logged,
resumable runs, failed requests kept apart, and the provenance a leaderboard needs (data source and revision,
package versions) in the results.

Three ways to reach a model: any lm-eval backend (``model``); a server that is already running (``base_url``: any
OpenAI-compatible endpoint, through ``g2m-chat``); or one ``vllm serve`` started for the run (``serve``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from dataset_builder import __version__
from dataset_builder.errors import UsageError
from dataset_builder.fsutil import safe_name
from dataset_builder.provenance import library_versions

from . import data
from .backends import effective_model_args, max_budget, missing_backend
from .budget import suggest_max_model_len
from .endpoints import chat_url, served_models
from .report_table import tag_scores
from .scoring import PROTOCOLS
from .taskgen import TASK_DIR, TASK_VERSION, DataSource, all_tasks, tags, write_folder

BASELINES = ("g2m-oracle", "g2m-random")
CHAT = "g2m-chat"
_VERSIONED = ("lm_eval", "datasets", "transformers", "torch", "vllm", "numpy", "pillow", "huggingface_hub", "aiohttp")
#: Model arguments that say how to reach a server, not what answers: left out of the run's identity, so a resumed
#: ``--serve`` run (a new port each time) finds its answers.
TRANSPORT_ARGS = frozenset({"base_url", "num_concurrent", "timeout", "max_retries", "verify_certificate",
                            "ca_cert_path", "auth_token", "header"})
_ARG = re.compile(r"(?:^|,)\s*([A-Za-z_]+)\s*=")


@dataclass(frozen=True)
class EvalSpec:
    """One evaluation run. Validated on construction, so a typo fails before any model is loaded."""

    model: str = CHAT  # an lm-eval backend; g2m-chat with base_url or serve
    model_args: str = ""
    tasks: tuple[str, ...] = ("g2m",)
    data: str | None = None  # a local build; None reads the Hub release at the pinned revision
    output: str = "g2m-runs"
    limit: int | None = None
    batch_size: str = "1"
    device: str | None = None
    apply_chat_template: bool = True
    gen_kwargs: str | None = None
    resume: bool = True
    resume_chunk: int = 256  # answers per commit: a crash loses at most this many
    base_url: str | None = None  # a running OpenAI-compatible server
    serve: str | None = None  # a checkpoint to serve with ``vllm serve`` for this run
    serve_args: str = ""  # passed to ``vllm serve`` untouched (parallelism, memory, ...)
    serve_timeout: float = 1800.0
    concurrency: int = 32  # requests in flight to a server
    reasoning_budget: int = 0  # tokens added to every answer budget, for reasoning models
    progress: bool = True

    def __post_init__(self) -> None:
        known = {t for p in PROTOCOLS for t, _, _ in all_tasks(p)} | set(tags())
        unknown = [t for t in self.tasks if t not in known]
        if unknown or not self.tasks:
            raise UsageError(f"unknown G2M task(s) {', '.join(unknown) or '(none given)'}; "
                             f"tags: {', '.join(tags())}; tasks look like g2m_n09_c3 or g2m_paper_n09_c3")
        if self.serve and self.base_url:
            raise UsageError("--serve starts a server and --base-url uses one that is already running: give one")
        if (self.serve or self.base_url) and self.model != CHAT:
            raise UsageError(f"--serve and --base-url use the {CHAT} backend; drop --model {self.model}")
        for name, value, low in (("resume_chunk", self.resume_chunk, 1), ("--concurrency", self.concurrency, 1),
                                 ("--reasoning-budget", self.reasoning_budget, 0), ("--limit", self.limit, 1)):
            if value is not None and (not isinstance(value, int) or value < low):
                raise UsageError(f"{name} must be an integer of at least {low}, got {value!r}")
        if self.base_url:
            chat_url(self.base_url)  # a malformed URL fails here, before any data or model is loaded
        if self.data is not None and not Path(self.data).is_dir():
            raise UsageError(f"--data {self.data!r} is not a folder; build one with: g2m build --out DIR --configs zero_shot")

    @property
    def display_name(self) -> str:
        return self.serve or model_name(self.model, self.model_args)


def model_name(backend: str, model_args: str | dict | None) -> str:
    """What a run is called: the checkpoint in ``model_args`` (pretrained=, model=, path=), else the backend."""
    if isinstance(model_args, dict):
        model_args = ",".join(f"{k}={v}" for k, v in model_args.items())
    m = re.search(r"(?:^|,)(?:pretrained|model|path)=([^,]+)", model_args or "")
    return m.group(1) if m else backend


def _arg_keys(model_args: str) -> set[str]:
    return {m.group(1) for m in _ARG.finditer(model_args)}


def _join(model_args: str, extra: list[str]) -> str:
    return ",".join([a for a in [model_args.strip(",")] if a] + extra)


def run_key(spec: EvalSpec, model_args: str) -> str:
    """Identity of the answers: the request cache of one run is never reused by another model or setting."""
    args = ",".join(p for p in model_args.split(",") if p.split("=", 1)[0].strip() not in TRANSPORT_ARGS)
    raw = json.dumps([spec.model, args, spec.gen_kwargs, spec.apply_chat_template, TASK_VERSION, spec.reasoning_budget])
    return hashlib.sha256(raw.encode()).hexdigest()[:12]


def chat_model_args(spec: EvalSpec, url: str, model: str | None) -> str:
    """``model_args`` for g2m-chat: the user's, plus the server, the model it serves and the concurrency."""
    keys = _arg_keys(spec.model_args)
    extra = [] if "base_url" in keys else [f"base_url={url}"]
    if "model" not in keys:
        if model is None:
            names = served_models(url)
            if len(names) != 1:
                raise UsageError(f"{url} serves {len(names)} models ({', '.join(names) or 'none'}); "
                                 "name one with --model-args model=NAME")
            model = names[0]
        extra.append(f"model={model}")
    if "num_concurrent" not in keys:
        extra.append(f"num_concurrent={spec.concurrency}")
    return _join(spec.model_args, extra)


def versions() -> dict:
    return {"grid2matrix": __version__, **library_versions(_VERSIONED)}


def task_folder(source: str, revision: str | None, root: Path) -> Path:
    """The installed task folder for the release; for any other data, a folder written for it under ``root``."""
    default = DataSource()
    if (source, revision) == (default.path, default.revision):
        return TASK_DIR
    data_source = DataSource.local(source) if revision is None else DataSource(source, revision)
    return write_folder(root, data_source)


def run_eval(spec: EvalSpec) -> dict:
    """Evaluate and save ``results_*.json`` and ``samples_*.jsonl`` under ``spec.output/<model>/``."""
    from .lm_eval_fixes import lm_eval_fixes

    with lm_eval_fixes():
        provenance = {**data.provenance(spec.data), "config": data.CONFIG, "content_sha256": data.content_sha256(spec.data)}
        if spec.serve:
            from .serve import Server, ServeSpec

            budget = (max_budget(spec.tasks) or 0) + spec.reasoning_budget
            serve = ServeSpec(spec.serve, suggest_max_model_len(budget), ServeSpec.parse_extra(spec.serve_args),
                              startup_timeout=spec.serve_timeout,
                              log_path=Path(spec.output) / "logs" / f"vllm-serve-{safe_name(spec.serve)}.log")
            with Server(serve) as server:
                return _run(spec, chat_model_args(spec, server.url, serve.served_name), provenance,
                            {"vllm_serve": spec.serve, "serve_args": list(serve.extra), "max_model_len": serve.max_model_len})
        if spec.base_url:
            return _run(spec, chat_model_args(spec, chat_url(spec.base_url), None), provenance)
        return _run(spec, effective_model_args(spec.model, spec.model_args, spec.tasks), provenance)


def _backend(spec: EvalSpec, model_args: str):
    from lm_eval.api.registry import get_model

    from . import chat, models  # noqa: F401  registers g2m-chat, g2m-oracle and g2m-random

    try:
        lm_class = get_model(spec.model)
    except ValueError as e:
        raise UsageError(f"{e} (G2M adds {CHAT}, {', '.join(BASELINES)})") from None
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    try:
        return lm_class.create_from_arg_string(model_args, {"batch_size": spec.batch_size, "max_batch_size": None,
                                                            "device": spec.device})
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    except (OSError, ValueError, TypeError) as e:  # a checkpoint that is not there, an argument the backend refuses
        raise UsageError(f"the {spec.model} backend could not start with {model_args!r}: {e}") from None


def _run(spec: EvalSpec, model_args: str, provenance: dict, served: dict | None = None) -> dict:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from .runner import RunnerLM

    source, revision = data.resolve_source(spec.data)
    display = spec.serve or model_name(spec.model, model_args)
    name = safe_name(display)
    out = Path(spec.output)
    task_dir = task_folder(source, revision, out / "tasks")
    cache = out / "cache" / f"{name}-{run_key(spec, model_args)}_rank0.db" if spec.resume else None
    lm = RunnerLM(_backend(spec, model_args), cache, chunk=spec.resume_chunk, reasoning_budget=spec.reasoning_budget,
                  progress=spec.progress, desc=f"g2m {display}"[:60])
    tracker = EvaluationTracker(output_path=str(out))
    try:
        results = simple_evaluate(
            model=lm, model_args=model_args, tasks=list(spec.tasks),
            task_manager=TaskManager(include_path=str(task_dir), include_defaults=False),
            log_samples=True, evaluation_tracker=tracker, apply_chat_template=spec.apply_chat_template,
            gen_kwargs=spec.gen_kwargs, limit=spec.limit, batch_size=spec.batch_size, device=spec.device,
            bootstrap_iters=1000, verbosity=logging.getLevelName(logging.getLogger("lm_eval").getEffectiveLevel()),
        )
    finally:
        lm.close()
    if not results or not results.get("results"):
        raise UsageError(f"lm-eval ran no task for {', '.join(spec.tasks)}: nothing was scored or written")
    results["config"]["model"] = spec.model
    results["g2m"] = {"data": provenance, "task_version": TASK_VERSION, "versions": versions(), "tags": tag_scores(results),
                      "cache": lm.cache_db, "resumed_answers": lm.hits, "generated_answers": lm.misses,
                      "request_failed": lm.failed, "reasoning_budget": spec.reasoning_budget, "model": display}
    if served:
        results["g2m"]["served_by"] = served
    samples = results.pop("samples")
    tracker.general_config_tracker.model_name = display
    tracker.general_config_tracker.model_name_sanitized = name
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    results["output_dir"] = str(out / name)
    return results
