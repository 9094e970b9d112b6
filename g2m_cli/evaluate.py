"""``g2m eval`` and ``g2m tasks-dir``: thin argument parsing over ``harness_tasks.evaluate``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from g2m_base.errors import UsageError
from g2m_base.files import ensure_dir
from g2m_base.flags import HelpFormatter, add_data, add_out, add_quiet
from g2m_base.untrusted import term

DEMO_SCALE = 0.05


def _eval(args: argparse.Namespace) -> int:
    from harness_tasks.evaluate import BASELINES, CHAT, EvalSpec, run_eval
    from harness_tasks.evaluation.run_key import beside
    from scoring.runs.score_table import score_table

    logging.getLogger("lm_eval").setLevel(logging.INFO if args.verbose else logging.WARNING)
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    if args.dry_run:
        return _dry_run(tasks, args)
    served = bool(args.serve or args.base_url)
    data = args.data
    if args.model is None and not served and args.harness != "lm-eval":
        raise UsageError(f"--harness {args.harness} needs --base-url URL, --serve MODEL, or --model with one of its "
                         "own backends")
    if args.model is None and not served:
        data = data or _demo_release(Path(args.out) / "data", args.scale, progress=not args.quiet)
    elif data is None:
        print("g2m: reading the zero_shot config from the Hugging Face Hub (pass --data DIR for a local build)",
              file=sys.stderr)
    models = [args.model or CHAT] if args.model or served else list(BASELINES)
    common = dict(tasks=tasks, data=data, output=args.out, limit=args.limit, batch_size=args.batch_size,
                  device=args.device, apply_chat_template=not args.no_chat_template, gen_kwargs=args.gen_kwargs,
                  resume=not args.no_resume, base_url=args.base_url, serve=args.serve, serve_args=args.serve_args,
                  serve_timeout=args.serve_timeout, vllm=args.vllm, concurrency=args.concurrency,
                  reasoning_budget=args.reasoning_budget, progress=not args.quiet, harness=args.harness,
                  request_timeout=args.request_timeout)
    specs = [EvalSpec(model=m, model_args=args.model_args if args.model or served else "", **common) for m in models]
    whole = True
    for spec in specs:
        results = run_eval(spec)
        print(score_table(results, f"{term(results['g2m']['model'])} on {', '.join(tasks)}"))
        print(f"\nresults and samples: {term(results['output_dir'])}\n")
        others = beside(Path(results["output_dir"]))
        if others:  # a rerun with other settings went to a folder of its own: say the earlier ones are still there
            print(f"g2m: other runs of this model, with other settings, sit beside it: {'; '.join(map(term, others))}; "
                  "g2m report and g2m submit read one folder at a time", file=sys.stderr)
        failed = results["g2m"].get("request_failed", 0)
        if failed:  # a run with answers missing did not finish: never exit 0 on it
            whole = False
            print(f"g2m: the run is not complete: {_failed(results, failed)}; they are scored 0 and not cached. Run "
                  "the same command again to retry exactly those.", file=sys.stderr)
    return 0 if whole else 1


def _failed(results: dict, failed: int) -> str:
    """``N request(s) failed after their retries in TASKS``: which tasks lost answers, the first few named."""
    tasks = sorted(t for t, r in (results.get("results") or {}).items()
                   if isinstance(r, dict) and (r.get("request_failed,none") or 0) > 0)
    where = f" in {', '.join(tasks[:6])}{f' and {len(tasks) - 6} more task(s)' if len(tasks) > 6 else ''}" if tasks \
        else ""
    return f"{failed:,} request(s) of {term(results['g2m']['model'])} failed after their retries{where}"


def _dry_run(tasks: tuple[str, ...], args: argparse.Namespace) -> int:
    from harness_tasks.evaluate import EvalSpec
    from harness_tasks.evaluation.dryrun import plan, report

    EvalSpec(tasks=tasks, data=args.data, limit=args.limit, reasoning_budget=args.reasoning_budget)  # validates
    print(f"g2m eval --dry-run: {', '.join(tasks)}" + (f", --limit {args.limit}" if args.limit else ""))
    print(report(plan(tasks, args.data, args.limit, args.reasoning_budget), args.reasoning_budget))
    return 0


def _demo_release(out: Path, scale: float, progress: bool = True) -> str:
    from dataset_builder.release.build import BuildParams, build

    print(f"g2m: no --model: building a {scale:g}-scale zero_shot release in {out} and scoring the built-in "
          "baselines (g2m-oracle, g2m-random)", file=sys.stderr)
    build(out, "zero_shot", BuildParams(scale=scale), progress=progress)
    return str(out)


def _tasks_dir(args: argparse.Namespace) -> int:
    from dataset_builder.release.source import resolve_source
    from harness_tasks import TASK_DIR
    from harness_tasks.with_lm_eval.taskgen import task_folder
    from harness_tasks.with_lmms_eval import taskgen as lmms_taskgen

    lmms = args.harness == "lmms-eval"
    if args.data is None:
        print(lmms_taskgen.LMMS_TASK_DIR if lmms else TASK_DIR)
        return 0
    if not Path(args.data).expanduser().is_dir():
        raise UsageError(f"--data {args.data!r} is not a folder; build one with: g2m build --out DIR --configs "
                         f"zero_shot")
    source, revision = resolve_source(args.data)
    root = ensure_dir(Path(args.out).expanduser()) if args.out else ensure_dir(default_tasks_root())
    print(lmms_taskgen.task_folder(source, revision, root) if lmms else task_folder(source, revision, root))
    return 0


def _export(args: argparse.Namespace) -> int:
    from harness_tasks.with_vlmevalkit.export import export
    from scoring.runs.vlmevalkit import DATASET_NAME

    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    out = Path(args.out or f"{DATASET_NAME}.tsv")
    if out.suffix != ".tsv" or not out.stem:
        raise UsageError(f"--out {str(out)!r}: VLMEvalKit reads <Name>.tsv (e.g. {DATASET_NAME}.tsv)")
    n = export(out, args.data, tasks)
    print(f"wrote {n:,} rows to {term(out)}\n"
          f"  copy it to $LMUData/{out.name} (default ~/LMUData); its images are named by content hash, so an older\n"
          f"  $LMUData/images/{out.stem}/ is never reused for other pixels. Run VLMEvalKit with a --config JSON whose\n"
          f"  data is {{\"{out.stem}\": {{\"class\": \"CustomVQADataset\", \"dataset\": \"{out.stem}\"}}}} (see "
          f"docs/harnesses.md):\n  PRED_FORMAT=tsv python run.py --config cfg.json --mode all\n"
          f"  then: g2m report outputs/<model>/T<date>-<time>/<model>_{out.stem}.tsv  (an .xlsx cuts long answers)")
    return 0


def default_tasks_root() -> Path:
    """Where ``g2m tasks-dir --data`` writes task folders for local builds: the user's cache, never the release."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grid2matrix" / "tasks"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate a VLM (or, with no --model, the built-in baselines) with lm-eval",
                       formatter_class=HelpFormatter,
                       description="Evaluate a VLM on the G2M tasks through lm-eval. Reach the model with an lm-eval "
                                   "backend (--model), a running OpenAI-compatible server (--base-url), or a vllm "
                                   "serve started for the run (--serve). With none of them, build a small release "
                                   "and score the built-in baselines.")
    p.add_argument("--model", default=None, help="the harness's backend; lm-eval: vllm-vlm, hf-multimodal, g2m-chat, "
                                                 "g2m-oracle, g2m-random (default: both baselines on a small local "
                                                 "build); lmms-eval: e.g. qwen2_5_vl; inspect: e.g. vllm/MODEL")
    p.add_argument("--model-args", default="",
                   help="backend arguments, e.g. pretrained=Qwen/Qwen3-VL-8B-Instruct,max_model_len=20480")
    p.add_argument("--serve", default=None, metavar="MODEL", help="start `vllm serve MODEL` for this run and evaluate "
                                                                  "it (stopped however the run ends)")
    p.add_argument("--serve-args", default="", help="passed to vllm serve untouched, e.g. "
                                                    "'--tensor-parallel-size 8 --data-parallel-size 2'")
    p.add_argument("--serve-timeout", type=float, default=1800.0, help="seconds to wait for the server to be healthy")
    p.add_argument("--vllm", default=None, metavar="EXECUTABLE", help="the vllm that --serve starts, e.g. "
                                                                       "/opt/vllm-env/bin/vllm (default: $G2M_VLLM, "
                                                                       "else vllm on PATH)")
    p.add_argument("--base-url", default=None, help="a running OpenAI-compatible server, e.g. http://localhost:8000/v1")
    p.add_argument("--harness", default="lm-eval", choices=("lm-eval", "lmms-eval", "inspect"),
                   help="the evaluation harness that runs the tasks (results land in the same layout)")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight to a server (--serve, --base-url)")
    p.add_argument("--request-timeout", type=float, default=None, help="seconds per request to a server (default: "
                                                                       "300 + budget/10, enough for the largest "
                                                                       "answer)")
    p.add_argument("--reasoning-budget", type=int, default=0, metavar="K", help="tokens added to every answer "
                                                                               "budget, for a model that reasons first")
    p.add_argument("--tasks", default="g2m", help="comma-separated tasks or tags (g2m, g2m_lite, g2m_c3, g2m_paper, "
                                                  "g2m_n09_c3, ...)")
    add_data(p)
    add_out(p, "where results, samples, logs and the resume cache go", default="g2m-runs", aliases=("--output",))
    p.add_argument("--limit", type=int, default=None, help="first K rows of each task (for smoke tests)")
    p.add_argument("--dry-run", action="store_true", help="print the requests, token budgets and context length the "
                                                          "run needs, and stop")
    p.add_argument("--batch-size", default="1", help="rows per forward pass of an in-process backend (hf-multimodal, "
                                                     "vllm-vlm); a server's is --concurrency")
    p.add_argument("--device", default=None, help="e.g. cuda:0 or cpu (hf-multimodal)")
    p.add_argument("--gen-kwargs", default=None, help="override generation settings, e.g. max_gen_toks=32768")
    p.add_argument("--no-chat-template", action="store_true", help="do not apply the model's chat template")
    p.add_argument("--no-resume", action="store_true", help="ignore and do not write the request cache")
    add_quiet(p, aliases=("--no-progress",))
    p.add_argument("--scale", type=float, default=DEMO_SCALE, help="size of the demo build when no --model is given")
    p.add_argument("--verbose", action="store_true", help="show lm-eval's own log")
    p.set_defaults(func=_eval, extra="harness")

    p = sub.add_parser("export", help="write G2M for another harness's own format (VLMEvalKit's TSV)",
                       formatter_class=HelpFormatter,
                       description="Write the zero_shot rows as VLMEvalKit's custom-dataset TSV: lossless PNG in "
                                   "base64, image_path <index>-<content hash>.png, the prompt as question, the row id "
                                   "as g2m_id. g2m report and g2m submit read VLMEvalKit's prediction file back.")
    p.add_argument("target", choices=("vlmevalkit",), help="the harness whose format to write")
    add_data(p)
    p.add_argument("--tasks", default="g2m", help="tags or task names whose rows to export")
    add_out(p, "the TSV to write (default: Grid2Matrix.tsv)")
    p.set_defaults(func=_export, extra="harness")

    p = sub.add_parser("tasks-dir", help="print the lm-eval (or lmms-eval) task folder, for --include_path",
                       description="Print the installed task folder (the Hub release), or with --data write the same "
                                   "tasks for a local build and print their folder.")
    add_data(p, "a local build (g2m build --out DIR) to write the tasks for")
    add_out(p, "where to write them (default: ~/.cache/grid2matrix/tasks)")
    p.add_argument("--harness", default="lm-eval", choices=("lm-eval", "lmms-eval"),
                   help="whose task folder (inspect's tasks are Python: harness_tasks/with_inspect/tasks.py)")
    p.set_defaults(func=_tasks_dir, extra=None)
