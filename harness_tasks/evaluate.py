"""``g2m eval``: ``lm_eval.simple_evaluate`` on the installed G2M task folder, with samples always logged,
resumable runs, and the provenance a leaderboard needs (data source and revision, package versions) in the results.
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
from .backends import effective_model_args, missing_backend
from .report_table import tag_scores
from .scoring import PROTOCOLS
from .taskgen import TASK_DIR, TASK_VERSION, DataSource, all_tasks, tags, write_folder

BASELINES = ("g2m-oracle", "g2m-random")
_VERSIONED = ("lm_eval", "datasets", "transformers", "torch", "vllm", "numpy", "pillow", "huggingface_hub")


@dataclass(frozen=True)
class EvalSpec:
    """One evaluation run. Validated on construction, so a typo fails before any model is loaded."""

    model: str
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
    resume_chunk: int = 256  # requests per committed chunk: a crash loses at most this many answers

    def __post_init__(self) -> None:
        known = {t for p in PROTOCOLS for t, _, _ in all_tasks(p)} | set(tags())
        unknown = [t for t in self.tasks if t not in known]
        if unknown or not self.tasks:
            raise UsageError(f"unknown G2M task(s) {', '.join(unknown) or '(none given)'}; "
                             f"tags: {', '.join(tags())}; tasks look like g2m_n09_c3 or g2m_paper_n09_c3")
        if self.resume_chunk < 1:
            raise UsageError(f"resume_chunk must be at least 1, got {self.resume_chunk}")
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"--limit must be a positive integer, got {self.limit}")
        if self.data is not None and not Path(self.data).is_dir():
            raise UsageError(f"--data {self.data!r} is not a folder; build one with: g2m build --out DIR --configs zero_shot")

    @property
    def run_key(self) -> str:
        """Identity of the answers: the request cache of one run is never reused by another model or setting."""
        raw = json.dumps([self.model, self.model_args, self.gen_kwargs, self.apply_chat_template, TASK_VERSION])
        return hashlib.sha256(raw.encode()).hexdigest()[:12]

    @property
    def display_name(self) -> str:
        return model_name(self.model, self.model_args)


def model_name(backend: str, model_args: str | dict | None) -> str:
    """What a run is called: the checkpoint in ``model_args`` (pretrained=, model=, path=), else the backend."""
    if isinstance(model_args, dict):
        model_args = ",".join(f"{k}={v}" for k, v in model_args.items())
    m = re.search(r"(?:^|,)(?:pretrained|model|path)=([^,]+)", model_args or "")
    return m.group(1) if m else backend


class _QuietCustomDataset(logging.Filter):
    """lm-eval warns once per task that uses ``custom_dataset``; with 45 tasks that buries real warnings."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Custom kwargs can be passed" not in record.getMessage()


def quiet_lm_eval() -> None:
    logging.getLogger("lm_eval.api.task").addFilter(_QuietCustomDataset())


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
    from lm_eval import simple_evaluate
    from lm_eval.api.registry import get_model
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from . import models  # noqa: F401  registers g2m-oracle and g2m-random
    from .resume import ResumableLM

    quiet_lm_eval()
    source, revision = data.resolve_source(spec.data)
    provenance = {**data.provenance(spec.data), "config": data.CONFIG, "content_sha256": data.content_sha256(spec.data)}
    try:
        lm_class = get_model(spec.model)
    except ValueError as e:
        raise UsageError(f"{e} (G2M adds {', '.join(BASELINES)})") from None
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    model_args = effective_model_args(spec.model, spec.model_args, spec.tasks)
    try:
        lm = lm_class.create_from_arg_string(model_args, {"batch_size": spec.batch_size, "max_batch_size": None,
                                                          "device": spec.device})
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    except (OSError, ValueError, TypeError) as e:  # a checkpoint that is not there, an argument the backend refuses
        raise UsageError(f"the {spec.model} backend could not start with {model_args!r}: {e}") from None
    out = Path(spec.output)
    task_dir = task_folder(source, revision, out / "tasks")
    name = safe_name(spec.display_name)
    if spec.resume:
        lm = ResumableLM(lm, out / "cache" / f"{name}-{spec.run_key}_rank0.db", chunk=spec.resume_chunk)
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
        if spec.resume:
            lm.close()
    results["config"]["model"] = spec.model
    results["g2m"] = {"data": provenance, "task_version": TASK_VERSION, "versions": versions(), "tags": tag_scores(results),
                      "cache": getattr(lm, "cache_db", None),
                      "resumed_answers": getattr(lm, "hits", 0), "generated_answers": getattr(lm, "misses", None)}
    samples = results.pop("samples")
    tracker.general_config_tracker.model_name = spec.display_name
    tracker.general_config_tracker.model_name_sanitized = name
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    results["output_dir"] = str(out / name)
    return results
