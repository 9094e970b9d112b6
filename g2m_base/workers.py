"""Worker pools whose workers never outlive the process that started them.

``ProcessPoolExecutor`` workers keep working through their queue after the parent is killed (``kill -9``, SIGTERM,
an OOM kill), holding CPU for nothing. Each worker here asks the kernel to kill it when its parent dies (Linux's
``PR_SET_PDEATHSIG``), and also watches its parent's pid twice a second, which covers every other platform and the
moment between the worker's start and the first call.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from g2m_base.flags import check_int

_PR_SET_PDEATHSIG = 1


def check_workers(workers: object) -> int:
    """The one check of a number of worker processes (``--workers``), for the library and the command line alike."""
    return check_int("--workers", workers, 1)


def pool(workers: int) -> ProcessPoolExecutor:
    """A process pool (spawned workers: no inherited state) whose workers exit when this process dies."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                               initializer=_die_with_parent, initargs=(os.getpid(),))


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still applies
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="g2m-parent-watch").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
