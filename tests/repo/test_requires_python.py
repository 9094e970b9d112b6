"""The Python floor that pyproject.toml declares is one the code can run on.

What the code needs is worked out from the code itself, not from a list kept by hand: every module is parsed with
``ast.parse(feature_version=floor)`` (newer syntax is refused), every regular expression the packages hand to ``re``
(read statically) is parsed by ``re``'s own parser and searched for possessive quantifiers and atomic groups (3.11: the
bounded parsers rely on them), and imports of standard-library names newer than the floor are looked for. A claim of
3.10 fails here, as it did in fact."""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from pathlib import Path
from re import _constants as sre_constants
from re import _parser as sre_parser

import pytest

from tests.support.helpers import PACKAGES

REPO = Path(__file__).resolve().parents[2]
RE_CALLS = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"}
#: Standard-library names newer than 3.10, as (module, name) -> the minor version that added them.
NEWER_STDLIB = {("tomllib", None): 11, ("datetime", "UTC"): 11, ("enum", "StrEnum"): 11, ("typing", "Self"): 11,
                ("hashlib", "file_digest"): 11, ("asyncio", "TaskGroup"): 11, ("typing", "override"): 12,
                ("itertools", "batched"): 12}


def declared_floor() -> tuple[int, int]:
    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    m = re.fullmatch(r">=\s*3\.(\d+)", spec.strip())
    assert m, f"requires-python {spec!r} is not of the form '>=3.N'"
    return 3, int(m.group(1))


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def _needs_311(pattern: str | bytes, flags: int = 0) -> bool:
    """Whether ``re``'s own parser finds a possessive quantifier or an atomic group in ``pattern``."""
    newer = {sre_constants.POSSESSIVE_REPEAT, sre_constants.ATOMIC_GROUP}

    def walk(node) -> bool:
        if isinstance(node, sre_parser.SubPattern):
            return any(op in newer or walk(av) for op, av in node.data)
        if isinstance(node, (list, tuple)):
            return any(walk(x) for x in node)
        return False

    return walk(sre_parser.parse(pattern, flags))


def _static_text(node: ast.AST, env: dict) -> str | bytes | None:
    """The text an expression spells, read without running anything: string constants, the module's own string
    constants by name, ``+`` and f-strings (a replacement field that cannot be read stands in as ``x``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _static_text(node.left, env), _static_text(node.right, env)
        return left + right if type(left) is type(right) and left is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [_static_text(v.value if isinstance(v, ast.FormattedValue) else v, env) for v in node.values]
        return "".join(p if isinstance(p, str) else "x" for p in parts)
    return None


def _constants(tree: ast.Module) -> dict:
    """The module's string constants, in order (patterns are built from pieces such as ``_DEC``)."""
    env: dict = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            text = _static_text(stmt.value, env)
            if text is not None:
                env[stmt.targets[0].id] = text
    return env


def _uses(node: ast.AST) -> list[tuple[str | None, str | None]]:
    """(module, name) pairs a node imports or reads (``datetime.UTC``, ``from enum import StrEnum``)."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [(node.module, None)] + [(node.module, a.name) for a in node.names]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return [(node.value.id, node.attr)]
    return []


@functools.cache
def needed_floor() -> tuple[tuple[int, int], list[str]]:
    """The floor the code needs, and why (file: feature). Every module is parsed as the declared floor's Python
    reads it, so newer syntax fails here too."""
    minor, why = 8, []
    for path in sources():
        rel = path.relative_to(REPO)
        tree = ast.parse(path.read_text(), str(rel), feature_version=declared_floor())
        env = _constants(tree)
        for node in ast.walk(tree):
            for use in _uses(node):
                if use in NEWER_STDLIB:
                    minor = max(minor, NEWER_STDLIB[use])
                    why.append(f"{rel}: {'.'.join(filter(None, use))} (3.{NEWER_STDLIB[use]})")
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RE_CALLS
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
                continue
            pattern = _static_text(node.args[0], env)
            try:
                newer = pattern is not None and _needs_311(pattern)
            except re.error:
                continue  # a stand-in for an unreadable piece made it invalid: not evidence either way
            if newer:
                minor = max(minor, 11)
                why.append(f"{rel}: a possessive quantifier or atomic group in a regular expression (3.11)")
    return (3, minor), sorted(set(why))


@pytest.mark.slow  # parses every module of the packages
def test_the_declared_floor_is_what_the_code_needs():
    (need, why), floor = needed_floor(), declared_floor()
    assert floor >= need, f"requires-python says 3.{floor[1]}, the code needs 3.{need[1]}: " + "; ".join(why)


@pytest.mark.slow
def test_the_check_finds_what_made_the_old_claim_of_3_10_wrong():
    need, why = needed_floor()
    assert need == (3, 11)
    found = {w.split(":")[0] for w in why if "possessive" in w}
    for rel in ("g2m_base/bounded_json.py", "scoring/scan.py", "scoring/parsing.py",
                "scoring/paper.py", "scoring/literal.py"):
        assert rel in found, (rel, why)


def test_the_readme_and_the_linter_state_the_same_floor():
    minor = declared_floor()[1]
    for page in ("README.md", "docs/install.md"):
        assert f"Python 3.{minor} or newer" in (REPO / page).read_text(), page
    ruff = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["target-version"]
    assert ruff == f"py3{minor}"


@pytest.mark.parametrize(("pattern", "newer"), [
    (r"a*+", True), (r"(?:ab)++", True), (r"x?+", True), (r"a{1,3}+", True), (r"(?>ab|a)b", True),
    (r"\++", False), (r"[*+]+", False), (r"a*b+", False), (r"(?:a|b)*?", False),
])
def test_the_regex_check_tells_3_11_features_apart(pattern, newer):
    assert _needs_311(pattern) is newer
