"""What a backend hands back for one request: the text, plus what the server said about it.

lm-eval passes a backend's strings untouched to ``process_results``, so a ``str`` subclass carries the facts a plain
string loses: why generation stopped (``finish_reason``: "stop", "length", or ``REQUEST_FAILED`` when no answer came),
the reasoning a server returned in its own field (logged, never parsed), and the error of a failed request. It
pickles with its attributes, so answers resumed from the request cache keep them.
"""

from __future__ import annotations

import re

from harness_tasks.answers.score import REQUEST_FAILED

#: The longest reasoning text kept in a samples log (a reasoning model can write tens of thousands of tokens).
MAX_LOGGED_REASONING = 65_536


class GenText(str):
    """A generated string that also says why generation stopped, and what else the server returned."""

    finish_reason: str | None = None
    reasoning: str | None = None
    error: str | None = None

    def __new__(cls, text: str, finish_reason: str | None = None, reasoning: str | None = None,
                error: str | None = None):
        obj = super().__new__(cls, text)
        obj.finish_reason, obj.reasoning, obj.error = finish_reason, reasoning, error
        return obj

    def __reduce__(self):
        return (GenText, (str(self), self.finish_reason, self.reasoning, self.error))


def failed(error: str) -> GenText:
    """The answer of a request that failed after its retries: empty, never parsed, never cached."""
    return GenText("", REQUEST_FAILED, error=error)


def is_failed(answer: object) -> bool:
    return getattr(answer, "finish_reason", None) == REQUEST_FAILED


def answer_detail(answer: object) -> dict:
    """What the samples log records about an answer beyond its text (only what the backend reported)."""
    out = {}
    for key in ("finish_reason", "error"):
        value = getattr(answer, key, None)
        if value is not None:
            out[key] = str(value)
    reasoning = getattr(answer, "reasoning", None)
    if reasoning:
        out["reasoning"] = reasoning[:MAX_LOGGED_REASONING]
        if len(reasoning) > MAX_LOGGED_REASONING:
            out["reasoning_chars"] = len(reasoning)
    return out


#: lmms-eval's openai backend (models/simple/openai.py) returns this text in place of an answer after its retries.
LMMS_FAILED = re.compile(r"^\[LMMS_EVAL_REQUEST_FAILED after \d+ retries\]")


def from_lmms_eval(text: object) -> GenText:
    """The answer lmms-eval handed over, with a failed request recognised by lmms-eval's sentinel."""
    text = text if isinstance(text, str) else ""
    if LMMS_FAILED.match(text):
        return failed(text[:500])
    return GenText(text)
