"""The harness end to end through real lm-eval: built-in models, resumption, truncation and both CLIs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dataset_builder.grids.prompt import PROMPT_VERSION
from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID
from harness_tasks import TASK_DIR
from harness_tasks.evaluate import EvalSpec, run_eval
from harness_tasks.with_lm_eval import baseline_models as models
from scoring.catalog import TASK_VERSION, all_tasks
from tests.support.helpers import REPO

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


def _scores(results: dict, name: str) -> dict:
    if name in results["g2m"]["tags"]:
        return results["g2m"]["tags"][name]
    entry = results["results"][name]
    return {k.split(",")[0]: v for k, v in entry.items() if k.endswith(",none") and "_stderr" not in k}


@pytest.fixture(scope="module")
def oracle_run(small_release, tmp_path_factory):
    return run_eval(EvalSpec(model="g2m-oracle", data=str(small_release), output=str(tmp_path_factory.mktemp("runs"))))


def test_the_oracle_scores_100_percent_on_every_task(oracle_run):
    for name, _, _ in all_tasks():
        s = _scores(oracle_run, name)
        assert (s["exact_match"], s["cell_accuracy"], s["parse_failed"], s["truncated"]) == (1.0, 1.0, 0.0, 0.0), name
    assert _scores(oracle_run, "g2m")["exact_match"] == 1.0


def test_results_pin_data_task_version_and_package_versions(oracle_run, small_release):
    g2m = oracle_run["g2m"]
    assert g2m["data"]["source"] == str(Path(small_release).resolve()) and g2m["data"]["manifest_sha256"]
    assert (g2m["task_version"] == TASK_VERSION and g2m["versions"]["grid2matrix"]
            and g2m["versions"]["lm_eval"] == "0.4.13")
    assert oracle_run["versions"]["g2m_n09_c3"] == TASK_VERSION
    # a prompt change shows in the results: in G2M's block and in each task's metadata that lm-eval records
    assert g2m["prompt_version"] == PROMPT_VERSION
    assert oracle_run["configs"]["g2m_n09_c3"]["metadata"]["prompt_version"] == PROMPT_VERSION
    assert oracle_run["config"]["model"] == "g2m-oracle"


def test_samples_are_logged_with_masks_and_strategies(oracle_run):
    out = Path(oracle_run["output_dir"])
    files = sorted(out.glob("samples_g2m_n05_c10_*.jsonl"))
    assert len(files) == 1 and sorted(out.glob("results_*.json"))
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["doc"]["g2m"]["cell_mask"] == [[1] * 5] * 5 and row["doc"]["g2m"]["parse_strategy"] == "list_literal"
        # PNG bytes, hashed
        assert row["doc"]["id"].startswith("zs-n05-c10-") and len(row["doc"]["image"]["bytes"]) == 64
        assert row["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == 256


def test_the_random_model_is_at_chance(small_release, tmp_path):
    res = run_eval(EvalSpec(model="g2m-random", tasks=("g2m_c3", "g2m_c5", "g2m_c10"), data=str(small_release),
                            output=str(tmp_path)))
    for c in (3, 5, 10):
        s = _scores(res, f"g2m_c{c}")
        assert abs(s["cell_accuracy"] - 1 / c) < 0.06, (c, s)
        assert s["exact_match"] == 0.0 and s["parse_failed"] == 0.0


def test_a_run_that_dies_resumes_without_redoing_finished_requests(small_release, tmp_path, monkeypatch):
    spec = EvalSpec(model="g2m-oracle", tasks=("g2m",), data=str(small_release), output=str(tmp_path), resume_chunk=32)
    calls = {"n": 0}
    real = models.OracleLM.answer

    def dying(self, context, image):
        calls["n"] += 1
        if calls["n"] > 70:
            raise RuntimeError("simulated crash (GPU lost)")
        return real(self, context, image)

    monkeypatch.setattr(models.OracleLM, "answer", dying)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_eval(spec)
    monkeypatch.setattr(models.OracleLM, "answer", real)
    res = run_eval(spec)
    assert res["g2m"]["resumed_answers"] == 70  # two chunks committed, and the rest on the way out of the crash
    assert res["g2m"]["generated_answers"] == 90 - 70
    assert _scores(res, "g2m")["exact_match"] == 1.0
    # another model never reads this model's answers
    other = run_eval(EvalSpec(model="g2m-random", tasks=("g2m",), data=str(small_release), output=str(tmp_path)))
    assert other["g2m"]["resumed_answers"] == 0


def test_the_authors_2048_token_cap_shows_up_as_truncation(small_release, tmp_path):
    res = run_eval(EvalSpec(model="g2m-oracle", model_args="budget=chars", tasks=("g2m_n32_c3", "g2m_n20_c3"),
                            data=str(small_release), output=str(tmp_path), gen_kwargs="max_gen_toks=2048"))
    big, small = _scores(res, "g2m_n32_c3"), _scores(res, "g2m_n20_c3")
    assert big["truncated"] == 1.0 and big["exact_match"] == 0.0 and big["parse_failed"] == 0.0
    assert 0.5 < big["cell_accuracy"] < 0.7  # the rows that fit in 2,048 characters are still credited
    assert small["truncated"] == 0.0 and small["exact_match"] == 1.0


def _env():
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def test_plain_lm_eval_reads_a_local_build_and_any_combination_of_tags(small_release, tmp_path):
    """lm_eval itself (here g2m-lm-eval, which is lm_eval with the baselines registered), on the task folder that
    ``g2m tasks-dir --data`` writes for a local build: overlapping tags run together, and the results name the data."""
    exe = str(Path(sys.executable).parent / "g2m-lm-eval")
    task_dir = subprocess.run([str(Path(sys.executable).parent / "g2m"), "tasks-dir", "--data", str(small_release),
                               "--out", str(tmp_path / "tasks")], capture_output=True, text=True,
                               check=True).stdout.strip()
    res = subprocess.run([exe, "--model", "g2m-oracle", "--include_path", task_dir, "--tasks", "g2m_c5,g2m_lite,g2m",
                          "--apply_chat_template", "--log_samples", "--output_path", str(tmp_path / "out"), "--limit",
                          "1"],
                         capture_output=True, text=True, timeout=600, env=_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "g2m_n64_c5" in res.stdout and "exact_match" in res.stdout and "Custom kwargs" not in res.stderr
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())
    assert len(results["results"]) == 45 and all(r["exact_match,none"] == 1.0 for r in results["results"].values())
    cfg = results["configs"]["g2m_n09_c3"]
    assert cfg["dataset_path"] == str(small_release.resolve()) and cfg["dataset_name"] == "zero_shot"
    assert (cfg["metadata"]["manifest_sha256"]
            == hashlib.sha256((small_release / "manifest.json").read_bytes()).hexdigest())
    assert len(list((tmp_path / "out").rglob("samples_g2m_n*_c5_*.jsonl"))) == 15
    row = json.loads(next((tmp_path / "out").rglob("samples_g2m_n07_c3_*.jsonl")).read_text().splitlines()[0])
    assert (row["doc"]["g2m"]["parse_strategy"] == "list_literal"
            and "parse_strategy" not in results["results"]["g2m_n07_c3"])


def test_the_installed_folder_names_the_pinned_release():
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(TASK_DIR / "_default_template_yaml", resolve_func=False)
    assert (cfg["dataset_path"], cfg["dataset_name"], cfg["dataset_kwargs"]) == (
        HUB_REPO_ID, "zero_shot", {"revision": DATASET_REVISION})


def test_g2m_eval_without_a_model_is_the_main_job(tmp_path):
    res = subprocess.run([str(Path(sys.executable).parent / "g2m"), "eval", "--tasks", "g2m_lite", "--scale", "0.01",
                          "--output", str(tmp_path)], capture_output=True, text=True, timeout=600, env=_env(), cwd=REPO)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "### g2m-oracle on g2m_lite" in res.stdout and "### g2m-random on g2m_lite" in res.stdout
    oracle_table = res.stdout.split("### g2m-random")[0]
    assert "| g2m_lite | 1.000 | 1.000 | 1.000 | 0.000 | 0.000 |" in oracle_table
    assert (tmp_path / "data" / "manifest.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--tasks", "g2m_nope"], "unknown G2M task"),
    (["--model", "no-such-backend", "--data", "{data}"], "no-such-backend"),
    (["--model", "g2m-oracle", "--data", "{tmp}/missing"], "is not a folder"),
    (["--model", "g2m-oracle", "--data", "{data}", "--limit", "0"], "--limit must be an integer of at least 1"),
])
def test_bad_eval_arguments_are_one_line_errors(small_release, tmp_path, args, message):
    args = [a.replace("{data}", str(small_release)).replace("{tmp}", str(tmp_path)) for a in args]
    res = subprocess.run([str(Path(sys.executable).parent / "g2m"), "eval", *args, "--output", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


def test_a_backend_without_its_dependencies_names_the_extra(small_release, tmp_path):
    pytest.importorskip("lm_eval")
    try:
        import vllm  # noqa: F401

        pytest.skip("vllm is installed here")
    except ImportError:
        pass
    res = subprocess.run([str(Path(sys.executable).parent / "g2m"), "eval", "--model", "vllm-vlm", "--model-args",
                          "pretrained=x", "--data", str(small_release), "--tasks", "g2m_n03_c3", "--output",
                          str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 2 and "the vllm-vlm backend needs" in res.stderr
    assert "pip install 'grid2matrix[vllm]'" in res.stderr


def test_both_protocols_end_to_end_the_oracle_and_a_truncating_model(small_release, tmp_path):
    res = run_eval(EvalSpec(model="g2m-oracle", tasks=("g2m_paper",), data=str(small_release), output=str(tmp_path)))
    paper = res["g2m"]["tags"]["g2m_paper"]
    assert paper["exact_match"] == 1.0 and paper["cell_accuracy"] == 1.0 and paper["parse_failed"] == 0.0
    assert res["configs"]["g2m_paper_n64_c3"]["generation_kwargs"]["max_gen_toks"] == 2048
    cut = run_eval(EvalSpec(model="g2m-oracle", model_args="budget=chars", data=str(small_release),
                            output=str(tmp_path),
                            tasks=("g2m_paper_n24_c3", "g2m_paper_n32_c3", "g2m_n32_c3")))
    # the authors' 2,048 tokens hold a 24x24 list answer (1,776 characters) but not a 32x32 one (3,200): their parser
    # then finds no list of lists and 3 x 32 x 21 digit runs instead of 1,024, a parse error; G2M's budget holds it
    assert _scores(cut, "g2m_paper_n24_c3")["exact_match"] == 1.0
    p32 = _scores(cut, "g2m_paper_n32_c3")
    assert (p32["exact_match"], p32["cell_accuracy"], p32["parse_failed"], p32["truncated"]) == (0.0, 0.0, 1.0, 1.0)
    assert _scores(cut, "g2m_n32_c3")["exact_match"] == 1.0
