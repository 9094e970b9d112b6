"""Where a run's rows come from, and what it records about them.

The task folder names the data itself (``dataset_path``); ``g2m eval --data DIR`` (or ``$G2M_DATA``) points a run at
a local build by writing a task folder for it (``taskgen.DataSource.local``). Whatever the source, the run records
its provenance (Hub id and revision, or the build's manifest hash) and the content hash of the rows it read, which
is what makes a run "the release" on the leaderboard.
"""

from __future__ import annotations

from functools import lru_cache

from dataset_builder.release.provenance import dataset_content_sha256
from dataset_builder.release.source import load_config, provenance, resolve_source

CONFIG = "zero_shot"
SPLIT = "test"

__all__ = ["CONFIG", "SPLIT", "content_sha256", "provenance", "resolve_source", "rows", "rows_by_id"]


@lru_cache(maxsize=4)
def _content_sha256(source: str, revision: str | None) -> str:
    return dataset_content_sha256(load_config(CONFIG, SPLIT, source, revision))


def content_sha256(data: str | None = None, revision: str | None = None) -> str:
    """The content hash of the zero_shot rows a run reads (``spec.RELEASE_CONTENT_SHA256`` for the release)."""
    return _content_sha256(*resolve_source(data, revision))


def rows(data: str | None = None, revision: str | None = None):
    """The zero_shot test split (``datasets.Dataset``) of the resolved source."""
    return load_config(CONFIG, SPLIT, *resolve_source(data, revision))


def rows_by_id(data: str | None = None, revision: str | None = None) -> dict[str, dict]:
    """Every zero_shot row but its image, by id: what a harness's logged answers are matched back to."""
    return {r["id"]: r for r in rows(data, revision).remove_columns(["image"]).to_list()}
