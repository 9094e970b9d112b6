#!/usr/bin/env bash
# Create .venv and install grid2matrix for development, with every harness G2M runs in. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install -q)
"${PIP[@]}" --upgrade pip
# torch first, pinned, in the build that fits the machine (scripts/install_torch.sh: a wheel on this disk, as on CI,
# else uv's --torch-backend auto: CPU without an NVIDIA GPU, CUDA with one); an unpinned torch pulled in by
# transformers or lm-eval would be a multi-GB CUDA build whatever the machine.
TORCH="torch==${G2M_TORCH_VERSION:-2.13.0}"
bash scripts/install_torch.sh .venv/bin/python
"${PIP[@]}" "$TORCH" -e ".[harness,probing,report,inspect,lmms-eval,dev]"
# lmms-eval without its dependency list (see pyproject.toml's lmms-eval extra for why), and never torchvision.
"${PIP[@]}" --no-deps "lmms-eval==0.7.3" 2>&1 | grep -v "lmms-eval 0.7.3 requires" || true
if .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torchvision') is None)"; then
  .venv/bin/python -m pip uninstall -y -q torchvision
fi
echo "grid2matrix installed in .venv ($(.venv/bin/g2m --version)), with lm-eval, lmms-eval and inspect"
