"""Which data a submission's outputs were made on, and whether they cover it: the release (its content hash) or a
local build, every id of the release or, for a complete run of a scaled build, the first k of every (N, C)."""

from __future__ import annotations

from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID, RELEASE_CONTENT_SHA256
from scoring.catalog import all_tasks
from scoring.rescoring.rescore import zero_shot_truth

RELEASE, LOCAL = "release", "local build"


def missing_tasks(known: dict, have: set[str], protocol: str) -> list[str]:
    """The tasks of ``protocol`` whose ids the submission lacks, one line each: ``g2m_n05_c5: 49 of 50 ids missing``."""
    want: dict[tuple[int, int], list[str]] = {}
    for i, t in known.items():
        want.setdefault((t.grid_size, t.num_colors), []).append(i)
    out = []
    for name, n, c in all_tasks(protocol):
        ids = want.get((n, c), [])
        lacking = sum(i not in have for i in ids)
        if lacking:
            out.append(f"{name}: {lacking:,} of {len(ids):,} ids missing")
    return out


def scaled_count(have) -> int | None:
    """k when ``have`` holds exactly the first k ids of every zero_shot (N, C), the same k for each: what a build at
    a scale below 1 holds (``g2m build --scale``), so a complete run on it; else None."""
    cells: dict[tuple[int, int], list[str]] = {}
    for i, t in zero_shot_truth().items():  # in each cell's own order
        cells.setdefault((t.grid_size, t.num_colors), []).append(i)
    counts = {sum(i in have for i in ids) for ids in cells.values()}
    if len(counts) != 1 or not 0 < (k := counts.pop()) < max(map(len, cells.values())):
        return None
    return k if all(i in have for ids in cells.values() for i in ids[:k]) else None


def data_of(meta: dict) -> tuple[str, str | None]:
    """(RELEASE or LOCAL, a warning or None): the release only when the run's data hashes to the release's."""
    dataset = meta["dataset"]
    content = dataset.get("content_sha256")
    if content == RELEASE_CONTENT_SHA256:
        return RELEASE, None
    claimed = dataset.get("revision")
    if not isinstance(content, str):
        return LOCAL, "the run did not record the content hash of its data (g2m submit does); shown as a local build"
    if claimed == DATASET_REVISION:
        return LOCAL, (f"dataset revision claims {HUB_REPO_ID}@{DATASET_REVISION}, but the data the run read hashes "
                       f"to {content[:12]}, not the release's {RELEASE_CONTENT_SHA256[:12]}; shown as a local build")
    return LOCAL, f"the data the run read hashes to {content[:12]}, not the release; shown as a local build"
