"""Every response body ends in exactly one outcome: an answer, or a malformed response (a failed request, retried).
Answers are bounded where they enter. Fast: no server, the real reader on real bodies."""

from __future__ import annotations

import json

import pytest

from harness_tasks.serving.chat import MalformedResponse, read_answer
from scoring.parsing import MAX_ANSWER_CHARS
from scoring.replies import MAX_LOGGED_REASONING, GenText, answer_detail, bounded, from_lmms_eval
from scoring.score import score_answer
from tests.support import vlm_server


@pytest.mark.parametrize("kind", sorted(vlm_server.BODIES))
def test_a_body_that_is_not_a_chat_completion_is_malformed_never_an_answer(kind):
    body = vlm_server.BODIES[kind]
    with pytest.raises(MalformedResponse):
        read_answer(body if isinstance(body, str) else json.dumps(body))


@pytest.mark.parametrize(("message", "text"), [
    ({"role": "assistant", "content": None}, ""),  # null content: the empty answer
    ({"role": "assistant"}, ""),
    ({"role": "assistant", "content": [{"type": "text", "text": "[[1]]"}, {"type": "image"}, "x"]}, "[[1]]"),
    ({"role": "assistant", "content": "[[0, 1], [1, 0]]"}, "[[0, 1], [1, 0]]"),
])
def test_a_well_formed_completion_is_an_answer(message, text):
    answer = read_answer(json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}))
    assert str(answer) == text and answer.finish_reason == "stop"


def test_null_content_scores_as_the_empty_answer_in_every_harness():
    chat = read_answer(json.dumps({"choices": [{"message": {"content": None}, "finish_reason": "length"}]}))
    lmms_crash = from_lmms_eval("[LMMS_EVAL_REQUEST_FAILED after 3 retries] 'NoneType' object has no attribute 'split'")
    scores = [score_answer(a, [[0, 1], [1, 0]], getattr(a, "finish_reason", None)) for a in (chat, lmms_crash, "")]
    assert all(s.parse_failed and not s.request_failed and s.reason == "empty output" for s in scores)
    assert from_lmms_eval("[LMMS_EVAL_REQUEST_FAILED after 3 retries] Connection refused").finish_reason == \
        "request_failed"


def test_an_oversized_answer_is_kept_cut_at_the_cap_flagged_and_scored_as_cut():
    truth = [[1, 2], [0, 1]]
    huge = "[[1, 2], [0, 1]]\n" + "chatter " * 1_000_000  # 8 MB
    body = json.dumps({"choices": [{"message": {"content": huge, "reasoning_content": "r" * 200_000},
                                    "finish_reason": "stop"}]})
    answer = read_answer(body)
    assert len(answer) == MAX_ANSWER_CHARS and answer.oversized == len(huge)
    assert len(answer.reasoning) == MAX_LOGGED_REASONING and answer.reasoning_chars == 200_000
    detail = answer_detail(answer)
    assert detail["oversized"] is True and detail["answer_chars"] == len(huge) and detail["reasoning_chars"] == 200_000
    assert score_answer(answer, truth).exact_match == 1.0 == score_answer(str(answer), truth).exact_match
    assert bounded(answer) is answer  # idempotent: bounding twice changes nothing
    again = GenText(*answer.__reduce__()[1])
    assert again.oversized == answer.oversized and str(again) == str(answer)
