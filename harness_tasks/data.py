"""The ``zero_shot`` rows of one (N, C) task, from the Hub release at the pinned revision or a local build.

A local build is chosen by the ``g2m_data`` task metadata (``--metadata '{"g2m_data": "DIR"}'``, or
``g2m eval --data DIR``) or the ``G2M_DATA`` environment variable (``dataset_builder.source``).
"""

from __future__ import annotations

from functools import lru_cache

from dataset_builder.errors import UsageError
from dataset_builder.provenance import dataset_content_sha256
from dataset_builder.source import load_config, provenance, resolve_source

CONFIG = "zero_shot"
SPLIT = "test"

__all__ = ["CONFIG", "SPLIT", "content_sha256", "provenance", "select"]


@lru_cache(maxsize=4)
def _zero_shot(source: str, revision: str | None):
    """The whole split, loaded once per process and shared by the 45 tasks."""
    return load_config(CONFIG, SPLIT, source, revision)


@lru_cache(maxsize=4)
def _content_sha256(source: str, revision: str | None) -> str:
    return dataset_content_sha256(_zero_shot(source, revision))


def content_sha256(g2m_data: str | None = None, g2m_revision: str | None = None) -> str:
    """The content hash of the zero_shot rows a run reads (``spec.RELEASE_CONTENT_SHA256`` for the release)."""
    return _content_sha256(*resolve_source(g2m_data, g2m_revision))


def select(grid_size: int, num_colors: int, g2m_data: str | None = None, g2m_revision: str | None = None):
    """The rows of one (N, C) cell, as a ``datasets.DatasetDict`` with a ``test`` split."""
    import datasets

    source, revision = resolve_source(g2m_data, g2m_revision)
    ds = _zero_shot(source, revision)
    sizes, colours = ds["grid_size"], ds["num_colors"]
    idx = [i for i, (n, c) in enumerate(zip(sizes, colours, strict=True)) if n == grid_size and c == num_colors]
    if not idx:
        raise UsageError(f"{source} has no {CONFIG} rows with grid_size={grid_size}, num_colors={num_colors}")
    return datasets.DatasetDict({SPLIT: ds.select(idx)})
