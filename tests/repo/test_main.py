"""The ``g2m`` command's error contract: user errors are one line, bugs keep their traceback, a missing optional
dependency names the extra of the command that needs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from g2m_base.errors import StorageError, UsageError
from g2m_cli import main as cli
from harness_tasks.with_lm_eval.answer_cache import AnswerCache, CacheError
from tests.support.helpers import PACKAGES, REPO


def _with(monkeypatch, error: BaseException, command: str = "tasks-dir"):
    parser = cli.make_parser()

    def boom(_args):
        raise error

    real = parser.parse_known_args
    monkeypatch.setattr(cli, "make_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_known_args",
                        lambda argv: (lambda a: (setattr(a[0], "func", boom), a)[1])(real(argv)))
    return cli.main([command] if command != "build" else ["build", "--out", "x"])


def test_a_user_error_is_one_line_and_exit_2(monkeypatch, capsys):
    assert _with(monkeypatch, UsageError("--scale must be in (0, 1], got 2")) == 2
    assert capsys.readouterr().err == "g2m: error: --scale must be in (0, 1], got 2\n"


def test_a_bug_keeps_its_traceback(monkeypatch):
    with pytest.raises(ZeroDivisionError):
        _with(monkeypatch, ZeroDivisionError("a bug"))
    with pytest.raises(ValueError):  # a plain ValueError is not a user error: it is not silenced
        _with(monkeypatch, ValueError("internal invariant"))


# no extra brings zarr: the hint is its own package, never an install that would not bring it
@pytest.mark.parametrize(("command", "extra"), [("build", "pip install zarr"), ("tasks-dir", "pip install zarr")])
def test_a_missing_dependency_names_an_install_that_brings_it(monkeypatch, capsys, command, extra):
    assert _with(monkeypatch, ModuleNotFoundError("No module named 'zarr'", name="zarr"), command) == 2
    err = capsys.readouterr().err
    assert "needs 'zarr'" in err and err.rstrip().endswith(extra)


def test_a_missing_module_of_our_own_is_a_bug(monkeypatch):
    with pytest.raises(ModuleNotFoundError):
        _with(monkeypatch, ModuleNotFoundError("No module named 'harness_tasks.nope'", name="harness_tasks.nope"))


@pytest.mark.slow
@pytest.mark.parametrize(("blocked", "argv", "extra"), [
    ("lm_eval", ["eval", "--model", "g2m-oracle", "--tasks", "g2m_n03_c3", "--data", "."], "grid2matrix[harness]"),
    ("torch", ["probe", "--encoder", "x", "--config", "probe_n20_c3"], "grid2matrix[probing]"),
    ("inspect_ai", ["eval", "--harness", "inspect", "--base-url", "http://127.0.0.1:9/v1", "--data", "."],
     "grid2matrix[inspect]"),
    ("lmms_eval", ["eval", "--harness", "lmms-eval", "--base-url", "http://127.0.0.1:9/v1", "--data", "."],
     "grid2matrix[lmms-eval]"),
])
def test_each_command_names_its_own_extra(blocked, argv, extra):
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            f"from g2m_cli.main import main\nsys.exit(main({argv!r}))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert f"needs {blocked!r}" in res.stderr and extra in res.stderr and "Traceback" not in res.stderr


#: Exception classes that never reach the user, each with where it is caught; every other exception class defined in
#: our packages must be a G2MError, so that ``g2m`` prints it in one line instead of a traceback.
INTERNAL_ERRORS = {
    "g2m_cli.main.Stopped": "SIGTERM/SIGHUP as a KeyboardInterrupt; main() reports it and exits 128 + the signal",
    "scoring.literal.LiteralError": "an answer that is no literal; the paper parser reads it as a failure",
    "harness_tasks.serving.chat.MalformedResponse": "a server's bad body; the request failed, retried, never cached",
}

_WALK = """
import importlib, inspect, json, pkgutil
from g2m_base.errors import G2MError
found = {}
for pkg in PACKAGES_HERE:
    names = [pkg] + [m.name for m in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + ".")]
    for name in names:
        if name.endswith(".__main__"):
            continue  # runs the command
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            if cls.__module__ == name and issubclass(cls, BaseException):
                found[f"{name}.{cls.__qualname__}"] = issubclass(cls, G2MError)
print(json.dumps(found))
"""


@pytest.mark.slow  # imports every module of every package (torch, lm-eval, inspect, ...), in a process of its own
def test_every_exception_class_we_define_is_a_g2m_error_or_deliberately_internal():
    res = subprocess.run([sys.executable, "-c", _WALK.replace("PACKAGES_HERE", repr(PACKAGES))], capture_output=True,
                         text=True, timeout=300, cwd=REPO)
    assert res.returncode == 0, res.stderr[-3000:]
    found = json.loads(res.stdout.splitlines()[-1])
    assert {"g2m_base.errors.UsageError", "harness_tasks.with_lm_eval.answer_cache.CacheError"} <= set(found)
    assert sorted(name for name, is_g2m in found.items() if not is_g2m) == sorted(INTERNAL_ERRORS)


@pytest.mark.parametrize(("error", "code"), [
    (UsageError("--scale must be in (0, 1], got 2"), 2),
    (StorageError("could not save 4 answer(s) to runs/cache/x.db: database or disk is full"), 1),
    (CacheError("cannot use the answer cache runs/cache/x.db: unable to open database file"), 1),
])
def test_a_storage_failure_exits_1_like_a_full_disk_and_bad_input_exits_2(monkeypatch, capsys, error, code):
    assert _with(monkeypatch, error) == code
    assert capsys.readouterr().err == f"g2m: error: {error}\n"


def test_a_cache_that_cannot_be_opened_is_a_storage_error(tmp_path):
    (tmp_path / "cache").write_text("a file where the cache folder should be")
    with pytest.raises(CacheError, match="cannot use the answer cache") as caught:
        AnswerCache(tmp_path / "cache" / "x.db")
    assert isinstance(caught.value, StorageError) and isinstance(caught.value, OSError)
