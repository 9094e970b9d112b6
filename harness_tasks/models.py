"""Two deterministic reference models registered with lm-eval: ``g2m-oracle`` and ``g2m-random``.

They run through the real harness path (prompt, image, ``generate_until``, parse, score), so they test it, and they
bracket every real model: the oracle reads the cells from the pixels (the physical limit, 100% on every task) and the
random model answers uniform values (chance, cell accuracy 1/C). Both see only what a VLM sees: the prompt text and
the image. Both honour ``max_gen_toks`` by counting one token per character (an upper bound for every common
tokenizer), cut the answer there and report ``finish_reason == "length"``, so lowering the budget shows truncation.

lm-eval 0.4.13 has no plugin discovery: a model is known only once its module is imported. ``g2m eval`` and the
``g2m-lm-eval`` command import this module; plain ``lm_eval`` does not see these two names.
"""

from __future__ import annotations

import hashlib
import re

import lm_eval.models  # noqa: F401  (registers the built-in backends first; importing us before it would hide them)
import numpy as np
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm.auto import tqdm

from dataset_builder.prompt import format_answer
from dataset_builder.render import decode_matrix

_SIZE = re.compile(r"\b(\d+)x\1 grid")
_MAPPING_LINE = re.compile(r"^[A-Za-z]+: (\d+)$", re.M)


class GenText(str):
    """A generated string that also says why generation stopped ("stop" or "length"); survives pickling."""

    finish_reason: str | None = None

    def __new__(cls, text: str, finish_reason: str | None = None):
        obj = super().__new__(cls, text)
        obj.finish_reason = finish_reason
        return obj

    def __reduce__(self):
        return (GenText, (str(self), self.finish_reason))


def grid_size_from_prompt(prompt: str) -> int | None:
    m = _SIZE.search(prompt)
    return int(m.group(1)) if m else None


def num_colours_from_prompt(prompt: str) -> int | None:
    values = [int(v) for v in _MAPPING_LINE.findall(prompt)]
    return len(values) if values and values == list(range(len(values))) else None


class _Baseline(LM):
    """Shared plumbing: chat template, budget, per-request caching."""

    MULTIMODAL = True
    NAME = "g2m-baseline"

    def __init__(self, seed: int = 0, **_ignored) -> None:  # lm-eval passes batch_size, device, ...
        super().__init__()
        self.seed = int(seed)

    @property
    def tokenizer_name(self) -> str:
        return self.NAME

    def chat_template(self, chat_template: bool | str = False) -> str:
        return "g2m baselines: message contents joined by newlines"

    def apply_chat_template(self, chat_history: list[dict], add_generation_prompt: bool = True) -> str:
        parts = []
        for message in chat_history:
            content = message["content"]
            parts.append(content if isinstance(content, str) else " ".join(c.get("text", "") for c in content))
        return "\n".join(parts)

    def answer(self, context: str, image) -> str:
        raise NotImplementedError

    def generate_until(self, requests) -> list[str]:
        out = []
        for req in tqdm(requests, desc=self.NAME, disable=len(requests) < 50):
            context, gen_kwargs, *rest = req.args
            images = rest[0].get("visual", []) if rest else []
            text = self.answer(str(context), images[0] if images else None)
            budget = gen_kwargs.get("max_gen_toks")
            if budget is not None and len(text) > int(budget):
                result = GenText(text[: int(budget)], "length")
            else:
                result = GenText(text, "stop")
            out.append(result)
            self.cache_hook.add_partial("generate_until", req.args, result)
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{self.NAME} only generates; G2M tasks are generate_until")

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError(f"{self.NAME} only generates; G2M tasks are generate_until")


@register_model("g2m-oracle")
class OracleLM(_Baseline):
    """Reads every cell's colour at its centre pixel: the physical-limit baseline."""

    NAME = "g2m-oracle"

    def answer(self, context: str, image) -> str:
        n = grid_size_from_prompt(context)
        if n is None or image is None:
            return "I cannot tell the grid size."
        return format_answer(decode_matrix(np.asarray(image.convert("RGB")), n))


@register_model("g2m-random")
class RandomLM(_Baseline):
    """Uniform random values in 0..C-1, seeded by what it sees (prompt and pixels): the chance baseline."""

    NAME = "g2m-random"

    def answer(self, context: str, image) -> str:
        n, c = grid_size_from_prompt(context), num_colours_from_prompt(context)
        if n is None or c is None:
            return "I cannot tell the grid."
        h = hashlib.sha256(f"{self.seed}\0{context}\0".encode())
        if image is not None:
            h.update(np.asarray(image.convert("RGB")).tobytes())
        rng = np.random.Generator(np.random.PCG64(int.from_bytes(h.digest()[:8], "little")))
        return format_answer(rng.integers(0, c, (n, n)))
