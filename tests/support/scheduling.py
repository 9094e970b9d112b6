"""How the slow lane shares its work between xdist workers (``-n auto --dist loadfile``).

xdist's ``loadfile`` hands each worker whole test files (so a module's fixtures are built once) in order of their
number of tests. On 2 workers that order leaves the longest files for last: the docs pages (one file, several
minutes each) would run one after another on one worker while the other sat idle. Here, under ``loadfile``:

- each docs page is a unit of its own (the pages share no fixture), so two pages can run at once;
- units start costliest first (longest-processing-time first), by the seconds each took in a measured run
  (``scope_costs.json`` beside this file); a unit not listed there (a new file) starts after the measured ones.

The costs only order the work; every test still runs exactly once. Refresh them after a large change from a slow-lane
run's report: ``pytest -m slow -n auto --dist loadfile --durations=0 --durations-min=0 | python -m
tests.support.scheduling``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

COSTS = Path(__file__).with_name("scope_costs.json")
#: Test files whose tests are units of their own (``file::test[param]``), not one unit for the whole file.
SPLIT_FILES = ("tests/docs/test_docs_run.py",)
DURATION = re.compile(r"^\s*(?P<seconds>[0-9.]+)s (?:setup|call|teardown)\s+(?P<nodeid>\S+)")


def scope_of(nodeid: str) -> str:
    """The unit a test runs in: its own for the files in ``SPLIT_FILES``, else its file."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path in SPLIT_FILES else path


def load_costs(path: Path = COSTS) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}  # no costs: collection order, as xdist would have it


def costs_from_report(lines) -> dict[str, float]:
    """Seconds per unit, summed from pytest's ``--durations`` lines (setup, call and teardown of every test)."""
    out: dict[str, float] = {}
    for line in lines:
        m = DURATION.match(line)
        if m:
            scope = scope_of(m["nodeid"])
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
    COSTS.write_text(json.dumps(costs_from_report(sys.stdin), indent=1) + "\n")
    print(f"wrote {COSTS}")
