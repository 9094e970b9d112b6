"""What ``--serve`` shows while vLLM loads: the time waited and the log's last line, refreshed in place at a terminal
and every few seconds in a log file (the launcher's end-to-end test with a stand-in vllm is in test_served.py)."""

from __future__ import annotations

import io

import pytest

from harness_tasks.serving import wait_display
from harness_tasks.serving.wait_display import WaitDisplay, clock, last_line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("log", "line"), [
    (b"INFO starting\nINFO loading weights\n", "INFO loading weights"),
    (b"Loading shards:  33%|###  | 1/3\rLoading shards:  67%|#### | 2/3\r", "Loading shards:  67%|#### | 2/3"),
    (b"INFO a\n\n   \n", "INFO a"),
    (b"", ""),
    (b"x" * 100_000 + b"\nlast\n", "last"),  # only the tail is read, however long the log
    (b"\xff\xfe bad bytes\n", "\ufffd\ufffd bad bytes"),
])
def test_the_last_line_of_the_log(tmp_path, log, line):
    (tmp_path / "serve.log").write_bytes(log)
    assert last_line(tmp_path / "serve.log") == line


def test_a_missing_log_has_no_last_line(tmp_path):
    assert last_line(tmp_path / "none.log") == ""


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00"), (5.9, "0:05"), (65, "1:05"), (3600, "1:00:00"),
                                               (3725, "1:02:05")])
def test_clock(seconds, text):
    assert clock(seconds) == text


def test_at_a_terminal_one_line_is_rewritten_with_the_newest_log_line(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("INFO loading\n")
    out = Terminal()
    display = WaitDisplay(log, out)
    display.update(1.2)
    log.write_text("INFO loading\nINFO weights 2/3 \x1b[31mred\x1b[0m\n")  # the server's text: escaped, never run
    display.update(62.0)
    display.close()
    frames = out.getvalue().split("\r")[1:]
    assert frames[0].startswith("g2m: waiting for the server, 0:01 | INFO loading")
    assert frames[1].startswith("g2m: waiting for the server, 1:02 | INFO weights 2/3 \\x1b[31mred")
    assert "\x1b" not in out.getvalue() and out.getvalue().endswith("\n") and out.getvalue().count("\n") == 1


def test_in_a_log_file_a_line_comes_every_few_seconds_and_only_when_there_is_news(tmp_path, monkeypatch):
    monkeypatch.setattr(wait_display, "PLAIN_EVERY_S", 10.0)
    monkeypatch.setattr(wait_display, "PLAIN_QUIET_S", 60.0)
    log = tmp_path / "serve.log"
    log.write_text("INFO loading\n")
    out = io.StringIO()
    display = WaitDisplay(log, out)
    for t in range(0, 50):  # one poll a second, the log unchanged
        display.update(float(t))
    log.write_text("INFO loading\nINFO graph capture\n")
    for t in range(50, 75):
        display.update(float(t))
    display.close()
    lines = out.getvalue().splitlines()
    assert lines == ["g2m: waiting for the server, 0:00 | INFO loading",
                     "g2m: waiting for the server, 0:50 | INFO graph capture"]
    assert "\r" not in out.getvalue()
