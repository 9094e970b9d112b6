"""What one replayed answer says against the submitted one, and what the sample says of the submission.

An item *agrees* when the replay wrote the same text, or text that reads as the same matrix (the score is then the
same whatever the text): ``same text``, ``same matrix``; otherwise it ``differs`` (with the share of cells the two
readings agree on), or was ``not replayed`` (the replay's request failed: the board's failure, never the
submitter's). The submission is *reproduced* when at most ``tolerance(K)`` replayed items differ, *refuted* when more
do, and stays *self-reported* when too few items were replayed to tell, or the replay could not honour its settings.

The tolerance allows for answers that are not bit-for-bit stable under greedy decoding (other batch sizes, kernels
or engines); docs/trust.md gives what was measured and the odds, at each K, of catching a submission that forged a
given share of its answers (``catch_probability``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from leaderboard.rescoring.rescore import score_output

SAME_TEXT, SAME_MATRIX, DIFFERS, NOT_REPLAYED = "same text", "same matrix", "differs", "not replayed"
AGREE = (SAME_TEXT, SAME_MATRIX)
REPRODUCED, SELF_REPORTED, REFUTED = "reproduced", "self-reported", "refuted"
#: The share of replayed items that may differ in a reproduced submission (5 of 100).
MAX_DIFFERING_SHARE = 0.05


class Item(NamedTuple):
    id: str
    outcome: str
    cell_agreement: float | None  # the share of cells on which the two readings agree; None when not replayed


def compare(rid: str, submitted: str, replayed: str | None, target: np.ndarray, num_colors: int) -> Item:
    """One item: the submitted answer against the replayed one (None: the replay has no answer for it), each read
    once, as the board reads it (``rescore.score_output``)."""
    if replayed is None:
        return Item(rid, NOT_REPLAYED, None)
    if submitted == replayed:
        return Item(rid, SAME_TEXT, 1.0)
    mine, theirs = (score_output(rid, text, target, num_colors) for text in (submitted, replayed))
    agreement = float((mine.pred == theirs.pred).mean())  # -1 where a reading gives a cell no value
    return Item(rid, SAME_MATRIX if mine.score.matrix == theirs.score.matrix else DIFFERS, agreement)


def tolerance(k: int) -> int:
    """How many of ``k`` replayed items may differ in a reproduced submission."""
    return math.floor(k * MAX_DIFFERING_SHARE + 1e-9)


class Verdict(NamedTuple):
    tier: str
    reason: str
    agree: int
    differ: int
    replayed: int


def decide(items: list[Item]) -> Verdict:
    """The tier the sample supports, with a reason a reader can check against the items."""
    replayed = [i for i in items if i.outcome != NOT_REPLAYED]
    differ = [i for i in replayed if i.outcome == DIFFERS]
    k, allowed = len(items), tolerance(len(items))
    agree = len(replayed) - len(differ)
    if len(differ) > allowed:
        first = ", ".join(i.id for i in differ[:3])
        return Verdict(REFUTED, f"{len(differ)} of {len(replayed)} replayed answers differ from the submitted ones "
                                f"(at most {allowed} of {k} may): e.g. {first}", agree, len(differ), len(replayed))
    if k - len(replayed) > allowed - len(differ):  # the missing ones could have decided it either way
        return Verdict(SELF_REPORTED, f"only {len(replayed)} of {k} items could be replayed; audit it again",
                       agree, len(differ), len(replayed))
    return Verdict(REPRODUCED, f"{agree} of {k} replayed answers agree with the submitted ones ({len(differ)} "
                               f"differ; at most {allowed} may)", agree, len(differ), len(replayed))


def catch_probability(forged_share: float, k: int, allowed: int | None = None) -> float:
    """The chance that a sample of ``k`` (drawn without the submitter knowing which) holds more than ``allowed``
    forged answers, for a submission whose answers differ from its model's on ``forged_share`` of the items (the
    binomial approximation: exact for a large release, slightly low for a small one)."""
    allowed = tolerance(k) if allowed is None else allowed
    p = forged_share
    missed = sum(math.comb(k, i) * p**i * (1 - p) ** (k - i) for i in range(allowed + 1))
    return max(0.0, 1.0 - missed)
