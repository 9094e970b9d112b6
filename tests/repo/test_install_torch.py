"""scripts/install_torch.sh's choice of torch (the choice, never the download): a wheel on this machine's disk wins,
so CI stays offline; otherwise uv's own --torch-backend auto decides, CPU without an NVIDIA driver and a CUDA index
with one. A stand-in ``nvidia-smi`` on PATH plays the driver: uv asks it when the kernel module says nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.helpers import REPO

pytestmark = pytest.mark.slow  # pip and uv start up a few times
SCRIPT = REPO / "scripts" / "install_torch.sh"
UV = Path(sys.executable).with_name("uv")
REAL_DRIVER = Path("/proc/driver/nvidia/version").exists() or Path("/sys/module/nvidia/version").exists()

if not UV.exists():
    pytest.skip("uv is not installed in this venv (the dev extra brings it)", allow_module_level=True)


def _wheel(folder: Path, version: str = "2.13.0+cpu") -> None:
    """A minimal, valid torch wheel: all pip needs to see that a local wheel answers ``torch==2.13.0``."""
    dist = f"torch-{version}.dist-info"
    with zipfile.ZipFile(folder / f"torch-{version}-py3-none-any.whl", "w") as z:
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}/RECORD", "")


def _plan(tmp_path: Path, local_wheel: bool, driver: str | None, backend: str | None = None) -> str:
    wheels = tmp_path / "wheels"
    wheels.mkdir(exist_ok=True)
    if local_wheel:
        _wheel(wheels)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if driver:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\necho {driver}\n")
        smi.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "G2M_TORCH"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS=str(wheels), PIP_NO_INDEX="1", UV=str(UV),
               PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    if backend:
        env["G2M_TORCH_BACKEND"] = backend
    res = subprocess.run(["bash", str(SCRIPT), sys.executable, "--plan"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


@pytest.mark.parametrize(("local_wheel", "driver", "backend", "expected"), [
    (True, None, None, "torch 2.13.0: a wheel on this machine's disk (torch-2.13.0+cpu-py3-none-any.whl, offline)"),
    (True, "570.86.10", None, "torch 2.13.0: a wheel on this machine's disk"),  # CI: the local wheel, whatever the GPU
    (False, None, None, "torch 2.13.0: uv --torch-backend auto picks cpu"),
    (False, "570.86.10", None, "torch 2.13.0: uv --torch-backend auto picks cu129 (uv: Detected CUDA driver version "
                               "from nvidia-smi: 570.86.10)"),
    (False, "470.82.01", None, "torch 2.13.0: uv --torch-backend auto picks cu118"),  # an older driver, older CUDA
    (False, "580.65.06", None, "torch 2.13.0: uv --torch-backend auto picks cu132"),  # a newer one, CUDA 13
    (False, "570.86.10", "cpu", "torch 2.13.0: uv --torch-backend cpu picks cpu"),  # the user's word wins
])
def test_the_choice_of_torch(tmp_path, local_wheel, driver, backend, expected):
    if driver and REAL_DRIVER:
        pytest.skip("this machine has an NVIDIA driver: uv reads it, not the stand-in")
    assert _plan(tmp_path, local_wheel, driver, backend).startswith(expected)


def test_setup_sh_installs_torch_through_the_script_and_both_pin_the_same_versions():
    setup = (REPO / "scripts" / "setup.sh").read_text()
    install = SCRIPT.read_text()
    assert 'bash scripts/install_torch.sh "$PY"' in setup
    assert setup.index("install_torch.sh") < setup.index('-e ".[')  # torch before anything that would pull one
    # setup.sh installs the package with "$TORCH" once more: the same default pin, or pip would swap torch for another
    pins = [re.findall(r"\$\{G2M_TORCH_VERSION:-([0-9.]+)\}", text) for text in (setup, install)]
    assert pins == [["2.13.0"], ["2.13.0"]]
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.findall(r"^UV_VERSION=(\S+)$", install, re.M) == re.findall(r'"uv==([0-9.]+)"', pyproject)
    for script in (REPO / "scripts" / "setup.sh", SCRIPT):  # both parse (bash -n reads without running)
        res = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert res.returncode == 0 and res.stderr == "", res.stderr
