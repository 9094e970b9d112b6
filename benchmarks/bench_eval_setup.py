"""The fixed CPU cost of ``g2m eval`` (lm-eval): a g2m-random run on a tiny build, and what its task set-up does.

    python benchmarks/bench_eval_setup.py       # ~1 minute on 2 cores

Dozens of tests and docs pages run ``g2m eval`` on a small build, where nearly all of a run is fixed cost: imports,
building 45 tasks, lm-eval's environment record. A ``zero_shot`` build of 90 rows (two per task) is made first (not
counted); then ``g2m eval --model g2m-random`` runs on it twice in a child process each, as a user runs it, and the
child's CPU seconds (user + system, its own children included) are printed: the first run reads the fresh build (the
way each test meets its own build), the second finds ``datasets``' cache of it. Next to them, the CPU seconds of only
importing what such a run imports (``datasets``, lm-eval's evaluator and tasks), the floor g2m cannot go under, and
whether the run imported torch or transformers: a baseline or a server's client runs no model in its process, so it
imports neither (lm-eval's torch seed waits for torch's import; ``harness_tasks/with_lm_eval/fixes.py``).

The child counts the task filter's calls (``row_filters.select_cell``: lm-eval calls it five times per task) and the
cells it actually selected (one per task once the selections are kept), and how many times ``datasets.load_dataset``
ran (once for the run's content hash, once for the tasks, when they share the loaded config).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from child_cpu import REPO, child  # benchmarks/child_cpu.py: the script's own folder is on sys.path

#: Runs ``g2m ARGS`` in this process, counting the filter's calls and cells and the dataset loads, printed last.
CHILD = """
import json, sys
import datasets
from harness_tasks.evaluation import row_filters
from g2m_cli.main import main
counts = {"select_cell calls": 0, "load_dataset calls": 0}
select, load = row_filters.select_cell, datasets.load_dataset
def counted_select(*a, **k):
    counts["select_cell calls"] += 1
    return select(*a, **k)
def counted_load(*a, **k):
    counts["load_dataset calls"] += 1
    return load(*a, **k)
row_filters.select_cell, datasets.load_dataset = counted_select, counted_load
try:
    code = main(sys.argv[1:])
finally:
    kept = getattr(row_filters, "computed", None)  # absent where every call selects anew
    counts["cells selected"] = kept["cells"] if kept else counts["select_cell calls"]
    counts["imported"] = sorted(m for m in ("torch", "transformers") if m in sys.modules) or "neither"
    print("COUNTS " + json.dumps(counts))
sys.exit(code)
"""
IMPORTS = "import datasets, lm_eval.evaluator, lm_eval.tasks"



def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-eval-setup-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp / "hf"),
           "PYTHONPATH": str(REPO)}
    try:
        child(["-m", "g2m_cli", "build", "--out", str(tmp / "data"), "--configs", "zero_shot", "--scale", "0.02",
               "--quiet"], env)
        runs = []
        for i in range(2):
            cpu, out = child(["-c", CHILD, "eval", "--model", "g2m-random", "--data", str(tmp / "data"),
                              "--out", str(tmp / f"run{i}"), "--no-resume", "--quiet"], env)
            runs.append((cpu, json.loads(out.rsplit("COUNTS ", 1)[1])))
        floor, _ = child(["-c", IMPORTS], env)
        (first, counts), (second, _) = runs
        print("g2m eval --model g2m-random on a 90-row zero_shot build (45 tasks), CPU seconds of the child:")
        print(f"  first run (fresh build)      : {first:6.2f} CPU-s")
        print(f"  second run (datasets cache)  : {second:6.2f} CPU-s")
        print(f"  imports alone                : {floor:6.2f} CPU-s  ({IMPORTS.removeprefix('import ')})")
        print(f"  first run above the imports  : {first - floor:6.2f} CPU-s  = {first / floor:.2f}x the imports")
        print("per run: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
