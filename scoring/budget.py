"""How many tokens a G2M answer may take, and how long the model context must be.

The canonical answer for an N x N grid, ``[[a, b, ...], ...]``, has exactly 3N^2 + 2N characters. No common
tokenizer spends more than one token per ASCII character (byte-level BPE and SentencePiece both merge or keep
characters; Qwen splits every digit and spends exactly 3 tokens per cell: measured in tests/scoring/test_budget.py),
so the character count bounds the answer. We allow 25% more for spacing, line breaks and code fences, plus 64 tokens
for a short preamble, and never less than 256:

    max_gen_toks(N) = max(256, ceil(1.25 * (3N^2 + 2N)) + 64)

which is 15,584 tokens at 64x64, against the authors' cap of 2,048 that cuts every list answer from N = 27 on.
Reasoning models need more: raise it with ``--gen_kwargs max_gen_toks=...``.
"""

from __future__ import annotations

import math

from dataset_builder.grids.spec import check_grid_size

MIN_GEN_TOKS = 256
MARGIN = 1.25
PREAMBLE_TOKS = 64
#: Generous bounds for the rest of the context: the prompt text is ~200 tokens, and a 512x512 image costs 256
#: (Qwen3-VL) to ~1,800 (InternVL3.5 with dynamic tiles) tokens.
PROMPT_TOKS = 512
IMAGE_TOKS = 2048


def canonical_answer_chars(grid_size: int) -> int:
    return 3 * grid_size * grid_size + 2 * grid_size


def max_gen_toks(grid_size: int) -> int:
    check_grid_size(grid_size)
    return max(MIN_GEN_TOKS, math.ceil(MARGIN * canonical_answer_chars(grid_size)) + PREAMBLE_TOKS)


def suggest_max_model_len(answer_tokens: int, image_tokens: int = IMAGE_TOKS, prompt_tokens: int = PROMPT_TOKS) -> int:
    """A ``max_model_len`` for vLLM that fits prompt, image and an answer budget, rounded up to 1,024."""
    need = answer_tokens + image_tokens + prompt_tokens
    return math.ceil(need / 1024) * 1024
