"""How many requests the chat client keeps in flight (``flow.InFlight``), as a table of what the server did."""

from __future__ import annotations

import pytest

from harness_tasks.serving.flow import START, InFlight

TIMEOUT = 100.0
QUICK, SLOW = 1.0, 30.0  # seconds an answer took: under a quarter of the timeout, or over


def _after(events: list, most: int = 64) -> InFlight:
    flow = InFlight(most)
    for e in events:
        if e == "timeout":
            flow.overloaded()
        else:
            flow.answered(e, TIMEOUT)
    return flow


@pytest.mark.parametrize(("events", "most", "limit"), [
    ([], 64, START),
    ([QUICK] * 10, 64, START + 10),  # doubling: one more per quick answer
    ([QUICK] * 200, 64, 64),  # an instant server: the most allowed, after a few dozen answers
    ([QUICK] * 5, 2, 2),  # never above num_concurrent
    ([SLOW] * 50, 64, START),  # a slow server: no more than at the start
    ([QUICK] * 12 + ["timeout"], 64, (START + 12) // 2),  # a timeout halves it
    (["timeout"] * 10, 64, 1),  # never below one
    ([QUICK] * 4 + [SLOW] + [QUICK] * 8, 64, START + 4 + 1),  # after a slow answer: one more per round (8 = 1 round)
    (["timeout"] + [QUICK] * 2, 64, START // 2 + 1),  # after a timeout too: 2 quick answers are one round of 2
    (["timeout"] * 2 + [QUICK] * 7, 64, 1 + 1 + 1 + 1),  # rounds of 1, 2 and 3 answers: 1 -> 4 after 6; then 1 of 4
])
def test_the_limit_follows_the_server(events, most, limit):
    assert _after(events, most).limit == limit


def test_the_peak_is_the_highest_limit_reached():
    flow = _after([QUICK] * 20 + ["timeout", "timeout"])
    assert flow.peak == START + 20 and flow.limit == (START + 20) // 4
