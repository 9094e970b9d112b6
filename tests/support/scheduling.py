"""How the test lanes share their work between xdist workers (``-n auto --dist loadfile``).

xdist's ``loadfile`` hands each worker whole test files (so a module's fixtures are built once) in order of their
number of tests. On 2 workers that order leaves the longest files for last: the docs pages (one file, several
minutes each) would run one after another on one worker while the other sat idle. Here, under ``loadfile``:

- each docs page is a unit of its own (the pages share no fixture), so two pages can run at once;
- in the fast lane, the test files under ``tests/probing/`` are one unit: they are the only fast tests that import
  torch and transformers (about 3.5 s a process), so one worker pays for those imports instead of each;
- units start costliest first (longest-processing-time first), by the seconds each took in a measured run
  (``scope_costs.json`` beside this file, ``scope_costs_fast.json`` for the fast lane); a unit not listed there (a
  new file) starts after the measured ones.

The costs only order the work; every test still runs exactly once. Refresh them after a large change from a slow-lane
run's report: ``pytest -m slow -n auto --dist loadfile --durations=0 --durations-min=0 | python -m
tests.support.scheduling`` (the fast lane: ``-m "not slow"`` and ``scheduling --fast``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

COSTS = Path(__file__).with_name("scope_costs.json")
#: The fast lane's own costs (its units differ: ``FAST_TORCH_UNIT``), refreshed with ``--fast``.
FAST_COSTS = Path(__file__).with_name("scope_costs_fast.json")
#: Test files whose tests are units of their own (``file::test[param]``), not one unit for the whole file.
SPLIT_FILES = ("tests/docs/test_docs_run.py",)
#: The fast lane's one unit of torch-importing files (``tests/probing/``'s fast tests: tiny models, probe heads).
FAST_TORCH_UNIT = "tests/probing/"
DURATION = re.compile(r"^\s*(?P<seconds>[0-9.]+)s (?:setup|call|teardown)\s+(?P<nodeid>\S+)")


def _fast_lane() -> bool:
    return bool(os.environ.get("G2M_FAST_LANE"))  # set by conftest for ``-m "not slow"``


def scope_of(nodeid: str, fast: bool | None = None) -> str:
    """The unit a test runs in: its own for the files in ``SPLIT_FILES``; in the fast lane (``fast``, by default
    the lane this is), ``FAST_TORCH_UNIT`` for a file under it; else its file."""
    path = nodeid.split("::", 1)[0]
    if (_fast_lane() if fast is None else fast) and path.startswith(FAST_TORCH_UNIT):
        return FAST_TORCH_UNIT
    return nodeid if path in SPLIT_FILES else path


def load_costs(path: Path | None = None) -> dict[str, float]:
    path = path or (FAST_COSTS if _fast_lane() else COSTS)
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}  # no costs: collection order, as xdist would have it


def costs_from_report(lines, fast: bool = False) -> dict[str, float]:
    """Seconds per unit, summed from pytest's ``--durations`` lines (setup, call and teardown of every test), with
    the units of the fast lane when ``fast``."""
    out: dict[str, float] = {}
    for line in lines:
        m = DURATION.match(line)
        if m:
            scope = scope_of(m["nodeid"], fast)
            out[scope] = round(out.get(scope, 0.0) + float(m["seconds"]), 1)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def cost_order(items: list, costs: dict[str, float] | None = None) -> list:
    """``items`` with the costliest units first (a stable sort: a unit's tests stay together and in their order)."""
    costs = load_costs() if costs is None else costs
    first = {}
    for i, item in enumerate(items):
        first.setdefault(scope_of(item.nodeid), i)
    return sorted(items, key=lambda it: (-costs.get(scope_of(it.nodeid), 0.0), first[scope_of(it.nodeid)]))


def make_scheduler(config, log):
    """The scheduler for ``--dist loadfile``: xdist's own, with the units above, in collection order (which
    ``cost_order`` has made costliest first) rather than xdist's most-tests-first."""
    from xdist.scheduler import LoadFileScheduling

    class CostOrderedFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    config.option.loadscopereorder = False
    return CostOrderedFileScheduling(config, log)


if __name__ == "__main__":
    fast = "--fast" in sys.argv[1:]
    path = FAST_COSTS if fast else COSTS
    path.write_text(json.dumps(costs_from_report(sys.stdin, fast), indent=1) + "\n")
    print(f"wrote {path}")
