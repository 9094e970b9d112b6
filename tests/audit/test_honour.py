"""How a replay honours what a submission recorded (``audit.honour.plan``), as a table: each setting is
carried into the replay, named as one it cannot honour (the row stays self-reported), or, behind a running server,
named as one it cannot confirm (no refutation)."""

from __future__ import annotations

import pytest

from audit.honour import plan
from audit.replay import Access
from scoring.catalog import TASK_VERSION

IN_PROCESS = Access(model="hf-multimodal", model_args="pretrained=org/m,dtype=float32", device="cpu")
SERVE = Access(serve="org/m", serve_args="--tensor-parallel-size 2")
URL = Access(base_url="http://127.0.0.1:1/v1")


def _meta(model_args: str = "pretrained=(a local folder),dtype=float32", backend: str = "hf-multimodal",
          **generation) -> dict:
    return {"model": {"id": "org/m", "backend": backend, "model_args": model_args},
            "generation": {"task_version": TASK_VERSION, "chat_template": True, "harness": "lm-eval", **generation}}


@pytest.mark.parametrize(("meta", "access", "model_args", "serve_args", "carried", "unmet", "unconfirmed"), [
    # an honest run's processor setting goes into the replay, in-process with the same backend
    (_meta("pretrained=(a local folder),dtype=float32,image_max_side=128"), IN_PROCESS,
     "pretrained=org/m,dtype=float32,image_max_side=128", "", ["image_max_side=128"], [], []),
    # where the model ran and how it was reached are not settings of the answers
    (_meta("pretrained=(a local folder),dtype=float32,device_map=auto,batch_size=8,trust_remote_code=True"),
     IN_PROCESS, "pretrained=org/m,dtype=float32", "", [], [], []),
    # the maintainer set it otherwise: named, never refuted
    (_meta("pretrained=x,dtype=bfloat16"), IN_PROCESS, "pretrained=org/m,dtype=float32", "", [],
     ["the submission ran dtype=bfloat16; the replay was given dtype=float32"], []),
    # a path on the submitter's machine cannot be carried
    (_meta("pretrained=x,dtype=float32,processor=(a local folder)"), IN_PROCESS, "pretrained=org/m,dtype=float32",
     "", [], ["processor (a model argument) was (a local folder)"], []),
    # another backend in-process cannot take them
    (_meta("pretrained=x,image_max_side=128"), Access(model="vllm-vlm", model_args="pretrained=org/m"),
     "pretrained=org/m", "", [], ["image_max_side=128 is a model argument of hf-multimodal"], []),
    # vllm serve takes the dtype and revision as flags, and nothing else of another backend
    (_meta("pretrained=x,dtype=bfloat16,revision=abc,image_max_side=128"), SERVE, "",
     "--dtype bfloat16 --revision abc --tensor-parallel-size 2", ["--dtype bfloat16", "--revision abc"],
     ["image_max_side=128 is a model argument of hf-multimodal, which the replay through vllm serve"], []),
    # a running server's own settings are not known: they stop a refutation only
    (_meta("pretrained=x,dtype=float32,image_max_side=128"), URL, "", "", [], [],
     ["dtype=float32", "image_max_side=128"]),
    # a served run's vllm serve settings: carried by a replay that serves the model too, not by the maintainer's
    # placement flags, and named otherwise
    (_meta("model=org/m", "g2m-chat", serve_args=["--max-model-len", "8192", "--gpu-memory-utilization", "0.9"]),
     SERVE, "", "--max-model-len 8192 --tensor-parallel-size 2", ["--max-model-len 8192"], [], []),
    (_meta("model=org/m", "g2m-chat", serve_args=["--max-model-len", "8192"]),
     Access(serve="org/m", serve_args="--max-model-len 4096"), "", "--max-model-len 4096", [],
     ["the submission's server ran --max-model-len 8192; the replay's was given --max-model-len 4096"], []),
    (_meta("model=org/m", "g2m-chat", serve_args=["--max-model-len", "8192"]), URL, "", "", [], [],
     ["--max-model-len 8192"]),
    (_meta("model=org/m", "g2m-chat", serve_args=["--max-model-len", "8192"]), IN_PROCESS,
     "pretrained=org/m,dtype=float32", "", [], ["--max-model-len 8192, which a replay in-process cannot take"], []),
    # the chat template's absence is carried; a system instruction, VLMEvalKit, another task version are not
    (_meta(chat_template=False), IN_PROCESS, "pretrained=org/m,dtype=float32", "", ["no chat template"], [], []),
    (_meta(system_instruction_sha="ab" * 32), IN_PROCESS, "pretrained=org/m,dtype=float32", "", [],
     ["a system instruction (sha256 abababababab)"], []),
    (_meta("model=org/m", "vlmevalkit", harness="vlmevalkit"), URL, "", "", [],
     ["made with vlmevalkit, which builds its own requests"], []),
    (_meta("model=org/m", "g2m-chat", harness="lmms-eval"), URL, "", "", ["the lmms-eval harness"], [], []),
    (_meta(harness="inspect"), IN_PROCESS, "pretrained=org/m,dtype=float32", "", [],
     ["made with inspect; a replay in-process runs lm-eval"], []),
    (_meta(task_version=1.0), IN_PROCESS, "pretrained=org/m,dtype=float32", "", [], ["task version 1.0"], []),
])
def test_each_setting_is_carried_or_named(meta, access, model_args, serve_args, carried, unmet, unconfirmed):
    done = plan(meta, access)
    assert done.access.model_args == model_args and done.access.serve_args == serve_args
    for want, got in ((carried, done.carried), (unmet, done.unmet), (unconfirmed, done.unconfirmed)):
        assert len(want) == len(got) and all(w in g for w, g in zip(want, got, strict=True)), (want, got)
    assert done.chat_template is (meta["generation"]["chat_template"] is not False)
    harness = meta["generation"]["harness"]
    assert done.harness == (harness if any("harness" in c for c in done.carried) else "lm-eval")


def test_a_submission_that_records_nothing_more_replays_as_before():
    """A file made before these settings were recorded: nothing is held against it that it does not say."""
    done = plan({"model": {"id": "org/m", "backend": "hf-multimodal", "model_args": "pretrained=x"}}, IN_PROCESS)
    assert (done.access, done.chat_template, done.harness, done.unmet, done.unconfirmed) == (
        IN_PROCESS, True, "lm-eval", (), ())
