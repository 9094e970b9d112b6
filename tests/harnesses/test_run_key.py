"""What made the answers: the run key, the server's own facts in the results, the vLLM --serve starts, the run folder.

Real ``g2m eval`` commands against a real loopback server (``vlm_server``) and a stand-in ``vllm`` executable that
serves it, so a changed server, a changed setting or a rerun whose answers are all cached is seen as a user sees it:
in the counts, the folders, the results file and stderr.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from harness_tasks.evaluate import EvalSpec
from harness_tasks.evaluation.run_key import folder_name, key_facts, run_key, settings
from harness_tasks.serving.link import ServerLink
from tests.support import vlm_server
from tests.support.helpers import REPO, g2m

TASKS = "g2m_n03_c3,g2m_n04_c3"
ANSWERS = 4  # 2 rows per task in the small release

# --- the key and the folder, as pure functions --------------------------------------------------------------------

SERVER = {"id": "m", "root": "/ckpt/m", "max_model_len": 4096, "version": "0.32.0"}


def _key(spec: EvalSpec, model_args: str = "", template: str | None = "T", server: dict | None = None) -> str:
    link = ServerLink("http://h/v1/chat/completions", "m", facts=server) if server else None
    return run_key(key_facts(spec, model_args, template, link))


@pytest.mark.parametrize(("change", "same"), [
    (lambda: _key(EvalSpec(gen_kwargs="max_gen_toks=9")), False),
    (lambda: _key(EvalSpec(reasoning_budget=64)), False),
    (lambda: _key(EvalSpec(apply_chat_template=False)), False),
    (lambda: _key(EvalSpec(), template="another template"), False),
    (lambda: _key(EvalSpec(), model_args="dtype=bfloat16"), False),
    (lambda: _key(EvalSpec(model="g2m-random")), False),
    (lambda: _key(EvalSpec(), server=SERVER), False),
    (lambda: _key(EvalSpec(), model_args="timeout=5,num_concurrent=3,base_url=http://x:1/v1"), True),  # transport
])
def test_everything_that_can_change_an_answer_changes_the_key(change, same):
    assert (change() == _key(EvalSpec())) is same


@pytest.mark.parametrize("field", sorted(SERVER))
def test_each_fact_the_server_reports_changes_the_key(field):
    assert _key(EvalSpec(), server={**SERVER, field: "other"}) != _key(EvalSpec(), server=SERVER)


@pytest.mark.parametrize(("spec", "display", "folder"), [
    (EvalSpec(model="g2m-oracle"), "g2m-oracle", "g2m-oracle"),
    (EvalSpec(model="hf-multimodal", model_args="pretrained=org/m"), "org/m", "org__m"),
    (EvalSpec(base_url="http://h:1/v1", model_args="model=fake-vlm,timeout=5"), "fake-vlm", "fake-vlm"),
    (EvalSpec(model="g2m-oracle", model_args="budget=chars"), "g2m-oracle", "g2m-oracle+"),
    (EvalSpec(model="hf-multimodal", model_args="pretrained=org/m,dtype=float32"), "org/m", "org__m+"),
    (EvalSpec(model="g2m-oracle", gen_kwargs="max_gen_toks=9"), "g2m-oracle", "g2m-oracle+"),
    (EvalSpec(model="g2m-oracle", reasoning_budget=8), "g2m-oracle", "g2m-oracle+"),
    (EvalSpec(model="g2m-oracle", apply_chat_template=False), "g2m-oracle", "g2m-oracle+"),
    (EvalSpec(base_url="http://h:1/v1", harness="inspect"), "fake-vlm", "fake-vlm+"),
])
def test_a_run_with_default_settings_is_named_after_its_model_and_any_other_gets_a_digest(spec, display, folder):
    name = folder_name(spec, display)
    assert name == folder if not folder.endswith("+") else (name.startswith(folder) and len(name) == len(folder) + 8)
    assert bool(settings(spec, display)) is folder.endswith("+")


def test_serve_args_name_the_folder_but_not_where_the_server_listens():
    vllm = sys.executable  # any executable file: nothing is started here
    plain = folder_name(EvalSpec(serve="org/m", vllm=vllm, serve_args="--port 8001 --host=0.0.0.0"), "org/m")
    bf16 = folder_name(EvalSpec(serve="org/m", vllm=vllm, serve_args="--dtype bfloat16"), "org/m")
    assert plain == "org__m" and bf16.startswith("org__m+") and bf16 != plain


# --- --serve: a stand-in vllm, named with --vllm / G2M_VLLM -----------------------------------------------------------

STAND_IN = """#!{python}
import json, os, sys
sys.path.insert(0, {repo!r})  # the repository root: tests.support.vlm_server
argv = sys.argv[1:]
with open(os.environ["FAKE_VLLM_RECORD"], "a") as f:
    f.write(json.dumps(argv) + "\\n")
from tests.support import vlm_server
config = {{"version": {version!r}, "root": "/ckpt/" + argv[1], "max_model_len": int(argv[argv.index("--max-model-len") + 1])}}
vlm_server.main(["--port", argv[argv.index("--port") + 1], "--model", argv[1], "--config", json.dumps(config)])
"""  # noqa: E501 (a script's text: its long line stays as it is)


def _stand_in(folder: Path, version: str) -> Path:
    """A vllm in an environment of its own (not on PATH) that reports ``version``; rewriting it is an upgrade."""
    exe = folder / "vllm-env" / "bin" / "vllm"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(STAND_IN.format(python=sys.executable, repo=str(REPO), version=version))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def _serve(data: Path, out: Path, record: Path, *extra: str, env: dict | None = None):
    res = g2m("eval", "--serve", "org/tiny-vlm", "--tasks", TASKS, "--data", str(data), "--out", str(out), "--quiet",
              *extra, env={"FAKE_VLLM_RECORD": str(record), **(env or {})})
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def _newest(folder: Path) -> dict:
    return json.loads(sorted(folder.glob("results_*.json"))[-1].read_text())


def _starts(record: Path) -> int:
    return len(record.read_text().splitlines()) if record.exists() else 0


@pytest.mark.slow
def test_serve_keys_answers_by_what_the_server_is_and_starts_it_only_when_a_request_needs_it(small_release,
                                                                                               tmp_path):
    out, record = tmp_path / "runs", tmp_path / "calls.jsonl"
    exe = _stand_in(tmp_path, "0.32.0")
    _serve(small_release, out, record, "--vllm", str(exe))
    first = _newest(out / "org__tiny-vlm")["g2m"]
    assert _starts(record) == 1 and first["generated_answers"] == ANSWERS
    server = first["provenance"]["server"]
    assert (server["version"], server["root"], server["id"]) == ("0.32.0", "/ckpt/org/tiny-vlm", "org/tiny-vlm")
    assert server["max_model_len"] == first["served_by"]["max_model_len"] and server["started"] is True
    assert server["launch"]["executable"] == str(exe)  # the vllm of its own environment, not one on PATH
    assert first["provenance"]["client"]["grid2matrix"] and first["run_key"]["facts"]["server"]["version"] == "0.32.0"

    # the same command again: every answer is cached under the same key, so no server is started
    again = _serve(small_release, out, record, env={"G2M_VLLM": str(exe)})
    second = _newest(out / "org__tiny-vlm")["g2m"]
    assert _starts(record) == 1, "a server was started that no request needed"
    assert (second["resumed_answers"], second["generated_answers"]) == (ANSWERS, 0)
    assert second["run_key"]["key"] == first["run_key"]["key"] and "vllm serve was not started" in again.stderr
    assert second["provenance"]["server"]["started"] is False and second["provenance"]["server"]["version"] == "0.32.0"

    # vLLM upgraded in its environment: it is started, reports another version, and every answer is asked anew
    _stand_in(tmp_path, "0.33.0")
    os.utime(exe, ns=(1, 1))  # a rewrite within the same clock tick still gets a stamp of its own
    upgraded = _serve(small_release, out, record, "--vllm", str(exe))
    third = _newest(out / "org__tiny-vlm")["g2m"]
    assert _starts(record) == 2 and (third["resumed_answers"], third["generated_answers"]) == (0, ANSWERS)
    assert third["provenance"]["server"]["version"] == "0.33.0"
    changed = [line for line in upgraded.stderr.splitlines() if "run key changed" in line]
    assert len(changed) == 1 and "(server.version)" in changed[0] and first["run_key"]["key"] in changed[0]

    # other --serve-args: another folder, a server started, answers of its own
    _serve(small_release, out, record, "--vllm", str(exe), "--serve-args", "--dtype bfloat16")
    (bf16,) = [p for p in out.iterdir() if p.name.startswith("org__tiny-vlm+")]
    fourth = _newest(bf16)["g2m"]
    assert _starts(record) == 3 and (fourth["resumed_answers"], fourth["generated_answers"]) == (0, ANSWERS)
    assert fourth["settings"] == {"serve_args": ["--dtype", "bfloat16"]}
    assert json.loads(record.read_text().splitlines()[-1])[-2:] == ["--dtype", "bfloat16"]
    assert len(list((out / "cache").glob("*.db"))) == 3  # the earlier answers stay cached under their own keys


@pytest.mark.slow
def test_a_running_server_is_asked_what_it_is_and_nothing_else_is_claimed_for_it(small_release, tmp_path):
    httpd, state = vlm_server.start("fake-vlm", root="/ckpt/a")  # reports no version (no /version)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        run = lambda: g2m("eval", "--base-url", url, "--tasks", TASKS, "--data", str(small_release),  # noqa: E731
                          "--out", str(tmp_path), "--quiet")
        assert run().returncode == 0
        g = _newest(tmp_path / "fake-vlm")["g2m"]
        server, client = g["provenance"]["server"], g["provenance"]["client"]
        assert (server["id"], server["root"], server["max_model_len"], server["version"]) == ("fake-vlm", "/ckpt/a",
                                                                                             32768, None)
        assert "transformers" not in server and "vllm" not in server  # g2m's own versions are the client's
        assert client["transformers"] and client == g["versions"]
        state.config["root"] = "/ckpt/b"  # another checkpoint behind the same name
        res = run()
        g = _newest(tmp_path / "fake-vlm")["g2m"]
        assert (g["resumed_answers"], g["generated_answers"]) == (0, ANSWERS)
        assert [line for line in res.stderr.splitlines() if "run key changed" in line][0].count("(server.root)") == 1
        assert _newest(tmp_path / "fake-vlm")["g2m"]["provenance"]["server"]["root"] == "/ckpt/b"
        state.config["version"] = "0.32.0"
        run()
        assert _newest(tmp_path / "fake-vlm")["g2m"]["provenance"]["server"]["version"] == "0.32.0"
    finally:
        httpd.shutdown()


@pytest.mark.slow
def test_runs_with_other_model_args_go_to_their_own_folder(small_release, tmp_path):
    for extra in ((), ("--model-args", "budget=chars")):
        res = g2m("eval", "--model", "g2m-oracle", "--tasks", "g2m_n03_c3", "--data", str(small_release), "--out",
                  str(tmp_path), "--quiet", *extra)
        assert res.returncode == 0, res.stderr[-2000:]
    plain, chars = sorted(p for p in tmp_path.iterdir() if p.name.startswith("g2m-oracle"))
    assert plain.name == "g2m-oracle" and chars.name.startswith("g2m-oracle+")
    assert len(list(plain.glob("results_*.json"))) == len(list(chars.glob("results_*.json"))) == 1
    assert _newest(chars)["config"]["model_args"] == "budget=chars" and _newest(plain)["config"]["model_args"] == ""
    assert (_newest(chars)["g2m"]["settings"] == {"model_args": "budget=chars"}
            and _newest(plain)["g2m"]["settings"] == {})


# --- --vllm: one-line errors ---------------------------------------------------------------------------------------

def _not_executable(tmp: Path) -> Path:
    path = tmp / "vllm"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o644)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("flag", "env", "message"), [
    (lambda t: str(t / "nowhere" / "vllm"), {}, "--vllm '{}': no such file"),
    (lambda t: str(t), {}, "is a folder, not an executable"),
    (lambda t: str(_not_executable(t)), {}, "is not executable"),
    (None, lambda t: {"G2M_VLLM": str(t / "missing")}, "G2M_VLLM '{}': no such file"),
    (None, lambda t: {"PATH": str(t)}, "'vllm' was not found on PATH"),
])
def test_a_vllm_that_is_not_there_is_one_line_naming_it(flag, env, message, tmp_path):
    args = ["--vllm", flag(tmp_path)] if flag else []
    extra_env = env(tmp_path) if callable(env) else env
    if "PATH" in extra_env:
        extra_env["PATH"] = f"{extra_env['PATH']}{os.pathsep}{Path(sys.executable).parent}"
    res = g2m("eval", "--serve", "org/m", *args, "--data", str(tmp_path), "--out", str(tmp_path / "o"), env=extra_env)
    named = args[1] if args else extra_env.get("G2M_VLLM", "")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("g2m: error:")]
    assert len(errors) == 1 and message.format(named) in errors[0] and "--vllm" in errors[0], res.stderr
