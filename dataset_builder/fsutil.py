"""File-system helpers that keep output folders consistent: atomic writes, a build lock, temp-file cleanup, names."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from .errors import BuildError

TEMP_MARK = ".g2m-tmp-"
LOCK_NAME = ".g2m-build.lock"
_PATH_LIKE = re.compile(r"^(?:[/~.]|[A-Za-z]:[\\/])|[\\]|/.*/")


def safe_name(name: str, sep: str = "__", limit: int = 80) -> str:
    """A file-system-safe name for a model or encoder, a pure function of the text (it never looks at the disk).

    A path (``/models/qwen``, ``./x``, ``~/m``, ``a/b/c``) keeps its last component; a Hub id ``ORG/NAME`` keeps both
    parts joined by ``sep``. Every run of characters outside ``[A-Za-z0-9_.-]`` becomes ``sep``; the result is never
    hidden, never '..', never empty.
    """
    text = str(name).rstrip("/\\")
    if _PATH_LIKE.search(text):
        text = re.split(r"[/\\]", text)[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", sep, text).strip("._-" + sep)[:limit] or "model"


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) or say in one line why it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BuildError(f"cannot write to {path}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK):
        raise BuildError(f"cannot write to {path}: permission denied")
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a hidden temp file beside ``path``, fsync it, then rename it over ``path``.

    The temp name starts with a dot, so neither ``load_dataset``'s ``<split>-*`` patterns nor an upload ever see it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TEMP_MARK}{os.getpid()}-{path.name}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def remove_stale_temp_files(root: Path) -> int:
    """Delete temp files left by an interrupted build (safe: callers hold the build lock)."""
    count = 0
    if root.is_dir():
        for p in list(root.glob(f"{TEMP_MARK}*")) + list(root.glob(f"*/{TEMP_MARK}*")):
            with contextlib.suppress(OSError):
                p.unlink()
                count += 1
    return count


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Create ``root`` if needed and hold an exclusive lock on it, so two builds never interleave."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise BuildError(f"cannot write to {root}: {e.strerror or e}") from None
    if not os.access(root, os.W_OK):
        os.close(fd)
        raise BuildError(f"cannot write to {root}: permission denied")
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # Windows: no advisory locks; builds there are single-user anyway
            pass
        except OSError:
            raise BuildError(f"another g2m build is writing to {root}; wait for it to finish") from None
        yield
    finally:
        os.close(fd)
