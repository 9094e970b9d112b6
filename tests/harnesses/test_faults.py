"""Runs that survive faults: odd bodies, huge answers, full and read-only disks, two runs on one folder, signals.

Each case runs the real ``g2m`` against a real loopback server (``vlm_server``), on real small file systems (tmpfs
mounts, as root; skipped elsewhere, unless ``G2M_REQUIRE_ROOT`` is set, as CI sets it: then they fail), with real
signals to real processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support import vlm_server
from tests.support.disks import one_line_error as _one_line_error
from tests.support.disks import remount, tmpfs
from tests.support.helpers import REPO, WAIT, ended, g2m, wait_for

pytestmark = pytest.mark.slow
TASKS3 = "g2m_n03_c3,g2m_n04_c3,g2m_n05_c3"


@pytest.fixture
def server():
    httpd, state = vlm_server.start("fake-vlm")
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()


def _eval(url: str, data: Path, out: Path, tasks: str = TASKS3, *extra: str, timeout: float = 300):
    return g2m("eval", "--base-url", url, "--tasks", tasks, "--data", str(data), "--out", str(out), "--quiet", *extra,
               timeout=timeout)


def _results(folder: Path) -> list[Path]:
    return sorted(folder.rglob("results_*.json"))


def _cache_rows(out: Path) -> int:
    (db,) = (out / "cache").glob("*.db")
    with contextlib.closing(sqlite3.connect(db)) as con:
        return con.execute("SELECT count(*) FROM g2m_answers").fetchone()[0]


def test_malformed_bodies_are_request_failed_never_cached_and_retried_by_the_next_run(server, small_release,
                                                                                        tmp_path):
    url, state = server
    kinds = sorted(vlm_server.BODIES)
    sizes = (3, 4, 5, 6, 7, 8, 9)
    state.config = {"body": {**dict(zip(sizes, kinds, strict=True)), 10: "null_content"}}
    tasks = ",".join(f"g2m_n{n:02d}_c3" for n in (*sizes, 10, 12))
    res = _eval(url, small_release, tmp_path, tasks)
    # answers are missing: the run did not finish, and says so in its status and in one line naming the tasks
    assert res.returncode == 1 and "g2m: the run is not complete: 14 request(s) of fake-vlm failed after their " \
        "retries in g2m_n03_c3, g2m_n04_c3, g2m_n05_c3, g2m_n06_c3, g2m_n07_c3, g2m_n08_c3 and 1 more task(s)" \
        in res.stderr, res.stderr
    (results,) = _results(tmp_path)
    doc = json.loads(results.read_text())
    for n in sizes:
        assert doc["results"][f"g2m_n{n:02d}_c3"]["request_failed,none"] == 1.0
        line = json.loads((results.parent / f"samples_g2m_n{n:02d}_c3_{results.stem[8:]}.jsonl").read_text()
                          .splitlines()[0])
        assert "malformed response" in line["doc"]["g2m"]["error"]
    null = doc["results"]["g2m_n10_c3"]  # null content: the empty answer, a parse failure, cached like any answer
    assert null["parse_failed,none"] == 1.0 and null["request_failed,none"] == 0.0
    assert doc["results"]["g2m_n12_c3"]["exact_match,none"] == 1.0
    state.config, before = {}, dict(state.received)
    again = _eval(url, small_release, tmp_path, tasks)
    assert again.returncode == 0, again.stderr
    sent = {n: state.received[n] - before.get(n, 0) for n in (*sizes, 10, 12)}
    assert sent == {**{n: 2 for n in sizes}, 10: 0, 12: 0}  # exactly the failed ones, once each
    doc = json.loads(_results(tmp_path)[-1].read_text())
    assert all(doc["results"][f"g2m_n{n:02d}_c3"]["exact_match,none"] == 1.0 for n in sizes)


def test_a_huge_answer_is_stored_cut_at_the_cap_in_the_log_and_the_cache(server, small_release, tmp_path):
    url, state = server
    state.config = {"huge": {3: 5_000_000}}  # 5 MB of chatter after the right answer
    res = _eval(url, small_release, tmp_path, "g2m_n03_c3")
    assert res.returncode == 0, res.stderr
    (results,) = _results(tmp_path)
    (samples,) = results.parent.glob("samples_*.jsonl")
    assert samples.stat().st_size < 2 * 2 * 270_000 + 100_000  # 2 rows, the text twice per line, at the cap
    line = json.loads(samples.read_text().splitlines()[0])
    assert line["doc"]["g2m"]["oversized"] is True and line["doc"]["g2m"]["answer_chars"] > 5_000_000
    assert line["exact_match"] == 1.0  # scored as the capped text, which still starts with the right grid
    assert sum(p.stat().st_size for p in (tmp_path / "cache").glob("*")) < 1_500_000


@pytest.mark.parametrize(("required", "outcome"), [(None, pytest.skip.Exception), ("1", pytest.fail.Exception)])
def test_without_root_a_tmpfs_case_skips_unless_root_is_required(monkeypatch, required, outcome):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("G2M_REQUIRE_ROOT", raising=False)
    if required:
        monkeypatch.setenv("G2M_REQUIRE_ROOT", required)
    with pytest.raises(outcome, match="tmpfs mounts need root"), tmpfs("1m"):
        pass


@pytest.mark.needs_root
def test_a_full_disk_while_samples_are_written_fails_in_one_line_and_leaves_no_run(server, small_release):
    url, state = server
    state.config = {"huge": {3: 400_000, 4: 400_000, 5: 400_000}}  # 6 answers at the cap: ~1.6 MB of cache
    with tmpfs("4m") as out:
        res = _eval(url, small_release, out)
        assert "samples_" in _one_line_error(res) and "No space left on device" in res.stderr
        assert _results(out) == []  # no results file: nothing a later command could score as a run
        report = g2m("report", str(out / "fake-vlm"))
        assert report.returncode != 0 and "no lm-eval results" in report.stderr
        remount(out, "size=40m")  # space again: the rerun resumes from the cache and completes
        received = sum(state.received.values())
        again = _eval(url, small_release, out)
        assert again.returncode == 0, again.stderr
        assert sum(state.received.values()) == received  # every answer came from the cache
        assert g2m("report", str(out / "fake-vlm")).returncode == 0


@pytest.mark.needs_root
def test_a_full_disk_while_the_answer_cache_is_saved_fails_within_seconds_never_hangs(server, small_release):
    url, state = server
    state.config = {"huge": {3: 400_000, 4: 400_000, 5: 400_000}}
    with tmpfs("1200k") as out:
        # a hang is forever: the bound only has to be far above a loaded machine's start-up of g2m (about 30 s)
        res = _eval(url, small_release, out, timeout=300)
        line = _one_line_error(res)
        assert "could not save" in line and ".db" in line and "full" in line
        assert res.returncode == 1  # a storage failure, as a full disk anywhere else: not bad input (2)
        assert _results(out) == []


@pytest.mark.needs_root
def test_a_read_only_output_is_one_line(server, small_release, tmp_path):
    url, _ = server
    with tmpfs("1m") as out:
        remount(out, "ro")
        res = _eval(url, small_release, out / "runs")
        assert "Read-only file system" in _one_line_error(res)
        res = g2m("build", "--out", str(out / "release"), "--configs", "zero_shot", "--scale", "0.02", "--quiet")
        assert "Read-only file system" in _one_line_error(res) and res.returncode == 1


@pytest.mark.needs_root
def test_build_on_a_full_disk_fails_in_one_line_and_a_rerun_with_space_completes(tmp_path):
    with tmpfs("300k") as out:
        res = g2m("build", "--out", str(out / "g2m"), "--configs", "zero_shot", "--scale", "0.05", "--quiet")
        assert "No space left on device" in _one_line_error(res) and res.returncode == 1  # storage, not bad input
        assert not (out / "g2m" / "manifest.json").exists()  # an unfinished build never looks finished
        remount(out, "size=60m")
        assert g2m("build", "--out", str(out / "g2m"), "--configs", "zero_shot", "--scale", "0.05",
                   "--quiet").returncode == 0
        verify = g2m("verify", str(out / "g2m"), "--quiet")
        assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_second_run_on_the_same_output_is_refused_at_once_and_nothing_is_sent_twice(server, small_release,
                                                                                       tmp_path):
    url, state = server
    # the first run's 3x3 answers are held until the second run has been refused, however long that takes to start
    state.config = {"stall": [3], "stall_seconds": WAIT}
    cmd = [sys.executable, "-m", "g2m_cli", "eval", "--base-url", url, "--tasks", TASKS3, "--data",
           str(small_release), "--out", str(tmp_path), "--quiet"]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        wait_for(lambda: state.received[3] > 0, "the first run's first request", proc=first)
        second = _eval(url, small_release, tmp_path, timeout=WAIT)
        assert "another g2m eval is running" in _one_line_error(second)
    finally:
        state.release()
    _, err = ended(first, "the first run")
    assert first.returncode == 0, err
    assert sum(state.received.values()) == 6  # 3 tasks x 2 rows, each sent once


def _materialise(folder: str, all_here) -> str:
    from harness_tasks.evaluation.task_yaml import DataSource
    from harness_tasks.with_lm_eval.taskgen import write_folder

    all_here.wait()  # every process has imported what it needs: they start writing together
    return str(write_folder(Path(folder), DataSource("grid2matrix/g2m", "v0-test")))


def test_processes_creating_the_same_task_folder_at_once_all_get_it_whole(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        all_here = manager.Barrier(8, timeout=WAIT)
        with ctx.Pool(8) as pool:
            pending = [pool.apply_async(_materialise, (str(tmp_path), all_here)) for _ in range(8)]
            folders = {p.get(timeout=WAIT) for p in pending}
    (folder,) = folders
    assert len(list(Path(folder).glob("*.yaml"))) == 90 and (Path(folder) / "utils.py").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [Path(folder).name]  # no temp folder left behind


STAND_IN = """#!{python}
import os, subprocess, sys, time
argv = sys.argv[1:]
port = argv[argv.index("--port") + 1]
with open(os.environ["FAKE_VLLM_RECORD"], "w") as f:
    f.write(port)
# the grandchild serves, in a session of its own (out of the process group), as detached helpers do
subprocess.Popen([{python!r}, {server!r}, "--port", port, "--model", argv[1], "--config", os.environ["FAKE_CONFIG"]],
                 start_new_session=True)
time.sleep(3600)
"""


def _answers(port: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_after_any_end_of_g2m_eval_serve_nothing_answers_on_its_port(sig, small_release, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "vllm"
    exe.write_text(STAND_IN.format(python=sys.executable, server=str(REPO / "tests" / "support" / "vlm_server.py")))
    exe.chmod(0o755)
    record = tmp_path / "port"
    # tqdm's own switches: draw the progress bar at every answer, so that it says how many g2m holds
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_VLLM_RECORD": str(record),
           "FAKE_CONFIG": json.dumps({"stall": [5], "stall_seconds": 600}), "HF_HUB_OFFLINE": "1",
           "TQDM_MININTERVAL": "0", "TQDM_MINITERS": "1"}
    out, log = tmp_path / "runs", tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "g2m_cli", "eval", "--serve", "org/tiny-vlm", "--tasks", TASKS3,
                                 "--data", str(small_release), "--out", str(out)], env=env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=stderr, text=True)
    try:
        wait_for(lambda: record.exists() and _answers(record.read_text()), "the stand-in server to answer", proc=proc)
        # the 3x3 and 4x4 answers are in (the bar counts an answer once it is held for the cache); the 5x5 ones stall
        wait_for(lambda: "| 4/6 [" in log.read_text(), "the progress bar at 4/6", proc=proc)
    except AssertionError as e:
        proc.kill()
        raise AssertionError(f"{e}: {log.read_text()[-3000:]}") from None
    port = record.read_text()
    proc.send_signal(sig)
    ended(proc, "g2m eval after the signal")
    err = log.read_text()
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM)" in err, err
        assert _cache_rows(out) == 4, err  # what was received before the signal is saved
    try:
        wait_for(lambda: not _answers(port), "the server started by --serve to stop answering", timeout=120, poll=0.5)
    except AssertionError:
        raise AssertionError("the server started by --serve still answers") from None
    assert _results(out) == []


def test_an_interrupt_while_the_run_is_written_leaves_no_run_to_score(server, small_release, tmp_path, monkeypatch):
    from harness_tasks.evaluate import EvalSpec, run_eval
    from scoring.runs import write as run_files

    url, _ = server
    real, calls = run_files.atomic_write_text, []

    def interrupted(path, text):
        calls.append(path)
        if len(calls) == 2:  # the second samples file: Ctrl-C
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(run_files, "atomic_write_text", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_eval(EvalSpec(base_url=url, tasks=tuple(TASKS3.split(",")), data=str(small_release),
                          output=str(tmp_path), progress=False))
    assert _results(tmp_path) == [] and len(list(tmp_path.rglob("samples_*.jsonl"))) == 1
    assert "no lm-eval results" in g2m("report", str(tmp_path / "fake-vlm")).stderr
