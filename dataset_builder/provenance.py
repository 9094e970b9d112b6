"""What a result records about where it came from: library versions, and the build manifest of the data it read.

``manifest.json`` is written last by ``g2m build`` (its presence means the build finished); it lists the sha256 of
every file, the build parameters and the environment. Results of ``g2m eval`` and ``g2m probe`` record either the Hub
id and revision they loaded, or the local build's manifest hash, so a number can always be traced to its data.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from importlib import metadata
from pathlib import Path

from .configs import CONFIG_NAMES
from .errors import BuildError
from .spec import MANIFEST_NAME

MANIFEST_FORMAT = "g2m-manifest/1"


def library_versions(dists: tuple[str, ...] = ("numpy", "pyarrow", "datasets", "huggingface_hub")) -> dict:
    """Python, zlib and the installed versions of ``dists`` (None when absent), for manifests and results."""
    out = {"python": ".".join(map(str, sys.version_info[:3])), "zlib": zlib.ZLIB_RUNTIME_VERSION}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def load_manifest(root: str | Path) -> dict | None:
    """The manifest of a release folder, None when there is none (an unfinished build), an error when unreadable."""
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"{path} is not a readable manifest: {e}") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise BuildError(f"{path} is not a g2m manifest (format {MANIFEST_FORMAT})")
    return data


def manifest_configs(manifest: dict) -> list[str]:
    """The manifest's configs in release order (JSON keeps them sorted by name)."""
    configs = manifest.get("configs")
    names = list(configs) if isinstance(configs, dict) else []
    unknown = [n for n in names if n not in CONFIG_NAMES]
    if unknown:
        raise BuildError(f"manifest names configs this package does not know: {', '.join(map(repr, unknown[:5]))}")
    return [n for n in CONFIG_NAMES if n in names]


def describe_params(params: dict) -> str:
    """Build parameters as the ``g2m build`` flags that produce them."""
    render = params.get("render", {})
    return (f"--scale {params.get('scale')} --resolution {render.get('resolution')}"
            + ("" if render.get("outline", True) else " --no-outline"))


def data_provenance(source: str, revision: str | None) -> dict:
    """What results record about their data: the Hub id and revision, or a local build's manifest hash and params."""
    out: dict = {"source": source, "revision": revision}
    manifest = Path(source) / MANIFEST_NAME
    if revision is None and manifest.is_file():
        raw = manifest.read_bytes()
        out["manifest_sha256"] = hashlib.sha256(raw).hexdigest()
        try:
            out["build_params"] = json.loads(raw).get("params")
        except (ValueError, AttributeError):
            raise BuildError(f"{manifest} is not a readable manifest") from None
    return out
