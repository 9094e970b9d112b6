"""Make long runs resumable with lm-eval's own request cache.

lm-eval's ``--use_cache`` (``CachingLM``) writes new answers to its SQLite file only after the model has answered
*every* request, and its built-in image backends (hf-multimodal, vllm-vlm, chat completions) record per-request
partial results under a key that never matches a later lookup. So a 4,500-request run that dies at request 4,000
restarts from zero. ``ResumableLM`` wraps any backend, sends it the missing requests in chunks, and commits each
chunk under lm-eval's own key (``hash_args("generate_until", req.args)``), so a rerun skips everything finished and
the cache file stays readable by ``lm_eval --use_cache``.

lm-eval's cache key does not include the model, so ``g2m eval`` puts a hash of model, arguments and generation
settings in the file name: two models never share answers.
"""

from __future__ import annotations

import logging
from pathlib import Path

from lm_eval.api.model import LM, hash_args

log = logging.getLogger(__name__)


class ResumableLM(LM):
    """An LM that answers from an SQLite cache first and asks ``inner`` for the rest, ``chunk`` at a time."""

    def __init__(self, inner: LM, cache_db: str | Path, chunk: int = 64) -> None:
        from sqlitedict import SqliteDict

        super().__init__()
        if chunk < 1:
            raise ValueError("chunk must be at least 1")
        self.inner, self.chunk = inner, chunk
        Path(cache_db).parent.mkdir(parents=True, exist_ok=True)
        self.cache_db = str(cache_db)
        self.dbdict = SqliteDict(self.cache_db, autocommit=False)
        self.MULTIMODAL = getattr(inner, "MULTIMODAL", False)
        self.hits = self.misses = 0

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

    def generate_until(self, requests) -> list[str]:
        keys = [hash_args("generate_until", r.args) for r in requests]
        results = [None if r.args[1].get("do_sample") else self.dbdict.get(k) for r, k in zip(requests, keys, strict=True)]
        todo = [i for i, res in enumerate(results) if res is None]
        self.hits += len(requests) - len(todo)
        self.misses += len(todo)
        log.info("g2m resume: %d answers from %s, %d to generate", len(requests) - len(todo), self.cache_db, len(todo))
        for start in range(0, len(todo), self.chunk):
            idx = todo[start : start + self.chunk]
            answers = self.inner.generate_until([requests[i] for i in idx])
            for i, answer in zip(idx, answers, strict=True):
                results[i] = answer
                if not requests[i].args[1].get("do_sample"):
                    self.dbdict[keys[i]] = answer
            self.dbdict.commit()  # a crash from here on loses at most one chunk
        return results

    def loglikelihood(self, requests):
        return self.inner.loglikelihood(requests)

    def loglikelihood_rolling(self, requests):
        return self.inner.loglikelihood_rolling(requests)

    def close(self) -> None:
        self.dbdict.close()
