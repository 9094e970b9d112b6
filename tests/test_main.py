"""The ``g2m`` command's error contract: user errors are one line, bugs keep their traceback, a missing optional
dependency names the extra of the command that needs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from g2m_base.errors import G2MError, UsageError
from g2m_cli import main as cli


def _with(monkeypatch, error: BaseException, command: str = "tasks-dir"):
    parser = cli.make_parser()

    def boom(_args):
        raise error

    real = parser.parse_args
    monkeypatch.setattr(cli, "make_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: (lambda a: (setattr(a, "func", boom), a)[1])(real(argv)))
    return cli.main([command] if command != "build" else ["build", "--out", "x"])


def test_a_user_error_is_one_line_and_exit_2(monkeypatch, capsys):
    assert _with(monkeypatch, UsageError("--scale must be in (0, 1], got 2")) == 2
    assert capsys.readouterr().err == "g2m: error: --scale must be in (0, 1], got 2\n"


def test_a_bug_keeps_its_traceback(monkeypatch):
    with pytest.raises(ZeroDivisionError):
        _with(monkeypatch, ZeroDivisionError("a bug"))
    with pytest.raises(ValueError):  # a plain ValueError is not a user error: it is not silenced
        _with(monkeypatch, ValueError("internal invariant"))


@pytest.mark.parametrize(("command", "extra"), [("build", "pip install grid2matrix"),
                                                ("tasks-dir", "pip install grid2matrix")])
def test_a_missing_dependency_names_the_commands_extra(monkeypatch, capsys, command, extra):
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
    ("matplotlib", ["report", "."], "grid2matrix[report]"),
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


def test_every_user_facing_error_class_is_a_g2m_error():
    from harness_tasks.evaluate import EvalSpec  # noqa: F401
    from leaderboard.run_reader import RunError
    from leaderboard.submission import Rejected
    from probing.core.features import CacheMismatch

    for cls in (RunError, Rejected, CacheMismatch, UsageError):
        assert issubclass(cls, G2MError)
