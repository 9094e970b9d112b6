"""Check the task folder the way lm-eval will read it.

lm-eval skips a YAML it cannot parse without a word (and ``lm-eval validate`` only checks that names exist), so a
typo would silently drop a task from the ``g2m`` tag. This loads every file with its ``!function`` hooks resolved,
checks that the index holds exactly the expected tasks and groups, and, given data, builds every task.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dataset_builder.grids.spec import IMAGE_PLACEHOLDER
from harness_tasks import TASK_DIR
from harness_tasks.evaluation.task_yaml import TEMPLATE, DataSource
from harness_tasks.with_lm_eval.fixes import one_load_per_dataset
from harness_tasks.with_lm_eval.taskgen import out_of_sync, write_folder
from scoring.catalog import all_tasks, tags
from scoring.score import PROTOCOLS


def expected_names() -> list[str]:
    return [t for p in PROTOCOLS for t, _, _ in all_tasks(p)] + list(tags())


def validate(folder: Path = TASK_DIR, data: str | None = None) -> list[str]:
    """Problems found (empty when the folder is sound). With ``data`` (a local build), the same tasks are written for
    it and every task is built: its rows load, and its prompt carries the image placeholder."""
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._yaml_loader import load_yaml

    problems = [f"{name}: out of sync with taskgen.py (run scripts/gen_tasks.py)" for name in out_of_sync(folder)]
    for path in sorted(folder.glob("*.yaml")) + [folder / TEMPLATE]:
        try:
            load_yaml(path, resolve_func=True)
        except Exception as e:  # every failure is a finding
            problems.append(f"{path.name}: does not load: {e}")
    tm = TaskManager(include_path=str(folder), include_defaults=False)
    indexed = set(tm.all_subtasks) | set(tm.all_tags)
    problems += [f"{name}: missing from lm-eval's index" for name in expected_names() if name not in indexed]
    problems += [f"{name}: indexed but not expected" for name in sorted(indexed - set(expected_names()))]
    problems += [f"{name}: indexed as a group; G2M's sets are tags" for name in tm.all_groups]
    if data and not problems:
        with tempfile.TemporaryDirectory() as tmp:
            local = write_folder(Path(tmp), DataSource.local(data))
            with one_load_per_dataset():  # 90 tasks on one config: read once
                loaded = TaskManager(include_path=str(local), include_defaults=False).load(list(tags()))["tasks"]
            for name, task in sorted(loaded.items()):
                docs = list(task.eval_docs)
                if not docs:
                    problems.append(f"{name}: no documents")
                elif IMAGE_PLACEHOLDER not in task.doc_to_text(docs[0]):
                    problems.append(f"{name}: the prompt lacks the {IMAGE_PLACEHOLDER} placeholder")
            want = sum(len(all_tasks(p)) for p in PROTOCOLS)
            if len(loaded) != want:
                problems.append(f"the tags build {len(loaded)} tasks, expected {want}")
    return problems
