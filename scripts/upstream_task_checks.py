"""Run lm-evaluation-harness's own task checks on every G2M task, the way its CI runs them on a new task folder.

    python scripts/upstream_task_checks.py [--keep DIR]

1. The checks are upstream's ``tests/test_tasks.py`` from the lm-eval release we pin (0.4.13), taken from its source
   distribution on PyPI (``pip download``; the sha256 of the archive is pinned below), not a copy of ours.
2. Its ``tests/utils.py`` is not in that archive; it is re-created here as upstream writes it: every YAML file listed
   as changed is read, a file whose ``task`` is a string contributes its task name and one whose ``task`` is a list
   its group name, and all of them are loaded *together* (the "collection mode" that stops on duplicate tasks).
3. The checks read data, and CI is offline: a small local build (10 rows per task) is made and the task folder
   written for it (``g2m tasks-dir --data``), identical to the installed one but for ``dataset_path``.
4. Upstream's ``TaskManager()`` indexes lm-eval's own tasks; a ``conftest.py`` points it at the G2M folder instead.

Exits with pytest's status.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LM_EVAL = "lm_eval==0.4.13"
SDIST = "lm_eval-0.4.13.tar.gz"
SDIST_SHA256 = "f592269f21a5e173d7993ae01267f61fc84be393cee1f51779e3e104a70c967e"
CHANGED = ".github/outputs/tasks_all_changed_and_modified_files.txt"

UTILS = '''"""Re-created from upstream lm-evaluation-harness tests/utils.py (not shipped in its sdist)."""
import os

from lm_eval.tasks._yaml_loader import load_yaml


def load_changed_files(file_path: str) -> list[str]:
    with open(file_path, encoding="utf-8") as f:
        return list(f.read().split())


def parser(full_path: list[str]) -> list[str]:
    _output = set()
    for x in full_path:
        if x.endswith(".yaml") and os.path.exists(x):
            config = load_yaml(x, resolve_func=False)
            if isinstance(config["task"], str):
                _output.add(config["task"])
            elif isinstance(config["task"], list):
                _output.add(config["group"])
    return list(_output)


def new_tasks() -> list[str] | None:
    FILENAME = ".github/outputs/tasks_all_changed_and_modified_files.txt"
    if os.path.exists(FILENAME):
        return parser(load_changed_files(FILENAME))
    return None
'''

CONFTEST = '''"""Point upstream's TaskManager() at the G2M task folder (it would index lm-eval's own tasks)."""
import os

import lm_eval.tasks

_init = lm_eval.tasks.TaskManager.__init__


def _g2m_init(self, *args, include_path=None, include_defaults=True, **kwargs):
    _init(self, *args, include_path=include_path or os.environ["G2M_TASK_DIR"], include_defaults=False, **kwargs)


lm_eval.tasks.TaskManager.__init__ = _g2m_init
'''


def fetch_upstream_tests(cache: Path) -> str:
    archive = cache / SDIST
    if not archive.is_file():
        subprocess.run([sys.executable, "-m", "pip", "download", LM_EVAL, "--no-deps", "--no-binary", ":all:",
                        "--dest", str(cache), "-q"], check=True)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{archive} has sha256 {digest}, not the pinned {SDIST_SHA256}")
    with tarfile.open(archive) as tar:
        return tar.extractfile("lm_eval-0.4.13/tests/test_tasks.py").read().decode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", default=None, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args()
    from dataset_builder.release.build import BuildParams, build
    from harness_tasks.evaluation.task_yaml import DataSource
    from harness_tasks.with_lm_eval.taskgen import write_folder

    work = Path(args.keep or tempfile.mkdtemp(prefix="g2m-upstream-checks-"))
    (work / "tests").mkdir(parents=True, exist_ok=True)
    (work / "tests" / "__init__.py").write_text("")
    (work / "tests" / "test_tasks.py").write_text(fetch_upstream_tests(work))
    (work / "tests" / "utils.py").write_text(UTILS)
    (work / "tests" / "conftest.py").write_text(CONFTEST)
    data = work / "data"
    build(data, "zero_shot", BuildParams(scale=0.1), progress=False)
    folder = write_folder(work / "tasks", DataSource.local(data))
    changed = work / CHANGED
    changed.parent.mkdir(parents=True, exist_ok=True)
    changed.write_text("\n".join(str(p) for p in sorted(folder.glob("*.yaml"))) + "\n")
    env = {**__import__("os").environ, "G2M_TASK_DIR": str(folder), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_tasks.py", "-k",
           "TestNewTasksElseDefault"]
    return subprocess.run(cmd, cwd=work, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
