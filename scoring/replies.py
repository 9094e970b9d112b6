"""What a backend hands back for one request: the text, plus what the server said about it.

lm-eval passes a backend's strings untouched to ``process_results``, so a ``str`` subclass carries the facts a plain
string loses: why generation stopped (``finish_reason``: "stop", "length", or ``REQUEST_FAILED`` when no answer came),
the reasoning a server returned in its own field (logged, never parsed), and the error of a failed request.

Answers are bounded where they enter (``bounded``): a text longer than the parser reads (``MAX_ANSWER_CHARS``) is
kept cut at that length and flagged ``oversized`` with its original length, so a 50 MB answer costs 256 KB in the
samples log and the cache. It is scored as that capped text, by every harness and by every later re-scoring of the
log alike (the log holds exactly what was scored). Reasoning is kept up to ``MAX_LOGGED_REASONING`` characters,
with its original length.

A ``null`` content is the empty answer in every harness: a parse failure ("empty output"), not a failed request (the
server did answer, with nothing, as a reasoning model does when its budget ends inside its reasoning). lm-eval's and
inspect's clients hand over "" themselves; lmms-eval 0.7.3 writes the text "None" into its log (G2M's hook marks the
sample, ``answer_was_null``) or, when the server sends no ``usage``, fails the request with a Python error
(``LMMS_NULL_CONTENT``): G2M reads both back as "".
"""

from __future__ import annotations

import re

from scoring.parsing import MAX_ANSWER_CHARS
from scoring.score import REQUEST_FAILED

#: The longest reasoning text kept in a samples log (a reasoning model can write tens of thousands of tokens).
MAX_LOGGED_REASONING = 65_536


class GenText(str):
    """A generated string that also says why generation stopped, and what else the server returned."""

    finish_reason: str | None = None
    reasoning: str | None = None
    error: str | None = None
    oversized: int | None = None  # the original length of a text cut at MAX_ANSWER_CHARS
    reasoning_chars: int | None = None  # the original length of a reasoning cut at MAX_LOGGED_REASONING

    def __new__(cls, text: str, finish_reason: str | None = None, reasoning: str | None = None,
                error: str | None = None, oversized: int | None = None, reasoning_chars: int | None = None):
        obj = super().__new__(cls, text)
        obj.finish_reason, obj.reasoning, obj.error = finish_reason, reasoning, error
        obj.oversized, obj.reasoning_chars = oversized, reasoning_chars
        return obj

    def __reduce__(self):
        return (GenText, (str(self), self.finish_reason, self.reasoning, self.error, self.oversized,
                          self.reasoning_chars))


def bounded(answer: object) -> GenText:
    """``answer`` as a ``GenText`` whose text and reasoning are within the caps (see the module's docstring)."""
    text = answer if isinstance(answer, str) else ""
    finish, reasoning, error = (getattr(answer, k, None) for k in ("finish_reason", "reasoning", "error"))
    oversized, reasoning_chars = getattr(answer, "oversized", None), getattr(answer, "reasoning_chars", None)
    if len(text) <= MAX_ANSWER_CHARS and (reasoning is None or len(reasoning) <= MAX_LOGGED_REASONING):
        return answer if isinstance(answer, GenText) else GenText(text, finish, reasoning, error)
    if len(text) > MAX_ANSWER_CHARS:
        oversized, text = len(text), text[:MAX_ANSWER_CHARS]
    if reasoning is not None and len(reasoning) > MAX_LOGGED_REASONING:
        reasoning_chars, reasoning = len(reasoning), reasoning[:MAX_LOGGED_REASONING]
    return GenText(str(text), finish, reasoning, error, oversized, reasoning_chars)


def finish_reasons(generated, budget: int, eos_ids: set[int], stops: list[str], decode) -> list[str]:
    """"length" or "stop" for each row of ``generated`` (the new token ids of a batch, right-padded after an end),
    by a server's rule (vLLM's ``finish_reason``), for backends that only return text (``with_lm_eval.in_process``).

    A row is "length" when it holds ``budget`` tokens, none of them an end-of-sequence id, and its text holds none
    of the ``stops`` strings; a row that ended earlier, or at a stop, is "stop".
    """
    out = []
    for row in generated:
        ids = [int(t) for t in row]
        ended = any(t in eos_ids for t in ids) or len(ids) < budget
        text = "" if ended or not stops else decode(ids)
        out.append("stop" if ended or any(s and s in text for s in stops) else "length")
    return out


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
        chars = max(len(reasoning), getattr(answer, "reasoning_chars", None) or 0)
        if chars > MAX_LOGGED_REASONING:
            out["reasoning_chars"] = chars
    if getattr(answer, "oversized", None):
        out["oversized"] = True
        out["answer_chars"] = answer.oversized
    return out


#: lmms-eval's openai backend (models/simple/openai.py) returns this text in place of an answer after its retries.
LMMS_FAILED = re.compile(r"^\[LMMS_EVAL_REQUEST_FAILED after \d+ retries\]")
#: What lmms-eval 0.7.3's chat client fails with when a server answers ``null`` content and no ``usage``: it counts
#: words of the content (``None.split()``). The server did answer, with nothing: the empty answer, as elsewhere.
LMMS_NULL_CONTENT = "'NoneType' object has no attribute 'split'"


def from_lmms_eval(text: object) -> GenText:
    """The answer lmms-eval handed over, with a failed request recognised by lmms-eval's sentinel."""
    text = text if isinstance(text, str) else ""
    if LMMS_FAILED.match(text):
        return GenText("") if text.endswith(LMMS_NULL_CONTENT) else failed(text[:500])
    return bounded(text)
