#!/usr/bin/env bash
# Refresh scripts/constraints.txt, the versions scripts/setup.sh installs: a new venv resolved without the pins (the
# newest versions pyproject.toml allows), then frozen. Run the tests on the result before committing it.
#
#   bash scripts/lock.sh        # about a minute; needs the network
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
G2M_VENV="$tmp/venv" G2M_UNLOCKED=1 bash scripts/setup.sh
{
  echo "# The versions scripts/setup.sh installs (Python 3.11, Linux), written by scripts/lock.sh; torch is pinned by"
  echo "# scripts/setup.sh in the build that fits the machine, lmms-eval installed there without its dependencies."
  "$tmp/venv/bin/python" -m pip freeze --exclude-editable | grep -v -i -E '^(torch|lmms[-_]eval|nvidia-[a-z0-9-]*|triton)( |==)' | sort -f
} > scripts/constraints.txt
echo "scripts/constraints.txt: $(grep -c '==' scripts/constraints.txt) packages pinned"
