#!/usr/bin/env bash
# Create .venv and install grid2matrix for development, with every harness G2M runs in. Safe to re-run.
#
# Every package is installed at the version scripts/constraints.txt pins (the tested set, Python 3.11 on Linux), by
# uv: the same venv on every machine, in seconds rather than the minutes pip's resolver takes. G2M_UNLOCKED=1 resolves
# the newest versions instead (scripts/lock.sh does that to refresh the pins); G2M_VENV picks another venv folder.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${G2M_VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"
# uv, pinned: the version pyproject.toml's dev extra names, so the install below does not replace it
"$PY" -m pip install -q "uv==$(sed -n 's/.*"uv==\([0-9.]*\)".*/\1/p' pyproject.toml)"
# --compile-bytecode: byte-code written now, as pip does, not by the first import of each of torch's thousands of files
UV=("$VENV/bin/uv" pip install -q --compile-bytecode --python "$PY")
# torch first, pinned, in the build that fits the machine (scripts/install_torch.sh: a wheel on this disk, as on CI,
# else uv's --torch-backend auto: CPU without an NVIDIA GPU, CUDA with one); an unpinned torch pulled in by
# transformers or lm-eval would be a multi-GB CUDA build whatever the machine. The constraints leave torch out: its
# build (+cpu, +cu128) is the machine's.
TORCH="torch==${G2M_TORCH_VERSION:-2.13.0}"
bash scripts/install_torch.sh "$PY"
LOCK=(-c scripts/constraints.txt)
[ "${G2M_UNLOCKED:-}" = 1 ] && LOCK=()
"${UV[@]}" "${LOCK[@]}" "$TORCH" -e ".[harness,probing,report,inspect,lmms-eval,dev]"
# lmms-eval without its dependency list (see pyproject.toml's lmms-eval extra for why), and never torchvision.
"${UV[@]}" --no-deps "lmms-eval==0.7.3"
if "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torchvision') is None)"; then
  "$VENV/bin/uv" pip uninstall -q --python "$PY" torchvision
fi
echo "grid2matrix installed in $VENV ($("$VENV/bin/g2m" --version)), with lm-eval, lmms-eval and inspect"
