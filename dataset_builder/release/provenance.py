"""What a result records about where it came from: library versions, and the build manifest of the data it read.

``manifest.json`` is written last by ``g2m build`` (its presence means the build finished); it lists the sha256 of
every file, the build parameters and the environment. Results of ``g2m eval`` and ``g2m probe`` record either the Hub
id and revision they loaded, or the local build's manifest hash, so a number can always be traced to its data.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from importlib import metadata
from itertools import chain
from pathlib import Path

from dataset_builder.grids.configs import CONFIG_NAMES
from dataset_builder.grids.spec import MANIFEST_NAME
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.errors import BuildError

MANIFEST_FORMAT = "g2m-manifest/1"
MAX_MANIFEST_BYTES = 16 << 20  # the full release's manifest is ~30 KB


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
        data = read_json(path, MAX_MANIFEST_BYTES, "g2m manifest")
    except Rejected as e:
        raise BuildError(f"{path} is not a readable manifest: {e}") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise BuildError(f"{path} is not a g2m manifest (format {MANIFEST_FORMAT})")
    if not _well_formed(data):
        raise BuildError(f"{path} is not a well-formed g2m manifest (configs, files or params have the wrong shape)")
    return data


def _well_formed(m: dict) -> bool:
    configs, files = m.get("configs"), m.get("files")
    return (isinstance(m.get("params"), dict) and isinstance(files, dict)
            and all(isinstance(k, str) and isinstance(v, dict) for k, v in files.items())
            and isinstance(configs, dict)
            and all(isinstance(splits, dict) and all(
                isinstance(sp, dict) and type(sp.get("rows")) is int and isinstance(sp.get("files"), list)
                and all(isinstance(f, str) for f in sp["files"]) for sp in splits.values())
                for splits in configs.values()))


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


def release_differences(params: dict, configs: list[str]) -> list[str]:
    """How a build (its parameters and configs) differs from the release; empty for the release itself. Only a build
    with none may be published as the release (``g2m push``) or carry the release's name on its card."""
    from dataclasses import asdict

    from dataset_builder.grids.configs import ROWS_PER_SHARD
    from dataset_builder.grids.generate import RenderOptions

    want = {"scale": 1.0, "render": asdict(RenderOptions()), "rows_per_shard": ROWS_PER_SHARD}  # BuildParams()
    render, want_render = params.get("render") or {}, want["render"]
    out = []
    if params.get("scale") != want["scale"]:
        out.append(f"scale {params.get('scale')} (the release: {want['scale']})")
    if render.get("resolution") != want_render["resolution"]:
        out.append(f"resolution {render.get('resolution')} px (the release: {want_render['resolution']} px)")
    if render.get("outline", True) != want_render["outline"]:
        out.append("cells drawn without outlines (the release has them)")
    if params.get("rows_per_shard") != want["rows_per_shard"]:
        out.append(f"shards of {params.get('rows_per_shard')} rows (the release: {want['rows_per_shard']:,})")
    missing = [c for c in CONFIG_NAMES if c not in configs]
    if missing:
        shown = ", ".join(configs[:4]) + (", ..." if len(configs) > 4 else "")
        out.append(f"{len(configs)} of the release's {len(CONFIG_NAMES)} configs ({shown or 'none'})")
    return out


def describe_build(params: dict, configs: list[str]) -> str:
    """One line saying which build this is: the release, or a local build and how it differs from the release."""
    from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID

    diff = release_differences(params, configs)
    if not diff:
        return f"the release ({HUB_REPO_ID} {DATASET_REVISION}: every config, at the release's parameters)"
    return "a local build, not the release: " + "; ".join(diff)


def data_provenance(source: str, revision: str | None) -> dict:
    """What results record about their data: the Hub id and revision, or a local build's manifest hash and params."""
    out: dict = {"source": source, "revision": revision}
    manifest = Path(source) / MANIFEST_NAME
    if revision is None and manifest.is_file():
        params = load_manifest(source)["params"]  # bounded and checked; the bytes read below are as capped
        out["manifest_sha256"] = hashlib.sha256(manifest.read_bytes()).hexdigest()
        out["build_params"] = params
    return out


def content_sha256(rows) -> str:
    """A hash of what a model is shown and scored against, independent of how the rows are stored.

    ``rows`` yields (id, seed, grid_size, num_colors, png_bytes, matrix, prompt) in any order; they are hashed in id
    order, each as its id, seed, sizes, the sha256 of its PNG bytes, its matrix and its prompt. Two folders (or a
    folder and the Hub) with the same rows give the same hash whatever their parquet layout or library versions.
    """
    digests = []
    for row_id, seed, n, c, png, matrix, prompt in rows:
        cells = ",".join(map(str, map(int, chain.from_iterable(matrix))))
        line = f"{row_id}\0{int(seed)}\0{int(n)}\0{int(c)}\0{hashlib.sha256(png).hexdigest()}\0{cells}\0{prompt}"
        digests.append((row_id, hashlib.sha256(line.encode("utf-8", "surrogatepass")).digest()))
    h = hashlib.sha256()
    for _, d in sorted(digests):
        h.update(d)
    return h.hexdigest()


def generated_content_sha256(config: str = "zero_shot") -> str:
    """``content_sha256`` of a config as the generator makes it (every split, full scale)."""
    from dataset_builder.grids.configs import get_config
    from dataset_builder.grids.generate import make_sample

    def rows():
        for split in get_config(config).splits:
            for block in split.blocks:
                for i in range(block.count):
                    s = make_sample(block, i)
                    yield s.id, s.seed, s.grid_size, s.num_colors, s.png, s.matrix, s.prompt

    return content_sha256(rows())


def dataset_content_sha256(dataset) -> str:
    """``content_sha256`` of a loaded ``datasets.Dataset`` (images read as stored bytes, never decoded)."""
    import datasets

    raw = dataset.cast_column("image", datasets.Image(decode=False))
    cols = [raw[c] for c in ("id", "seed", "grid_size", "num_colors")]
    images = (im["bytes"] for im in raw["image"])
    return content_sha256(zip(*cols, images, raw["matrix"], raw["prompt"], strict=True))
