"""Keeps a server's whole process tree tied to the ``g2m`` that started it: ``python -m ...supervisor -- CMD ...``.

``vllm serve`` starts engine workers, and a server may start processes that leave its process group (a daemon, a
``setsid`` helper), so signalling the child, or even its group, does not reach everything it started; and a ``g2m``
killed with SIGKILL runs no clean-up at all. The supervisor closes both gaps:

- it is a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): whatever the server starts and orphans is re-parented
  to it, so it can always find and stop the whole tree;
- it watches a pipe from ``g2m`` (its standard input). The kernel closes that pipe when ``g2m`` ends, however it ends,
  SIGKILL included; ``g2m`` also closes it to stop the server on purpose. Either way the supervisor sends SIGTERM to
  every process of the tree, waits ``--grace`` seconds, sends SIGKILL to what is left, and exits;
- when the server exits by itself, the supervisor stops what it left behind and exits with the server's status, so
  ``g2m`` sees a server that died before it was healthy.

On a cluster pre-emption (SIGTERM, then SIGKILL a little later) the server is therefore gone within ``--grace``
seconds of ``g2m``'s end. Outside Linux there are no subreapers: the server's process group is still stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
DEFAULT_GRACE = 15.0


def _subreaper() -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def descendants(root: int) -> set[int]:
    """Every process below ``root`` (read from /proc; empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _signal_all(pids: set[int], group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def stop_tree(child: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the server's group and every process below us, SIGKILL to what is left after ``grace`` s."""
    me = os.getpid()
    _signal_all(descendants(me), child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap()
        if not descendants(me) and child.poll() is not None:
            return
        time.sleep(0.1)
    for _ in range(3):  # a process may fork while we kill: sweep until the tree is empty
        _signal_all(descendants(me), child.pid, signal.SIGKILL)
        time.sleep(0.1)
        _reap()
    child.poll()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="g2m-serve-supervisor")
    ap.add_argument("--grace", type=float, default=DEFAULT_GRACE)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command to supervise")
    _subreaper()
    stop = {"now": False}

    def on_signal(signum, frame) -> None:
        stop["now"] = True

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        print(f"g2m: cannot start {cmd[0]!r}: {e.strerror or e}", flush=True)
        return 127
    watched = sys.stdin.fileno()
    while not stop["now"]:
        if child.poll() is not None:  # the server ended by itself: clear what it left, report its status
            stop_tree(child, 0.0)
            return child.returncode
        with contextlib.suppress(InterruptedError, OSError):
            ready, _, _ = select.select([watched], [], [], 0.5)
            if ready and not os.read(watched, 4096):  # EOF: g2m is gone, or asks us to stop
                break
    stop_tree(child, args.grace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
