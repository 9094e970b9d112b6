"""Where a consumer (harness, probes) reads a G2M config from: the Hub release at the pinned revision, or a local
build. The rows are the same bytes either way (``g2m verify``); ``provenance`` records which one was read.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import DataNotFound, G2MError, UsageError
from .provenance import data_provenance
from .spec import DATASET_REVISION, HUB_REPO_ID

ENV_VAR = "G2M_DATA"


def resolve_source(data: str | None = None, revision: str | None = None) -> tuple[str, str | None]:
    """(local folder or Hub id, revision or None for a local folder). ``data`` beats ``$G2M_DATA`` beats the Hub."""
    chosen = data or os.environ.get(ENV_VAR)
    if chosen is None:
        return HUB_REPO_ID, revision or DATASET_REVISION
    path = Path(chosen).expanduser()
    if path.exists():
        return str(path.resolve()), None
    if chosen.count("/") == 1 and not chosen.startswith((".", "/", "~")):
        return chosen, revision or DATASET_REVISION  # another Hub repository, e.g. a mirror
    raise DataNotFound(f"G2M data folder {chosen!r} does not exist (build one with: g2m build --out DIR)")


def load_config(config: str, split: str | None = None, data: str | None = None, revision: str | None = None):
    """``datasets.load_dataset`` on the resolved source, with a clear error when the Hub is out of reach."""
    import datasets

    source, rev = resolve_source(data, revision)
    try:
        return datasets.load_dataset(source, config, split=split, revision=rev)
    except ValueError as e:
        raise UsageError(f"{source} has no usable config {config!r}: {e}") from None
    except (OSError, ConnectionError) as e:
        if rev is None:
            raise G2MError(f"could not read {config!r} from {source}: {e}") from None
        raise G2MError(f"could not load {source}@{rev} from the Hugging Face Hub ({type(e).__name__}); build a local "
                       f"copy with `g2m build --out DIR --configs {config}` and pass it as data") from None


def provenance(data: str | None = None, revision: str | None = None) -> dict:
    """What results should record about their data: Hub id and revision, or the local manifest's hash."""
    return data_provenance(*resolve_source(data, revision))
