"""Where ``-T data=DIR`` points when ``inspect eval`` runs a task file: kept apart from ``tasks`` so that reading a
path never imports inspect (a few seconds of imports)."""

from __future__ import annotations

import os
from pathlib import Path

from g2m_base.errors import DataNotFound


def user_path(source: str | None) -> str | None:
    """A relative ``-T data=DIR`` read against the folder the user typed it in.

    ``inspect eval`` runs a task file from that file's own folder (it changes the working directory before calling
    the task), so a relative path would be read against ``harness_tasks/with_inspect/``. The shell's ``$PWD`` still
    names the user's folder; a path that exists from the current folder (a Python caller's choice) wins.
    """
    if source is None or Path(source).expanduser().is_absolute() or Path(source).exists():
        return source
    shell_cwd = os.environ.get("PWD")
    if shell_cwd and (Path(shell_cwd) / source).exists():
        return str(Path(shell_cwd) / source)
    if source.count("/") == 1 and not source.startswith((".", "~")):
        return source  # a Hub id such as ORG/NAME
    raise DataNotFound(f"G2M data folder {source!r} not found from {shell_cwd or os.getcwd()}: pass an absolute path, "
                       "e.g. -T data=$PWD/g2m-data")
