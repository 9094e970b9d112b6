"""File-system helpers that keep output folders consistent: atomic writes, a build lock, temp-file cleanup, names."""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from g2m_base.errors import BuildError, G2MError, StorageError, UsageError

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


#: A path that cannot be a file's (a file where a folder should be, a name too long): the user's input, exit 2.
_PATH_ERRNOS = frozenset({errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG})


def write_error(e: OSError) -> type:
    """A full or read-only disk is the machine's state (``StorageError``, exit 1, as anywhere else in g2m); a path
    that cannot be written whatever the disk holds is bad input (``BuildError``, exit 2)."""
    return BuildError if e.errno in _PATH_ERRNOS else StorageError


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) or say in one line why it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(e)(f"cannot write to {path}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK):
        raise StorageError(f"cannot write to {path}: permission denied")
    return path


def output_file(path: str | os.PathLike, inputs: tuple = ()) -> Path:
    """``path`` as a file this command may write: not empty, not a folder or a device, not one of its ``inputs``."""
    if not str(path).strip():
        raise UsageError("the output path is empty; give a file name")
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{p} is a folder; give a file name for the output")
    if p.exists() and not p.is_file():
        raise UsageError(f"{p} is not a regular file (a device or a FIFO?); refusing to replace it")
    for other in inputs:
        with contextlib.suppress(OSError):
            if p.exists() and os.path.samefile(p, other):
                raise UsageError(f"{p} is this command's own input; refusing to overwrite it")
    if p.parent.exists() and not p.parent.is_dir():
        raise UsageError(f"{p.parent} is a file, not a folder")
    return p


def durable_replace(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """The core of every atomic write: ``tmp``'s bytes forced to disk (fsync), ``tmp`` renamed over ``path``, then the
    folder forced to disk too (the rename is an entry of the folder), so ``path`` is the old file or the whole new one,
    even across a power cut. Raises the ``OSError`` as it is; a file system whose folders cannot be fsynced (some
    network mounts refuse it) keeps the rename without that last guarantee."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    try:
        folder = os.open(Path(path).parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(folder)
    except OSError:
        pass  # EINVAL on a file system without folder fsync: the rename stands
    finally:
        os.close(folder)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", tmp: str | os.PathLike | None = None,
                **kwargs) -> Iterator[IO]:
    """``open(path, mode)`` that never leaves half a file: the block writes a temp file beside ``path`` (``tmp``, by
    default hidden: ``.g2m-tmp-<pid>-<name>``), which is fsynced and renamed over ``path`` when the block ends
    normally (``durable_replace``); any exception removes it and ``path`` is untouched.

    The temp name starts with a dot, so neither ``load_dataset``'s ``<split>-*`` patterns nor an upload ever see it.
    Only a regular file is ever replaced: never a folder, a device (``/dev/full``) or a FIFO. A failed write (a full
    disk, a read-only mount) is one line naming ``path`` (``write_error``).
    """
    path = Path(path)
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise BuildError(f"cannot write {path}: it exists and is not a regular file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(e)(f"cannot write to {path.parent}: {e.strerror or e}") from None
    tmp = Path(tmp) if tmp is not None else path.parent / f"{TEMP_MARK}{os.getpid()}-{path.name}"
    try:
        with open(tmp, mode, **kwargs) as f:
            yield f
        durable_replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError) and not isinstance(e, G2MError):  # the user's to fix, said in one line
            raise write_error(e)(f"could not write {path}: {e.strerror or e}") from None
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (``atomic_open``)."""
    with atomic_open(path, "wb") as f:
        f.write(data)


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
    with folder_lock(root, LOCK_NAME, "another g2m build is writing to {root}; wait for it to finish"):
        yield


@contextlib.contextmanager
def folder_lock(root: Path, name: str, busy: str) -> Iterator[None]:
    """Create ``root`` if needed and hold an exclusive advisory lock on ``root/name`` while the block runs.

    A second holder is refused at once with ``busy`` (``{root}`` filled in), never left waiting or crashing later;
    the kernel drops the lock however the holder ends (SIGKILL included), so no stale lock needs cleaning up.
    """
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / name, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise write_error(e)(f"cannot write to {root}: {e.strerror or e}") from None
    if not os.access(root, os.W_OK):
        os.close(fd)
        raise StorageError(f"cannot write to {root}: permission denied")
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # Windows: no advisory locks; builds there are single-user anyway
            pass
        except OSError:
            raise BuildError(busy.format(root=root)) from None
        yield
    finally:
        os.close(fd)


def remove_unwritten(out: Path, keep: set[str], fixed: tuple[str, ...] = ()) -> None:
    """Every file of the folder ``out`` that a build did not write or check is removed, at any depth, with the
    folders it leaves empty (``fixed``: top folders kept even empty): a withdrawn submission's page, and anything
    else put there (a site folder copied from elsewhere may hold files a reader would take for the board's).
    ``keep``: paths relative to ``out``. Entries at the top whose names start with a dot (a cache, a Space's
    ``.git``) are left alone; a link is removed, never followed."""
    for top in out.iterdir():
        if top.name.startswith("."):
            continue
        if top.is_symlink() or not top.is_dir():
            if top.name not in keep:
                top.unlink()
            continue
        for folder, dirs, names in os.walk(top, topdown=False):
            here = Path(folder)
            for name in names:
                if (here / name).relative_to(out).as_posix() not in keep:
                    (here / name).unlink()
            for name in dirs:
                sub = here / name
                if sub.is_symlink():
                    sub.unlink()  # never followed: a link out of the site is not the site's
                elif not any(sub.iterdir()):
                    sub.rmdir()
        if top.name not in fixed and not any(top.iterdir()):
            top.rmdir()
