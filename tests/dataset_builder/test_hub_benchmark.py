"""G2M as a Hub benchmark: the release's eval.yaml follows the Hub's rules (and inspect-ai's own reader of it), and
``.eval_results`` files are built with huggingface_hub's own classes from re-scored outputs of the release only."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from functools import cache

import pytest
import yaml

from dataset_builder.grids.configs import CONFIG_NAMES, get_config
from dataset_builder.grids.spec import DATASET_REVISION, EVAL_YAML_NAME, HUB_REPO_ID, HUB_TASKS
from dataset_builder.release.hub_card import eval_yaml, eval_yaml_problems
from dataset_builder.release.table import FEATURES_DICT
from on_hub.eval_results import SELF_REPORTED, checked_date, checked_version
from tests.support.helpers import g2m, submission_doc, write_file

SPLITS = {name: [s.name for s in get_config(name).splits] for name in CONFIG_NAMES}


@cache
def _parsed() -> dict:
    return yaml.safe_load(eval_yaml(list(CONFIG_NAMES)))


def _release_eval_yaml() -> dict:
    return copy.deepcopy(_parsed())


def test_eval_yaml_follows_the_hubs_rules_with_one_task_per_leaderboard():
    doc = _release_eval_yaml()
    assert eval_yaml_problems(doc, SPLITS) == []
    assert doc["evaluation_framework"] == "inspect-ai"
    assert [t["id"] for t in doc["tasks"]] == list(HUB_TASKS)  # the ids results files report to
    for task in doc["tasks"]:
        assert (task["config"], task["split"]) == ("zero_shot", "test")
        spec = task["field_spec"]
        named = [spec["input"], spec["target"], spec["input_image"], spec["id"], *spec["metadata"]]
        assert set(named) <= set(FEATURES_DICT), named  # every field it names is a column of the release


@pytest.mark.slow
def test_every_hub_task_is_a_tag_of_the_g2m_tasks_and_a_view_the_board_ranks_on():
    from leaderboard.index_page import VIEWS
    from scoring.catalog import tags

    assert set(HUB_TASKS) <= set(tags())
    assert {"g2m" if v == "all" else f"g2m_{v}" for v in VIEWS} <= set(HUB_TASKS)


def test_a_build_without_zero_shot_has_no_eval_yaml():
    assert eval_yaml(["probe_n20_c3"]) is None


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d.pop("name"), "name must be a non-empty string"),
    (lambda d: d.pop("evaluation_framework"), "evaluation_framework must be"),
    (lambda d: d.update(evaluation_framework="my-harness"), "is not one the Hub knows"),
    (lambda d: d.update(tasks=[]), "tasks must be a non-empty list"),
    (lambda d: d["tasks"][1].update(id="g2m"), "unique string id"),
    (lambda d: d["tasks"][0].pop("id"), "unique string id"),
    (lambda d: d["tasks"][0].update(config="nope"), "reads nope/test, which the dataset does not have"),
    (lambda d: d["tasks"][0].update(split="train"), "reads zero_shot/train"),
    (lambda d: d["tasks"][0]["field_spec"].pop("target"), "field_spec must name the input and target"),
    (lambda d: d["tasks"][0].update(solvers=[]), "solvers must be a non-empty list"),
    (lambda d: d["tasks"][0].update(scorers=[{"name": "g2m_scorer"}]), "is not one of inspect-ai's"),
])
def test_the_offline_rules_refuse_a_broken_eval_yaml(change, problem):
    doc = _release_eval_yaml()
    change(doc)
    found = eval_yaml_problems(doc, SPLITS)
    assert any(problem in p for p in found), found


@pytest.mark.slow
def test_inspect_ai_reads_every_task_of_the_eval_yaml():
    """inspect-ai's own model of a Hub task (what ``inspect eval hf/ORG/NAME`` validates) accepts every entry."""
    from inspect_ai._eval.task.hf import HFTask

    for task in _release_eval_yaml()["tasks"]:
        parsed = HFTask.model_validate(task)
        assert (parsed.id, parsed.config, parsed.split) == (task["id"], "zero_shot", "test")


@pytest.mark.slow
def test_the_build_writes_lists_and_verifies_eval_yaml(small_release, tmp_path):
    manifest = json.loads((small_release / "manifest.json").read_text())
    raw = (small_release / EVAL_YAML_NAME).read_bytes()
    assert manifest["files"][EVAL_YAML_NAME] == {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    assert raw.decode() == eval_yaml(["zero_shot", "probe_n20_c3"])
    assert manifest["intended_release"] is None  # a local build names no release
    root = tmp_path / "rel"
    shutil.copytree(small_release, root)
    edited = raw.replace(b"split: test", b"split: train", 1)
    (root / EVAL_YAML_NAME).write_bytes(edited)
    manifest["files"][EVAL_YAML_NAME] = {"sha256": hashlib.sha256(edited).hexdigest(), "size": len(edited)}
    (root / "manifest.json").write_text(json.dumps(manifest))
    res = g2m("verify", str(root))
    assert res.returncode == 1 and "eval.yaml: differs from the one this package writes" in res.stderr


# -- .eval_results -------------------------------------------------------------------------------------------------


def _wrong_for_three_colours(truth):
    from scoring.parsing import format_answer
    from scoring.rescoring.rescore import truth_matrix

    return "no matrix here" if truth.num_colors == 3 else format_answer(truth_matrix(truth))


@pytest.mark.slow
def test_eval_results_of_the_release_read_back_with_its_id_revision_and_rescored_values(tmp_path):
    from huggingface_hub import parse_eval_result_entries

    doc = submission_doc(_wrong_for_three_colours, scores={"g2m": 0.999})  # a stated score is never read
    sub = write_file(tmp_path, doc, "sub.json.gz")
    res = g2m("eval-results", str(sub), "--source-url", "https://example.org/outputs")
    assert res.returncode == 0, res.stderr
    path = tmp_path / ".eval_results" / "grid2matrix.yaml"
    assert f"wrote {path}" in res.stdout
    entries = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    assert [e.task_id for e in entries] == list(HUB_TASKS)
    assert {(e.dataset_id, e.dataset_revision) for e in entries} == {(HUB_REPO_ID, DATASET_REVISION)}
    values = {e.task_id: e.value for e in entries}
    assert values["g2m_c3"] == 0.0 and values["g2m_c5"] == values["g2m_c10"] == 1.0
    assert values["g2m"] == pytest.approx(2 / 3) and values["g2m_lite"] == pytest.approx(2 / 3)
    e = entries[0]
    assert e.date == doc["metadata"]["date"] and e.source_url == "https://example.org/outputs"
    assert "G2M protocol (task version 1.0)" in e.notes and "reasoning budget not recorded" in e.notes
    assert all(SELF_REPORTED in x.notes and x.verify_token is None for x in entries)  # never claimed reproduced
    assert "self-reported" in res.stdout and "left out" not in res.stdout


@pytest.mark.parametrize(("value", "kept"), [
    ("2026-11-29T00:00:00+00:00", True), ("2026-11-29", True), ("2026-11-29T10:15:00", True),
    ("2099-13-45 <b>", False), ("2099-01-01", False), ("2026-12-05", False),  # not a date; the future
    ("2019-12-31", False), ("VERIFIED 2026-11-29", False), ("", False), (None, False), (20261129, False),
    ("2026-11-29T00:00:00+00:00" + " " * 40, False),
])
def test_only_a_real_past_date_is_written(value, kept):
    from datetime import UTC, datetime

    now = datetime(2026, 12, 2, tzinfo=UTC)
    assert checked_date(value, now) == (value if kept else None)


@pytest.mark.parametrize(("value", "written"), [
    (1.0, "1.0"), (2.2, "2.2"), ("2.2", "2.2"), (3, "3"), (True, None), (None, None), ("2.2 <b>", None),
    ("VERIFIED: reproduced by the maintainers on 8xH100", None), ("1.2.3.4.5", None), (float("nan"), None),
])
def test_only_a_version_number_is_written_as_the_task_version(value, written):
    assert checked_version(value) == written


@pytest.mark.slow
def test_eval_results_write_nothing_unchecked_from_the_submission(tmp_path):
    """A forged date, a claim in the task version and a javascript: link: none reaches the Hub's file as fact."""
    doc = submission_doc()
    doc["metadata"]["date"] = "2099-13-45 <b>"
    doc["metadata"]["generation"]["task_version"] = "VERIFIED: reproduced by the maintainers on 8xH100"
    sub = write_file(tmp_path, doc, "sub.json.gz")
    res = g2m("eval-results", str(sub), "--source-url", "javascript:alert(1)")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "must be an http(s) link" in lines[0], res.stderr
    assert not (tmp_path / ".eval_results").exists()
    res = g2m("eval-results", str(sub))
    assert res.returncode == 0, res.stderr
    text = (tmp_path / ".eval_results" / "grid2matrix.yaml").read_text()
    assert "2099" not in text and "VERIFIED" not in text and "<b>" not in text and "task version not recorded" in text
    assert "left out: the run's date 2099-13-45 <b>" in res.stdout
    assert "left out: the task version VERIFIED" in res.stdout


def _local(doc: dict) -> dict:
    doc["metadata"]["dataset"]["content_sha256"] = "0" * 64
    return doc


def _partial(doc: dict) -> dict:
    doc["records"] = doc["records"][:-1]
    return doc


@pytest.mark.slow
@pytest.mark.parametrize(("make", "says"), [
    (_local, "only a run on the release (grid2matrix/g2m v1.0.0) can report to the Hub; this one read a local build"),
    (_partial, "only a complete run of the release can report to the Hub, and this submission is refused: records:"),
], ids=["local-build", "partial"])
def test_eval_results_are_refused_in_one_line_for_anything_but_a_complete_release_run(tmp_path, make, says):
    sub = write_file(tmp_path, make(submission_doc()), "sub.json")
    res = g2m("eval-results", str(sub))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and says in lines[0], res.stderr
    assert not (tmp_path / ".eval_results").exists()


@pytest.mark.slow
def test_submit_of_a_partial_run_on_a_local_build_writes_no_eval_results(random_run, tmp_path):
    """A real run (g2m-random on the small local build, 90 of the 4,500 ids): its submission is written (a complete
    run of a scaled build), and the Hub's file refused in one line: only a run of the release reports to the Hub."""
    res = g2m("submit", str(random_run), "--out", str(tmp_path / "s.json.gz"), "--no-input", "--eval-results",
              "--model-id", "org/random-run")  # a baseline's own name is refused
    lines = [line for line in res.stderr.strip().splitlines() if not line.startswith("warning:")]
    assert res.returncode == 2 and len(lines) == 1 and "only a run on the release" in lines[0], res.stderr
    assert (tmp_path / "s.json.gz").is_file()
    assert not (tmp_path / ".eval_results").exists()
    res = g2m("submit", str(random_run), "--out", str(tmp_path / "p.json.gz"), "--no-input", "--eval-results",
              "--allow-partial", "--model-id", "org/random-run")
    assert res.returncode == 2 and "--eval-results reports to the Hub" in res.stderr


@pytest.mark.slow
def test_eval_results_say_reproduced_only_when_a_signed_audit_of_these_outputs_does(tmp_path):
    from audit import records as audit_records
    from audit.key import signing_key
    from submission.submission import validate

    sub = write_file(tmp_path, submission_doc(), "sub.json")
    v = validate(sub)
    path = tmp_path / ".eval_results" / "grid2matrix.yaml"

    def notes() -> set[str]:
        return {e["notes"] for e in yaml.safe_load(path.read_text())}

    def record(tier: str, model: str = v.metadata["model"]["id"]) -> None:
        audit_records.write(tmp_path / "audits", signing_key(), {
            "submission": {"outputs_sha256": v.outputs_sha256, "content_sha256": v.content_sha256, "model": model},
            "sample": {}, "items": [],
            "replay": {"finished": "2026-12-04T00:00:00Z"},
            "verdict": {"tier": tier, "reason": f"the replay's finding ({tier})"}})

    record("reproduced", model="someone/else")  # these outputs, audited under another name: not this model's
    assert g2m("eval-results", str(sub)).returncode == 0
    assert all(n.endswith(SELF_REPORTED) for n in notes())
    record("reproduced")
    res = g2m("eval-results", str(sub))
    assert res.returncode == 0 and "every value reproduced" in res.stdout
    assert all("; reproduced: the replay's finding (reproduced)" in n and SELF_REPORTED not in n for n in notes())
    record("refuted")
    res = g2m("eval-results", str(sub))
    assert res.returncode == 2 and "refuted these outputs" in res.stderr
