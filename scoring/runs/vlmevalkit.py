"""VLMEvalKit: the TSV it reads as a custom dataset, and its prediction file read back for G2M's scoring.

VLMEvalKit is not on PyPI and scores a custom free-form dataset only inside its own package, so G2M meets it at the
files: ``g2m export vlmevalkit`` writes ``Grid2Matrix.tsv`` (one row per zero_shot row: ``index``, the release's PNG
bytes in base64, ``image_path`` = ``<index>-<content hash>.png`` so VLMEvalKit dumps lossless PNGs and never JPEGs,
the prompt as ``question``, the canonical ``answer``, G2M's ``g2m_id`` and the versions that wrote it), and
``read_predictions`` reads the ``<model>_Grid2Matrix.{xlsx,tsv,csv,json}`` it writes after ``run.py`` (every input
column is kept, plus ``prediction``). Its API wrappers' failure text ("Failed to obtain answer") is a failed request,
never an answer. Pickle fallbacks (``.pkl``) are refused: a pickle runs code when read.

Two traps of VLMEvalKit's files are caught here. It writes each image to ``$LMUData/images/<dataset>/<image_path>``
once and reuses whatever file is there; naming each image by its content hash means a folder left by an older export
is never reused for different pixels. Its default ``.xlsx`` output cuts any cell at Excel's limit of 32,767
characters (with only a warning), so a long answer arrives cut by the spreadsheet, not by the model: such a row is
flagged (``Prediction.cut``), never read as the model's parse failure.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from dataset_builder import __version__
from dataset_builder.grids.spec import cell_key
from g2m_base.bounded_json import read_json
from g2m_base.errors import UsageError
from g2m_base.files import atomic_open, ensure_dir, output_file
from scoring.catalog import TASK_VERSION
from scoring.parsing import format_answer

DATASET_NAME = "Grid2Matrix"  # no "openended" (Qwen presets would append a short-answer hint) and no A/B columns
FAILED_MARK = "Failed to obtain answer"
MAX_PREDICTION_FILE_BYTES = 1 << 29  # 512 MiB
EXCEL_CELL_LIMIT = 32_767  # characters in one .xlsx cell: VLMEvalKit's default output cuts longer predictions there
SUFFIXES = (".xlsx", ".tsv", ".csv", ".json")
COLUMNS = ("index", "image", "image_path", "question", "answer", "category", "g2m_id", "grid_size", "num_colors",
           "g2m_data_sha256", "g2m_version", "g2m_task_version")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
MAX_STATUS_BYTES = 1 << 20  # VLMEvalKit's status.json of one run is a few KB


class Prediction(NamedTuple):
    """One row of a prediction file: the G2M id, the text, whether the request failed, and whether the spreadsheet
    format cut the text (an ``.xlsx`` cell of exactly Excel's limit: the model's real answer was longer)."""

    id: str
    text: str
    request_failed: bool
    cut: bool = False


@dataclass(frozen=True)
class PredictionFile:
    """A prediction file read once: its rows, and what the exported TSV recorded about the data and the versions."""

    path: Path
    rows: list[Prediction]
    content_sha256: str | None  # the content hash of the data the TSV was exported from (every row carries it)
    versions: dict  # grid2matrix (the version that exported the TSV) and vlmevalkit (its commit, when known)
    task_version: str | None

    @property
    def cut(self) -> list[Prediction]:
        return [p for p in self.rows if p.cut]

    @property
    def model(self) -> str:
        """The model, as VLMEvalKit names the file: ``<model>_Grid2Matrix.<suffix>``."""
        stem = self.path.stem
        return stem[: -len(f"_{DATASET_NAME}")] if stem.endswith(f"_{DATASET_NAME}") else stem

    @property
    def results(self) -> dict:
        """What the file says about its run, in the shape of an lm-eval results file (what reports and submissions
        read): the model, the harness, the task version, the versions and the data the TSV was exported from."""
        versions = {k: v for k, v in self.versions.items() if v}
        return {"config": {"model": "vlmevalkit", "model_args": f"model={self.model}"},
                "g2m": {"harness": "vlmevalkit", "task_version": self.task_version, "versions": versions,
                        "data": {"source": "VLMEvalKit TSV from g2m export vlmevalkit",
                                 "content_sha256": self.content_sha256}}}


def image_name(index: int, png: bytes) -> str:
    """``<index>-<16 hex of the PNG's sha256>.png``: a new export with other pixels never meets an old file."""
    return f"{index}-{hashlib.sha256(png).hexdigest()[:16]}.png"


def tsv_rows(rows, content_sha256: str = "") -> Iterator[dict]:
    """The TSV's rows from zero_shot rows (``image`` as {"bytes": PNG}), numbered from 1 in release order; every row
    carries the content hash of the data it came from, so the prediction file says which data the model saw."""
    for i, row in enumerate(rows, 1):
        png = row["image"]["bytes"] if isinstance(row["image"], dict) else row["image"]
        if not bytes(png[:8]) == b"\x89PNG\r\n\x1a\n":
            raise UsageError(f"row {row['id']}: the image is not PNG bytes")
        png = bytes(png)
        yield {"index": i, "image": base64.b64encode(png).decode("ascii"), "image_path": image_name(i, png),
               "question": row["prompt"], "answer": format_answer(row["matrix"]),
               "category": cell_key(row["grid_size"], row["num_colors"]), "g2m_id": row["id"],
               "grid_size": row["grid_size"], "num_colors": row["num_colors"], "g2m_data_sha256": content_sha256,
               "g2m_version": __version__, "g2m_task_version": str(TASK_VERSION)}


def write_tsv(rows, out: Path, content_sha256: str = "") -> int:
    """Write the TSV atomically (its folder made if missing); returns the number of rows."""
    out = output_file(out)
    ensure_dir(out.parent)
    n = 0
    # a full disk, a bad row, Ctrl-C: no partial file is left holding the space
    with atomic_open(out, "w", out.with_name(f".{out.name}.partial"), newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        w.writeheader()
        for r in tsv_rows(rows, content_sha256):
            w.writerow(r)
            n += 1
    return n


def _records(path: Path) -> list[dict]:
    """The rows of a prediction file; a file that cannot be read is one line naming it, never a traceback."""
    try:
        return _read_records(path)
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001 - csv, json, zip and openpyxl each fail in their own ways on bad files
        raise UsageError(f"{path.name}: not a readable {path.suffix.lower() or 'prediction'} file "
                         f"({type(e).__name__}: {str(e)[:200]})") from None


def _read_records(path: Path) -> list[dict]:
    suffix = path.suffix.lower()
    if suffix == ".pkl":
        raise UsageError(f"{path.name}: a pickle is never read (it runs code when loaded); rerun VLMEvalKit with "
                         "PRED_FORMAT=tsv")
    if not path.is_file():
        raise UsageError(f"{path} is not a file")
    if path.stat().st_size > MAX_PREDICTION_FILE_BYTES:
        raise UsageError(f"{path.name} is over {MAX_PREDICTION_FILE_BYTES >> 20} MiB")
    if suffix in (".tsv", ".csv"):
        csv.field_size_limit(MAX_PREDICTION_FILE_BYTES)
        with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: Excel starts UTF-8 files with a BOM
            return list(csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ","))
    if suffix == ".json":
        data = read_json(path, MAX_PREDICTION_FILE_BYTES, "VLMEvalKit prediction file")
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise UsageError(f"{path.name}: expected a JSON list of records")
        return data
    if suffix == ".xlsx":
        try:
            import openpyxl
        except ImportError:
            raise UsageError(f"{path.name}: reading .xlsx needs openpyxl (pip install openpyxl), or rerun "
                             "VLMEvalKit with PRED_FORMAT=tsv") from None
        sheet = openpyxl.load_workbook(io.BytesIO(path.read_bytes()), read_only=True, data_only=True).active
        rows = sheet.iter_rows(values_only=True)
        header = [str(h) for h in next(rows, ())]
        return [dict(zip(header, r, strict=False)) for r in rows]
    raise UsageError(f"{path.name}: not a VLMEvalKit prediction file (.xlsx, .tsv, .csv or .json)")


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""  # pandas writes an empty prediction as NaN
    return str(value)


def prediction_files(folder: str | Path) -> list[Path]:
    """VLMEvalKit's prediction files for G2M under an outputs folder (newest last; a link to a file counted once)."""
    found = {}
    for p in Path(folder).rglob(f"*_{DATASET_NAME}.*"):
        if p.suffix.lower() in SUFFIXES and p.is_file():
            found.setdefault(p.resolve(), p)
    return sorted(found.values(), key=lambda p: (p.stat().st_mtime, str(p)))


def find_prediction_file(folder: str | Path) -> Path:
    """The one prediction file under a VLMEvalKit outputs folder; several or none is a one-line error saying what to
    pass instead."""
    files = prediction_files(folder)
    if len(files) == 1:
        return files[0]
    if not files:
        raise UsageError(f"{folder} holds no lm-eval results (results_*.json) and no VLMEvalKit prediction file "
                         f"(*_{DATASET_NAME}.xlsx/.tsv); pass a run folder of g2m eval or the prediction file itself")
    shown = ", ".join(str(p) for p in files[-5:])
    raise UsageError(f"{folder} holds {len(files)} VLMEvalKit prediction files ({shown}); pass one of them")


def _version_of(path: Path) -> str | None:
    """VLMEvalKit's commit, from the ``status.json`` it writes beside the predictions of a run, when there is one."""
    status = path.parent / "status.json"
    if not status.is_file():
        return None
    try:
        data = read_json(status, MAX_STATUS_BYTES, "VLMEvalKit status.json")
    except (UsageError, ValueError, OSError, RecursionError):
        return None  # the version is a label: an unreadable status never stops a report
    commit = data.get("commit") if isinstance(data, dict) else None
    return commit if isinstance(commit, str) and _COMMIT.match(commit) else None


def _one(records: list[dict], column: str) -> str | None:
    values = {_text(r.get(column)).strip() for r in records}
    return values.pop() if len(values) == 1 and "" not in values else None


def read_predictions(path: str | Path) -> PredictionFile:
    """Every row of a VLMEvalKit prediction file as (G2M row id, prediction text, request failed, cut), with what the
    exported TSV recorded (data hash, versions). An id that appears twice is refused: which answer counts is unknown."""
    path = Path(path)
    records = _records(path)
    if not records or "prediction" not in records[0] or "g2m_id" not in records[0]:
        raise UsageError(f"{path.name}: no 'g2m_id' and 'prediction' columns; is it VLMEvalKit's prediction file for "
                         f"the TSV of `g2m export vlmevalkit`?")
    spreadsheet = path.suffix.lower() == ".xlsx"
    out, seen = [], set()
    for k, r in enumerate(records, 2):
        rid = _text(r.get("g2m_id")).strip()
        if not rid:
            raise UsageError(f"{path.name}: row {k} has no g2m_id")
        if rid in seen:
            raise UsageError(f"{path.name}: id {rid} appears more than once")
        seen.add(rid)
        text = _text(r.get("prediction"))
        out.append(Prediction(rid, text, FAILED_MARK in text, spreadsheet and len(text) >= EXCEL_CELL_LIMIT))
    versions = {"grid2matrix": _one(records, "g2m_version"), "vlmevalkit": _version_of(path)}
    return PredictionFile(path, out, _one(records, "g2m_data_sha256"), versions, _one(records, "g2m_task_version"))
