"""What one replayed answer says against the submitted one, and what the sample says of the submission.

An item *agrees* when the replay wrote the same text, or text that both parse to the same matrix (the score is then
the same whatever the text): ``same text``, ``same matrix``; otherwise it ``differs`` (with the share of cells both
readings give the same value), or was ``not replayed`` (the replay's request failed: the board's failure, never the
submitter's). Two different texts of which either is unparseable differ: a parse failure says nothing about which
matrix a text meant, so two of them are never "the same matrix" (``unparseable`` says which side failed).
The submission is *reproduced* when at most ``tolerance(K)`` replayed items differ, *refuted* when more
do, and stays *self-reported* when too few items were replayed to tell, or the replay could not honour its settings.

The tolerance allows for answers that are not bit-for-bit stable under greedy decoding (other batch sizes, kernels
or engines); docs/maintainers/audit.md gives what was measured and the odds, at each K, of catching a submission
that forged a given share of its answers (``catch_probability``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from scoring.rescoring.rescore import score_output

SAME_TEXT, SAME_MATRIX, DIFFERS, NOT_REPLAYED = "same text", "same matrix", "differs", "not replayed"
AGREE = (SAME_TEXT, SAME_MATRIX)
REPRODUCED, SELF_REPORTED, REFUTED = "reproduced", "self-reported", "refuted"
#: The share of replayed items that may differ in a reproduced submission (5 of 100).
MAX_DIFFERING_SHARE = 0.05


class Item(NamedTuple):
    id: str
    outcome: str
    cell_agreement: float | None  # the share of cells both readings give the same value; None when not replayed
    unparseable: str | None = None  # "submitted", "replayed" or "both": the text(s) that did not parse


def compare(rid: str, submitted: str, replayed: str | None, target: np.ndarray, num_colors: int) -> Item:
    """One item: the submitted answer against the replayed one (None: the replay has no answer for it), each read
    once, as the board reads it (``rescore.score_output``)."""
    if replayed is None:
        return Item(rid, NOT_REPLAYED, None)
    if submitted == replayed:  # the very same text agrees, parsed or not; an unparseable one is still counted
        failed = score_output(rid, submitted, target, num_colors).score.parse_failed
        return Item(rid, SAME_TEXT, 1.0, "both" if failed else None)
    mine, theirs = (score_output(rid, text, target, num_colors) for text in (submitted, replayed))
    failed = [side for side, s in (("submitted", mine), ("replayed", theirs)) if s.score.parse_failed]
    unparseable = "both" if len(failed) == 2 else (failed[0] if failed else None)
    agreement = float(((mine.pred == theirs.pred) & (mine.pred >= 0)).mean())  # -1: a cell a reading gives no value
    same = unparseable is None and mine.score.matrix == theirs.score.matrix
    return Item(rid, SAME_MATRIX if same else DIFFERS, agreement, unparseable)


def tolerance(k: int) -> int:
    """How many of ``k`` replayed items may differ in a reproduced submission."""
    return math.floor(k * MAX_DIFFERING_SHARE + 1e-9)


class Verdict(NamedTuple):
    tier: str
    reason: str
    agree: int
    differ: int
    replayed: int
    same_text: int = 0  # of ``agree``: the very same text
    same_matrix: int = 0  # of ``agree``: other text, the same parsed matrix
    unparseable: int = 0  # replayed items of which either text did not parse (each differs, or is the same text)


def _counts(replayed: list[Item]) -> dict[str, int]:
    return {"same_text": sum(i.outcome == SAME_TEXT for i in replayed),
            "same_matrix": sum(i.outcome == SAME_MATRIX for i in replayed),
            "unparseable": sum(i.unparseable is not None for i in replayed)}


def breakdown(found: Verdict) -> str:
    """How the replayed items agreed, as a reader checks it against the record's items."""
    return (f"{found.same_text} the same text, {found.same_matrix} the same parsed matrix, {found.differ} differ; "
            f"{found.unparseable} unparseable on either side")


def decide(items: list[Item]) -> Verdict:
    """The tier the sample supports, with a reason a reader can check against the items."""
    replayed = [i for i in items if i.outcome != NOT_REPLAYED]
    differ = [i for i in replayed if i.outcome == DIFFERS]
    k, allowed = len(items), tolerance(len(items))
    agree = len(replayed) - len(differ)
    counts = Verdict(REPRODUCED, "", agree, len(differ), len(replayed), **_counts(replayed))
    how = breakdown(counts)
    if len(differ) > allowed:
        first = ", ".join(i.id for i in differ[:3])
        return counts._replace(tier=REFUTED, reason=f"{len(differ)} of {len(replayed)} replayed answers differ from "
                               f"the submitted ones (at most {allowed} of {k} may): e.g. {first}; {how}")
    if k - len(replayed) > allowed - len(differ):  # the missing ones could have decided it either way
        return counts._replace(tier=SELF_REPORTED, reason=f"only {len(replayed)} of {k} items could be replayed; "
                               f"audit it again; {how}")
    return counts._replace(reason=f"{agree} of {k} replayed answers agree with the submitted ones, at most {allowed} "
                                  f"may differ: {how}")


def catch_probability(forged_share: float, k: int, allowed: int | None = None) -> float:
    """The chance that a sample of ``k`` (drawn without the submitter knowing which) holds more than ``allowed``
    forged answers, for a submission whose answers differ from its model's on ``forged_share`` of the items (the
    binomial approximation: exact for a large release, slightly low for a small one)."""
    allowed = tolerance(k) if allowed is None else allowed
    p = forged_share
    missed = sum(math.comb(k, i) * p**i * (1 - p) ** (k - i) for i in range(allowed + 1))
    return max(0.0, 1.0 - missed)
