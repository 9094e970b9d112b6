"""g2m eval's command line: the dry run, the offline error, what the run prints, and the chat client's pure parts."""

from __future__ import annotations

import json
import re
import time

import pytest

from harness_tasks.serving.chat import MalformedResponse, read_answer, request_timeout, retry_after
from harness_tasks.serving.endpoints import chat_url
from scoring.budget import max_gen_toks
from tests.support.helpers import g2m, g2m_here


def test_the_dry_run_prints_requests_budgets_and_context_without_loading_anything():
    t = time.monotonic()
    out = g2m("eval", "--dry-run", check=True).stdout
    assert time.monotonic() - t < 15
    budget = 300 * sum(max_gen_toks(n) for n in (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32, 48, 64))
    expected = 300 * 3 * sum(n * n for n in (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32, 48, 64))
    assert re.search(r"requests\s+4,500\b", out)
    assert re.search(rf"answer-token budget\s+{budget:,}\b", out)
    assert re.search(rf"expected answer tokens\s+{expected:,}\b", out)
    assert re.search(r"context length needed\s+18,432\b", out)
    assert "| 64 | 3 | 300 | 15,584 |" in out


def test_the_dry_run_counts_limits_tags_and_a_reasoning_budget():
    res = g2m_here("eval", "--dry-run", "--tasks", "g2m_paper_lite,g2m_n03_c3", "--limit", "7", "--reasoning-budget",
                   "1000")
    out = res.stdout
    assert res.returncode == 0, res.stderr
    assert re.search(r"tasks\s+28\b", out) and re.search(r"requests\s+196\b", out)  # 27 paper tasks + 1, 7 rows each
    assert re.search(r"context length needed\s+5,120\b", out)  # 1,000 + the paper's 12x12 budget (866) + image and
                                                               # prompt (2,560)


@pytest.mark.parametrize(("args", "message"), [
    (["--tasks", "g2m_n99_c3"], "unknown G2M task"),
    (["--reasoning-budget", "-5"], "--reasoning-budget must be an integer of at least 0"),
    (["--limit", "0"], "--limit must be an integer of at least 1"),
])
def test_bad_dry_run_arguments_are_one_line_errors(args, message):
    res = g2m_here("eval", "--dry-run", *args)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--serve", "a/b", "--base-url", "http://x:1"], "give one"),
    (["--serve", "a/b", "--model", "hf-multimodal"], "drop --model hf-multimodal"),
    (["--base-url", "ftp://host/v1", "--data", "."], "not an http(s) URL"),
    (["--model", "g2m-oracle", "--concurrency", "0", "--data", "."], "--concurrency must be an integer of at least 1"),
])
def test_bad_serving_arguments_are_one_line_errors(args, message):
    res = g2m_here("eval", *args, "--output", "/tmp/g2m-never-written")
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow  # a real g2m eval against an unreachable Hub
def test_offline_the_hub_error_comes_in_seconds_and_says_what_to_do(tmp_path):
    env = {"HF_HUB_OFFLINE": "", "HF_DATASETS_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:9"}  # nothing listens
    t = time.monotonic()
    res = g2m("eval", "--model", "g2m-oracle", "--output", str(tmp_path), env=env)
    assert time.monotonic() - t < 15
    assert res.returncode != 0 and "Traceback" not in res.stderr
    error = res.stderr.strip().splitlines()[-1]
    assert error.startswith("g2m: error: cannot reach the Hugging Face Hub")
    assert "HF_HUB_OFFLINE=1" in error and "--data DIR" in error


@pytest.mark.parametrize(("url", "want"), [
    ("http://localhost:8000", "http://localhost:8000/v1/chat/completions"),
    ("http://localhost:8000/", "http://localhost:8000/v1/chat/completions"),
    ("http://localhost:8000/v1", "http://localhost:8000/v1/chat/completions"),
    ("https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions"),
    ("http://gw:80/proxy/v1/", "http://gw:80/proxy/v1/chat/completions"),
])
def test_any_spelling_of_a_server_url_reaches_chat_completions(url, want):
    assert chat_url(url) == want


@pytest.mark.parametrize(("body", "text", "finish", "reasoning"), [
    ({"choices": [{"message": {"content": "[[1]]"}, "finish_reason": "stop"}]}, "[[1]]", "stop", None),
    ({"choices": [{"message": {"content": None, "reasoning_content": "hmm"}, "finish_reason": "length"}]},
     "", "length", "hmm"),
    ({"choices": [{"message": {"content": "x", "reasoning": "vLLM >= 0.10 calls it reasoning"}}]}, "x", None,
     "vLLM >= 0.10 calls it reasoning"),
    ({"choices": [{"message": {"content": [{"type": "text", "text": "[[1"}, {"type": "text", "text": "]]"}]},
                   "finish_reason": "max_tokens"}]}, "[[1]]", "length", None),
])
def test_an_answer_keeps_its_finish_reason_and_reasoning(body, text, finish, reasoning):
    answer = read_answer(json.dumps(body))
    assert (str(answer), answer.finish_reason, answer.reasoning) == (text, finish, reasoning)


@pytest.mark.parametrize(("body", "reason"), [
    ('{"error": "overloaded"}', "choices is missing, not a list"),
    ('{"choices": []}', "choices is empty"),
    ("not json", "the body is not JSON (JSONDecodeError)"),
    ("[" * 100_000, "the body is not JSON (RecursionError)"),
    ('["choices"]', "the body is list, not an object"),
    ('{"choices": ["text"]}', "choices[0] is str, not an object"),
    ('{"choices": [{"text": "[[1]]"}]}', "choices[0].message is missing, not an object"),
    ('{"choices": [{"message": {"content": 12}}]}', "choices[0].message.content is a int, not text"),
])
def test_a_malformed_response_is_an_error_never_an_answer(body, reason):
    with pytest.raises(MalformedResponse) as caught:
        read_answer(body)
    assert str(caught.value) == reason


@pytest.mark.parametrize(("header", "seconds"), [
    ("2", 2.0), ("0.5", 0.5), ("-3", 0.0), ("86400", 60.0), ("nan", None), ("inf", None), ("", None), (None, None),
    ("Wed, 21 Oct 2026 07:28:00 GMT", None), ("soon", None),
])
def test_a_rate_limits_retry_after_is_honoured_within_bounds(header, seconds):
    assert retry_after(header) == seconds


def test_client_timeouts_fit_the_largest_answer():
    assert request_timeout(max_gen_toks(64)) >= max_gen_toks(64) / 10  # 10 tokens/s per request, under load
    assert request_timeout(256) >= 300


@pytest.mark.slow
def test_a_run_shows_one_labelled_progress_bar_and_no_git_noise(small_release, tmp_path):
    res = g2m("eval", "--model", "g2m-oracle", "--tasks", "g2m_lite", "--data", str(small_release),
              "--output", str(tmp_path / "runs"), cwd=tmp_path, check=True)  # cwd is not a git checkout
    assert "fatal" not in res.stderr and "Traceback" not in res.stderr
    lines = [ln.strip() for ln in res.stderr.replace("\r", "\n").splitlines() if ln.strip()]
    bars = [ln for ln in lines if re.search(r"\d+/\d+ \[", ln)]
    assert bars and all(ln.startswith("g2m g2m-oracle:") for ln in bars), bars  # lm-eval's per-task bars are gone
    assert bars[-1].startswith("g2m g2m-oracle: 100%") and "54/54" in bars[-1]  # 27 tasks x 2 rows, one bar
    assert "| g2m_lite | 1.000 |" in res.stdout
