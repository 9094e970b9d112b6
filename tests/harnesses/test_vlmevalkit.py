"""VLMEvalKit's files as VLMEvalKit really writes them: an .xlsx cell cut at Excel's limit (pandas' Excel writer, with
xlsxwriter as VLMEvalKit's ``dump`` uses it and with openpyxl), a .tsv written as its ``dump_tsv`` writes one, its
``status.json``, its outputs folder, and its image folder reused across exports.

The rows are real zero_shot ids; every target is regenerated from its seed and every answer scored by G2M's parser.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.render import render_rgb
from g2m_base.errors import UsageError
from scoring.parsing import format_answer
from scoring.rescoring.load import load_run
from scoring.rescoring.rescore import truth_matrix, zero_shot_truth
from scoring.runs.run import RunError
from scoring.runs.vlmevalkit import EXCEL_CELL_LIMIT, find_prediction_file, read_predictions, tsv_rows
from tests.support.helpers import g2m
from tests.support.lazy import lazy

pd = lazy("pandas")  # a dependency of datasets; imported by the first test that reads a table
REASONING = 44_752  # the length of the answer that was cut in the real run: long reasoning, then the right grid
IDS = ["zs-n03-c3-0000", "zs-n09-c5-0001", "zs-n64-c10-0000", "zs-n64-c3-0001", "zs-n05-c10-0002"]
LONG = {"zs-n64-c10-0000"}  # this answer reasons at length first: 44,752 + ~12,300 characters


def _answer(rid: str) -> str:
    grid = format_answer(truth_matrix(zero_shot_truth()[rid]))
    if rid in LONG:
        return "<think>" + ("Checking each row against the image. " * 2000)[:REASONING] + "</think>\n" + grid
    return grid


def _frame(extra: dict | None = None) -> pd.DataFrame:
    """What VLMEvalKit's inference writes: the TSV's columns but the image, plus ``prediction``."""
    rows = []
    for k, rid in enumerate(IDS, 1):
        t = zero_shot_truth()[rid]
        rows.append({"index": k, "image_path": f"{k}-0123456789abcdef.png", "question": "...", "answer": "...",
                     "category": "", "g2m_id": rid, "grid_size": t.grid_size, "num_colors": t.num_colors,
                     "g2m_data_sha256": "ab" * 32, "g2m_version": "0.1.0", "g2m_task_version": "2.2",
                     "prediction": _answer(rid), **(extra or {})})
    return pd.DataFrame(rows)


def _xlsx(path, engine: str) -> None:
    """pandas' Excel writer, as VLMEvalKit's ``dump`` calls it (xlsxwriter, formulas off), or with openpyxl."""
    kwargs = {"engine_kwargs": {"options": {"strings_to_formulas": False}}} if engine == "xlsxwriter" else {}
    with pytest.warns(UserWarning, match="truncated to 32767"):  # pandas' only word about it
        with pd.ExcelWriter(path, engine=engine, **kwargs) as writer:
            _frame().to_excel(writer, index=False)


ENGINES = [pytest.param(e, marks=pytest.mark.skipif(not importlib.util.find_spec(e), reason=f"{e} is not installed"))
           for e in ("xlsxwriter", "openpyxl")]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_xlsx_cell_cut_at_excels_limit_is_flagged_and_never_a_parse_failure(tmp_path, engine):
    path = tmp_path / "Reasoner_Grid2Matrix.xlsx"
    _xlsx(path, engine)
    rows = {p.id: p for p in read_predictions(path).rows}
    assert len(rows["zs-n64-c10-0000"].text) == EXCEL_CELL_LIMIT  # the spreadsheet really cut it
    assert [rid for rid, p in rows.items() if p.cut] == ["zs-n64-c10-0000"]
    run = load_run(path)
    assert run.cut == [("zs-n64-c10-0000", EXCEL_CELL_LIMIT)]
    assert sorted(s.id for s in run.samples) == sorted(set(IDS) - LONG)  # not a sample: nothing of it is scored


@pytest.mark.parametrize(("suffix", "cut"), [(".tsv", False), (".csv", False), (".json", False)])
def test_the_same_answer_in_a_text_format_is_whole_and_read(tmp_path, suffix, cut):
    """VLMEvalKit's dump_tsv/dump_csv/dump_json keep every character: the long answer parses, exact."""
    path = tmp_path / f"Reasoner_Grid2Matrix{suffix}"
    frame = _frame()
    if suffix == ".json":
        path.write_text(json.dumps(frame.to_dict("records")))
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    run = load_run(path)
    assert run.cut == [] and len(run.samples) == len(IDS)
    assert max(len(s.output) for s in run.samples) > REASONING


def test_a_text_file_answer_of_exactly_the_excel_limit_is_not_flagged(tmp_path):
    path = tmp_path / "M_Grid2Matrix.tsv"
    _frame({"prediction": "x" * EXCEL_CELL_LIMIT}).to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    assert not any(p.cut for p in read_predictions(path).rows)  # only a spreadsheet cuts at that length


def test_versions_and_data_hash_come_from_the_tsv_columns_and_vlmevalkits_status(tmp_path):
    run_dir = tmp_path / "outputs" / "M" / "T20261201-120209"
    run_dir.mkdir(parents=True)
    _frame().to_csv(run_dir / "M_Grid2Matrix.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    (run_dir / "status.json").write_text(json.dumps({"eval_id": run_dir.name, "commit": "e8e78f05"}))
    run = load_run(run_dir / "M_Grid2Matrix.tsv")
    g2m_block = run.results["g2m"]
    assert g2m_block["versions"] == {"grid2matrix": "0.1.0", "vlmevalkit": "e8e78f05"}
    assert g2m_block["task_version"] == "2.2" and g2m_block["data"]["content_sha256"] == "ab" * 32
    (run_dir / "status.json").write_text("{not json")  # a broken status never stops a report: no version, that's all
    assert load_run(run_dir / "M_Grid2Matrix.tsv").results["g2m"]["versions"] == {"grid2matrix": "0.1.0"}


def test_an_outputs_folder_finds_its_one_prediction_file_or_says_which_to_pass(tmp_path):
    outputs = tmp_path / "outputs"
    first = outputs / "M" / "T20261201-120209"
    first.mkdir(parents=True)
    (first / "status.json").write_text("{}")
    with pytest.raises(RunError, match="no lm-eval results .* and no VLMEvalKit prediction file"):
        load_run(outputs)
    _frame().to_csv(first / "M_Grid2Matrix.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    (outputs / "M" / "M_Grid2Matrix.tsv").symlink_to(first / "M_Grid2Matrix.tsv")  # a link to it is the same file
    assert len(load_run(outputs).samples) == len(IDS)
    assert find_prediction_file(outputs / "M").resolve() == (first / "M_Grid2Matrix.tsv").resolve()
    second = outputs / "M" / "T20261202-090000"
    second.mkdir()
    _frame().to_csv(second / "M_Grid2Matrix.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    with pytest.raises(UsageError, match="holds 2 VLMEvalKit prediction files .*; pass one of them"):
        find_prediction_file(outputs)


def _png(matrix) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(render_rgb(np.asarray(matrix))).save(buf, format="PNG")
    return buf.getvalue()


def test_image_names_follow_the_pixels_so_an_old_image_folder_is_never_reused(tmp_path):
    """VLMEvalKit writes $LMUData/images/<dataset>/<image_path> once and reuses any file there: a new export with
    other pixels at the same index must name another file."""
    a, b = _png([[0, 1], [1, 0]]), _png([[1, 0], [0, 1]])
    row = {"id": "zs-n02", "prompt": "p", "matrix": [[0, 1], [1, 0]], "grid_size": 2, "num_colors": 3}
    old = next(tsv_rows([row | {"image": {"bytes": a}}]))
    new = next(tsv_rows([row | {"image": {"bytes": b}}]))
    again = next(tsv_rows([row | {"image": {"bytes": a}}]))
    assert old["index"] == new["index"] == 1 and old["image_path"] != new["image_path"]
    assert old["image_path"] == again["image_path"] and old["image_path"].startswith("1-")
    assert old["g2m_version"] and old["g2m_task_version"]


@pytest.mark.slow
def test_report_and_submit_on_a_cut_xlsx(tmp_path):
    """`g2m report` names the cut row, keeps it out of the parse-failure count and says how many requests failed;
    `g2m submit` refuses the .xlsx, even with --allow-partial, and takes the .tsv."""
    xlsx = tmp_path / "Reasoner_Grid2Matrix.xlsx"
    _xlsx(xlsx, "openpyxl")
    res = g2m("report", str(xlsx), "--out", str(tmp_path / "report"))
    assert res.returncode == 0, res.stderr
    assert ("parse failed 0.000" in res.stdout
            and "request failed 0.000 (0 without an answer) over 4 samples" in res.stdout)
    assert "1 predictions cut by the .xlsx format at 32,767 characters, not scored: zs-n64-c10-0000" in res.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["cut_by_spreadsheet"] == [{"id": "zs-n64-c10-0000", "chars": EXCEL_CELL_LIMIT}]
    assert report["overall"]["parse_failed"] == 0 and report["overall"]["exact_match"] == 1.0
    assert "zs-n64-c10-0000 (32,767 characters)" in (tmp_path / "report" / "index.html").read_text()
    for extra in ([], ["--allow-partial"]):
        refused = g2m("submit", str(xlsx), "--out", str(tmp_path / "s.json"), "--no-input", *extra)
        assert refused.returncode != 0 and "the spreadsheet cut them, not the model" in refused.stderr
        assert "submit the .tsv" in refused.stderr and not (tmp_path / "s.json").exists()
    tsv = tmp_path / "Reasoner_Grid2Matrix.tsv"
    _frame().to_csv(tsv, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    ok = g2m("submit", str(tsv), "--out", str(tmp_path / "s.json"), "--no-input", "--allow-partial")
    assert ok.returncode == 0, ok.stderr
    records = json.loads((tmp_path / "s.json").read_text())["records"]
    assert {r["id"]: len(r["output"]) for r in records}["zs-n64-c10-0000"] > REASONING


@pytest.mark.slow
def test_failed_requests_are_counted_in_the_summary_and_submit_says_how_vlmevalkit_retries(tmp_path):
    tsv = tmp_path / "M_Grid2Matrix.tsv"
    frame = _frame()
    frame.loc[1, "prediction"] = "Failed to obtain answer via API. HTTP 500"  # VLMEvalKit's failure text
    frame.to_csv(tsv, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    res = g2m("report", str(tsv), "--out", str(tmp_path / "r"))
    assert "request failed 0.200 (1 without an answer) over 5 samples" in res.stdout, res.stderr
    refused = g2m("submit", str(tsv), "--out", str(tmp_path / "s.json"), "--no-input")
    assert refused.returncode == 2 and not (tmp_path / "s.json").exists()
    assert "run VLMEvalKit's run.py again with the same arguments and --reuse" in refused.stderr
    assert "g2m eval" not in refused.stderr
    partial = g2m("submit", str(tsv), "--out", str(tmp_path / "s.json"), "--no-input", "--allow-partial")
    assert partial.returncode == 0, partial.stderr
    records = json.loads((tmp_path / "s.json").read_text())["records"]  # every answer but the failed request's
    assert {r["id"]: r["output"] for r in records} == {rid: _answer(rid) for rid in IDS if rid != IDS[1]}
    frame.loc[1, "prediction"] = _answer(IDS[1])
    frame.to_csv(tsv, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    short = g2m("submit", str(tsv), "--out", str(tmp_path / "s2.json"), "--no-input")
    assert "export every row (g2m export vlmevalkit" in short.stderr and "g2m eval" not in short.stderr
