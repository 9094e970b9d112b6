"""Where the harness reads the ``zero_shot`` config from: the Hub release at the pinned revision, or a local build.

A local build is chosen by the ``g2m_data`` task metadata (``--metadata '{"g2m_data": "DIR"}'``, or
``g2m eval --data DIR``) or the ``G2M_DATA`` environment variable. Whatever the source, the rows are the same bytes
(``g2m verify``), and ``provenance`` records which one was read so the results say it.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from dataset_builder.spec import DATASET_REVISION, HUB_REPO_ID

ENV_VAR = "G2M_DATA"
CONFIG = "zero_shot"
SPLIT = "test"


def resolve_source(g2m_data: str | None = None, g2m_revision: str | None = None) -> tuple[str, str | None]:
    """(path or Hub id, revision or None for a local folder)."""
    source = g2m_data or os.environ.get(ENV_VAR) or HUB_REPO_ID
    if Path(source).expanduser().exists():
        return str(Path(source).expanduser().resolve()), None
    if g2m_data or os.environ.get(ENV_VAR):
        if "/" not in source or source.startswith((".", "/", "~")):
            raise FileNotFoundError(f"G2M data folder {source!r} does not exist (from {'g2m_data' if g2m_data else ENV_VAR})")
    return source, g2m_revision or DATASET_REVISION


@lru_cache(maxsize=4)
def load_zero_shot(source: str, revision: str | None):
    """The whole ``zero_shot`` test split, loaded once per process and shared by the 45 tasks."""
    import datasets

    return datasets.load_dataset(source, CONFIG, split=SPLIT, revision=revision)


def select(grid_size: int, num_colors: int, g2m_data: str | None = None, g2m_revision: str | None = None):
    """The rows of one (N, C) cell, as a ``datasets.DatasetDict`` with a ``test`` split."""
    import datasets

    source, revision = resolve_source(g2m_data, g2m_revision)
    ds = load_zero_shot(source, revision)
    sizes, colours = ds["grid_size"], ds["num_colors"]
    idx = [i for i, (n, c) in enumerate(zip(sizes, colours, strict=True)) if n == grid_size and c == num_colors]
    if not idx:
        raise ValueError(f"{source} has no zero_shot rows with grid_size={grid_size}, num_colors={num_colors}")
    return datasets.DatasetDict({SPLIT: ds.select(idx)})


def provenance(g2m_data: str | None = None, g2m_revision: str | None = None) -> dict:
    """What the results should record about the data: Hub id and revision, or the local manifest's hash."""
    source, revision = resolve_source(g2m_data, g2m_revision)
    out = {"source": source, "revision": revision, "config": CONFIG}
    manifest = Path(source) / "manifest.json"
    if revision is None and manifest.is_file():
        raw = manifest.read_bytes()
        out["manifest_sha256"] = hashlib.sha256(raw).hexdigest()
        out["build_params"] = json.loads(raw).get("params")
    return out
