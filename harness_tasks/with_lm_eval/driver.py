"""``g2m eval`` with lm-eval: ``simple_evaluate`` on the G2M task folder through ``RunnerLM`` (resumable, one
progress bar, failed requests kept apart), with lm-eval's noise and slow paths fixed for the run (``lm_eval_fixes``)
and the provenance a leaderboard needs added to lm-eval's own results."""

from __future__ import annotations

import logging
from pathlib import Path

from g2m_base.errors import UsageError
from g2m_base.files import safe_name
from harness_tasks.answers.catalog import TASK_VERSION
from harness_tasks.evaluation import data
from harness_tasks.evaluation.backends import missing_backend
from harness_tasks.evaluation.score_table import tag_scores
from harness_tasks.evaluation.settings import BASELINES, CHAT, model_name, run_key, task_folder, versions


def _backend(spec, model_args: str):
    from lm_eval.api.registry import get_model

    from harness_tasks.serving import chat  # noqa: F401  registers g2m-chat, g2m-oracle and g2m-random
    from harness_tasks.with_lm_eval import baseline_models as models  # noqa: F401  registers g2m-chat, g2m-oracle and g2m-random

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


def run(spec, model_args: str, provenance: dict, served: dict | None = None) -> dict:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from harness_tasks.with_lm_eval.fixes import lm_eval_fixes
    from harness_tasks.with_lm_eval.resumable import RunnerLM

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
        with lm_eval_fixes():
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
                      "request_failed": lm.failed, "reasoning_budget": spec.reasoning_budget, "model": display,
                      "harness": "lm-eval"}
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
