"""Report and submit say what they read and what they wrote: the run
of the folder they read, and that it holds others (``--run`` chooses); a PARTIAL submission named as such, with the
tasks it lacks and no advice to send it; the model facts left out, with the flags that set them; a cut last line of a
samples file named whatever the results file lists; and a served run's versions recorded as the server reported
them, never g2m's own environment's as the engine's."""

from __future__ import annotations

import gzip
import json
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest

from harness_tasks.evaluate import EvalSpec, run_eval
from scoring.rescoring.load import load_run
from scoring.runs.run import RunError
from submission.submission import write_submission
from tests.support import vlm_server
from tests.support.helpers import g2m, partial_run

#: What the random run is submitted as: a baseline's own name is refused (the board computes the baselines itself).
ID = "org/random-run"

pytestmark = pytest.mark.slow


def _dates(folder: Path) -> list[str]:
    return [p.name[len("results_"):-len(".json")] for p in sorted(folder.glob("results_*.json"))]


def test_report_and_submit_name_the_run_they_read_and_run_chooses_another(random_run, small_release, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(random_run.parent, runs)  # the model folder and its answer cache
    folder = runs / random_run.name
    res = g2m("eval", "--model", "g2m-random", "--data", str(small_release), "--out", str(runs), "--tasks",
              "g2m_n03_c3")
    assert res.returncode == 0, res.stderr
    old, new = _dates(folder)  # a 2-sample run now sits beside the 90-sample one, in the same folder
    res = g2m("report", str(folder), "--out", str(tmp_path / "newest"))
    assert res.returncode == 0, res.stderr
    assert "over 2 samples" in res.stdout
    assert (f"read the run results_{new}.json in {folder} (the newest); the folder holds 1 other run(s) ({old}): "
            "choose one with --run DATE") in res.stdout
    for chosen in (old, f"results_{old}.json", str(folder / f"results_{old}.json")):
        res = g2m("report", str(folder), "--out", str(tmp_path / "old"), "--run", chosen)
        assert res.returncode == 0, res.stderr
        assert "over 90 samples" in res.stdout and f"read the run results_{old}.json" in res.stdout
        assert f"the folder holds 1 other run(s) ({new})" in res.stdout
        report = json.loads((tmp_path / "old" / "report.json").read_text())
        assert report["results_file"] == f"results_{old}.json" and report["other_runs"] == [new]
    res = g2m("submit", str(folder), "--out", str(tmp_path / "s.json"), "--allow-partial", "--no-input", "--run", old,
              "--model-id", ID)
    assert res.returncode == 0, res.stderr
    assert f"read the run results_{old}.json" in res.stdout
    assert len(json.loads((tmp_path / "s.json").read_text())["records"]) == 90
    for bad in ("2020-01-01", str(random_run / f"results_{old}.json")):  # no such run; another folder's file
        res = g2m("report", str(folder), "--out", str(tmp_path / "x"), "--run", bad)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert f"holds no run {bad!r}; its runs: {old}, {new}" in res.stderr


def test_a_partial_submission_says_partial_names_what_is_missing_and_never_says_send_it(random_run, tmp_path):
    out = tmp_path / "s.json"
    run = partial_run(random_run, tmp_path)  # one task's samples file is gone: the run did not finish
    res = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--no-input", "--model-id", ID)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"PARTIAL submission written to {out}: not for the leaderboard")
    assert "the run: g2m_n64_c10" in res.stdout and "g2m_n03_c3: 98 of 100 ids missing" in res.stdout
    assert "and 38 more" in res.stdout
    assert "pull request" not in res.stdout and "check it with" not in res.stdout
    assert g2m("validate", str(out)).returncode == 1  # what it said: it does not validate
    warning = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and all(flag in warning[0] for flag in ("--params", "--open-weights or --api",
                                                                     "--release-date", "--model-url"))
    assert "the parameter count" in warning[0] and "the release date" in warning[0]
    res = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--params", "7B", "--api",
              "--release-date", "2025-01-31", "--model-id", ID)
    warning = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert res.returncode == 0 and len(warning) == 1 and "--model-url" in warning[0] and "--params" not in warning[0]


def _no_counts(results: dict) -> None:  # a plain lm-eval run: neither g2m.samples nor an n-samples block
    results["g2m"].pop("samples")
    results.pop("n-samples")


def _no_counts_no_tasks(results: dict) -> None:  # ... and no per-task results either (an older run)
    _no_counts(results)
    results["results"] = {}


@pytest.mark.parametrize("strip", [_no_counts, _no_counts_no_tasks])
def test_a_cut_last_line_is_named_whatever_the_results_file_lists(random_run, tmp_path, strip):
    run = tmp_path / "run"
    shutil.copytree(random_run, run)
    results_path = next(run.glob("results_*.json"))
    results = json.loads(results_path.read_text())
    strip(results)
    results_path.write_text(json.dumps(results))
    f = next(run.glob("samples_g2m_n05_c5_*.jsonl"))
    f.write_bytes(f.read_bytes()[:-40])
    with pytest.raises(RunError, match="g2m_n05_c5: the last line of its samples file is cut short"):
        load_run(run)
    res = g2m("report", str(run), "--out", str(tmp_path / "r"))
    assert res.returncode != 0 and "g2m_n05_c5: the last line of its samples file is cut short" in res.stderr
    assert "exact match" not in res.stdout
    assert load_run(run,
                    allow_partial=True).incomplete == ("g2m_n05_c5: the last line of its samples file is cut short",)


@pytest.mark.parametrize(("config", "server_version"), [({"version": "0.32.0", "root": "/models/fake"}, "0.32.0"),
                                                         ({}, None)])
def test_a_served_submission_records_the_servers_facts_as_the_servers(small_release, tmp_path, config, server_version):
    httpd, _ = vlm_server.start("fake-vlm", **config)
    try:
        res = run_eval(EvalSpec(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", tasks=("g2m_n03_c3",),
                                data=str(small_release), output=str(tmp_path), progress=False))
    finally:
        httpd.shutdown()
    meta = json.loads(gzip.decompress(write_submission(res["output_dir"], tmp_path / "s.json.gz",
                                                       allow_partial=True).read_bytes()))["metadata"]
    server = meta["server"]
    assert server["reported"] is True and server["version"] == server_version and server["id"] == "fake-vlm"
    # the server's root is a folder on the submitter's machine: the public file says only that
    assert server["root"] == ("(a local folder)" if "root" in config else "fake-vlm")
    assert server["max_model_len"] == 32768 and server["reported_at"]
    assert meta["model"]["model_args"].startswith("base_url=(a private address),") and meta["dataset"]["source"] == (
        "a local build")
    versions = meta["versions"]  # g2m's own libraries did not answer: never the engine's, kept as the client's
    assert versions["transformers"] is None and versions["vllm"] is None and versions["torch"] is None
    assert versions["client"]["transformers"] == version("transformers")
    assert versions["grid2matrix"] and versions["lm_eval"]


def test_an_in_process_submission_records_its_own_environment_and_no_server(random_run, tmp_path):
    meta = json.loads(gzip.decompress(write_submission(random_run, tmp_path / "s.json.gz", allow_partial=True,
                                                       model_info={"id": ID}).read_bytes()))["metadata"]
    assert meta["server"] is None and "client" not in meta["versions"]
    assert meta["versions"]["transformers"] == version("transformers")
