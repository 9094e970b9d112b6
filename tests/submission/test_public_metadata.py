"""Nothing private on a public page: a submission's metadata as ``g2m submit`` writes it and a model page shows it
(``run_metadata.public``), as a table of what the submitter's run recorded and what a reader sees."""

from __future__ import annotations

import pytest

from submission.run_metadata import LOCAL_BUILD, LOCAL_FOLDER, PRIVATE_URL, public


@pytest.mark.parametrize(("model_args", "shown"), [
    ("pretrained=/home/ana/ckpt/qwen,dtype=bfloat16", f"pretrained={LOCAL_FOLDER},dtype=bfloat16"),
    ("base_url=http://127.0.0.1:8012/v1,model=foo", f"base_url={PRIVATE_URL},model=foo"),
    ("base_url=http://10.1.2.3:8000/v1", f"base_url={PRIVATE_URL}"),
    ("base_url=http://[::1]:8000/v1", f"base_url={PRIVATE_URL}"),
    ("base_url=http://gpu-node-3:8000/v1", f"base_url={PRIVATE_URL}"),  # a name only the submitter's network knows
    ("base_url=http://vllm.cluster.local:8000/v1", f"base_url={PRIVATE_URL}"),
    ("base_url=https://api.example.com/v1,model=gpt-x", "base_url=https://api.example.com/v1,model=gpt-x"),
    ("pretrained=Qwen/Qwen3-VL-8B-Instruct,revision=abc,trust_remote_code", "pretrained=Qwen/Qwen3-VL-8B-Instruct,"
                                                                           "revision=abc,trust_remote_code"),
])
def test_model_arguments(model_args, shown):
    assert public({"model": {"id": "m", "model_args": model_args}})["model"]["model_args"] == shown


def test_the_data_and_the_server_facts():
    meta = {"model": {"id": "/tmp/x/tiny-vlm"}, "dataset": {"source": "/tmp/demo-board-data", "content_sha256": "ab"},
            "server": {"root": "/models/qwen3-vl", "id": "Qwen/Qwen3-VL-8B-Instruct", "version": "0.32.0"}}
    out = public(meta)
    assert out["dataset"] == {"source": LOCAL_BUILD, "content_sha256": "ab"}  # the hash still says which build
    assert out["server"] == {"root": LOCAL_FOLDER, "id": "Qwen/Qwen3-VL-8B-Instruct", "version": "0.32.0"}
    assert out["model"]["id"] == "/tmp/x/tiny-vlm" and meta["dataset"]["source"] == "/tmp/demo-board-data"
    hub = {"dataset": {"source": "grid2matrix/g2m", "revision": "v1.0.0"}}
    assert public(hub) == hub


@pytest.mark.parametrize(("text", "shown"), [
    ("pretrained=m,api_key=sk-123,dtype=float32", "pretrained=m,api_key=<redacted>,dtype=float32"),
    ("base_url=https://x.org/v1,TOKEN=abc", "base_url=https://x.org/v1,TOKEN=<redacted>"),
    ("--tensor-parallel-size 2 --api-key sk-9 --dtype float32", "--tensor-parallel-size 2 --api-key <redacted> "
                                                                 "--dtype float32"),  # a vllm serve command line
    ("pretrained=Qwen/Qwen3-VL-8B-Instruct", "pretrained=Qwen/Qwen3-VL-8B-Instruct"),
])
def test_secrets_are_redacted_in_model_arguments_and_server_command_lines(text, shown):
    from submission.run_metadata import redact

    assert redact(text) == shown
