"""The layout of a run folder, one home for every writer and reader of it (``g2m eval``, ``report``, ``submit``,
``validate``): lm-eval's ``results_<date>.json`` beside one ``samples_<task>_<date>.jsonl`` per task, every run of a
model side by side in one folder, told apart only by the date in the names.

A results file is named ``results_<date>.json`` exactly (``results_files`` checks each name: ``results_.json`` or a
``results_x.json.bak`` is not one); a run folder is a folder holding one, or the only child of a folder that does
(``run_folders``); a results file is read with at most ``MAX_RESULTS_BYTES`` (the 90 G2M tasks' file is ~200 KB).
"""

from __future__ import annotations

import re
from pathlib import Path

#: An lm-eval results file of the 90 G2M tasks is about 200 KB: anything past this is not one.
MAX_RESULTS_BYTES = 64 << 20
RESULTS_PATTERN = "results_*.json"
SAMPLES_PATTERN = "samples_*"
_RESULTS = re.compile(r"^results_(?P<date>.+)\.json$")


def results_name(date: str) -> str:
    return f"results_{date}.json"


def samples_name(task: str, date: str) -> str:
    return f"samples_{task}_{date}.jsonl"


def results_date(path: Path) -> str | None:
    """The date in a results file's name, or None when the name is not ``results_<date>.json``."""
    match = _RESULTS.fullmatch(Path(path).name)
    return match.group("date") if match else None


def results_files(folder: str | Path) -> list[Path]:
    """The results files of a run folder, oldest first (dates sort as text); none when it is not a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(RESULTS_PATTERN) if results_date(p) is not None)


def newest_results(folder: str | Path) -> Path | None:
    files = results_files(folder)
    return files[-1] if files else None


def run_folders(path: str | Path) -> list[Path]:
    """``path`` when it holds results; else each of its child folders that does (one: that is the run folder)."""
    folder = Path(path)
    if results_files(folder):
        return [folder]
    return sorted(p for p in folder.iterdir() if p.is_dir() and results_files(p)) if folder.is_dir() else []


def run_files(folder: str | Path) -> list[Path]:
    """Every file of every run in ``folder``: its results and samples files."""
    folder = Path(folder)
    return [*folder.glob(SAMPLES_PATTERN), *results_files(folder)]
