"""The lm-eval task folder: generated files in sync, every file loadable, no prompt pasted in YAML."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import yaml

from dataset_builder.grids.prompt import PROMPT_VERSION
from harness_tasks import TASK_DIR
from harness_tasks.with_lm_eval.taskgen import out_of_sync
from harness_tasks.with_lm_eval.validate import expected_names, validate
from harness_tasks.with_lmms_eval.taskgen import LMMS_TASK_DIR
from scoring.budget import max_gen_toks
from scoring.catalog import TASK_VERSION, all_tasks, tags


def test_generated_yaml_is_in_sync():
    assert out_of_sync() == []


@pytest.mark.parametrize("folder", [TASK_DIR, LMMS_TASK_DIR], ids=["lm-eval", "lmms-eval"])
def test_every_task_records_its_version_and_the_prompts(folder):
    """A harness copies a task's metadata into its results: a new task version or prompt wording shows there."""
    loader = type("TaskLoader", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda load, node: load.construct_scalar(node))  # the harnesses' hook tag
    template = yaml.load((folder / "_default_template_yaml").read_text(), Loader=loader)
    assert template["metadata"] == {"version": TASK_VERSION, "prompt_version": PROMPT_VERSION}


def test_an_edited_or_stray_yaml_is_noticed(tmp_path):
    folder = tmp_path / "tasks"
    shutil.copytree(TASK_DIR, folder)
    (folder / "g2m_n09_c3.yaml").write_text((folder / "g2m_n09_c3.yaml").read_text().replace("391", "2048"))
    (folder / "g2m_extra.yaml").write_text("task: g2m_extra\n")
    assert out_of_sync(folder) == ["g2m_extra.yaml", "g2m_n09_c3.yaml"]


def test_tasks_tags_and_budgets():
    assert len(all_tasks()) == 45
    assert set(tags()) == {"g2m", "g2m_c3", "g2m_c5", "g2m_c10", "g2m_lite",
                           "g2m_paper", "g2m_paper_c3", "g2m_paper_c5", "g2m_paper_c10", "g2m_paper_lite"}
    assert len(tags()["g2m_lite"]) == 27 and len(tags()["g2m_c10"]) == 15 and len(tags()["g2m"]) == 45
    assert tags()["g2m_paper"] == [f"g2m_paper_{name[4:]}" for name in tags()["g2m"]]
    paper = (TASK_DIR / "g2m_paper_n48_c5.yaml").read_text()
    assert "max_gen_toks: 2048" in paper and "process_results: !function utils.process_results_paper" in paper
    assert "max_gen_toks: 554" in (TASK_DIR / "g2m_paper_n09_c3.yaml").read_text()  # 4*81 + 20*9 + 50
    text = (TASK_DIR / "g2m_n48_c5.yaml").read_text()
    assert f"max_gen_toks: {max_gen_toks(48)}" in text and "until: []" in text and "do_sample: false" in text


def test_the_prompt_lives_in_the_data_not_the_yaml():
    for path in TASK_DIR.iterdir():
        if path.suffix in (".yaml", "") and path.is_file():
            assert "Instructions" not in path.read_text() and "Python list" not in path.read_text(), path.name


@pytest.mark.slow
def test_the_folder_validates_and_every_task_builds_on_a_local_release(small_release):
    assert validate(data=str(small_release)) == []


@pytest.mark.slow
def test_a_broken_yaml_is_reported_not_skipped(tmp_path):
    folder = tmp_path / "tasks"
    shutil.copytree(TASK_DIR, folder)
    (folder / "g2m_n05_c5.yaml").write_text("task: g2m_n05_c5\ninclude: [unclosed\n")
    problems = validate(folder)
    assert any(p.startswith("g2m_n05_c5.yaml: does not load") for p in problems)
    assert "g2m_n05_c5: missing from lm-eval's index" in problems


@pytest.mark.slow
def test_lm_eval_validate_finds_every_task_and_group():
    """lm-eval skips a task file it cannot parse without a word: ``lm-eval validate`` on the folder ``g2m tasks-dir``
    prints (the installed one) finds every task and group by name."""
    bin_dir = __import__("pathlib").Path(sys.executable).parent
    folder = subprocess.run([str(bin_dir / "g2m"), "tasks-dir"], capture_output=True, text=True, check=True,
                            timeout=60).stdout.strip()
    assert folder == str(TASK_DIR)
    exe = shutil.which("lm-eval", path=str(bin_dir))
    res = subprocess.run([exe, "validate", "--tasks", ",".join(expected_names()), "--include_path", folder],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "All tasks found and valid" in res.stdout, res.stdout + res.stderr


def test_the_changelog_describes_the_current_task_version():
    changelog = (TASK_DIR / "README.md").read_text().split("## Changelog", 1)[1]
    assert f"- {TASK_VERSION} " in changelog
