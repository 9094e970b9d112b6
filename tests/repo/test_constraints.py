"""scripts/constraints.txt, the versions scripts/setup.sh installs: one pin per package, never torch (its build is the
machine's), every requirement of the extras setup.sh installs pinned within what pyproject.toml allows, and the venv
the tests run in holding exactly those versions."""

from __future__ import annotations

import importlib.metadata as md
import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.helpers import REPO

EXTRAS = ("harness", "probing", "report", "inspect", "lmms-eval", "dev")  # scripts/setup.sh's list
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")


def pins() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (REPO / "scripts" / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = PIN.match(line)
        assert m, f"not a name==version pin: {line!r}"
        name = canonicalize_name(m[1])
        assert name not in out, f"{name} pinned twice"
        out[name] = m[2]
    return out


def test_one_pin_per_package_and_none_for_the_machines_own_builds():
    names = pins()
    assert len(names) > 100
    assert not {n for n in names if n in {"torch", "triton", "lmms-eval"} or n.startswith("nvidia-")}


def test_every_requirement_of_the_installed_extras_is_pinned_within_what_pyproject_allows():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert f'-e ".[{",".join(EXTRAS)}]"' in setup
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for e in EXTRAS for r in project["optional-dependencies"][e]]
    have = pins()
    for req in reqs:
        name = canonicalize_name(req.name)
        if name in {"grid2matrix", "torch"}:
            continue
        assert name in have, f"{req} is not pinned in scripts/constraints.txt"
        assert req.specifier.contains(have[name], prereleases=True), f"{name}=={have[name]} breaks {req}"


def test_the_venv_holds_the_pinned_versions():
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in md.distributions()}
    wrong = {n: (v, installed.get(n)) for n, v in pins().items() if installed.get(n) != v}
    assert not wrong, f"pinned vs installed (run bash scripts/setup.sh): {wrong}"
