"""The LM ``g2m eval`` puts around every backend: resumable, one progress bar, failures kept apart, images freed.

- **Resumable.** lm-eval's ``--use_cache`` (``CachingLM``) writes new answers to its SQLite file only after the model
  has answered *every* request, and its image backends record per-request partial results under a key that never
  matches a later lookup, so a 4,500-request run that dies at request 4,000 restarts from zero. ``RunnerLM`` commits
  answers under lm-eval's own key (``hash_args("generate_until", req.args)``) every ``chunk`` answers (and at least
  every ``COMMIT_SECONDS``), so a rerun skips everything finished. lm-eval's key does not include the model, so
  ``g2m eval`` names the file after the run key (``evaluation.run_key``: model, arguments, settings, server).
- **A server only when needed.** ``connect``, when given, is called once, before the first request the cache cannot
  answer: it starts a ``--serve`` server and returns the cache file of the key the started server gives (the same
  file, or another when it reports something other than expected, then every answer is looked up there again).
- **Failed requests are not answers.** An answer whose ``finish_reason`` is ``request_failed`` is returned (it scores
  0 and is counted apart) but never cached, so the next run of the same command retries exactly those requests.
- **One progress bar** over all tasks, with an ETA once it means something (``progress``); the backend's own bars
  are switched off.
- **Memory.** Each request's image (a ``PngImage``) is released once it is answered: a run holds the PNG bytes of
  every row, and the pixels of only the requests in flight.
- **Reasoning budget.** ``reasoning_budget=K`` adds K tokens to every request's ``max_gen_toks``.

Backends that set ``STREAMS_ANSWERS`` (``g2m-chat``, the built-in models) get every missing request at once and report
each answer as it arrives (``on_answer``), so a server keeps all its slots busy; others get ``chunk`` at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import logging
import time
from pathlib import Path
from typing import Any

from lm_eval.api.model import LM, hash_args

from g2m_base.flags import check_int
from harness_tasks.evaluation.images import release_images
from harness_tasks.with_lm_eval.answer_cache import AnswerCache, CacheError
from harness_tasks.with_lm_eval.progress import AnswerBar
from scoring.replies import bounded, is_failed

log = logging.getLogger(__name__)
COMMIT_SECONDS = 30.0


@dataclasses.dataclass
class _Batch:
    """One call of ``generate_until``: its requests, their cache keys, whether each may be cached, the answers so far,
    the indices still to be answered (``todo``), and the answers received since the last commit."""

    requests: list
    keys: list[str]
    cacheable: list[bool]
    results: list
    todo: list[int]
    pending: int = 0
    since: float = 0.0
    bar: Any = None


class RunnerLM(LM):
    """An LM that answers from an SQLite cache first and asks ``inner`` for the rest."""

    def __init__(self, inner: LM, cache_db: str | Path | None = None, chunk: int = 256, reasoning_budget: int = 0,
                 progress: bool = True, desc: str = "g2m", connect=None) -> None:
        super().__init__()
        check_int("chunk", chunk, 1)
        check_int("reasoning_budget", reasoning_budget, 0)
        self.inner, self.chunk, self.reasoning_budget = inner, chunk, reasoning_budget
        self.progress, self.desc = progress, desc
        self.connect = connect
        self.cache_db, self.cache = None, None
        self._open(cache_db)
        self.MULTIMODAL = getattr(inner, "MULTIMODAL", False)
        self.hits = self.misses = self.failed = 0

    def _open(self, cache_db: str | Path | None) -> None:
        if self.cache is not None:
            self.cache.close()
        self.cache_db = None if cache_db is None else str(cache_db)
        self.cache = None if cache_db is None else AnswerCache(cache_db)

    def __getattr__(self, name):  # anything not defined here (tokenizer, processor, ...) comes from the backend
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def rank(self) -> int:
        return self.inner.rank

    @property
    def world_size(self) -> int:
        return self.inner.world_size

    @property
    def tokenizer_name(self) -> str:
        return self.inner.tokenizer_name

    def chat_template(self, chat_template: bool | str = False):
        return self.inner.chat_template(chat_template)

    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True):
        return self.inner.apply_chat_template(chat_history, add_generation_prompt=add_generation_prompt)

    def _budgeted(self, req):
        """The request as sent: ``reasoning_budget`` more tokens (the original is what lm-eval logs and keys)."""
        if not self.reasoning_budget:
            return req
        context, gen_kwargs, *rest = req.args
        gen_kwargs = {**gen_kwargs, "max_gen_toks": int(gen_kwargs.get("max_gen_toks", 256)) + self.reasoning_budget}
        return dataclasses.replace(req, arguments=(context, gen_kwargs, *rest))

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        """Answers from the cache first; the rest asked of the backend (``_dispatch``), each kept as it arrives
        (``_record``), the cache committed every ``chunk`` answers or ``COMMIT_SECONDS``, and on the way out."""
        batch = self._connect(requests)
        done = len(requests) - len(batch.todo)
        self.hits += done
        self.misses += len(batch.todo)
        if self.cache_db:
            log.info("g2m: %d answers from %s, %d to generate", done, self.cache_db, len(batch.todo))
        batch.bar = AnswerBar(total=len(requests), initial=done, desc=self.desc, unit="answer",
                         disable=not self.progress or disable_tqdm, dynamic_ncols=True, smoothing=0.05)
        batch.since = time.monotonic()
        try:
            self._dispatch(batch)
        except BaseException:
            with contextlib.suppress(CacheError):  # keep what was received; the first error is the one to tell
                self._commit(batch)
            raise
        finally:
            batch.bar.close()
        self._commit(batch)
        return batch.results

    def _connect(self, requests) -> _Batch:
        """The requests' keys and cached answers. When some are not cached and a server is still to be reached
        (``connect``), it is reached now, once, and the cache its key names is read instead."""
        keys = [hash_args("generate_until", r.args) for r in requests]
        batch = self._look_up(requests, keys)
        if batch.todo and self.connect is not None:
            connect, self.connect = self.connect, None
            cache_db = connect()
            if (None if cache_db is None else str(cache_db)) != self.cache_db:
                self._open(cache_db)
                batch = self._look_up(requests, keys)
        return batch

    def _look_up(self, requests, keys: list[str]) -> _Batch:
        cacheable = [self.cache is not None and not r.args[1].get("do_sample") for r in requests]
        results = [self.cache.get(k) if c else None for k, c in zip(keys, cacheable, strict=True)]
        return _Batch(requests, keys, cacheable, results, [i for i, res in enumerate(results) if res is None])

    def _dispatch(self, batch: _Batch) -> None:
        """Send what the cache did not answer: streamed to ``_record`` by a backend that reports each answer as it
        arrives, else in blocks of ``chunk`` requests."""
        sent = [self._budgeted(batch.requests[i]) for i in batch.todo]
        if getattr(self.inner, "STREAMS_ANSWERS", False):
            seen = set()

            def on_answer(j: int, answer) -> None:
                seen.add(j)
                self._record(batch, j, answer)

            answers = self.inner.generate_until(sent, on_answer=on_answer)
            for j, answer in enumerate(answers):  # anything the backend returned without reporting it
                if j not in seen:
                    self._record(batch, j, answer)
            return
        quiet = "disable_tqdm" in inspect.signature(self.inner.generate_until).parameters
        for start in range(0, len(sent), self.chunk):
            block = sent[start : start + self.chunk]
            answers = self.inner.generate_until(block, disable_tqdm=True) if quiet else self.inner.generate_until(block)
            for j, answer in enumerate(answers, start):
                self._record(batch, j, answer)

    def _record(self, batch: _Batch, j: int, answer) -> None:
        """Keep the answer to the ``j``-th request sent: bounded, counted when failed (a failure is never cached),
        else cached, committed once ``chunk`` answers or ``COMMIT_SECONDS`` are pending."""
        i = batch.todo[j]
        batch.results[i] = answer = bounded(answer)
        if is_failed(answer):
            self.failed += 1
        elif batch.cacheable[i]:
            self.cache.put(batch.keys[i], answer)
            batch.pending += 1
            if batch.pending >= self.chunk or time.monotonic() - batch.since > COMMIT_SECONDS:
                self._commit(batch)
        release_images([batch.requests[i]])
        batch.bar.update(1)

    def _commit(self, batch: _Batch) -> None:
        if self.cache is not None and batch.pending:
            self.cache.commit()  # a crash from here on loses at most one chunk; a failure raises CacheError here
        batch.pending, batch.since = 0, time.monotonic()

    def loglikelihood(self, requests):
        return self.inner.loglikelihood(requests)

    def loglikelihood_rolling(self, requests):
        return self.inner.loglikelihood_rolling(requests)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
