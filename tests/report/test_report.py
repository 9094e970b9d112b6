"""g2m report on a real lm-eval run: re-scored tables agree with lm-eval's own, figures and files are written."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from xml.etree import ElementTree

import pytest
from PIL import Image

from report.report import ReportOptions, build_report
from report.report_page import FOLD_ROWS
from scoring.rescoring.load import load_run
from scoring.runs.run import RunError
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


def _probe_result(folder, n, c, acc, **encoder):
    """A probe result file as ``g2m probe`` writes it (the report reads only these fields)."""
    d = folder / f"probe_n{n}_c{c}"
    d.mkdir(parents=True)
    (d / "result.json").write_text(json.dumps({"format": "g2m-probe-result/1", "grid_size": n, "num_colors": c,
                                               "encoder": {"name": "tiny/enc", "readout": "vision", **encoder},
                                               "test": {"cell_accuracy": acc}}))


def _svg_texts(path) -> str:
    """Every text of an SVG figure, one a line, as a reader sees it (the file escapes quotes as XML does)."""
    return "\n".join(t.text or "" for t in ElementTree.parse(path).getroot().iter("{http://www.w3.org/2000/svg}text"))


def test_report_tables_agree_with_lm_eval_and_files_are_written(random_run, tmp_path):
    probes = tmp_path / "probes"
    _probe_result(probes, 20, 3, 0.99)
    _probe_result(probes, 32, 10, 0.97)
    rep = build_report(random_run, tmp_path / "report", probes,
                       ReportOptions(overlay_patch=16, compare_other_models=True))
    lm_eval_results = json.loads(load_run(random_run).results_path.read_text())["results"]
    for task in rep.document["tasks"]:
        theirs = lm_eval_results[f"g2m_n{task['grid_size']:02d}_c{task['num_colors']}"]
        assert task["cell_accuracy"] == pytest.approx(theirs["cell_accuracy,none"])
        assert task["exact_match"] == pytest.approx(theirs["exact_match,none"])
        lo, hi = task["cell_accuracy_ci"]
        assert lo <= task["cell_accuracy"] <= hi
    out = tmp_path / "report"
    for name in ("index.html", "index.md", "summary.csv", "report.json", "accuracy_vs_n.png", "confusion.png",
                 "patch_alignment.png", "heatmaps.png", "heatmaps.svg", "confusion.svg", "patch_alignment.svg"):
        assert (out / name).is_file(), name
    for name in ("accuracy_vs_n", "heatmaps", "confusion", "patch_alignment"):  # every title names the protocol
        assert "G2M protocol (G2M's parser" in _svg_texts(out / f"{name}.svg"), name
    with Image.open(out / "heatmaps.png") as im:
        assert im.format == "PNG" and im.width > 1000  # one compact grid, not 15 stacked figures
    rows = list(csv.DictReader(open(out / "summary.csv")))
    assert len(rows) == 45 and float(rows[0]["cell_accuracy_ci_low"]) <= float(rows[0]["cell_accuracy"])
    assert float(rows[0]["cell_accuracy"]) <= float(rows[0]["cell_accuracy_ci_high"])
    gap = {(g["grid_size"], g["num_colors"]): g for g in rep.document["digital_agnosia_gap"]}
    assert all(g["other_model"] and g["probe"] == "enc vision (probe of tiny/enc, answers of g2m-random)"
               for g in gap.values())  # another model, compared on request: every row names both
    assert set(gap) == {(20, 3), (32, 10)} and gap[(20,
                                                    3)]["gap"] == pytest.approx(0.99 - gap[(20,
                                                                                            3)]["end_to_end_cell_accuracy"])
    html = (out / "index.html").read_text()
    assert "Digital Agnosia gap" in html and "<img src=\"heatmaps.png\"" in html
    assert html.count("<h2>Patch alignment</h2>") == 1
    # the banner says what the numbers stand on: a small local build, 2 grids per cell, lm-eval, g2m-random
    assert "local build" in html and "scale 0.02" in html and "2 grids per (N, C)" in html and "g2m-random" in html
    align = rep.document["patch_alignment"]
    assert {p["patch"] for p in align} == {14, 16, 28, 32} and "per_n" in align[0]
    total = sum(sum(map(sum, m)) for m in rep.document["confusion"].values())
    assert total == sum(t["grid_size"] ** 2 * t["n"] for t in rep.document["tasks"])
    assert sorted(rep.document["confusion"]) == ["10", "3", "5"] and len(rep.document["confusion"]["3"]) == 3
    examples = rep.document["failed_examples"]["64"]
    assert (1 <= len(examples) <= 3 and examples[0]["strategy"] == "list_literal"
            and examples[0]["text"].startswith("[["))
    assert "Answers that were not exact" in html and "<pre>[[" in html


class _Page(HTMLParser):
    """Where a page's images and tables are, in reading order, and each table's rows and the <details> around it."""

    def __init__(self):
        super().__init__()
        self.order, self.tables, self.details, self.summary = [], [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("img", "table"):
            self.order.append(tag)
        if tag == "details":
            self.details.append({"open": "open" in attrs, "summary": ""})
        elif tag == "summary":
            self.summary = self.details[-1]
        elif tag == "table":
            self.tables.append({"rows": 0, "details": self.details[-1] if self.details else None})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"] += 1

    def handle_endtag(self, tag):
        if tag == "details":
            self.details.pop()
        elif tag == "summary":
            self.summary = None

    def handle_data(self, data):
        if self.summary is not None:
            self.summary["summary"] += data


def _points_inside(svg_path, frame) -> list[tuple[float, float]]:
    """Every point of every path of the SVG strictly inside ``frame`` (x, y, w, h)."""
    x0, y0, w, h = frame
    found = []
    for path in ElementTree.parse(svg_path).getroot().iter("{http://www.w3.org/2000/svg}path"):
        for x, y in re.findall(r"[ML](-?[\d.]+) (-?[\d.]+)", path.get("d")):
            if x0 < float(x) < x0 + w and y0 < float(y) < y0 + h:
                found.append((float(x), float(y)))
    return found


def test_a_report_of_a_run_that_never_gets_a_grid_whole_says_so_and_puts_its_figures_first(random_run, tmp_path):
    rep = build_report(random_run, tmp_path / "r")
    assert rep.document["tasks"] and all(t["exact_match"] == 0 for t in rep.document["tasks"])  # g2m-random
    out = tmp_path / "r"
    assert "exact match is 0 on every task" in _svg_texts(out / "accuracy_vs_n.svg")
    frames = sorted((float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
                    for r in ElementTree.parse(out / "accuracy_vs_n.svg").getroot().iter(
                        "{http://www.w3.org/2000/svg}rect") if r.get("fill") == "none" and r.get("stroke") == "#000000")
    cell, exact = frames
    assert _points_inside(out / "accuracy_vs_n.svg", cell)  # cell accuracy: curves and intervals
    assert _points_inside(out / "accuracy_vs_n.svg", exact) == []  # exact match: no bar, no curve, only words
    page = _Page()
    page.feed((out / "index.html").read_text())
    assert page.order.index("table") > max(i for i, tag in enumerate(page.order) if tag == "img")  # figures first
    assert len(page.tables) >= 5
    long = [t for t in page.tables if t["rows"] > FOLD_ROWS]
    assert long and all(t["details"] and not t["details"]["open"] for t in long)  # the long tables folded
    assert all(t["details"] and t["details"]["open"] for t in page.tables if t["rows"] <= FOLD_ROWS)
    by_task = next(t for t in page.tables if t["details"]["summary"].startswith("Scores by task"))
    assert by_task["details"]["summary"] == f"Scores by task: table of {by_task['rows'] - 1} rows"  # less its header
    assert by_task["rows"] - 1 == len(rep.document["tasks"]) + 1  # every task and "all"


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
    copy, f = _copy_run(random_run, tmp_path)
    f.write_text(f.read_text() + "{not json\n")
    with pytest.raises(RunError, match=f"{f.name}:3"):
        load_run(copy)


def _copy_run(random_run, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(random_run, copy)
    return copy, next(copy.glob("samples_g2m_n05_c5_*.jsonl"))


def _first(f):
    return json.loads(f.read_text().splitlines()[0])


def _with_doc(**changes):
    def edit(row):
        row["doc"].update(changes)
        return row
    return edit


MALFORMED = {
    "a target value past the palette": (_with_doc(matrix=[[9] * 5] * 5), "holds 9, not a colour value from 0 to 4"),
    "a negative target value": (_with_doc(matrix=[[-1] * 5] * 5), "holds -1"),
    "a float target value": (_with_doc(matrix=[[1.5] * 5] * 5), "holds 1.5"),
    "a target that is not a matrix": (_with_doc(matrix="[[1]]"), "not a 5x5 matrix"),
    "a ragged target": (_with_doc(matrix=[[1] * 5] * 4 + [[1]]), "not a 5x5 matrix"),
    "a boolean grid size": (_with_doc(grid_size=True), "grid_size True"),
    "no output": (lambda row: {**row, "resps": []}, "resps[0][0] is not the model's text"),
    "a non-string id": (_with_doc(id=7), "no string id"),
    "a target that is not the release's row": (_with_doc(matrix=[[2] * 5] * 5), "is not the release's row"),
    "a row of another size in this task's file": (_with_doc(grid_size=3, matrix=[[0] * 3] * 3),
                                                  "a 3x3, C=5 row in the samples of the 5x5, C=5 task"),
    "an id of another task": (_with_doc(id="zs-n64-c10-0000"), "is a 64x64, C=10 row, not of this task"),
    "an unknown id": (_with_doc(id="zs-n05-c5-9999"), "unknown G2M id"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_sample_is_one_line_naming_the_file_and_line(random_run, tmp_path, case):
    change, message = MALFORMED[case]
    copy, f = _copy_run(random_run, tmp_path)
    lines = f.read_text().splitlines()
    lines[1] = json.dumps(change(json.loads(lines[1])))
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(RunError, match=f"{f.name}:2: not a G2M sample") as err:
        load_run(copy)
    assert message in str(err.value) and "\n" not in str(err.value)
    res = g2m("report", str(copy), "--out", str(tmp_path / "r"))
    assert res.returncode == 2 and "Traceback" not in res.stderr and f"{f.name}:2" in res.stderr


def test_a_line_that_is_not_utf8_is_named_by_its_number(random_run, tmp_path):
    copy, f = _copy_run(random_run, tmp_path)
    lines = f.read_bytes().splitlines()
    f.write_bytes(b"\n".join([lines[0], b'{"doc": "\xff"}', *lines[2:]]) + b"\n")
    with pytest.raises(RunError, match=f"{f.name}:2: not a G2M sample"):
        load_run(copy)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(config=[]), "config is a list, not an object"),
    (lambda d: d["config"].update(model_args=[1, 2]), "config.model_args is a list, not text or an object"),
    (lambda d: d.update(g2m={"data": "x"}), "g2m.data is text, not an object"),
    (lambda d: d.update(g2m=[]), "g2m is a list, not an object"),
    (lambda d: d.update(configs=[]), "configs is a list, not an object"),
    (lambda d: d["configs"]["g2m_n05_c5"].update(generation_kwargs="x"), "configs.g2m_n05_c5 is not an lm-eval"),
    (lambda d: d.update(date=1e20), "is not a time between 1970 and 9999"),
    (lambda d: d.update(date=-1e15), "is not a time between 1970 and 9999"),
])
def test_a_results_file_of_the_wrong_shape_is_one_line(random_run, tmp_path, change, message):
    copy, _ = _copy_run(random_run, tmp_path)
    results = next(copy.glob("results_*.json"))
    data = json.loads(results.read_text())
    change(data)
    results.write_text(json.dumps(data))
    with pytest.raises(RunError, match=f"{results.name}: ") as err:
        load_run(copy)
    assert message in str(err.value)


def test_submit_never_overwrites_the_run_it_reads_nor_a_folder(random_run, tmp_path):
    copy, _ = _copy_run(random_run, tmp_path)
    results = next(copy.glob("results_*.json"))
    before = results.read_bytes()
    for out, message in ((results, "this command's own input"), (tmp_path, "is a folder"), ("", "is empty")):
        res = g2m("submit", str(copy), "--allow-partial", "--no-input", "--out", str(out), "--model-id", "org/random")
        assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert results.read_bytes() == before


def test_duplicated_samples_count_once_and_conflicting_ones_are_refused(random_run, tmp_path):
    copy, f = _copy_run(random_run, tmp_path)
    first = f.read_text().splitlines()[0]
    f.write_text(f.read_text() + first + "\n")
    assert len(load_run(copy).samples) == len(load_run(random_run).samples)
    row = json.loads(first)
    row["resps"] = [["[[1]]"]]
    f.write_text(f.read_text() + json.dumps(row) + "\n")
    with pytest.raises(RunError, match="was logged before, at .*:1, with another output"):
        load_run(copy)


@pytest.mark.parametrize("content", ["", "[[[[" * 5000, "NaN", '{"doc": {"id": "x"}, "resps": [["1"]]'])
def test_empty_or_broken_files_are_one_line_errors(random_run, tmp_path, content):
    copy, _ = _copy_run(random_run, tmp_path)
    for f in copy.glob("samples_*.jsonl"):
        f.write_text(content)
    with pytest.raises(RunError) as err:
        load_run(copy)
    assert "\n" not in str(err.value)
    res = g2m("report", str(copy), "--out", str(tmp_path / "r"))
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_hostile_model_names_stay_text_in_every_report_file(random_run, tmp_path):
    copy, _ = _copy_run(random_run, tmp_path)
    results = next(copy.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["config"]["model_args"] = "pretrained=<script>alert(1)</script>$\\frac{\ud800\x1b[31m"
    results.write_text(json.dumps(data))
    rep = build_report(copy, tmp_path / "r")
    md = (tmp_path / "r" / "index.md").read_text()
    html = (tmp_path / "r" / "index.html").read_text()
    assert "<script>" not in md and "<script>" not in html and "\x1b" not in md + html
    assert rep.document["model"].startswith("<script>")  # the data itself is kept as it was
    json.loads((tmp_path / "r" / "report.json").read_text(), parse_constant=lambda c: pytest.fail(c))


def test_probe_results_are_data_a_fifo_a_device_or_mathtext_never_stop_the_report(random_run, tmp_path):
    import os

    probes = tmp_path / "probes"
    _probe_result(probes, 20, 3, 0.9)
    hostile = json.loads((probes / "probe_n20_c3" / "result.json").read_text())
    hostile["encoder"]["readout"] = "$\\bad{$"  # matplotlib would parse it as mathtext and raise
    (probes / "b").mkdir()
    (probes / "b" / "result.json").write_text(json.dumps(hostile | {"grid_size": 32}))
    (probes / "fifo").mkdir()
    os.mkfifo(probes / "fifo" / "result.json")  # would block a reader forever
    (probes / "zero").mkdir()
    (probes / "zero" / "result.json").symlink_to("/dev/zero")  # would be read until memory runs out
    rep = build_report(random_run, tmp_path / "r", probes, ReportOptions(compare_other_models=True))
    assert (tmp_path / "r" / "accuracy_vs_n.png").is_file() and rep.document["model"] == "g2m-random"


def test_a_fifo_among_the_samples_is_named_not_waited_on(random_run, tmp_path):
    import os

    copy, f = _copy_run(random_run, tmp_path)
    f.unlink()
    os.mkfifo(f)
    with pytest.raises(RunError, match=f"{f.name}: not a regular file"):
        load_run(copy)


def test_a_run_with_both_protocols_is_reported_side_by_side(small_release, tmp_path):
    from harness_tasks.evaluate import EvalSpec, run_eval

    res = run_eval(EvalSpec(model="g2m-random", tasks=("g2m_c3", "g2m_paper_c3"), data=str(small_release),
                            output=str(tmp_path / "runs")))
    rep = build_report(res["output_dir"], tmp_path / "report")
    assert rep.document["protocol"] == "g2m" and set(rep.document["protocols"]) == {"g2m", "paper", "paper_rule_on_g2m"}
    lm_eval_results = json.loads(load_run(res["output_dir"]).results_path.read_text())["results"]
    for task in rep.document["protocols"]["paper"]["tasks"]:
        theirs = lm_eval_results[f"g2m_paper_n{task['grid_size']:02d}_c{task['num_colors']}"]
        assert task["cell_accuracy"] == pytest.approx(theirs["cell_accuracy,none"])
    md = (tmp_path / "report" / "index.md").read_text()
    assert "## Protocols side by side" in md and "paper rule on G2M outputs cell accuracy" in md
    paper = run_eval(EvalSpec(model="g2m-oracle", tasks=("g2m_paper_c3",), data=str(small_release),
                              output=str(tmp_path / "paper-runs")))
    rep = build_report(paper["output_dir"], tmp_path / "paper-report")
    assert rep.document["protocol"] == "paper"
    for name in ("accuracy_vs_n", "heatmaps", "confusion", "patch_alignment"):  # a paper run is titled as one
        texts = _svg_texts(tmp_path / "paper-report" / f"{name}.svg")
        assert "paper protocol (the authors' parser and scoring, budget" in texts and "G2M protocol" not in texts, name


def _model_dir(path, config: str):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(config)
    return path


IDENTITY = [  # (the run's model args, the probe's encoder record, None if compared else the refusal's words)
    (None, {"name": "g2m-random"}, None),
    (None, {"name": "tiny/enc"}, "enc vision is a probe of tiny/enc, not of the run's model g2m-random (another "
                                 "checkpoint)"),
    ("pretrained={A}", {"name": "{A}"}, None),
    ("pretrained={A}", {"name": "{A}/", "config_sha256": "{A_SHA}"}, None),
    ("pretrained={A}", {"name": "{A}", "config_sha256": "0" * 64}, "another config.json"),
    ("pretrained={A}", {"name": "{B}"}, "another checkpoint"),
    ("pretrained=org/m,revision=v1", {"name": "org/m", "revision": "v1"}, None),
    ("pretrained=org/m,revision=v1", {"name": "org/m", "revision": "v2"}, "revision v1 against v2"),
    ("pretrained=org/m", {"name": "org/m", "revision": "local:abc"}, None),
]


@pytest.mark.parametrize(("model_args", "encoder", "refused"), IDENTITY)
def test_a_probe_is_compared_only_with_a_run_of_the_same_model(random_run, tmp_path, model_args, encoder, refused):
    """A regression: the report once drew a "Digital Agnosia gap" between g2m-random and an unrelated SigLIP probe."""
    import hashlib

    from g2m_base.errors import UsageError

    a = _model_dir(tmp_path / "models" / "a", '{"model_type": "qwen3_vl"}')
    b = _model_dir(tmp_path / "models" / "b", '{"model_type": "qwen3_vl"}')
    fill = {"{A}": str(a), "{B}": str(b), "{A_SHA}": hashlib.sha256((a / "config.json").read_bytes()).hexdigest()}

    def sub(text: str) -> str:
        for k, v in fill.items():
            text = text.replace(k, v)
        return text

    run = random_run
    if model_args:
        run, _ = _copy_run(random_run, tmp_path)
        results = next(run.glob("results_*.json"))
        data = json.loads(results.read_text())
        data["config"]["model_args"] = sub(model_args)
        results.write_text(json.dumps(data))
    _probe_result(tmp_path / "probes", 20, 3, 0.9, **{k: sub(v) for k, v in encoder.items()})
    if refused is None:
        rep = build_report(run, tmp_path / "r", tmp_path / "probes")
        (gap,) = rep.document["digital_agnosia_gap"]
        assert not gap["other_model"] and "answers of" not in gap["probe"]
        return
    with pytest.raises(UsageError, match="--compare-other-models") as e:
        build_report(run, tmp_path / "r", tmp_path / "probes")
    assert sub(refused) in str(e.value) and "\n" not in str(e.value)
    rep = build_report(run, tmp_path / "r", tmp_path / "probes", ReportOptions(compare_other_models=True))
    (gap,) = rep.document["digital_agnosia_gap"]
    assert gap["other_model"] and f"probe of {sub(encoder['name'])}" in gap["probe"] and "answers of" in gap["probe"]
    assert "OTHER MODELS" in (tmp_path / "r" / "index.md").read_text()
