"""inspect's own command runs a task file from the file's folder: ``-T data=DIR`` must still mean the user's DIR.

``inspect eval harness_tasks/with_inspect/tasks.py@g2m_task -T data=g2m-data`` changed the working directory to
``harness_tasks/with_inspect/`` before calling the task, so a relative folder ended in ``DataNotFound``. The task now
reads a relative path against the shell's folder (``$PWD``, which a ``chdir`` inside Python leaves alone).
"""

from __future__ import annotations

import os

import pytest

from g2m_base.errors import DataNotFound
from harness_tasks.with_inspect.paths import user_path


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """A user's shell folder holding ``g2m-data``, and a Python process that has moved elsewhere (as inspect does)."""
    (tmp_path / "home" / "g2m-data").mkdir(parents=True)
    (tmp_path / "task-file-folder").mkdir()
    monkeypatch.setenv("PWD", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "task-file-folder")
    return tmp_path


@pytest.mark.parametrize(("given", "expected"), [
    ("g2m-data", "home/g2m-data"),  # relative: the shell's folder
    ("./g2m-data", "home/g2m-data"),
    (None, None),  # the Hub release
    ("grid2matrix/g2m", "grid2matrix/g2m"),  # a Hub id is not a path
])
def test_a_relative_data_folder_is_read_from_the_users_folder(user_folder, given, expected):
    got = user_path(given)
    if expected is None or "/" in expected and not expected.startswith("home"):
        assert got == expected
    else:
        assert os.path.samefile(got, user_folder / expected)


def test_an_absolute_path_and_a_path_from_the_current_folder_are_kept(user_folder):
    assert user_path(str(user_folder / "home" / "g2m-data")) == str(user_folder / "home" / "g2m-data")
    (user_folder / "task-file-folder" / "here").mkdir()
    assert user_path("here") == "here"


def test_a_missing_folder_is_one_line_that_says_what_to_pass(user_folder):
    with pytest.raises(DataNotFound, match=r"'nowhere' not found from .*home: pass an absolute path, e\.g\. -T data="):
        user_path("nowhere")
