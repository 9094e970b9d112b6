"""Regenerate the task folders of every harness from one definition: python scripts/gen_tasks.py [--check].

lm-eval's in harness_tasks/lm_eval_tasks (scoring/catalog.py) and lmms-eval's in harness_tasks/lmms_eval_tasks
(harness_tasks/with_lmms_eval/taskgen.py). inspect's tasks are Python (harness_tasks/with_inspect/tasks.py) and need no
files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_tasks.with_lm_eval import taskgen  # noqa: E402
from harness_tasks.with_lmms_eval import taskgen as lmms_taskgen  # noqa: E402

FOLDERS = ((taskgen.TASK_DIR, taskgen), (lmms_taskgen.LMMS_TASK_DIR, lmms_taskgen))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="only report files that are out of sync (exit 1 if any)")
    args = ap.parse_args()
    if args.check:
        stale = [folder / name for folder, gen in FOLDERS for name in gen.out_of_sync(folder)]
        for path in stale:
            print(f"out of sync: {path}")
        return 1 if stale else 0
    for folder, gen in FOLDERS:
        written = gen.write_all(folder)
        print(f"wrote {len(written)} files to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
