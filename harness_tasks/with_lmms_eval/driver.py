"""``g2m eval --harness lmms-eval``: run lmms-eval 0.7.3 on the G2M task folder, check that it really ran, and convert
its output into G2M's run layout (``run_layout``), so ``g2m report``, ``submit`` and ``validate`` read it like any run.

lmms-eval is run as its own process (``python -m lmms_eval``), as its users run it. Its exit status means nothing
(it exits 0 when no task was found, when it crashed and when the server was dead), so success is judged by what it
wrote: a results file from this run holding every requested task, and a sample line with a row id for every answer.
Each converted answer is re-scored and must match the score lmms-eval computed with the same hook; a mismatch
stops the run (the harnesses would disagree). The child's environment pins ``LMMS_IMAGE_ENCODE_FORMAT=PNG``: the
JPEG setting would send quality-85 JPEGs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import lmms_eval  # noqa: F401  (run as a child process; imported here so a missing install names its extra)

from g2m_base.bounded_json import loads, read_json
from g2m_base.errors import HarnessError
from g2m_base.untrusted import term
from harness_tasks.evaluation import data
from harness_tasks.evaluation.run_key import RunKey, folder_name, run_record
from harness_tasks.evaluation.settings import EvalSpec, Target
from harness_tasks.with_lmms_eval.taskgen import task_folder
from scoring.catalog import task_names
from scoring.replies import from_lmms_eval
from scoring.runs.layout import MAX_RESULTS_BYTES
from scoring.runs.model_args import ModelArgs
from scoring.runs.write import HarnessSample, write_run
from scoring.score import METRICS

LOG_TAIL = 25



def command(tasks: list[str], task_dir: Path, out: Path, model: str, model_args: str, limit: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "lmms_eval", "--model", model, "--model_args", model_args, "--tasks", ",".join(tasks),
           "--include_path", str(task_dir), "--output_path", str(out), "--log_samples", "--verbosity", "WARNING"]
    return cmd + (["--limit", str(limit)] if limit else [])


def _run_logged(cmd: list[str], log_path: Path, env: dict, echo: bool) -> tuple[int, list[str]]:
    """Run ``cmd``, teeing its output to ``log_path`` (and to stderr when ``echo``); returns (status, last lines)."""
    tail: deque[str] = deque(maxlen=LOG_TAIL)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                                errors="replace", bufsize=1)
        try:
            for line in proc.stdout:
                log.write(line)
                tail.append(line.rstrip("\n"))
                if echo:
                    sys.stderr.write(line)
            return proc.wait(), list(tail)
        finally:  # Ctrl-C, SIGTERM, a full log disk: lmms-eval stops with us, never left running
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _fail(message: str, tail: list[str], log_path: Path) -> HarnessError:
    print(f"g2m: the last lines of {log_path}:", file=sys.stderr)
    for line in tail:
        print("  | " + term(line, 300), file=sys.stderr)
    return HarnessError(f"{message}; its log is {log_path}")


def _newest_results(native: Path, since: float) -> Path | None:
    found = [p for p in native.rglob("*_results.json") if p.stat().st_mtime >= since]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _text(line: dict) -> str:
    if (line.get("g2m_sample") or {}).get("answer_was_null"):
        return ""  # the hook saw None; lmms-eval wrote it down as "None"
    text = line.get("filtered_resps")
    if isinstance(text, list):
        text = text[0] if text else ""
        text = text[0] if isinstance(text, list) and text else text
    return text if isinstance(text, str) else ""


def read_samples(results_path: Path, tasks: list[str], rows: dict[str, dict]) -> list[HarnessSample]:
    """Every logged answer of the run, matched to its row by the ``g2m_sample`` id; checked against lmms-eval's own
    per-sample scores."""
    prefix = results_path.name[: -len("_results.json")]
    out, mismatched = [], []
    for task in tasks:
        path = results_path.with_name(f"{prefix}_samples_{task}.jsonl")
        if not path.is_file():
            raise HarnessError(f"lmms-eval logged no samples for {task} ({path.name} is missing)")
        for k, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = loads(text, f"{path.name}:{k}")
            sample = line.get("g2m_sample") or {}
            row = rows.get(sample.get("id"))
            if row is None:
                raise HarnessError(f"{path.name}: a sample without a known row id ({term(sample.get('id'), 80)})")
            answer = from_lmms_eval(_text(line))
            s = HarnessSample(task, row, str(answer), answer.finish_reason, answer.error)
            out.append(s)
            mismatched += [(task, row["id"], m) for m in METRICS if m in line and not _same(line[m], s, task, m)]
    if mismatched:
        task, rid, metric = mismatched[0]
        raise HarnessError(f"{len(mismatched)} per-sample scores differ between lmms-eval's hook and G2M's scoring "
                           f"(first: {task} {rid} {metric}); the harnesses disagree, which is a bug")
    return out


def _same(logged: float, sample: HarnessSample, task: str, metric: str) -> bool:
    from scoring.catalog import task_info
    from scoring.score import score_answer

    score = score_answer(sample.text, sample.row["matrix"], sample.finish_reason, task_info(task)[2])
    return abs(float(logged) - score.metrics()[metric]) < 1e-12


def lmms_args(spec: EvalSpec, target: Target) -> tuple[str, str]:
    """lmms-eval's ``--model`` and ``--model_args``: its ``openai`` backend for a server, else the user's own."""
    if target.url is None:
        return target.backend, str(target.args)
    args = target.args.without("model")  # with a server, model= names the served model: model_version here
    return "openai", str(ModelArgs(args.pieces + (f"model_version={target.served_name}", f"base_url={target.v1}",
                                                  f"num_concurrent={spec.concurrency}", "max_retries=3")))


def run(spec: EvalSpec, target: Target, provenance: dict) -> Path:
    """Run lmms-eval; returns the G2M run folder it was converted into."""
    tasks = list(dict.fromkeys(task_names(spec.tasks)))
    model, model_args = lmms_args(spec, target)
    source, revision = data.resolve_source(spec.data)
    out = Path(spec.output)
    folder = folder_name(spec, target.display)
    if target.link is not None:
        target.link.connect()  # no answer cache here: every request goes to the server
    key = RunKey(spec, model_args, None, target.link, out / folder)
    task_dir = task_folder(source, revision, out / "tasks", spec.reasoning_budget)
    native = out / "native" / "lmms-eval"
    env = {**os.environ, "LMMS_IMAGE_ENCODE_FORMAT": "PNG"}
    env.setdefault("OPENAI_API_KEY", "EMPTY")
    log_path = out / "logs" / f"lmms-eval-{time.strftime('%Y%m%d-%H%M%S')}.log"
    start = time.time() - 1
    status, tail = _run_logged(command(tasks, task_dir, native, model, model_args, spec.limit), log_path, env,
                               echo=spec.progress)
    results_path = _newest_results(native, start)
    if results_path is None:
        raise _fail(f"lmms-eval wrote no results (exit status {status}; it exits 0 even when it finds no task or "
                    "crashes)", tail, log_path)
    results = read_json(results_path, MAX_RESULTS_BYTES, "lmms-eval results file")
    missing = [t for t in tasks if t not in results.get("results", {})]
    if missing:
        raise _fail(f"lmms-eval has no results for {len(missing)} of {len(tasks)} tasks (first: {missing[0]})", tail,
                    log_path)
    samples = read_samples(results_path, tasks, data.rows_by_id(spec.data))
    block = {"data": provenance, "native": str(results_path), "log": str(log_path), "model_args": model_args,
             "reasoning_budget": spec.reasoning_budget, "lmms_eval_version": results.get("lmms_eval_version")}
    block.update(run_record(spec, target, key))
    return write_run(out, target.display, "lmms-eval", samples, block, {"backend": model, "backend_args": model_args},
                     folder)

