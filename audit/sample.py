"""Which items an audit replays: K ids drawn with a key the submitter never sees, every (N, C) of the data
represented, the rest where the grids are largest.

The draw is a pure function of (the board's key, the submission's outputs hash, the ids on offer, K): each id is
ranked within its (N, C) by an HMAC-SHA256 of the id under a key derived from the board's key and the outputs hash.
Without the board's key the ranking cannot be computed, so a submitter cannot tell which answers will be replayed
and forge only the others; and the same submission always gets the same sample, so an audit can be resumed and
checked again. A submission that changes any output gets a new sample.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

#: About 2 % of a full run: enough for a share of forged answers of 10 % or more to be caught almost surely
#: (``verdict.catch_probability``), cheap enough to replay every submission.
DEFAULT_K = 100
MAX_K = 1000
#: Distinguishes the key that draws samples from every other use of the board's key (cache entries, audit records).
_PURPOSE = b"g2m-audit-sample/1\0"


def sample_key(board_key: bytes, outputs_sha256: str) -> bytes:
    """The key that ranks one submission's ids: the board's key, this purpose and the submission's outputs hash."""
    return hmac.new(board_key, _PURPOSE + outputs_sha256.encode("ascii"), hashlib.sha256).digest()


def allocate(cells: Mapping[tuple[int, int], int], k: int) -> dict[tuple[int, int], int]:
    """How many items each (N, C) gets: an equal share for every cell (when ``k`` allows one each), then one more at
    a time from the largest grids down, where an answer is hardest and a forged one worth most; never more than a
    cell holds. ``cells``: (N, C) -> how many ids it offers."""
    order = sorted(cells, key=lambda nc: (-nc[0], -nc[1]))
    k = min(k, sum(cells.values()))
    share = k // len(order) if order else 0
    out = {nc: min(share, cells[nc]) for nc in order}
    left = k - sum(out.values())
    while left > 0:
        for nc in order:
            if left and out[nc] < cells[nc]:
                out[nc] += 1
                left -= 1
    return out


def draw(key: bytes, ids: Iterable[tuple[str, int, int]], k: int = DEFAULT_K) -> list[str]:
    """``k`` of ``ids`` ((id, N, C) triples) ranked by ``key`` within each (N, C), as ``allocate`` shares them out;
    sorted, so the sample reads the same whatever order the ids came in."""
    by_cell: dict[tuple[int, int], list[tuple[bytes, str]]] = {}
    for rid, n, c in ids:
        by_cell.setdefault((n, c), []).append((hmac.new(key, rid.encode("utf-8"), hashlib.sha256).digest(), rid))
    counts = allocate({nc: len(v) for nc, v in by_cell.items()}, k)
    return sorted(rid for nc, ranked in by_cell.items() for _, rid in sorted(ranked)[: counts[nc]])
