"""One run layout for every harness: what ``g2m report``, ``submit`` and ``validate`` read.

lm-eval writes it natively (``results_<date>.json`` beside one ``samples_<task>_<date>.jsonl`` per task). A run of
lmms-eval or inspect, or a VLMEvalKit prediction file, is converted into the same files by ``write_run``: each
sample's row (id, sizes, matrix, prompt) comes from the data, its text and finish reason from the harness, and its
scores from ``score_answer``, the function behind every harness's hook, so the same text gets the same numbers
whichever harness produced it. The harness's own output stays beside it, untouched.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dataset_builder.grids.prompt import PROMPT_VERSION
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.files import atomic_write_text, ensure_dir, safe_name
from scoring.catalog import TASK_VERSION, budget, task_info
from scoring.parsing import format_answer
from scoring.replies import answer_detail
from scoring.runs.layout import MAX_RESULTS_BYTES, results_date, results_files, results_name, samples_name
from scoring.runs.score_table import tag_scores
from scoring.score import METRICS, score_answer


@dataclass(frozen=True)
class HarnessSample:
    """One answer as a harness reported it, with the row it answers."""

    task: str  # a G2M task name: g2m_n09_c3 or g2m_paper_n09_c3
    row: dict  # id, grid_size, num_colors, colors, matrix, prompt, seed (no image)
    text: str  # the model's text (empty for a failed request)
    finish_reason: str | None = None  # stop, length, request_failed, or None when the harness does not say
    error: str | None = None
    reasoning: str | None = None


def _row(row: dict) -> dict:
    keep = ("id", "grid_size", "num_colors", "colors", "matrix", "prompt", "seed")
    out = {k: row[k] for k in keep if k in row}
    out["matrix"] = [[int(v) for v in r] for r in out["matrix"]]
    return out


def _stderr(values: list[float]) -> float | str:
    n = len(values)
    if n < 2:
        return "N/A"
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def save_run(folder: Path, date: str, samples: dict[str, list[str]], results: dict, default=None) -> Path:
    """Write one run's files so that a folder is complete or says so.

    Each task's ``samples_<task>_<date>.jsonl`` is written whole (hidden temp file, fsync, rename), then the results
    file, last, recording how many samples each task logged (``g2m.samples``). A run stopped before the end (a kill,
    a full disk, Ctrl-C) leaves no results file of its date, so nothing reads its samples as a run; ``g2m report``,
    ``submit`` and ``validate`` check every task's samples file against the record. ``samples`` holds each task's
    lines, already serialised; a write that fails raises ``BuildError`` naming the file and the cause.
    """
    folder = ensure_dir(Path(folder))
    results.setdefault("g2m", {})["samples"] = {task: len(lines) for task, lines in samples.items()}
    for task, lines in samples.items():
        atomic_write_text(folder / samples_name(task, date), "".join(lines))
    text = json.dumps(results, indent=2, ensure_ascii=False, default=default) + "\n"
    atomic_write_text(folder / results_name(date), text)
    said = supersede(folder, date, results)
    if said:
        print(f"g2m: {said}", file=sys.stderr)
    return folder


def supersede(folder: Path, date: str, results: dict) -> str | None:
    """After the run of ``date`` is written whole: remove each earlier run of the folder that it covers, so a rerun of
    the same command leaves one copy, never two for ``g2m report`` to choose between; returns what it did, in a line.

    An earlier run is covered when every task it logged is in this one with at least as many samples, and this one
    has no failed request (a run with answers missing never replaces one). One that is not covered is kept and named
    with the reason: this run's failed requests, samples it lacks (a full run beside a ``--limit`` rerun), or a results
    file that cannot be read or does not count its samples. A covered run's results file goes first, so a stop
    half-way leaves orphaned samples files, which no reader takes for a run."""
    block = results.get("g2m") or {}
    mine = block.get("samples") or {}
    failed = block.get("request_failed")
    replaced, kept = [], {}
    for path in results_files(folder):
        other = results_date(path)
        if other == date:
            continue
        why = _not_covered(path, mine, failed)
        if why is None:
            replaced.append((path, other))
        else:
            kept.setdefault(why, []).append(other)
    removed = 0
    for path, other in replaced:
        path.unlink()
        for samples in folder.glob(samples_name("*", other)):
            samples.unlink()
            removed += 1
        removed += 1
    parts = []
    if replaced:
        parts.append(f"replaced the earlier run of {', '.join(d for _, d in replaced)} ({removed} files): this one "
                     "holds every sample it held")
    parts += [f"kept the earlier run of {', '.join(dates)} beside it: {why} (g2m report reads the newest; --run DATE "
              "chooses)" for why, dates in kept.items()]
    return "; ".join(parts) or None


def _not_covered(path: Path, mine: dict, failed) -> str | None:
    """Why the earlier run whose results file is ``path`` must stay beside this one, or None when this one covers it."""
    if failed:  # every driver records a count; any true value means answers are missing
        n = failed if type(failed) is int else "some"
        return f"this one has {n} failed request(s), so it cannot stand for it"
    try:
        theirs = (read_json(path, MAX_RESULTS_BYTES, "results file").get("g2m") or {}).get("samples")
    except (Rejected, OSError, AttributeError):
        return "its results file cannot be read, so it cannot be compared"
    if not isinstance(theirs, dict) or not theirs:
        return "its results file does not record how many samples it holds (g2m.samples), so it cannot be compared"
    if not all(isinstance(n, int) and isinstance(mine.get(t), int) and mine[t] >= n for t, n in theirs.items()):
        return "it holds samples this one does not"
    return None


def write_run(out: Path, model: str, harness: str, samples: list[HarnessSample], g2m_block: dict,
              config: dict | None = None, folder: str | None = None) -> Path:
    """Write ``out/<folder>/results_<date>.json`` and the samples files; returns the run folder. ``folder`` defaults
    to the model's name (``g2m eval`` passes ``run_key.folder_name``, which adds a digest of non-default settings)."""
    from scoring.replies import GenText, bounded

    folder = ensure_dir(Path(out) / (folder or safe_name(model)))
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S.%f")
    by_task: dict[str, list[dict]] = {}
    for s in samples:
        info = task_info(s.task)
        if info is None:
            raise ValueError(f"{s.task!r} is not a G2M task")
        answer = bounded(GenText(s.text, s.finish_reason, s.reasoning, s.error))
        score = score_answer(answer, s.row["matrix"], s.finish_reason, info[2])
        doc = {**_row(s.row), "g2m": {**score.detail(), **answer_detail(answer)}}
        metrics = score.metrics()
        line = {"doc_id": len(by_task.get(s.task, [])), "doc": doc, "target": format_answer(doc["matrix"]),
                "resps": [[str(answer)]], "filtered_resps": [str(answer)], "filter": "none", "metrics": list(metrics),
                "harness": harness, **metrics}
        by_task.setdefault(s.task, []).append(line)
    if not by_task:
        raise ValueError(f"the {harness} run produced no G2M samples")
    results, configs, n_samples = {}, {}, {}
    for task, lines in sorted(by_task.items()):
        entry = {"alias": task, "sample_len": len(lines)}
        for m in METRICS:
            values = [line[m] for line in lines]
            entry[f"{m},none"] = sum(values) / len(values)
            entry[f"{m}_stderr,none"] = _stderr(values)
        results[task] = entry
        n, _, protocol = task_info(task)
        configs[task] = {"task": task, "generation_kwargs": {"max_gen_toks": budget(n, protocol), "temperature": 0.0,
                                                             "do_sample": False, "until": []},
                         "metadata": {"version": TASK_VERSION, "prompt_version": PROMPT_VERSION}}
        n_samples[task] = {"original": len(lines), "effective": len(lines)}
    doc = {"results": results, "configs": configs, "versions": {t: TASK_VERSION for t in results},
           "n-samples": n_samples, "config": {**(config or {}), "model": harness, "model_args": f"model={model}"},
           "date": datetime.now(UTC).timestamp(), "model_name": model, "harness": harness}
    doc["g2m"] = {**g2m_block, "task_version": TASK_VERSION, "prompt_version": PROMPT_VERSION, "tags": tag_scores(doc),
                  "harness": harness,
                  "request_failed": sum(1 for s in samples if s.finish_reason == "request_failed"), "model": model}
    lines = {task: [json.dumps(line, ensure_ascii=False) + "\n" for line in task_lines]
             for task, task_lines in sorted(by_task.items())}
    return save_run(folder, date, lines, doc)
