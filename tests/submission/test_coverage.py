"""Which ids make a complete submission: every id of the release, or, on a local build, the first k of every (N, C)
(what a build at a scale holds), as a table."""

from __future__ import annotations

import pytest

from scoring.rescoring.rescore import zero_shot_truth
from submission.coverage import scaled_count

TRUTH = zero_shot_truth()


def _first(k: int) -> set[str]:
    return {i for i in TRUTH if int(i.rsplit("-", 1)[1]) < k}


@pytest.mark.parametrize(("have", "k"), [
    (_first(2), 2),  # a 0.02-scale build: 2 of every cell's 100
    (_first(5), 5),
    (_first(1), 1),
    (set(TRUTH), None),  # the whole release: not a scaled build (complete by the usual rule)
    (_first(2) - {"zs-n64-c10-0001"}, None),  # one cell short: not what any build holds
    (_first(2) - {"zs-n03-c3-0000"} | {"zs-n03-c3-0002"}, None),  # not the first rows of its cell
    ({i for i in _first(3) if not i.startswith("zs-n03-")}, None),  # a cell missing altogether
    (set(), None),
])
def test_scaled_count(have, k):
    assert scaled_count(have) == k
