"""Finding a run: the model folder that holds lm-eval results (or the VLMEvalKit prediction file of an outputs folder),
one of its ``results_<date>.json`` (lm-eval keeps every run of a model side by side, told apart only by the date in
the name: the one the user names with ``--run``, else the newest, and the caller says which and that there are
others), read and checked field by field, and the samples files of the same run."""

from __future__ import annotations

from pathlib import Path

from g2m_base.bounded_json import read_json
from g2m_base.errors import G2MError
from scoring.catalog import task_info
from scoring.runs.layout import MAX_RESULTS_BYTES, results_date, results_files, run_folders
from scoring.runs.run import NoResults, RunError

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


def locate(path: str | Path) -> Path:
    """The model folder holding results: ``path`` itself, or its only child that holds some."""
    folder = Path(path)
    if not folder.is_dir():
        raise RunError(f"{folder} is not a folder")
    children = run_folders(folder)
    if len(children) == 1:
        return children[0]
    if not children:
        raise NoResults(f"{folder} holds no lm-eval results (results_*.json); run g2m eval or lm_eval --output_path")
    raise RunError(f"{folder} holds runs of several models ({', '.join(c.name for c in children)}); pick one")


def prediction_file(folder: Path) -> Path:
    """The VLMEvalKit prediction file inside a folder that holds no lm-eval results (its outputs folder), or a
    one-line error saying what to pass."""
    from scoring.runs.vlmevalkit import find_prediction_file

    try:
        return find_prediction_file(folder)
    except G2MError as e:
        raise RunError(str(e)) from None


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


def choose_results(folder: Path, run: str | None = None) -> tuple[Path, list[str]]:
    """The results file of the run ``run`` names in ``folder`` (its date as in ``results_<date>.json``, that file's
    name, or a path to it), else the newest; and the dates of the folder's other runs. A name that matches no run is
    one line listing the runs there are."""
    files = results_files(folder)
    dates = [results_date(p) for p in files]
    if run is None:
        chosen = files[-1]
    else:
        name = Path(run).name
        match = [p for p, d in zip(files, dates, strict=True) if name in (d, p.name)]
        if Path(run).parent != Path(".") and match and Path(run).resolve().parent != folder.resolve():
            match = []  # a path to a results file of another folder: not this folder's run
        if not match:
            raise RunError(f"{folder} holds no run {run!r}; its runs: {', '.join(dates)} (give --run one of these "
                           "dates, or a results_<date>.json file of this folder)")
        chosen = match[0]
    return chosen, [d for p, d in zip(files, dates, strict=True) if p != chosen]


def read_results(results_path: Path) -> tuple[Path, str, dict]:
    """A results file of a model folder, its date and its record, read and checked."""
    date = results_date(results_path)
    if not results_path.is_file():
        raise RunError(f"{results_path.name}: not a regular file")
    try:
        results = read_json(results_path, MAX_RESULTS_BYTES, "lm-eval results file")
    except (ValueError, RecursionError, UnicodeDecodeError) as e:
        raise RunError(f"{results_path.name}: not readable lm-eval results ({type(e).__name__}: {e})") from None
    if not isinstance(results, dict):
        raise RunError(f"{results_path.name}: not readable lm-eval results (not a JSON object)")
    check_results(results, results_path.name)
    return results_path, date, results


def task_of(samples_file: Path, date: str) -> str:
    """The task a ``samples_<task>_<date>.jsonl`` file logged."""
    return samples_file.name[len("samples_"):-len(f"_{date}.jsonl")]


def samples_files(folder: Path, date: str) -> list[Path]:
    """The G2M samples files of the run of ``date``, each a regular file (a FIFO or a device would block or never
    end); none is an error saying how to log them."""
    files = sorted(f for f in folder.glob(f"samples_g2m_*_{date}.jsonl") if task_info(task_of(f, date)))
    if not files:
        raise RunError(f"{folder} has no G2M samples for the run of {date}; evaluate with --log_samples (g2m eval "
                       f"always does)")
    for f in files:
        if not f.is_file():
            raise RunError(f"{f.name}: not a regular file")
    return files
