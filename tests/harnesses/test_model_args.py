"""ModelArgs: the one parser of ``key=value,...`` model arguments, and the flag vocabulary's old spellings."""

from __future__ import annotations

import pytest

from g2m_cli.main import make_parser
from harness_tasks import ModelArgs, model_name


@pytest.mark.parametrize("text", ["", "pretrained=Qwen/Qwen3-VL-8B,max_model_len=20480", "a=1, b = 2,bare",
                                  "header={'x': 'y'}", "model=m,model=n"])
def test_parse_then_join_is_byte_identical(text):
    assert str(ModelArgs.parse(text)) == ",".join(p for p in text.split(",") if p.strip())


@pytest.mark.parametrize(("args", "backend", "name"), [
    ("pretrained=Qwen/Qwen2.5-VL-7B,dtype=bfloat16", "hf-multimodal", "Qwen/Qwen2.5-VL-7B"),
    ("model=served-name,base_url=http://x/v1", "g2m-chat", "served-name"),
    ("path=/ckpt", "x", "/ckpt"),
    ("dtype=float16", "vllm-vlm", "vllm-vlm"),
    ("pretrained=", "hf", "hf"),
    ({"model": "m"}, "inspect", "m"),
    (None, "g2m-oracle", "g2m-oracle"),
])
def test_a_run_is_named_after_its_checkpoint(args, backend, name):
    assert model_name(backend, args) == name


def test_defaults_fill_only_what_the_user_left_out_and_keep_the_order():
    args = ModelArgs.parse("model=mine,num_concurrent=4")
    filled = args.with_defaults(base_url="http://h/v1/chat/completions", model="served", num_concurrent=32,
                                timeout=None)
    assert str(filled) == "model=mine,num_concurrent=4,base_url=http://h/v1/chat/completions"
    assert filled.get("model") == "mine" and filled.without("model", "base_url").as_dict() == {"num_concurrent": "4"}


@pytest.mark.parametrize(("old", "new"), [
    (["--output", "runs-x", "--no-progress"], ["--out", "runs-x", "--quiet"]),
    (["--output=runs-y"], ["--out=runs-y"]),
])
def test_g2m_eval_takes_its_old_flag_spellings(old, new):
    parse = make_parser().parse_args
    a, b = parse(["eval", *old]), parse(["eval", *new])
    assert (a.out, a.quiet) == (b.out, b.quiet)
    assert "--output" not in make_parser()._subparsers._group_actions[0].choices["eval"].format_help()


def test_every_command_spells_data_out_and_quiet_alike():
    choices = make_parser()._subparsers._group_actions[0].choices
    helps = {name: p.format_help() for name, p in choices.items()}
    data_helps = {name for name, h in helps.items() if "--data DIR" in h}
    assert {"eval", "probe", "export"} <= data_helps
    assert all("--output " not in h and "--no-progress" not in h for h in helps.values())
    assert {"build", "verify", "eval", "probe"} <= {name for name, h in helps.items() if "--quiet" in h}
