"""What ``--serve`` shows while the server loads: the time waited and the last line of the server's log, refreshed.

Loading a 235B checkpoint takes minutes, and a start line followed by silence looks like a hang. At a terminal the
status is one line rewritten in place every poll; in a log file (CI, ``nohup``, a batch job) a new line is written
every ``PLAIN_EVERY_S`` seconds, and only when the log has moved on or a minute has passed, so the file stays short.
The log's text is the server's, so it is escaped (``term``) and cut to the terminal's width.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TextIO

from g2m_base.untrusted import term

PLAIN_EVERY_S = 15.0  # seconds between lines when stderr is not a terminal
PLAIN_QUIET_S = 60.0  # ... and at least this often even when the log did not move
TAIL_BYTES = 16_384  # enough for the last line of any log, however long the log has grown


def last_line(path: Path) -> str:
    """The log's last non-empty line; a progress bar's last refresh (vLLM's weight loading writes ``\\r``)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [part.strip() for part in tail.replace("\r", "\n").split("\n")]
    return next((line for line in reversed(lines) if line), "")


def clock(seconds: float) -> str:
    """``m:ss`` below an hour, ``h:mm:ss`` above."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class WaitDisplay:
    """Call ``update(elapsed)`` on every poll and ``close()`` when the wait ends (ready, dead or timed out)."""

    def __init__(self, log_path: Path, stream: TextIO | None = None) -> None:
        self.log_path = log_path
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = ""  # the last log line written (plain mode)
        self._at = -PLAIN_EVERY_S  # when the last plain line was written
        self._dirty = False  # a live line is on screen

    def text(self, elapsed: float, line: str) -> str:
        return f"g2m: waiting for the server, {clock(elapsed)}" + (f" | {term(line, 500)}" if line else "")

    def update(self, elapsed: float) -> None:
        if self.live:
            width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
            self.stream.write("\r" + self.text(elapsed, last_line(self.log_path))[:width].ljust(width))
            self.stream.flush()
            self._dirty = True
            return
        if elapsed - self._at < PLAIN_EVERY_S:
            return
        line = last_line(self.log_path)
        if line == self._shown and elapsed - self._at < PLAIN_QUIET_S:
            return
        self._shown, self._at = line, elapsed
        print(self.text(elapsed, line), file=self.stream, flush=True)

    def close(self) -> None:
        """End the live line, so what follows (ready, or the log's tail) starts on a line of its own."""
        if self._dirty:
            self.stream.write("\n")
            self.stream.flush()
            self._dirty = False
