"""Read an lm-eval output folder: the newest ``results_<date>.json`` and the ``samples_<task>_<date>.jsonl`` files of
the same run (lm-eval keeps every run of a model side by side, told apart only by the date in the name)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dataset_builder.spec import MAX_COLORS, MAX_GRID_SIZE, MIN_COLORS
from g2m_base.bounded_json import loads, read_json
from g2m_base.errors import G2MError
from harness_tasks import model_name
from harness_tasks.answers.catalog import task_info
from harness_tasks.answers.score import REQUEST_FAILED
from leaderboard.rescoring.rescore import truth_matrix, zero_shot_truth

_RESULTS = re.compile(r"^results_(?P<date>.+)\.json$")
#: The finish reasons a run's samples may report (anything else is ignored, never trusted).
FINISH_REASONS = frozenset({"stop", "length", "content_filter", "tool_calls", REQUEST_FAILED})


class RunError(G2MError, ValueError):
    """The folder is not a usable lm-eval run of the G2M tasks."""


class NoResults(RunError):
    """The folder holds no lm-eval results at all (it may be a VLMEvalKit outputs folder)."""


@dataclass
class Sample:
    id: str
    grid_size: int
    num_colors: int
    target: np.ndarray
    output: str
    protocol: str = "g2m"  # the protocol of the task that produced it: g2m_n09_c3 or g2m_paper_n09_c3
    finish_reason: str | None = None  # what the backend reported (doc.g2m.finish_reason), when it did

    @property
    def request_failed(self) -> bool:
        """No answer came for this sample (the request failed after its retries): it has no output to score."""
        return self.finish_reason == REQUEST_FAILED


@dataclass
class Run:
    folder: Path
    results_path: Path
    results: dict
    samples: list[Sample]
    incomplete: tuple[str, ...] = ()  # what the run recorded but its files do not hold (read with allow_partial)
    #: Rows whose text the file that carried them cut (a VLMEvalKit .xlsx cell at Excel's 32,767 characters):
    #: (id, characters kept). They are not samples: the model's answer is not in the file, so nothing is scored.
    cut: list[tuple[str, int]] = field(default_factory=list)

    @property
    def harness(self) -> str:
        return str((self.results.get("g2m") or {}).get("harness") or "lm-eval")

    @property
    def model(self) -> str:
        cfg = self.results.get("config", {})
        return model_name(str(cfg.get("model", self.folder.name)), cfg.get("model_args"))


def _results_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("results_*.json") if _RESULTS.fullmatch(p.name))


def locate(path: str | Path) -> Path:
    """The model folder holding results: ``path`` itself, or its only child that holds some."""
    folder = Path(path)
    if not folder.is_dir():
        raise RunError(f"{folder} is not a folder")
    if _results_files(folder):
        return folder
    children = sorted(p for p in folder.iterdir() if p.is_dir() and _results_files(p))
    if len(children) == 1:
        return children[0]
    if not children:
        raise NoResults(f"{folder} holds no lm-eval results (results_*.json); run g2m eval or lm_eval --output_path")
    raise RunError(f"{folder} holds runs of several models ({', '.join(c.name for c in children)}); pick one")


def _sample(line: str) -> Sample:
    """One logged sample, checked: a target that is not an N x N matrix of the row's palette values is refused."""
    row = loads(line, "sample line")
    if not isinstance(row, dict) or not isinstance(row.get("doc"), dict):
        raise ValueError("no doc")
    doc = row["doc"]
    sid, n, c, matrix = doc.get("id"), doc.get("grid_size"), doc.get("num_colors"), doc.get("matrix")
    if not isinstance(sid, str) or not sid:
        raise ValueError("the doc has no string id")
    if type(n) is not int or not 1 <= n <= MAX_GRID_SIZE:
        raise ValueError(f"grid_size {n!r} is not an integer from 1 to {MAX_GRID_SIZE}")
    if type(c) is not int or not MIN_COLORS <= c <= MAX_COLORS:
        raise ValueError(f"num_colors {c!r} is not an integer from {MIN_COLORS} to {MAX_COLORS}")
    if not (isinstance(matrix, list) and len(matrix) == n
            and all(isinstance(r, list) and len(r) == n for r in matrix)):
        raise ValueError(f"the target is not a {n}x{n} matrix")
    if not all(type(v) is int and 0 <= v < c for r in matrix for v in r):
        bad = next(v for r in matrix for v in r if not (type(v) is int and 0 <= v < c))
        raise ValueError(f"the target holds {bad!r}, not a colour value from 0 to {c - 1}")
    resps = row.get("resps")
    output = resps[0][0] if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0] else None
    if not isinstance(output, str):
        raise ValueError("resps[0][0] is not the model's text")
    detail = doc.get("g2m") if isinstance(doc.get("g2m"), dict) else {}
    finish = detail.get("finish_reason")
    finish = finish if isinstance(finish, str) and finish in FINISH_REASONS else None
    return Sample(sid, n, c, np.asarray(matrix, dtype=np.int64), output, finish_reason=finish)


def _check_against_release(s: Sample, task_n: int, task_c: int, truth: dict) -> None:
    """A logged row must be the row its id names, in the task it was logged for: its target is never trusted."""
    if (s.grid_size, s.num_colors) != (task_n, task_c):
        raise ValueError(f"a {s.grid_size}x{s.grid_size}, C={s.num_colors} row in the samples of the "
                         f"{task_n}x{task_n}, C={task_c} task")
    t = truth.get(s.id)
    if t is None:
        raise ValueError(f"unknown G2M id {s.id[:80]!r}")
    if (t.grid_size, t.num_colors) != (task_n, task_c):
        raise ValueError(f"id {s.id} is a {t.grid_size}x{t.grid_size}, C={t.num_colors} row, not of this task")
    if not np.array_equal(s.target, truth_matrix(t)):
        raise ValueError(f"the logged target of {s.id} is not the release's row (regenerated from its seed)")


#: The fields of a results file that reports and submissions read, and the JSON types each may have.
_FIELDS: dict[tuple[str, ...], tuple[type, ...]] = {
    ("config",): (dict,), ("config", "model"): (str,), ("config", "model_args"): (str, dict),
    ("g2m",): (dict,), ("g2m", "data"): (dict,), ("g2m", "versions"): (dict,), ("g2m", "harness"): (str,),
    ("g2m", "task_version"): (str, int, float), ("configs",): (dict,), ("date",): (str, int, float),
    ("lm_eval_version",): (str,), ("transformers_version",): (str,), ("chat_template_sha",): (str,),
}
_TYPE_NAMES = {dict: "an object", str: "text", int: "a number", float: "a number", list: "a list"}
#: Dates as seconds since 1970: from then to the year 9999 (datetime's range).
MAX_TIMESTAMP = 253_402_300_799
MAX_RESULTS_BYTES = 64 << 20  # an lm-eval results file of the 90 G2M tasks is about 200 KB


def check_results(results: dict, name: str) -> None:
    """Refuse a results file whose fields have types no lm-eval run writes (one line naming the field), so nothing
    downstream meets a list where it expects an object."""
    for path, types in _FIELDS.items():
        value = results
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            continue
        if not isinstance(value, types) or isinstance(value, bool):
            want = " or ".join(dict.fromkeys(_TYPE_NAMES[t] for t in types))
            raise RunError(f"{name}: {'.'.join(path)} is {_TYPE_NAMES.get(type(value), type(value).__name__)}, "
                           f"not {want}")
    for task, cfg in (results.get("configs") or {}).items():
        gen = cfg.get("generation_kwargs") if isinstance(cfg, dict) else None
        if not isinstance(cfg, dict) or not isinstance(gen, (dict, type(None))):
            raise RunError(f"{name}: configs.{str(task)[:80]} is not an lm-eval task config")
    date = results.get("date")
    if isinstance(date, (int, float)) and not 0 <= date <= MAX_TIMESTAMP:
        raise RunError(f"{name}: date {date!r} is not a time between 1970 and 9999")


def load_vlmevalkit(path: Path) -> Run:
    """A VLMEvalKit prediction file (for the TSV of ``g2m export vlmevalkit``) as a run: each row's target comes from
    its id (regenerated from its seed, never read from the file), its text from the ``prediction`` column. A row the
    spreadsheet cut is kept apart in ``Run.cut``: it is neither scored nor counted as the model's parse failure."""
    from harness_tasks.with_vlmevalkit.files import DATASET_NAME, read_predictions

    truth = zero_shot_truth()
    try:
        predictions = read_predictions(path)
    except G2MError as e:
        raise RunError(str(e)) from None
    samples, seen, cut = [], set(), []
    for rid, text, failed, was_cut in predictions.rows:
        t = truth.get(rid)
        if t is None:
            raise RunError(f"{path.name}: unknown G2M id {rid[:80]!r}")
        if rid in seen:
            raise RunError(f"{path.name}: id {rid} appears more than once")
        seen.add(rid)
        if was_cut and not failed:
            cut.append((rid, len(text)))
            continue
        samples.append(Sample(rid, t.grid_size, t.num_colors, truth_matrix(t), "" if failed else text,
                              finish_reason=REQUEST_FAILED if failed else None))
    if not samples:
        raise RunError(f"{path.name}: no predictions" + (f" ({len(cut):,} cut by the .xlsx format; use the .tsv)"
                                                          if cut else ""))
    model = path.stem[: -len(f"_{DATASET_NAME}")] if path.stem.endswith(f"_{DATASET_NAME}") else path.stem
    versions = {k: v for k, v in predictions.versions.items() if v}
    results = {"config": {"model": "vlmevalkit", "model_args": f"model={model}"},
               "g2m": {"harness": "vlmevalkit", "task_version": predictions.task_version, "versions": versions,
                       "data": {"source": "VLMEvalKit TSV from g2m export vlmevalkit",
                                "content_sha256": predictions.content_sha256}}}
    return Run(path.parent, path, results, samples, cut=cut)


def _prediction_file(folder: Path) -> Path:
    """The VLMEvalKit prediction file inside a folder that holds no lm-eval results (its outputs folder), or a
    one-line error saying what to pass."""
    from harness_tasks.with_vlmevalkit.files import find_prediction_file

    try:
        return find_prediction_file(folder)
    except G2MError as e:
        raise RunError(str(e)) from None


def missing_samples(results: dict, date: str, logged: dict[str, int], cut: set[str]) -> list[str]:
    """What the run's record promises and its samples files do not hold, one line per task: a missing file, fewer
    (or more) samples than recorded, a last line cut short. The record is ``g2m.samples`` (``g2m eval`` writes it)
    or lm-eval's own ``n-samples``; every task with results must have its samples."""
    recorded = (results.get("g2m") or {}).get("samples")
    if not isinstance(recorded, dict):
        recorded = {t: v.get("effective") for t, v in (results.get("n-samples") or {}).items() if isinstance(v, dict)}
    problems = []
    for task in sorted(t for t in {*(results.get("results") or {}), *recorded} if task_info(str(t))):
        want, got = recorded.get(task), logged.get(task)
        if got is None:
            problems.append(f"{task}: its samples file (samples_{task}_{date}.jsonl) is missing")
        elif task in cut:
            problems.append(f"{task}: the last line of its samples file is cut short")
        elif type(want) is int and got != want:
            problems.append(f"{task}: {got:,} of the {want:,} samples the run recorded are logged")
    return problems


def load_run(path: str | Path, allow_partial: bool = False) -> Run:
    """The newest run in ``path``: its results and every sample, each checked; a bad line is named, never skipped.
    ``path`` may also be a VLMEvalKit prediction file (``<model>_Grid2Matrix.xlsx``/``.tsv``/``.csv``/``.json``), or
    a folder of VLMEvalKit's outputs that holds exactly one.

    A sample logged twice (the same id) is counted once when both copies agree, and refused when they differ. A run
    whose samples files do not match what it recorded (``missing_samples``) is refused, naming the first task and
    what is missing, unless ``allow_partial``: then it is read, and ``Run.incomplete`` says what is missing.
    """
    if Path(path).is_file():
        return load_vlmevalkit(Path(path))
    try:
        folder = locate(path)
    except NoResults:  # a VLMEvalKit outputs folder: its one prediction file
        return load_vlmevalkit(_prediction_file(Path(path)))
    results_path = _results_files(folder)[-1]
    date = _RESULTS.fullmatch(results_path.name).group("date")
    if not results_path.is_file():
        raise RunError(f"{results_path.name}: not a regular file")
    try:
        results = read_json(results_path, MAX_RESULTS_BYTES, "lm-eval results file")
    except (ValueError, RecursionError, UnicodeDecodeError) as e:
        raise RunError(f"{results_path.name}: not readable lm-eval results ({type(e).__name__}: {e})") from None
    if not isinstance(results, dict):
        raise RunError(f"{results_path.name}: not readable lm-eval results (not a JSON object)")
    check_results(results, results_path.name)
    files = sorted(f for f in folder.glob(f"samples_g2m_*_{date}.jsonl")
                   if task_info(f.name[len("samples_"):-len(f"_{date}.jsonl")]))
    if not files:
        raise RunError(f"{folder} has no G2M samples for the run of {date}; evaluate with --log_samples (g2m eval always does)")
    samples: list[Sample] = []
    where: dict[tuple[str, str], tuple[str, int, str]] = {}
    for f in [results_path, *files]:
        if not f.is_file():  # a FIFO or a device would block or never end
            raise RunError(f"{f.name}: not a regular file")
    truth = zero_shot_truth()
    logged: dict[str, int] = {}
    cut: set[str] = set()
    for f in files:
        task = f.name[len("samples_"):-len(f"_{date}.jsonl")]
        task_n, task_c, protocol = task_info(task)
        ids: set[str] = set()
        with open(f, "rb") as fh:
            line_no = 0
            try:
                for line_no, raw in enumerate(fh, 1):
                    if not raw.endswith(b"\n"):
                        cut.add(task)
                        break
                    line = raw.decode("utf-8")
                    if not line.strip():
                        continue
                    s = _sample(line)
                    s.protocol = protocol
                    _check_against_release(s, task_n, task_c, truth)
                    ids.add(s.id)
                    key = (protocol, s.id)
                    if key in where:
                        first = where[key]
                        if first[2] != s.output:
                            raise ValueError(f"id {s.id} was logged before, at {first[0]}:{first[1]}, with another output")
                        continue
                    where[key] = (f.name, line_no, s.output)
                    samples.append(s)
            except (ValueError, RecursionError, UnicodeDecodeError) as e:
                raise RunError(f"{f.name}:{line_no}: not a G2M sample ({e})") from None
        logged[task] = len(ids)
    incomplete = missing_samples(results, date, logged, cut)
    if incomplete and not allow_partial:
        more = f" (and {len(incomplete) - 1} more task(s))" if len(incomplete) > 1 else ""
        raise RunError(f"{folder}: the run of {date} is incomplete: {incomplete[0]}{more}; run the same g2m eval "
                       "again to finish it, or pass --allow-partial to read what is there (marked partial)")
    if not samples:
        raise RunError(f"{folder}: the samples files of the run of {date} hold no samples")
    return Run(folder, results_path, results, samples, tuple(incomplete))
