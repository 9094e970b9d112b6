"""g2m eval against served models: a real OpenAI-compatible server on the loopback interface (``vlm_server``), and
``--serve`` with a stand-in ``vllm`` executable that starts one, so launch, health wait, log and shutdown are real.

The server reads each grid from the PNG it receives: exact match 1.0 proves the image crossed the API lossless.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from g2m_base.bounded_json import Rejected
from harness_tasks.evaluate import EvalSpec, run_eval
from report.report import build_report
from scoring.budget import max_gen_toks
from scoring.parsing import format_answer
from submission.submission import write_submission
from tests.support import vlm_server
from tests.support.helpers import REPO, WAIT

pytestmark = pytest.mark.slow


@pytest.fixture
def server():
    httpd, state = vlm_server.start("fake-vlm")
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()


def _eval(url: str, data: Path, out: Path, tasks: tuple[str, ...], **kw) -> dict:
    return run_eval(EvalSpec(base_url=url, tasks=tasks, data=str(data), output=str(out), progress=False, **kw))


def _score(res: dict, task: str, metric: str) -> float:
    return res["results"][task][f"{metric},none"]


def _samples(res: dict, task: str) -> list[dict]:
    folder = Path(res["output_dir"])
    newest = sorted(folder.glob(f"samples_{task}_*.jsonl"))[-1]
    return [json.loads(line) for line in newest.read_text().splitlines()]


def test_a_failing_request_is_request_failed_never_parsed_and_retried_by_the_next_run(server, small_release, tmp_path):
    url, state = server
    state.config = {"fail": {5: 99}}  # every attempt at a 5x5 grid fails
    tasks = ("g2m_n05_c3", "g2m_n09_c3", "g2m_paper_n05_c3")
    res = _eval(url, small_release, tmp_path, tasks)
    assert res["g2m"]["model"] == "fake-vlm"  # the name the server lists at /v1/models
    for task in ("g2m_n05_c3", "g2m_paper_n05_c3"):
        assert _score(res, task, "request_failed") == 1.0
        assert _score(res, task, "cell_accuracy") == 0.0 and _score(res, task, "parse_failed") == 0.0
        detail = _samples(res, task)[0]["doc"]["g2m"]
        assert detail["finish_reason"] == "request_failed" and detail["parse_strategy"] == "none"
        assert "HTTP 500" in detail["error"] and "attempt 3 of 3" in detail["error"]
    assert _score(res, "g2m_n09_c3", "exact_match") == 1.0 and _score(res, "g2m_n09_c3", "request_failed") == 0.0
    assert res["g2m"]["request_failed"] == 4 and state.received[5] == 4 * 3  # 2 rows x 2 tasks, 3 attempts each
    assert res["g2m"]["tags"] == {}  # no complete tag ran

    with pytest.raises(Rejected, match="requests failed and have no answer"):  # a failure is never submitted
        write_submission(res["output_dir"], tmp_path / "s.json")
    partial = json.loads(write_submission(res["output_dir"], tmp_path / "s.json", allow_partial=True).read_text())
    assert {r["id"][:7] for r in partial["records"]} == {"zs-n09-"} and "paper_records" not in partial
    report = build_report(res["output_dir"], tmp_path / "report")
    assert report.overall.request_failed == 0.5  # 2 of the 4 g2m answers (2 rows x 2 tasks) never came
    with open(tmp_path / "report" / "summary.csv", newline="") as f:
        first = next(csv.DictReader(f))
    assert (first["grid_size"], first["num_colors"], first["n"], first["request_failed"]) == ("5", "3", "2", "1.0")

    state.config = {}  # the server recovers: the same command retries exactly the failed requests
    before = dict(state.received)
    again = _eval(url, small_release, tmp_path, tasks)
    assert state.received[5] - before[5] == 4 and state.received[9] == before[9]
    assert again["g2m"]["resumed_answers"] == 2 and again["g2m"]["request_failed"] == 0
    for task in tasks:
        assert _score(again, task, "exact_match") == 1.0


def test_a_request_that_fails_once_is_retried_within_the_run(server, small_release, tmp_path):
    url, state = server
    state.config = {"fail": {4: 1}}
    res = _eval(url, small_release, tmp_path, ("g2m_n04_c10",))
    assert _score(res, "g2m_n04_c10", "exact_match") == 1.0 and state.received[4] == 2 * 2


def test_an_answer_the_server_aborted_is_retried_and_never_scored_as_text(server, small_release, tmp_path):
    url, state = server
    state.config = {"abort": {4: 1, 5: 99}}  # 4x4: aborted once, then answered; 5x5: aborted on every attempt
    res = _eval(url, small_release, tmp_path, ("g2m_n04_c3", "g2m_n05_c3"))
    assert _score(res, "g2m_n04_c3", "exact_match") == 1.0 and state.received[4] == 2 * 2
    assert _score(res, "g2m_n05_c3", "request_failed") == 1.0 and _score(res, "g2m_n05_c3", "cell_accuracy") == 0.0
    assert "finish_reason 'abort'" in _samples(res, "g2m_n05_c3")[0]["doc"]["g2m"]["error"]


def test_a_rate_limited_request_waits_as_long_as_retry_after_says(server, small_release, tmp_path):
    url, state = server
    state.config = {"fail": {3: 1}, "fail_status": 429, "retry_after": 2}
    t = time.monotonic()
    res = _eval(url, small_release, tmp_path, ("g2m_n03_c3",))
    assert _score(res, "g2m_n03_c3", "exact_match") == 1.0 and state.received[3] == 2 * 2
    assert time.monotonic() - t >= 2.0  # our own first back-off would have been 1 s


def test_a_stalled_request_times_out_into_request_failed(server, small_release, tmp_path):
    url, state = server
    state.config = {"stall": [3], "stall_seconds": WAIT}  # held until the run has ended: only a timeout ends it
    try:
        res = _eval(url, small_release, tmp_path, ("g2m_n03_c3", "g2m_n06_c3"), model_args="timeout=1,max_retries=1")
    finally:
        state.release()
    assert _score(res, "g2m_n03_c3", "request_failed") == 1.0 and _score(res, "g2m_n06_c3", "exact_match") == 1.0
    assert "client timeout" in _samples(res, "g2m_n03_c3")[0]["doc"]["g2m"]["error"]


def test_truncation_comes_from_the_servers_finish_reason(server, small_release, tmp_path):
    url, state = server
    state.config = {"truncate": [8]}  # well-formed first half of the rows: only finish_reason says "cut"
    res = _eval(url, small_release, tmp_path, ("g2m_n08_c5", "g2m_n10_c5"))
    assert _score(res, "g2m_n08_c5", "truncated") == 1.0 and _score(res, "g2m_n10_c5", "truncated") == 0.0
    assert _score(res, "g2m_n08_c5", "cell_accuracy") == 0.5 and _score(res, "g2m_n08_c5", "exact_match") == 0.0
    assert _samples(res, "g2m_n08_c5")[0]["doc"]["g2m"]["finish_reason"] == "length"
    # the report tells truncation from misreading: no alignment effect, a diagonal of 1, the cut rows missing
    report = build_report(res["output_dir"], tmp_path / "report")
    for a in report.document["patch_alignment"]:
        assert all(r["difference"] in (0.0, None) for r in a["per_n"]), a
        n8 = next(r for r in a["per_n"] if r["grid_size"] == 8)
        assert n8["difference_ci"] is None  # 2 grids: under the interval's minimum, no interval at all
    conf = report.document["confusion"]["5"]
    assert all(conf[i][i] == sum(conf[i][:5]) for i in range(5))  # every cell read as a colour read right
    assert report.document["colour_bias"]["5"]["rates"]["missing"] == pytest.approx(8 * 4 / (8 * 8 + 10 * 10))
    assert "missing (less / more crossed)" in (tmp_path / "report" / "index.html").read_text()


def test_reasoning_is_logged_apart_never_parsed_and_gets_its_own_budget(server, small_release, tmp_path):
    url, state = server
    state.config = {"reasoning": 600}  # 600 characters (tokens) of reasoning holding a decoy all-9 matrix
    tasks = ("g2m_n03_c3", "g2m_n12_c10")
    short = _eval(url, small_release, tmp_path / "a", tasks)  # budgets 256 and 634: reasoning eats them
    assert _score(short, "g2m_n03_c3", "truncated") == 1.0 and _score(short, "g2m_n03_c3", "parse_failed") == 1.0
    res = _eval(url, small_release, tmp_path / "b", tasks, reasoning_budget=1000)
    for task in tasks:
        assert _score(res, task, "exact_match") == 1.0  # the decoy in the reasoning was never read
    sample = _samples(res, "g2m_n12_c10")[0]
    assert sample["doc"]["g2m"]["reasoning"].startswith("Let me think. A first guess: [[9, 9")
    assert sample["resps"][0][0] == format_answer(sample["doc"]["matrix"])
    assert {p["max_tokens"] for p in state.payloads[-4:]} == {max_gen_toks(3) + 1000, max_gen_toks(12) + 1000}
    assert res["g2m"]["reasoning_budget"] == 1000


def test_requests_are_greedy_lossless_and_carry_no_placeholder(server, small_release, tmp_path):
    url, state = server
    _eval(url, small_release, tmp_path, ("g2m_n16_c10", "g2m_paper_n48_c3"))
    assert {(p["temperature"], p["model"]) for p in state.payloads} == {(0.0, "fake-vlm")}
    assert {p["max_tokens"] for p in state.payloads} == {max_gen_toks(16), 2048}  # G2M's 16x16 budget; the paper's cap
    assert not any("<image>" in p["text"] for p in state.payloads)


def test_a_dead_server_url_fails_fast_with_a_clear_error(small_release, tmp_path):
    from g2m_base.errors import UsageError

    t = time.monotonic()
    with pytest.raises(UsageError, match=r"nothing listens at 127.0.0.1:9 \(connection refused\)"):
        _eval("http://127.0.0.1:9/v1", small_release, tmp_path, ("g2m_n03_c3",))
    assert time.monotonic() - t < 60  # at once, not after minutes of retries (60 s: room for a loaded machine)


# --- --serve, with a stand-in vllm ---------------------------------------------------------------------------------

STAND_IN = """#!{python}
import json, os, sys, time
sys.path.insert(0, {repo!r})  # the repository root: tests.support.vlm_server
argv = sys.argv[1:]
with open(os.environ["FAKE_VLLM_RECORD"], "a") as f:
    f.write(json.dumps({{"argv": argv, "pid": os.getpid()}}) + "\\n")
print("INFO loading the model", flush=True)
mode = os.environ.get("FAKE_VLLM_MODE", "ok")
if mode == "crash":
    print("RuntimeError: CUDA out of memory (simulated)", flush=True)
    sys.exit(3)
if mode == "hang":
    time.sleep(3600)
if mode == "loading":  # weights load with a progress bar, as vLLM's does (carriage returns, no newline)
    for k in range(1, 5):
        print(f"Loading safetensors checkpoint shards: {{k}}/4", end="\\r", flush=True)
        time.sleep(0.8)
    print("INFO capturing CUDA graphs", flush=True)
time.sleep(1.5)  # a model takes a while to load: the health wait must hold
from tests.support import vlm_server
vlm_server.main(["--port", argv[argv.index("--port") + 1], "--model", argv[1]])
"""


@pytest.fixture
def stand_in_vllm(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "vllm"
    exe.write_text(STAND_IN.format(python=sys.executable, repo=str(REPO)))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    record = tmp_path / "vllm-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(record))
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serve_starts_vllm_waits_for_health_evaluates_and_stops_it(stand_in_vllm, small_release, tmp_path):
    res = run_eval(EvalSpec(serve="org/tiny-vlm", serve_args="--tensor-parallel-size 8 --data-parallel-size 2",
                            tasks=("g2m_lite",), data=str(small_release), output=str(tmp_path / "runs"),
                            progress=False))
    assert res["g2m"]["tags"]["g2m_lite"]["exact_match"] == 1.0
    call = json.loads(stand_in_vllm.read_text())
    argv = call["argv"]
    assert argv[:2] == ["serve", "org/tiny-vlm"]
    assert argv[argv.index("--max-model-len") + 1] == "4096"  # g2m_lite: 634 answer + 2,048 image + 512 prompt
    assert argv[argv.index("--generation-config") + 1] == "vllm"  # no repetition penalty from the checkpoint
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 1}
    assert argv[-4:] == ["--tensor-parallel-size", "8", "--data-parallel-size", "2"]
    assert res["g2m"]["served_by"]["serve_args"] == ["--tensor-parallel-size", "8", "--data-parallel-size", "2"]
    assert Path(res["output_dir"]).name.startswith("org__tiny-vlm+")  # the served checkpoint, and its settings
    assert res["g2m"]["settings"] == {"serve_args": ["--tensor-parallel-size", "8", "--data-parallel-size", "2"]}
    server = res["g2m"]["provenance"]["server"]
    assert server["started"] is True and server["id"] == "org/tiny-vlm" and server["version"] is None  # none reported
    assert not _alive(call["pid"])  # stopped when the run ended


def test_serve_shows_the_log_when_vllm_dies_before_it_is_ready(stand_in_vllm, small_release, tmp_path, monkeypatch,
                                                                  capsys):
    from harness_tasks.serving.launcher import ServeError

    monkeypatch.setenv("FAKE_VLLM_MODE", "crash")
    t = time.monotonic()
    with pytest.raises(ServeError, match="exited with code 3"):
        run_eval(EvalSpec(serve="org/tiny-vlm", tasks=("g2m_n03_c3",), data=str(small_release),
                          output=str(tmp_path / "runs"), progress=False))
    assert time.monotonic() - t < 60  # not the serve timeout's 30 minutes (60 s: room for a loaded machine)
    assert "CUDA out of memory (simulated)" in capsys.readouterr().err


def test_serve_gives_up_on_a_server_that_never_becomes_healthy_and_kills_it(stand_in_vllm, small_release, tmp_path,
                                                                            monkeypatch):
    from harness_tasks.serving.launcher import ServeError

    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    with pytest.raises(ServeError, match="not healthy after 3 s"):
        run_eval(EvalSpec(serve="org/tiny-vlm", serve_timeout=3, tasks=("g2m_n03_c3",), data=str(small_release),
                          output=str(tmp_path / "runs"), progress=False))
    assert not _alive(json.loads(stand_in_vllm.read_text())["pid"])


def test_the_stand_in_server_really_speaks_http(stand_in_vllm, tmp_path):
    """The stand-in is a real server process (guards the tests above against a stand-in that does nothing)."""
    from harness_tasks.serving.launcher import Server, ServeSpec

    with Server(ServeSpec("org/tiny-vlm", 4096, log_path=tmp_path / "serve.log")) as server:
        with urllib.request.urlopen(server.url + "/models", timeout=5) as resp:
            assert json.load(resp)["data"][0]["id"] == "org/tiny-vlm"
        pid = json.loads(stand_in_vllm.read_text())["pid"]
        assert _alive(pid)
    assert not _alive(pid)
    assert "loading the model" in (tmp_path / "serve.log").read_text()


def test_the_wait_shows_the_time_and_the_logs_last_line_until_the_server_is_ready(stand_in_vllm, tmp_path, monkeypatch,
                                                                                  capfd):
    from harness_tasks.serving import wait_display
    from harness_tasks.serving.launcher import Server, ServeSpec

    monkeypatch.setenv("FAKE_VLLM_MODE", "loading")
    monkeypatch.setattr(wait_display, "PLAIN_EVERY_S", 0.5)
    with Server(ServeSpec("org/tiny-vlm", 4096, log_path=tmp_path / "serve.log")):
        pass
    err = capfd.readouterr().err
    waits = [line for line in err.splitlines() if line.startswith("g2m: waiting for the server, ")]
    assert any("| Loading safetensors checkpoint shards: " in w for w in waits)  # a progress bar's last refresh
    shards = {w.split("shards: ")[1] for w in waits if "shards: " in w}
    assert len(shards) >= 2  # refreshed while it loaded, not one line and silence
    assert waits[-1].startswith("g2m: waiting for the server, 0:0") and "ready at http://127.0.0.1:" in err
    assert err.index(waits[-1]) < err.index("server ready")
