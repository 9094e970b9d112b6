"""Where a consumer (harness, probes) reads a G2M config from: the Hub release at the pinned revision, or a local
build. The rows are the same bytes either way (``g2m verify``); ``provenance`` records which one was read.
"""

from __future__ import annotations

import os
from pathlib import Path

from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID, MANIFEST_NAME
from dataset_builder.release.provenance import data_provenance
from g2m_base.errors import DataNotFound, G2MError, UsageError

ENV_VAR = "G2M_DATA"


def resolve_source(data: str | None = None, revision: str | None = None) -> tuple[str, str | None]:
    """(local folder or Hub id, revision or None for a local folder). ``data`` beats ``$G2M_DATA`` beats the Hub."""
    chosen = data or os.environ.get(ENV_VAR)
    if chosen is None:
        return HUB_REPO_ID, revision or DATASET_REVISION
    path = Path(chosen).expanduser()
    if path.exists():
        if not (path / MANIFEST_NAME).is_file():  # and never let datasets crawl an arbitrary tree for data files
            raise DataNotFound(f"{chosen!r} is not a G2M release folder (it has no {MANIFEST_NAME}): build one with "
                               "`g2m build --out DIR`, or download the release with `huggingface-cli download "
                               f"{HUB_REPO_ID} --repo-type dataset --local-dir DIR`")
        return str(path.resolve()), None
    if chosen.count("/") == 1 and not chosen.startswith((".", "/", "~")):
        return chosen, revision or DATASET_REVISION  # another Hub repository, e.g. a mirror
    raise DataNotFound(f"G2M data folder {chosen!r} does not exist (build one with: g2m build --out DIR)")


HUB_CHECK_SECONDS = 3.0


def _offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
               for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def hub_unreachable(timeout: float = HUB_CHECK_SECONDS) -> str | None:
    """Why the Hub cannot be reached (one quick request, no retries), or None when it answers.

    ``datasets`` retries a dead network for 30-45 s before failing; this check fails in a few seconds instead.
    """
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    try:
        request = urllib.request.Request(constants.ENDPOINT, method="HEAD")
        with urllib.request.urlopen(request, timeout=timeout):  # noqa: S310  (the configured Hub endpoint)
            return None
    except urllib.error.HTTPError:
        return None  # it answered: reachable
    except (urllib.error.URLError, OSError, ValueError) as e:
        return f"{constants.ENDPOINT}: {getattr(e, 'reason', None) or e}"


def load_config(config: str, split: str | None = None, data: str | None = None, revision: str | None = None):
    """``datasets.load_dataset`` on the resolved source, with a clear error when the Hub is out of reach."""
    import datasets

    source, rev = resolve_source(data, revision)
    if rev is not None and not _offline():
        why = hub_unreachable()
        if why is not None:
            raise DataNotFound(f"cannot reach the Hugging Face Hub ({why}) to read {source}@{rev}: pass --data DIR for "
                               f"a local build (g2m build --out DIR --configs {config}), or set HF_HUB_OFFLINE=1 to "
                               "read a copy already in your Hugging Face cache")
    try:
        loaded = datasets.load_dataset(source, config, split=split, revision=rev)
    except ValueError as e:
        raise UsageError(f"{source} has no usable config {config!r}: {e}") from None
    except (OSError, ConnectionError) as e:
        if rev is None:
            raise G2MError(f"could not read {config!r} from {source}: {e}") from None
        hint = " (HF_HUB_OFFLINE is set: only a cached copy can be read)" if _offline() else ""
        raise G2MError(f"could not load {source}@{rev} from the Hugging Face Hub{hint} ({type(e).__name__}); build a "
                       f"local copy with `g2m build --out DIR --configs {config}` and pass it with "
                       f"--data DIR") from None
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # a first load converts the parquet files: ~50 MB Arrow would keep
    return loaded


def provenance(data: str | None = None, revision: str | None = None) -> dict:
    """What results should record about their data: Hub id and revision, or the local manifest's hash."""
    return data_provenance(*resolve_source(data, revision))
