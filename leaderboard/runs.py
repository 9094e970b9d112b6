"""Read an lm-eval output folder: the newest ``results_<date>.json`` and the ``samples_<task>_<date>.jsonl`` files of
the same run (lm-eval keeps every run of a model side by side, told apart only by the date in the name)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dataset_builder.errors import G2MError
from harness_tasks.evaluate import model_name

_RESULTS = re.compile(r"^results_(?P<date>.+)\.json$")


class RunError(G2MError, ValueError):
    """The folder is not a usable lm-eval run of the G2M tasks."""


@dataclass
class Sample:
    id: str
    grid_size: int
    num_colors: int
    target: np.ndarray
    output: str


@dataclass
class Run:
    folder: Path
    results_path: Path
    results: dict
    samples: list[Sample]

    @property
    def model(self) -> str:
        cfg = self.results.get("config", {})
        return model_name(str(cfg.get("model", self.folder.name)), cfg.get("model_args"))


def _results_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("results_*.json") if _RESULTS.match(p.name))


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
        raise RunError(f"{folder} holds no lm-eval results (results_*.json); run g2m eval or lm_eval --output_path")
    raise RunError(f"{folder} holds runs of several models ({', '.join(c.name for c in children)}); pick one")


def load_run(path: str | Path) -> Run:
    folder = locate(path)
    results_path = _results_files(folder)[-1]
    date = _RESULTS.match(results_path.name).group("date")
    results = json.loads(results_path.read_text())
    samples: list[Sample] = []
    files = sorted(folder.glob(f"samples_g2m_n*_{date}.jsonl"))
    if not files:
        raise RunError(f"{folder} has no G2M samples for the run of {date}; evaluate with --log_samples (g2m eval always does)")
    for f in files:
        for line_no, line in enumerate(f.read_text().splitlines(), 1):
            try:
                row = json.loads(line)
                doc = row["doc"]
                samples.append(Sample(doc["id"], int(doc["grid_size"]), int(doc["num_colors"]),
                                      np.asarray(doc["matrix"], dtype=np.int64), str(row["resps"][0][0])))
            except (ValueError, KeyError, IndexError, TypeError) as e:
                raise RunError(f"{f.name}:{line_no}: not a G2M sample ({type(e).__name__}: {e})") from None
    return Run(folder, results_path, results, samples)
