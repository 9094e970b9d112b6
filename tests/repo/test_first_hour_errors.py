"""The errors of a first hour point the right way, each in one line (issue 51): a model name that is no folder and
no Hub id, a Hub id while offline or against a Hub that does not have it, a ``--base-url`` where nothing listens, a
mistyped flag (the hint first); and a rerun that replaces the files it covers instead of leaving two copies."""

from __future__ import annotations

import socket
import time

import pytest

from harness_tasks.with_lm_eval.progress import eta_ready
from tests.support.helpers import g2m, g2m_here
from tests.support.hub_server import HubStandIn


def _closed_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


EVAL = ["eval", "--model", "hf-multimodal", "--tasks", "g2m_n03_c3", "--data", "{data}", "--out", "{tmp}/runs"]

#: (case, argv, environment, the one line it ends with, exit code). "{hub}" is a running stand-in of the Hub that
#: holds nothing, "{closed}" a port where nothing listens.
CASES = [
    ("probe: a mistyped local name", ["probe", "--encoder", "demo-encodr", "--config", "probe_n20_c3"], {},
     "g2m: error: no folder demo-encodr here, and it is not a Hub model id (ORG/NAME)", 2),
    ("sweep: a path that does not exist", ["probe", "sweep", "--encoder", "./demo-encodr", "--config",
                                           "probe_n20_c3"], {},
     "g2m: error: no folder ./demo-encodr here (it does not exist)", 2),
    ("eval: a mistyped local name", [*EVAL, "--model-args", "pretrained=demo-vml"], {},
     "g2m: error: pretrained=demo-vml: no folder demo-vml here, and it is not a Hub model id (ORG/NAME)", 2),
    ("eval: a Hub id while offline", [*EVAL, "--model-args", "pretrained=Org/not-cached"], {"HF_HUB_OFFLINE": "1"},
     "g2m: error: pretrained=Org/not-cached: Org/not-cached is not a folder here and the Hub is offline "
     "(HF_HUB_OFFLINE=1): not in the local cache", 2),
    ("eval: a Hub id the Hub does not have", [*EVAL, "--model-args", "pretrained=Org/absent"],
     {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "{hub}"}, "g2m: error: pretrained=Org/absent: no folder Org/absent here, "
     "and no model Org/absent on the Hub (127.0.0.1:", 2),
    ("eval: a Hub that cannot be reached", [*EVAL, "--model-args", "pretrained=Org/m"],
     {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:{closed}"},
     "g2m: error: Org/m is not a folder here and the Hub at 127.0.0.1:{closed} cannot be reached", 1),
    ("eval: nothing at --base-url", ["eval", "--base-url", "http://127.0.0.1:{closed}/v1", "--tasks", "g2m_n03_c3",
                                     "--data", "{data}", "--out", "{tmp}/runs"], {},
     "g2m: error: nothing listens at 127.0.0.1:{closed} (connection refused): start the server first (e.g. vllm "
     "serve MODEL --port {closed}), or check --base-url", 2),
    ("eval: --base-url with a model named", ["eval", "--base-url", "http://127.0.0.1:{closed}/v1", "--model-args",
                                             "model=m", "--tasks", "g2m_n03_c3", "--data", "{data}", "--out",
                                             "{tmp}/runs"], {},
     "g2m: error: nothing listens at 127.0.0.1:{closed} (connection refused)", 2),
]


@pytest.mark.slow  # a g2m process each (about 2 s)
@pytest.mark.parametrize(("case", "argv", "env", "line", "code"), CASES, ids=[c[0] for c in CASES])
def test_a_wrong_model_or_server_is_one_line_at_once(small_release, tmp_path, case, argv, env, line, code):
    closed = str(_closed_port())
    with HubStandIn() as hub:
        fill = {"{data}": str(small_release), "{tmp}": str(tmp_path), "{hub}": hub.url, "{closed}": closed}

        def put(text: str) -> str:
            for key, value in fill.items():
                text = text.replace(key, value)
            return text

        start = time.monotonic()
        res = g2m(*map(put, argv), env={k: put(v) for k, v in env.items()}, timeout=60)
        took = time.monotonic() - start
    assert res.stderr.splitlines() == [res.stderr.strip()] and res.stderr.startswith(put(line)), res.stderr
    assert res.returncode == code
    assert took < 20, f"{case}: {took:.1f} s (no retries, no model or data loaded)"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("results_*.json"))


@pytest.mark.parametrize(("argv", "first"), [
    (["eval", "--taks", "g2m_n03_c3"], "g2m eval: error: did you mean --tasks? unrecognized arguments: --taks "
                                       "g2m_n03_c3 (all the options: g2m eval --help)"),
    (["report", "RUN", "--out", "x", "--probs", "p"], "g2m report: error: did you mean --probes? unrecognized "
                                                      "arguments: --probs p (all the options: g2m report --help)"),
    (["probe", "sweep", "--encoder", "e", "--config", "c", "--stpes", "3"],
     "g2m probe sweep: error: did you mean --steps? unrecognized arguments: --stpes 3"),
])
def test_a_mistyped_flag_puts_the_hint_first_in_one_line(argv, first):
    res = g2m_here(*argv)
    code, out, err = res.returncode, res.stdout, res.stderr
    assert code == 2 and out == ""
    assert err.splitlines() == [err.strip()] and err.startswith(first), err


@pytest.mark.parametrize(("generated", "to_generate", "shown"), [
    (0, 90, False),
    (1, 90, False),  # the first answer: warm-up and the largest grid, not a rate
    (5, 90, False),
    (8, 90, False),
    (9, 90, True),  # a tenth of the answers
    (4, 4, True),  # a run of 4 answers, all in: done
    (3, 20, False),
    (5, 20, True),  # at least MIN_ANSWERS
    (0, 0, False),  # everything from the cache: nothing generated, no rate
])
def test_the_eta_is_shown_once_it_means_something(generated, to_generate, shown):
    assert eta_ready(generated, to_generate) is shown
