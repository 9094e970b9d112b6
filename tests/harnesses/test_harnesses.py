"""G2M in three harnesses (lm-eval, lmms-eval, inspect) and VLMEvalKit's files, against a real OpenAI-compatible
server on the loopback interface that reads each grid from the PNG it receives.

Each harness runs 3x3 and 64x64 grids to exact match 1.0 (the image crossed lossless), a tight budget gives
``truncated``, a dead server gives ``request_failed`` and no score, and its run is accepted by ``g2m report`` and
``g2m submit``. The parity test feeds the same recorded outputs through every harness's hook.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import importlib.util
import io
import json
import math
import re
import socket
import threading

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.render import decode_matrix
from g2m_base.errors import UsageError
from harness_tasks.evaluate import EvalSpec, run_eval
from report.report import build_report
from scoring.parsing import format_answer
from submission.submission import write_submission
from tests.support import vlm_server
from tests.support.helpers import REPO, g2m

pytestmark = pytest.mark.slow
HARNESSES = ["lm-eval", "lmms-eval", "inspect"]


@pytest.fixture(scope="module")
def server():
    httpd, state = vlm_server.start("fake-vlm")
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()


def _viewer_rows(folder, report) -> list[list]:
    """The summary rows of the sample viewer the report wrote (its index, as the page reads it)."""
    html = (folder / report.document["viewer"]).read_text()
    return json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', html,
                                re.S).group(1))["rows"]


def _metric(res: dict, task: str, metric: str) -> float:
    return res["results"][task][f"{metric},none"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_each_harness_reads_3x3_and_64x64_exactly_and_truncates_at_a_tight_budget(harness, server, small_release,
                                                                                   tmp_path):
    url, _ = server
    tasks = ("g2m_n03_c3", "g2m_n64_c10", "g2m_paper_n64_c10")  # the paper's 2,048 tokens cut a 64x64 answer
    res = run_eval(EvalSpec(harness=harness, base_url=url, tasks=tasks, data=str(small_release),
                            output=str(tmp_path / "runs"), progress=False))
    assert res["g2m"]["harness"] == harness
    for task in ("g2m_n03_c3", "g2m_n64_c10"):
        assert _metric(res, task, "exact_match") == 1.0 and _metric(res, task, "truncated") == 0.0, (harness, task)
    assert _metric(res, "g2m_paper_n64_c10", "truncated") == 1.0
    assert _metric(res, "g2m_paper_n64_c10", "exact_match") == 0.0
    report = build_report(res["output_dir"], tmp_path / "report")
    assert report.document["protocols"]["g2m"]["overall"]["exact_match"] == 1.0
    rows = _viewer_rows(tmp_path / "report", report)  # every sample, in the viewer, as the report scored it
    assert len(rows) == 4 and {r[4] for r in rows} == {"exact"}
    assert {r[1] for r in rows} == {"g2m_n03_c3", "g2m_n64_c10"}
    sub = json.loads(write_submission(res["output_dir"], tmp_path / "s.json", allow_partial=True).read_text())
    assert len(sub["records"]) == 4 and len(sub["paper_records"]) == 2  # 2 rows per task in the small release


@pytest.fixture
def dead_server():
    """A port that accepts each connection and closes it unanswered: a server that died after start-up (where nothing
    listens at all, ``g2m eval`` refuses before any request: tests/repo/test_first_hour_errors.py)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drop() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                listener.accept()[0].close()

    threading.Thread(target=drop, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    listener.close()


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_dead_server_is_request_failed_never_a_score(harness, dead_server, small_release, tmp_path):
    res = run_eval(EvalSpec(harness=harness, base_url=dead_server, model_args="model=fake-vlm",
                            tasks=("g2m_n03_c3",), data=str(small_release), output=str(tmp_path), progress=False,
                            request_timeout=5))
    assert _metric(res, "g2m_n03_c3", "request_failed") == 1.0
    assert _metric(res, "g2m_n03_c3", "parse_failed") == 0.0 and _metric(res, "g2m_n03_c3", "cell_accuracy") == 0.0
    assert res["g2m"]["request_failed"] == 2


def test_lmms_eval_finding_no_task_fails_loudly(server, small_release, tmp_path, monkeypatch):
    """lmms-eval exits 0 when it finds no task: g2m eval must not."""
    from harness_tasks.with_lmms_eval import driver as lmms_run

    url, _ = server
    real = lmms_run.command
    monkeypatch.setattr(lmms_run, "command", lambda tasks, *a: real(["g2m_no_such_task"], *a))
    with pytest.raises(lmms_run.HarnessError, match="wrote no results|no results for"):
        run_eval(EvalSpec(harness="lmms-eval", base_url=url, tasks=("g2m_n03_c3",), data=str(small_release),
                          output=str(tmp_path), progress=False))


def test_the_cli_runs_a_harness_and_names_it(server, small_release, tmp_path):
    url, _ = server
    res = g2m("eval", "--harness", "inspect", "--base-url", url, "--tasks", "g2m_n05_c5", "--data", str(small_release),
              "--output", str(tmp_path), "--no-progress")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "### fake-vlm on g2m_n05_c5" in res.stdout and "| 5 | 1.00 | 1.000 |" in res.stdout


# --- VLMEvalKit ----------------------------------------------------------------------------------------------------

def test_vlmevalkit_tsv_round_trips_through_a_prediction_file(small_release, tmp_path):
    tsv = tmp_path / "Grid2Matrix.tsv"
    res = g2m("export", "vlmevalkit", "--data", str(small_release), "--out", str(tsv), "--tasks", "g2m_lite")
    assert res.returncode == 0, res.stderr
    with open(tsv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 27 * 2 and [int(r["index"]) for r in rows] == list(range(1, 55))
    assert not {"A", "B"} & set(rows[0])  # VQA
    assert rows[0]["image_path"].startswith("1-") and rows[0]["image_path"].endswith(".png")  # lossless, by content
    preds = []
    for r in rows:  # what VLMEvalKit's inference writes: every column but the image, plus the prediction
        png = base64.b64decode(r["image"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        with Image.open(io.BytesIO(png)) as im:
            answer = format_answer(decode_matrix(np.asarray(im.convert("RGB")), int(r["grid_size"])))
        preds.append({k: v for k, v in r.items() if k != "image"} | {"prediction": answer})
    preds[0]["prediction"] = "Failed to obtain answer via API."  # VLMEvalKit's API failure text
    preds[1]["prediction"] = math.nan  # pandas's empty cell
    pd = pytest.importorskip("pandas")
    out = tmp_path / "outputs" / "FakeVLM" / "T20261130-000000"
    out.mkdir(parents=True)
    pd.DataFrame(preds).to_excel(out / "FakeVLM_Grid2Matrix.xlsx", index=False)
    report = build_report(out / "FakeVLM_Grid2Matrix.xlsx", tmp_path / "report")
    assert report.document["model"] == "FakeVLM"
    assert report.overall.request_failed == pytest.approx(1 / 54)
    assert report.overall.parse_failed == pytest.approx(1 / 54)  # the empty prediction
    assert report.overall.exact_match == pytest.approx(52 / 54)
    outcomes = [r[4] for r in _viewer_rows(tmp_path / "report", report)]
    assert len(outcomes) == 54 and outcomes.count("request failed") == 1 and outcomes.count("parse failure") == 1
    assert outcomes.count("exact") == 52
    rejected = g2m("submit", str(out / "FakeVLM_Grid2Matrix.xlsx"), "--out", str(tmp_path / "s.json"))
    assert rejected.returncode != 0 and "failed and have no answer" in rejected.stderr
    ok = g2m("submit", str(out / "FakeVLM_Grid2Matrix.xlsx"), "--out", str(tmp_path / "s.json"), "--allow-partial")
    assert ok.returncode == 0, ok.stderr
    assert len(json.loads((tmp_path / "s.json").read_text())["records"]) == 53


def test_a_pickled_prediction_file_is_never_read(tmp_path):
    bad = tmp_path / "X_Grid2Matrix.pkl"
    bad.write_bytes(b"cos\nsystem\n(S'echo owned'\ntR.")
    res = g2m("report", str(bad), "--out", str(tmp_path / "r"))
    assert res.returncode != 0 and "never read" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(("name", "content", "reason"), [
    ("X_Grid2Matrix.json", b"{bad", "Rejected: .*malformed JSON"),
    ("X_Grid2Matrix.json", b"[" * 100_000, "Rejected: .*nested too deeply"),
    ("X_Grid2Matrix.tsv", b"g2m_id\tprediction\n\xff\t1\n", "UnicodeDecodeError"),
    ("X_Grid2Matrix.xlsx", b"random bytes, not a zip", "BadZipFile"),
])
def test_a_malformed_prediction_file_is_one_line_naming_it(tmp_path, name, content, reason):
    from scoring.runs.vlmevalkit import read_predictions

    (tmp_path / name).write_bytes(content)
    with pytest.raises(UsageError, match=f"{name}: not a readable .* file \\({reason}"):
        read_predictions(tmp_path / name)


def test_a_prediction_file_saved_with_a_bom_is_read(tmp_path):
    from scoring.runs.vlmevalkit import read_predictions

    (tmp_path / "X_Grid2Matrix.tsv").write_bytes("\ufeffg2m_id\tprediction\nzs-n03-c3-0000\t[[1]]\n".encode())
    assert read_predictions(tmp_path / "X_Grid2Matrix.tsv").rows == [("zs-n03-c3-0000", "[[1]]", False, False)]


# --- parity ----------------------------------------------------------------------------------------------------------

def _hooks(folder: str):
    spec = importlib.util.spec_from_file_location(f"g2m_{folder}_utils", REPO / "harness_tasks" / folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_same_outputs_get_the_same_scores_in_every_harness():
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.solver import TaskState

    from harness_tasks.with_inspect.tasks import score_state

    lm_eval_hooks, lmms_hooks = _hooks("lm_eval_tasks"), _hooks("lmms_eval_tasks")
    cases = json.loads((REPO / "tests" / "support" / "golden" / "model_outputs.json").read_text())
    rng = np.random.default_rng(0)
    compared = 0
    for case in cases:
        n = case["grid_size"]
        m = case["matrix"]
        square = m and len(m) == n and all(len(r) == n and all(0 <= v < 10 for v in r) for r in m)
        target = m if square else rng.integers(0, 3, (n, n)).tolist()  # what the answer read, or any grid
        doc = {"id": f"zs-n{n:02d}-c3-0000", "grid_size": n, "num_colors": 3, "matrix": target}
        text = case["output"]
        for protocol, lm_hook, lmms_hook in (("g2m", lm_eval_hooks.process_results, lmms_hooks.process_results),
                                             ("paper", lm_eval_hooks.process_results_paper,
                                              lmms_hooks.process_results_paper)):
            a = lm_hook(dict(doc), [text])
            b = {k: v for k, v in lmms_hook(dict(doc), [text]).items() if k != "g2m_sample"}
            state = TaskState(ModelName("openai-api/g2m"), doc["id"], 1, "", [],
                              output=ModelOutput.from_content("m", text), metadata=doc)
            c = score_state(state, protocol).value
            assert a == b == c, (case["name"], protocol, a, b, c)
            compared += 1
    assert compared == 2 * len(cases) >= 80
