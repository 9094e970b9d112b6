#!/usr/bin/env bash
# Create .venv and install grid2matrix for development. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev]"
echo "grid2matrix installed in .venv ($(.venv/bin/g2m --version))"
