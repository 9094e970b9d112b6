"""lm-eval's hf-multimodal backend on tiny random-weight VLMs built offline: the real transformers path end to end."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from harness_tasks import score_answer
from harness_tasks.evaluate import EvalSpec, run_eval
from tests.support.tiny_models import make_tiny_idefics3, make_tiny_internvl, make_tiny_llava

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

BUILDERS = {"llava": make_tiny_llava, "idefics3": make_tiny_idefics3}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def tiny_vlm(request, tmp_path_factory):
    return BUILDERS[request.param](tmp_path_factory.mktemp(f"tiny_{request.param}"))


def test_hf_multimodal_runs_logs_samples_and_scores_them_as_score_answer_does(tiny_vlm, small_release, tmp_path):
    frozen = []  # lm-eval's full collection after each batch: over what the batch made, the rest frozen

    def collected(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            frozen.append(gc.get_freeze_count())

    gc.callbacks.append(collected)
    try:
        res = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={tiny_vlm},dtype=float32",
                                tasks=("g2m_n03_c3", "g2m_n04_c5"), data=str(small_release), output=str(tmp_path),
                                device="cpu", gen_kwargs="max_gen_toks=24"))
    finally:
        gc.callbacks.remove(collected)
    assert sum(n > 0 for n in frozen) >= 4 and gc.get_freeze_count() == 0  # a batch a row; thawed after the run
    for task in ("g2m_n03_c3", "g2m_n04_c5"):
        rows = [json.loads(x)
                for x in next(Path(res["output_dir"]).glob(f"samples_{task}_*.jsonl")).read_text().splitlines()]
        assert len(rows) == 2
        for row in rows:
            text = row["filtered_resps"][0]
            assert isinstance(text, str) and row["resps"][0][0] == text
            # the logged response, scored again by the public API: the same numbers and the same reading
            # hf-multimodal reports no finish reason: ours reads the generated tokens (a budget spent is "length")
            finish = row["doc"]["g2m"]["finish_reason"]
            assert finish in ("stop", "length")
            want = score_answer(text, row["doc"]["matrix"], finish_reason=finish)
            assert {k: row[k] for k in want.metrics()} == want.metrics(), text
            assert {k: row["doc"]["g2m"][k] for k in want.detail()} == want.detail(), text
            context = row["arguments"]["gen_args_0"]["arg_0"]  # after the model's chat template
            n = row["doc"]["grid_size"]
            assert f"{n}x{n} grid" in context and context.count("<image>") == 1
            assert row["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == 24
        for metric in ("exact_match", "cell_accuracy", "parse_failed", "truncated"):  # the task's score: their mean
            assert res["results"][task][f"{metric},none"] == pytest.approx(sum(r[metric] for r in rows) / len(rows))
    assert res["config"]["model"] == "hf-multimodal" and res["config"]["model_args"].startswith("pretrained=")
    assert res["g2m"]["versions"]["transformers"]


def _samples(res: dict, task: str) -> dict[str, dict]:
    path = next(Path(res["output_dir"]).glob(f"samples_{task}_*.jsonl"))
    return {s["doc"]["id"]: s for s in map(json.loads, path.read_text().splitlines())}


def _in_process_and_served(path, name: str, tasks: tuple[str, ...], data, tmp_path) -> tuple[dict, dict]:
    """The same checkpoint run by g2m eval in this process (hf-multimodal, CPU, float32) and behind the stand-in
    server, greedy, the same short budget: the two runs' results."""
    from tests.support import vlm_server

    common = dict(tasks=tasks, data=str(data), gen_kwargs="max_gen_toks=14", progress=False)
    local = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={path},dtype=float32", device="cpu",
                              output=str(tmp_path / "local"), **common))
    httpd = vlm_server.serve(vlm_server.TransformersVLM(path, name))
    try:
        served = run_eval(EvalSpec(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1",
                                   output=str(tmp_path / "served"), **common))
    finally:
        httpd.shutdown()
    return local, served


def test_truncated_comes_from_the_tokens_in_process_as_from_a_servers_finish_reason(small_release, tmp_path):
    """The same tiny model in-process (hf-multimodal) and behind a server that reports finish_reason (greedy, the
    same prompt and pixels): the same tokens, so the same text, the same finish reason and the same ``truncated``."""

    path = make_tiny_idefics3(tmp_path / "idefics3")
    tasks = ("g2m_n03_c3", "g2m_n04_c5")
    local, served = _in_process_and_served(path, "tiny-idefics3", tasks, small_release, tmp_path)
    finishes = []
    for task in tasks:
        mine, theirs = _samples(local, task), _samples(served, task)
        assert mine.keys() == theirs.keys() and len(mine) == 2
        for row_id, sample in mine.items():
            other = theirs[row_id]
            assert sample["resps"] == other["resps"]  # the same tokens
            assert sample["doc"]["g2m"]["finish_reason"] == other["doc"]["g2m"]["finish_reason"]
            assert sample["truncated"] == other["truncated"]
            finishes.append(sample["doc"]["g2m"]["finish_reason"])
        assert local["results"][task]["truncated,none"] == served["results"][task]["truncated,none"]
    assert "length" in finishes, finishes  # answers cut by the budget are among them


def _qwen3_vl(path):
    from probing.tiny import make_tiny_qwen3_vl

    return make_tiny_qwen3_vl(path, max_side=256)


#: name, builder, the processor class built without torchvision, the image placeholder of the model's chat template
WITHOUT_TORCHVISION = {
    "qwen3-vl": (_qwen3_vl, "Qwen3VLProcessor", "<|vision_start|>"),
    "internvl": (make_tiny_internvl, "InternVLProcessor", "<IMG_CONTEXT>"),  # 64 image tokens a tile, not its 256
}


@pytest.mark.parametrize(("builder", "processor", "placeholder"), WITHOUT_TORCHVISION.values(),
                         ids=WITHOUT_TORCHVISION.keys())
def test_a_vlm_whose_processor_needs_torchvision_runs_in_process_without_it_and_answers_as_served(
        small_release, tmp_path, capfd, builder, processor, placeholder):
    """Qwen-VL's and InternVL's ``AutoProcessor`` need torchvision (for the video half), which set-up leaves out:
    in-process, the model's own processor class is built without it (``in_process.image_only_processor``), with
    the checkpoint's processor settings (InternVL's ``image_seq_length``). The same tiny model behind the stand-in
    server, whose image-token expansion is written apart (``vlm_server.QwenImagesOnly``, ``InternVLImagesOnly``),
    gives the same tokens for the same prompt and pixels."""
    import importlib.util

    assert importlib.util.find_spec("torchvision") is None, "set-up installs no torchvision: this path is its absence"
    path = builder(tmp_path / "vlm")
    tasks = ("g2m_n03_c3", "g2m_n04_c5")
    local, served = _in_process_and_served(path, f"tiny-{processor}", tasks, small_release, tmp_path)
    said = capfd.readouterr().err
    assert f"g2m: torchvision is not installed: {processor} built without its video half" in said
    for task in tasks:
        mine, theirs = _samples(local, task), _samples(served, task)
        assert mine.keys() == theirs.keys() and len(mine) == 2
        for row_id, sample in mine.items():
            assert sample["resps"] == theirs[row_id]["resps"] and sample["resps"][0][0].strip()
            context = sample["arguments"]["gen_args_0"]["arg_0"]
            assert context.count(placeholder) == 1, context  # the model's own chat template, one image


def test_a_budget_past_the_models_context_is_refused_in_one_line_not_a_cut_prompt(small_release, tmp_path):
    """lm-eval cuts a prompt from the left to fit ``max_length - max_gen_toks``: the image's tokens go first, and a
    budget past the context itself ends in an IndexError deep in the model. The 64 x 64 task's budget (15,584
    tokens) is past the tiny model's context (4,096): one line, exit 2, no run written."""
    from probing.tiny import make_tiny_qwen3_vl
    from tests.support.helpers import g2m

    path = make_tiny_qwen3_vl(tmp_path / "qwen3vl", max_side=256)
    res = g2m("eval", "--model", "hf-multimodal", "--model-args", f"pretrained={path}", "--device", "cpu",
              "--tasks", "g2m_n64_c3", "--data", str(small_release), "--out", str(tmp_path / "runs"), "--quiet")
    last = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert last.startswith("g2m: error: a prompt of ") and "answer budget of 15,584 do not fit 4,096 tokens" in last
    assert not list((tmp_path / "runs").rglob("results_*.json"))
