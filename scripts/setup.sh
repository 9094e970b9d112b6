#!/usr/bin/env bash
# Create .venv and install grid2matrix for development. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: this takes the CPU build from the machine's disk; an unpinned torch (pulled in by
# transformers or lm-eval) would download a multi-GB CUDA build. On a GPU machine use the [vllm] extra instead.
.venv/bin/python -m pip install -q "torch==${G2M_TORCH_VERSION:-2.13.0}"
.venv/bin/python -m pip install -q -e ".[harness,probing,report,dev]"
echo "grid2matrix installed in .venv ($(.venv/bin/g2m --version))"
