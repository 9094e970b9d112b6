#!/usr/bin/env bash
# Install torch into a venv: the build that fits the machine. Without this, pip's `torch==X` from PyPI is a CUDA
# build of several GB even on a machine with no NVIDIA GPU.
#
#   scripts/install_torch.sh VENV_PYTHON          install it
#   scripts/install_torch.sh VENV_PYTHON --plan   print the choice (and the PyTorch index uv would use); install nothing
#
# The choice, in order:
#   1. a wheel of the pinned version on this machine's disk (pip's find-links, as on CI's machines): pip finds it, offline,
#      and uv installs that file when the venv has uv (scripts/setup.sh installs it first: seconds, where pip takes a
#      minute), else pip does;
#   2. otherwise uv (pinned, installed into the venv) with --torch-backend: uv itself looks for an NVIDIA driver and
#      takes PyTorch's CUDA index that fits it, or PyTorch's CPU index where there is none. No detector of ours.
# G2M_TORCH_VERSION picks the version (default 2.13.0); G2M_TORCH_BACKEND=cpu|cu128|... overrides uv's detection.
set -euo pipefail
PY=${1:?usage: scripts/install_torch.sh VENV_PYTHON [--plan]}
MODE=${2:-install}
VERSION=${G2M_TORCH_VERSION:-2.13.0}
BACKEND=${G2M_TORCH_BACKEND:-auto}
UV_VERSION=0.13.8
TORCH="torch==$VERSION"

UV=${UV:-$(dirname "$PY")/uv}
# pip reads the machine's find-links (its config or PIP_FIND_LINKS): its report names the wheel it would take
wheel=$("$PY" -m pip install --dry-run --no-index --no-deps --ignore-installed -q --report - "$TORCH" 2>/dev/null \
        | "$PY" -c 'import json, sys, urllib.parse as u
print(u.unquote(u.urlparse(json.load(sys.stdin)["install"][0]["download_info"]["url"]).path))' 2>/dev/null \
        || true)
if [ -n "$wheel" ]; then
  if [ "$MODE" = --plan ]; then
    echo "torch $VERSION: a wheel on this machine's disk (${wheel##*/}, offline)"
    exit 0
  fi
  if [ -x "$UV" ]; then
    "$UV" pip install -q --compile-bytecode --python "$PY" "$wheel"
  else
    "$PY" -m pip install -q "$TORCH"
  fi
  exit 0
fi

if [ "$MODE" = --plan ]; then
  if [ ! -x "$UV" ]; then
    echo "torch $VERSION: uv --torch-backend $BACKEND (uv is not installed yet, so its choice is not known)"
    exit 0
  fi
  # uv's own choice, without the network: an offline dry run logs the driver it found and the indexes it would ask
  # (newest CUDA first: the newest that has the version wins).
  log=$("$UV" pip install --python "$PY" --dry-run --offline --no-cache --reinstall-package torch \
        --torch-backend "$BACKEND" "$TORCH" -v 2>&1 || true)
  index=$(printf '%s\n' "$log" | grep -o '/whl/[a-z0-9.]*/torch/' | cut -d/ -f3 | sort -uV | tail -1 || true)
  driver=$(printf '%s\n' "$log" | grep -o -m1 'Detected CUDA driver version.*' | tr -d '`' || true)
  echo "torch $VERSION: uv --torch-backend $BACKEND picks ${index:-an unknown index}${driver:+ (uv: $driver)}"
  exit 0
fi
"$PY" -m pip install -q "uv==$UV_VERSION"
"$UV" pip install --compile-bytecode --python "$PY" --torch-backend "$BACKEND" "$TORCH"
