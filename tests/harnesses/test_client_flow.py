"""The chat client against real loopback servers: as many requests in flight as the server can take (a slow server
loses nothing), and a signal that lands anywhere in the event loop stops the run with no traceback."""

from __future__ import annotations

import base64
import gc
import io
import os
import signal
import threading
import time

import pytest
from PIL import Image

from tests.support import vlm_server
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # lm-eval's client and real servers


def _payloads(count: int, max_tokens: int = 200) -> list[dict]:
    buf = io.BytesIO()
    Image.new("RGB", (512, 512), "white").save(buf, "PNG")
    image = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    return [{"model": "fake-vlm", "max_tokens": max_tokens, "temperature": 0,
             "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": image}},
                                                         {"type": "text", "text": f"A 3x3 grid, request {i}"}]}]}
            for i in range(count)]


@pytest.fixture
def serial_server():
    """A server that answers one request at a time, each in 50 ms: what it is sent queues."""
    httpd, state = vlm_server.start("fake-vlm", serial_seconds=0.05)
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()


def test_a_slow_server_loses_no_answer_on_the_first_run(serial_server, small_release, tmp_path):
    """90 requests, 50 ms each, one at a time, with a 1 s client timeout: a fixed 32 in flight makes the last of them
    wait 1.6 s and time out; the client keeps fewer in flight while answers come back slowly."""
    url, state = serial_server
    res = g2m("eval", "--base-url", url, "--model-args", "model=fake-vlm,timeout=1", "--data", str(small_release),
              "--out", str(tmp_path / "runs"), "--quiet", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "failed" not in res.stderr.lower(), res.stderr[-3000:]
    assert sum(state.received.values()) == 90  # every request answered at its first attempt
    assert 1 < state.most_in_flight < 20, state.most_in_flight  # fewer than a fixed 32; more than one at a time


def test_an_instant_server_gets_the_most_in_flight_quickly(tmp_path):
    from harness_tasks.serving.chat import G2MChat

    httpd, state = vlm_server.start("fake-vlm")
    try:
        lm = G2MChat(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", model="fake-vlm",
                     num_concurrent=16)
        answers = lm.answer_all(_payloads(60))
    finally:
        httpd.shutdown()
    assert [a.finish_reason for a in answers] == ["stop"] * 60
    assert lm.flow.peak == 16 and lm.flow.limit == 16  # from 4, one more per quick answer, up to num_concurrent


#: Where the signal lands: inside the k-th answer's callback (a step of that answer's task), or after a delay from
#: another thread (in the selector, a task's step, aiohttp's callbacks: wherever the loop is then).
POINTS = [("callback", k) for k in (1, 2, 7, 19)] + [("timer", t) for t in (0.0, 0.005, 0.02, 0.05, 0.1, 0.15, 0.2)]


@pytest.mark.parametrize(("where", "when"), POINTS, ids=[f"{w}-{t}" for w, t in POINTS])
def test_sigterm_anywhere_in_the_event_loop_stops_the_run_without_a_traceback(where, when, capfd):
    from g2m_cli.main import Stopped, _stop
    from harness_tasks.serving.chat import G2MChat

    httpd, _ = vlm_server.start("fake-vlm", serial_seconds=0.004)
    previous = signal.signal(signal.SIGTERM, _stop)  # what g2m's main installs
    seen = []

    def on_answer(i, answer):
        seen.append(i)
        if where == "callback" and len(seen) == when:
            os.kill(os.getpid(), signal.SIGTERM)
            end = time.monotonic() + 1  # Python code running: the handler raises here, inside the callback
            while time.monotonic() < end:
                pass

    timer = threading.Timer(when, os.kill, (os.getpid(), signal.SIGTERM)) if where == "timer" else None
    try:
        lm = G2MChat(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", model="fake-vlm")
        with pytest.raises(Stopped):
            if timer:
                timer.start()
            lm.answer_all(_payloads(80), on_answer)
            time.sleep(5)  # finished before the timer: the signal lands here, outside the loop
        gc.collect()  # a task holding the interrupt is collected here: "Task exception was never retrieved"
    finally:
        signal.signal(signal.SIGTERM, previous)
        httpd.shutdown()
    err = capfd.readouterr().err  # asyncio logs to stderr (logging's last resort: no handler is configured here)
    assert "Traceback" not in err and "never retrieved" not in err and "exception" not in err.lower(), err
