"""Two deterministic reference models registered with lm-eval: ``g2m-oracle`` and ``g2m-random``.

They run through the real harness path (prompt, image, ``generate_until``, parse, score), so they test it. Their
answers are the pure functions of ``scoring.baselines``: the oracle reads the cells from the image it is sent,
the random model draws values seeded by the row id; the grid size and palette size come from the request's row, never
from re-reading the prompt. By default they write their whole answer whatever the budget (a perfect model with a
compact enough tokenizer: the oracle scores 1.0 under both protocols). With ``budget=chars`` in the model arguments
they honour ``max_gen_toks`` by counting one token per character (an upper bound for every common tokenizer), cut
the answer there and report ``finish_reason == "length"``: the scripted truncating model that shows what a budget
does (the authors' 2,048 tokens cut every list answer from N = 27 on).

lm-eval 0.4.13 has no plugin discovery: a model is known only once its module is imported. ``g2m eval`` and the
``g2m-lm-eval`` command import this module; plain ``lm_eval`` does not see these two names.
"""

from __future__ import annotations

import lm_eval.models  # noqa: F401  (registers the built-in backends first; importing us before it would hide them)
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm.auto import tqdm

from scoring.baselines import oracle_answer, random_answer
from scoring.replies import GenText


class _Baseline(LM):
    """Shared plumbing: chat template, budget, per-request caching."""

    MULTIMODAL = True
    STREAMS_ANSWERS = True  # harness_tasks.with_lm_eval.resumable: report each answer as it is made
    NAME = "g2m-baseline"

    def __init__(self, seed: int = 0, budget: str = "none", **_ignored) -> None:  # lm-eval adds batch_size, device
        super().__init__()
        if budget not in ("none", "chars"):
            raise ValueError(f"budget must be 'none' (ignore max_gen_toks) or 'chars' (one token per character), got "
                             f"{budget!r}")
        self.seed = int(seed)
        self.count_chars = budget == "chars"

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

    def answer(self, row: dict, image) -> str:
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm: bool = False, on_answer=None) -> list[str]:
        """Answer every request; ``on_answer(i, answer)`` is called as each one is ready (``STREAMS_ANSWERS``)."""
        out = []
        bar = tqdm(requests, desc=self.NAME, disable=disable_tqdm or on_answer is not None or len(requests) < 50)
        for i, req in enumerate(bar):
            _context, gen_kwargs, *rest = req.args
            images = rest[0].get("visual", []) if rest else []
            text = self.answer(req.doc or {}, images[0] if images else None)
            budget = gen_kwargs.get("max_gen_toks") if self.count_chars else None
            if budget is not None and len(text) > int(budget):
                result = GenText(text[: int(budget)], "length")
            else:
                result = GenText(text, "stop")
            out.append(result)
            self.cache_hook.add_partial("generate_until", req.args, result)
            if on_answer is not None:
                on_answer(i, result)
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{self.NAME} only generates; G2M tasks are generate_until")

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError(f"{self.NAME} only generates; G2M tasks are generate_until")


@register_model("g2m-oracle")
class OracleLM(_Baseline):
    """Reads every cell's colour at its centre pixel, in the image it is sent: the physical-limit baseline."""

    NAME = "g2m-oracle"

    def answer(self, row: dict, image) -> str:
        if image is None or "grid_size" not in row:
            return "I was sent no grid."
        return oracle_answer(image, int(row["grid_size"]))


@register_model("g2m-random")
class RandomLM(_Baseline):
    """Uniform random values in 0..C-1, seeded by the row id: the chance baseline."""

    NAME = "g2m-random"

    def answer(self, row: dict, image) -> str:
        if not {"grid_size", "num_colors", "id"} <= set(row):
            return "I was sent no grid."
        return random_answer(int(row["grid_size"]), int(row["num_colors"]), str(row["id"]), self.seed)
