"""``g2m-chat``: lm-eval's ``local-chat-completions`` backend, keeping what the server says about each answer.

A thin subclass: lm-eval's own argument handling, payload (``_create_payload``: model, max_tokens, temperature 0,
stop, seed) and headers are used as they are; only the request loop is replaced, because lm-eval's

- drops ``finish_reason`` (so ``truncated`` could only be guessed from the text) and the reasoning a server returns
  in its own field (vLLM's reasoning parsers: ``reasoning_content`` / ``reasoning``);
- aborts the whole run, writing nothing, when one request keeps failing (tenacity re-raises inside
  ``asyncio.gather``: "Connector is closed"), where here that request becomes ``request_failed`` (scored 0, never
  parsed, never cached, so the next run retries it) and every other answer is kept; an answer the server itself
  gave up on (``finish_reason`` "abort" or "error") is retried the same way instead of being scored as text, and a
  rate limit's ``Retry-After`` (in seconds, at most 60) sets the wait before the next attempt;
- runs one ``asyncio`` loop per distinct generation setting, which for G2M's 45 answer budgets drains the server
  45 times, where here every request shares one loop, longest budget first, at most ``num_concurrent`` in flight
  and fewer while the server is slow to answer (``flow.InFlight``), so that a slow server loses nothing to timeouts;
- times out every request after 300 s whatever its budget, where here the default timeout grows with the budget
  (``request_timeout``): a 64x64 answer of 15,584 tokens at a loaded server's 10 tokens/s needs 26 minutes;
- re-encodes each image to PNG and leaves lm-eval's ``<image>`` placeholder in the text, where here the release's
  own PNG bytes are sent (``PngImage``) and the placeholder, which the image part replaces, is removed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import time

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import JsonChatStr, create_image_prompt
from lm_eval.models.openai_completions import LocalChatCompletion

from dataset_builder.grids.spec import IMAGE_PLACEHOLDER
from g2m_base.errors import UsageError
from g2m_base.flags import check_int
from harness_tasks.serving.endpoints import chat_url, served_model
from harness_tasks.serving.flow import OVERLOADED, InFlight, run_quietly
from scoring.replies import GenText, bounded, failed

#: A loaded server still streams at least this many tokens per second to each request.
MIN_TOKENS_PER_SECOND = 10
#: Seconds on top, for the queue, the prompt and the image.
TIMEOUT_BASE = 300
#: Statuses a retry cannot change (a bad request, a prompt too long for the context): fail at once.
FINAL_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 422})
DEFAULT_CONCURRENCY = 32


def request_timeout(max_tokens: int) -> float:
    """Seconds to wait for one answer of at most ``max_tokens`` tokens."""
    return TIMEOUT_BASE + math.ceil(max_tokens / MIN_TOKENS_PER_SECOND)


#: Other names servers give a length stop (OpenAI-compatible layers over other APIs).
_LENGTH = frozenset({"length", "max_tokens", "max_output_tokens"})
#: Finish reasons of an answer the server gave up on (vLLM's "abort" and "error"): retried, never scored as text.
ABORTED = frozenset({"abort", "error"})
#: The longest wait a server's Retry-After may ask for between two attempts.
MAX_RETRY_AFTER = 60.0


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds (rate-limited APIs say how long to wait), else None."""
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None  # an HTTP date or garbage: our own back-off applies
    return min(max(seconds, 0.0), MAX_RETRY_AFTER) if seconds is not None and math.isfinite(seconds) else None


class MalformedResponse(ValueError):
    """A body that is not a well-formed chat completion: the request failed (retried, never cached), not an answer."""


def _expect(value: object, kind: type, what: str) -> object:
    if not isinstance(value, kind):
        raise MalformedResponse(f"{what} is {type(value).__name__ if value is not None else 'missing'}, "
                                f"not {'an object' if kind is dict else 'a list' if kind is list else 'text'}")
    return value


def read_answer(body: str | bytes) -> GenText:
    """The text, finish reason and reasoning of the first choice of a chat-completions response.

    Anything but a well-formed completion (not JSON, no ``choices``, a choice or message that is not an object, no
    message, a content that is neither text, a list of parts nor ``null``) raises ``MalformedResponse``. A ``null``
    content is an empty answer (see ``answers.replies``). The text is bounded (``bounded``) as soon as it is read.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as e:
        raise MalformedResponse(f"the body is not JSON ({type(e).__name__})") from None
    choices = _expect(_expect(data, dict, "the body").get("choices"), list, "choices")
    if not choices:
        raise MalformedResponse("choices is empty")
    choice = _expect(choices[0], dict, "choices[0]")
    message = _expect(choice.get("message"), dict, "choices[0].message")
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones, in order
        content = "".join(p["text"] for p in content
                          if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"choices[0].message.content is a {type(content).__name__}, not text")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    finish = choice.get("finish_reason")
    finish = "length" if finish in _LENGTH else (finish if isinstance(finish, str) else None)
    return bounded(GenText(content or "", finish, reasoning if isinstance(reasoning, str) else None))


def _without_placeholder(messages: list[dict]) -> list[dict]:
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = content.replace(IMAGE_PLACEHOLDER, "", 1)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    part["text"] = part["text"].replace(IMAGE_PLACEHOLDER, "", 1)
    return messages


@register_model("g2m-chat")
class G2MChat(LocalChatCompletion):
    """An OpenAI-compatible chat server (``vllm serve``, SGLang, an API), with failures kept apart from answers."""

    STREAMS_ANSWERS = True  # harness_tasks.with_lm_eval.resumable: report each answer as it arrives

    def __init__(self, base_url: str | None = None, model: str | None = None, num_concurrent: int = DEFAULT_CONCURRENCY,
                 max_retries: int = 3, timeout: float | None = None, **kwargs) -> None:
        if not base_url:
            raise UsageError("g2m-chat needs base_url=http://HOST:PORT/v1 (or g2m eval --base-url / --serve)")
        check_int("max_retries", int(max_retries), 1)
        url = chat_url(str(base_url))
        model = model or served_model(url)
        kwargs.pop("pretrained", None)
        super().__init__(base_url=url, model=model, num_concurrent=int(num_concurrent), max_retries=int(max_retries),
                         timeout=int(timeout or TIMEOUT_BASE), **kwargs)
        self.fixed_timeout = None if timeout is None else float(timeout)

    def payload(self, request) -> dict:
        """The JSON body for one lm-eval request: lm-eval's own payload, our image bytes, no placeholder."""
        context, gen_kwargs, *rest = request.args
        if isinstance(context, JsonChatStr):
            messages = json.loads(context.prompt)
        else:  # --no-chat-template: the prompt as one user message
            messages = [{"role": "user", "content": str(context)}]
        images = (rest[0].get("visual") or [])[: self.max_images] if rest else []
        if images:
            messages = create_image_prompt(images, messages)
        return self._create_payload(_without_placeholder(messages), generate=True,
                                    gen_kwargs=copy.deepcopy(gen_kwargs), seed=self._seed, eos=None)

    def generate_until(self, requests, disable_tqdm: bool = False, on_answer=None) -> list[str]:
        payloads = [self.payload(r) for r in requests]
        if on_answer is None and not disable_tqdm:  # plain lm_eval: our own bar (g2m eval's runner draws one)
            from tqdm.auto import tqdm

            bar = tqdm(total=len(payloads), desc="g2m-chat", unit="answer")
            on_answer = lambda i, answer: bar.update(1)  # noqa: E731
        results = self.answer_all(payloads, on_answer)
        for request, answer in zip(requests, results, strict=True):
            if answer.finish_reason != "request_failed":
                self.cache_hook.add_partial("generate_until", request.args, answer)
        return results

    def answer_all(self, payloads: list[dict], on_answer=None) -> list[GenText]:
        """The answer to every chat payload, in their order, asked longest budget first in one event loop;
        ``on_answer(i, answer)`` as each arrives. A signal stops it as ``KeyboardInterrupt`` (``Stopped`` for SIGTERM
        or SIGHUP under ``g2m``), wherever in the loop it lands, with nothing logged on the way out."""
        order = sorted(range(len(payloads)), key=lambda i: -int(payloads[i].get("max_tokens") or 0))
        return run_quietly(self._all(payloads, order, on_answer))

    async def _all(self, payloads: list[dict], order: list[int], on_answer) -> list[GenText]:
        from aiohttp import ClientSession, ClientTimeout, TCPConnector

        results: list = [None] * len(payloads)
        self.flow = InFlight(self._concurrent)  # at most num_concurrent, fewer while the server is slow
        connector = TCPConnector(limit=self._concurrent, ssl=self.verify_certificate)
        async with ClientSession(connector=connector, headers=self.header,
                                 timeout=ClientTimeout(total=None)) as session:

            async def one(i: int) -> None:
                results[i] = await self._ask(session, payloads[i])
                if on_answer is not None:
                    on_answer(i, results[i])

            await asyncio.gather(*(one(i) for i in order))
        return results

    async def _ask(self, session, payload: dict) -> GenText:
        """One answer, retried with exponential back-off; after ``max_retries`` attempts, a failed answer. Each
        attempt holds a slot of ``self.flow`` while it is in flight (not while it waits to retry) and tells it how
        fast the server was."""
        import aiohttp

        seconds = self.fixed_timeout or request_timeout(int(payload.get("max_tokens") or 0))
        error, attempt, wait = "", 0, None
        for attempt in range(1, self.max_retries + 1):
            if attempt > 1:
                await asyncio.sleep(wait if wait is not None else min(10.0, 0.5 * 2 ** (attempt - 1)))
            wait = None
            try:
                async with self.flow.slot():
                    sent = time.monotonic()
                    async with session.post(self.base_url, json=payload,
                                            timeout=aiohttp.ClientTimeout(total=seconds)) as resp:
                        body = await resp.read()  # bytes: JSON reads them as they are, no decoded copy
                    took = time.monotonic() - sent
                if resp.status >= 400:
                    error = f"HTTP {resp.status}: {body[:300].decode('utf-8', 'replace')}"
                    if resp.status in FINAL_STATUSES:
                        break
                    if resp.status in OVERLOADED:
                        self.flow.overloaded()
                    wait = retry_after(resp.headers.get("Retry-After"))
                    continue
                self.flow.answered(took, seconds)
                answer = read_answer(body)
                if answer.finish_reason in ABORTED:
                    error = f"the server ended the answer with finish_reason {answer.finish_reason!r}"
                    continue
                return answer
            except TimeoutError:
                error = f"no answer within {seconds:.0f} s (client timeout)"
                self.flow.overloaded()
            except aiohttp.ClientError as e:
                error = f"{type(e).__name__}: {e}"
            except (ValueError, KeyError, IndexError, TypeError) as e:
                error = f"malformed response ({type(e).__name__}: {e})"
        return failed(f"{error} (attempt {attempt} of {self.max_retries})")
