"""g2m report on a real lm-eval run: re-scored tables agree with lm-eval's own, figures and files are written."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import g2m
from PIL import Image

from leaderboard.report import ReportOptions, build_report
from leaderboard.runs import RunError, load_run

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


def _probe_result(folder, n, c, acc):
    """A probe result file as ``g2m probe`` writes it (the report reads only these fields)."""
    d = folder / f"probe_n{n}_c{c}"
    d.mkdir(parents=True)
    (d / "result.json").write_text(json.dumps({"format": "g2m-probe-result/1", "grid_size": n, "num_colors": c,
                                               "encoder": {"name": "tiny/enc", "readout": "vision"},
                                               "test": {"cell_accuracy": acc}}))


def test_report_tables_agree_with_lm_eval_and_files_are_written(random_run, tmp_path):
    probes = tmp_path / "probes"
    _probe_result(probes, 20, 3, 0.99)
    _probe_result(probes, 32, 10, 0.97)
    rep = build_report(random_run, tmp_path / "report", probes, ReportOptions(overlay_patch=16))
    lm_eval_results = json.loads(load_run(random_run).results_path.read_text())["results"]
    for task in rep["tasks"]:
        theirs = lm_eval_results[f"g2m_n{task['grid_size']:02d}_c{task['num_colors']}"]
        assert task["cell_accuracy"] == pytest.approx(theirs["cell_accuracy,none"])
        assert task["exact_match"] == pytest.approx(theirs["exact_match,none"])
        lo, hi = task["cell_accuracy_ci"]
        assert lo <= task["cell_accuracy"] <= hi
    out = tmp_path / "report"
    for name in ("index.html", "index.md", "summary.csv", "report.json", "accuracy_vs_n.png", "confusion.png",
                 "patch_alignment.png", "heatmap_n09.png", "heatmap_n64.png"):
        assert (out / name).is_file(), name
    with Image.open(out / "heatmap_n64.png") as im:
        assert im.format == "PNG"
    assert len(list(csv.reader(open(out / "summary.csv")))) == 46
    gap = {(g["grid_size"], g["num_colors"]): g for g in rep["digital_agnosia_gap"]}
    assert set(gap) == {(20, 3), (32, 10)} and gap[(20, 3)]["gap"] == pytest.approx(0.99 - gap[(20, 3)]["end_to_end_cell_accuracy"])
    html = (out / "index.html").read_text()
    assert "Digital Agnosia gap" in html and "<img src=\"heatmap_n09.png\"" in html
    assert [b["bin"] for b in rep["patch_alignment"][0]["bins"]][0] == "0 (inside one patch)"
    assert sum(map(sum, rep["confusion"])) == sum(t["grid_size"] ** 2 * t["n"] for t in rep["tasks"])


def test_report_cli_and_its_errors(random_run, tmp_path):
    res = g2m("report", str(random_run.parent), "--out", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert "cell accuracy" in res.stdout and (tmp_path / "r" / "index.html").is_file()
    bad = g2m("report", str(tmp_path / "empty"))
    assert bad.returncode == 2 and "is not a folder" in bad.stderr
    (tmp_path / "empty").mkdir()
    bad = g2m("report", str(tmp_path / "empty"))
    assert bad.returncode == 2 and "holds no lm-eval results" in bad.stderr
    none = g2m("report", str(random_run), "--probes", str(tmp_path / "empty"))
    assert none.returncode == 2 and "no g2m probe results" in none.stderr


def test_a_corrupt_samples_line_is_named(random_run, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(random_run, copy)
    f = next(copy.glob("samples_g2m_n05_c5_*.jsonl"))
    f.write_text(f.read_text() + "{not json\n")
    with pytest.raises(RunError, match=f"{f.name}:3"):
        load_run(copy)
