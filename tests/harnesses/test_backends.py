"""What the backends receive, checked on the CPU: lm-eval's own kwarg handling for vLLM, and our vLLM defaults."""

from __future__ import annotations

import pytest

from harness_tasks import TASK_DIR
from harness_tasks.with_lm_eval.driver import effective_model_args
from scoring.budget import max_gen_toks
from scoring.catalog import all_tasks, grid_sizes
from tests.support.lazy import lazy

lm_utils = lazy("lm_eval.models.utils")  # lm-eval, imported by the first test that uses it


@pytest.fixture(scope="module")
def task_configs():
    from lm_eval.tasks._yaml_loader import load_yaml

    return {name: load_yaml(TASK_DIR / f"{name}.yaml", resolve_func=False) for name, _, _ in all_tasks()}


@pytest.mark.parametrize(("name", "n"), [(t, n) for t, n, c in all_tasks() if c == 3])
def test_vllm_gets_greedy_decoding_the_budget_and_no_stop_strings(task_configs, name, n):
    # the same two calls lm-eval's VLLM.modify_gen_kwargs makes before building SamplingParams
    kw = lm_utils.normalize_gen_kwargs(task_configs[name]["generation_kwargs"], default_max_gen_toks=256)
    until = lm_utils.handle_stop_sequences(kw.pop("until", None), eos="<|im_end|>")
    assert until == ["<|im_end|>"]  # the EOS only
    assert kw["temperature"] == 0.0 and kw["do_sample"] is False
    assert kw["max_gen_toks"] == max_gen_toks(n)


@pytest.mark.parametrize(
    ("model", "args", "tasks", "expected"),
    [
        ("vllm-vlm", "pretrained=Qwen/Qwen3-VL-8B-Instruct", ("g2m",),
         "pretrained=Qwen/Qwen3-VL-8B-Instruct,max_model_len=18432,max_images=1"),
        ("vllm-vlm", "pretrained=x", ("g2m_lite",), "pretrained=x,max_model_len=4096,max_images=1"),
        ("vllm-vlm", "pretrained=x,max_model_len=32768,max_images=2", ("g2m",),
         "pretrained=x,max_model_len=32768,max_images=2"),
        ("vllm-vlm", "pretrained=x,max_length=9000", ("g2m_n64_c3",), "pretrained=x,max_length=9000,max_images=1"),
        ("hf-multimodal", "pretrained=x", ("g2m",), "pretrained=x"),
        ("vllm-vlm", "pretrained=x", ("g2m_paper",), "pretrained=x,max_model_len=5120,max_images=1"),
    ],
)
def test_vllm_context_is_sized_unless_the_user_set_it(model, args, tasks, expected):
    assert effective_model_args(model, args, tasks) == expected


def test_grid_sizes_of_groups_and_tasks():
    assert grid_sizes(("g2m_lite",)) == [3, 4, 5, 6, 7, 8, 9, 10, 12]
    assert grid_sizes(("g2m_n20_c5", "g2m_n09_c3")) == [9, 20]


EOS = 2


@pytest.mark.parametrize(("rows", "budget", "stops", "want"), [
    ([[5, 6, 7, 8]], 4, [], ["length"]),  # the whole budget, no end: cut, as a server's "length"
    ([[5, 6, 7, EOS]], 4, [], ["stop"]),  # the end token as the last of the budget: a stop (vLLM checks it first)
    ([[5, EOS, 0, 0], [5, 6, 7, 8]], 4, [], ["stop", "length"]),  # a batch: a row that ended is padded after
    ([[5, 6]], 4, [], ["stop"]),  # fewer tokens than the budget: something ended it
    ([[5, 6, 7, 8]], 4, ["x7"], ["stop"]),  # a stop string in the text ended it
    ([[5, 6, 7, 8]], 4, ["zz"], ["length"]),
])
def test_in_process_answers_are_cut_by_the_servers_rule(rows, budget, stops, want):
    from scoring.replies import finish_reasons

    assert finish_reasons(rows, budget, {EOS}, stops, lambda ids: "".join(f"x{t}" for t in ids)) == want
