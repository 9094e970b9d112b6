"""Regenerate the lm-eval task YAMLs in harness_tasks/tasks: python scripts/gen_tasks.py [--check]."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_tasks.taskgen import TASK_DIR, out_of_sync, write_all  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="only report files that are out of sync (exit 1 if any)")
    args = ap.parse_args()
    if args.check:
        stale = out_of_sync()
        for name in stale:
            print(f"out of sync: {TASK_DIR / name}")
        return 1 if stale else 0
    written = write_all()
    print(f"wrote {len(written)} files to {TASK_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
