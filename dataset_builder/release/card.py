"""The release's README (YAML front matter + dataset card) and its manifest.

The YAML is produced by the same ``datasets``/``huggingface_hub`` classes that ``push_to_hub`` uses
(``DatasetInfosDict``, ``MetadataConfigs``, ``DatasetCardData``), so the Hub and ``load_dataset`` read our folder
exactly as they would read one pushed by ``datasets``. The card body is ``DATASET_CARD.md``, the single copy of the
prose; a short generated section describes this particular build.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from dataset_builder import __version__
from dataset_builder.grids.configs import CONFIG_NAMES, ConfigSpec
from dataset_builder.grids.prompt import PROMPT_VERSION
from dataset_builder.grids.spec import (
    DATA_LICENSE,
    DATASET_REVISION,
    EVAL_YAML_NAME,
    HUB_REPO_ID,
    MANIFEST_NAME,
    README_NAME,
)
from dataset_builder.release.hub_card import eval_yaml, size_category
from dataset_builder.release.hub_card import problems as hub_problems
from dataset_builder.release.provenance import MANIFEST_FORMAT, library_versions, release_differences
from dataset_builder.release.table import features
from g2m_base.errors import BuildError
from g2m_base.files import atomic_write_text

SHARD_NAME = re.compile(r"^(train|validation|test)-\d{5}-of-\d{5}\.parquet$")


def card_body() -> str:
    """DATASET_CARD.md: packaged inside the wheel, or read from the repository root in a source checkout."""
    package = Path(__file__).resolve().parents[1]  # dataset_builder/, where the wheel puts the card
    for candidate in (package / "DATASET_CARD.md", package.parent / "DATASET_CARD.md"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise BuildError("DATASET_CARD.md is missing from this installation")


def render_readme(specs: list[ConfigSpec], split_stats: dict, params_json: dict) -> str:
    """Front matter for every built config, then the card body and a description of this build.

    The metadata is checked against the Hub's rules (``hub_card``) before it is written: a partial build gets its own
    size category, and configs are listed in release order (zero_shot, then probe_n20_c3, probe_n20_c10, ...)
    rather than the alphabetical order ``datasets`` would write, so the viewer shows them naturally.
    """
    total = sum(s["rows"] for s in split_stats.values())
    card = DatasetCardData(
        license=DATA_LICENSE,
        pretty_name="Grid2Matrix (G2M)",
        task_categories=["image-text-to-text", "visual-question-answering"],
        language=["en"],
        annotations_creators=["machine-generated"],
        language_creators=["machine-generated"],
        multilinguality=["monolingual"],
        source_datasets=["original"],
        size_categories=[size_category(total)],
        tags=["vision-language-models", "benchmark", "synthetic", "grid-transcription", "probing"],
    )
    infos, configs = {}, {}
    for spec in specs:
        info = DatasetInfo(config_name=spec.name, features=features(), splits=SplitDict(), download_size=0,
                           dataset_size=0)
        for split in spec.splits:
            st = split_stats[(spec.name, split.name)]
            info.splits.add(SplitInfo(name=split.name, num_bytes=st["num_bytes"], num_examples=st["rows"]))
            info.download_size += st["size"]
            info.dataset_size += st["num_bytes"]
        infos[spec.name] = info
        configs[spec.name] = {
            "data_files": [{"split": s.name, "path": f"{spec.name}/{s.name}-*"} for s in spec.splits],
            **({"default": True} if spec.name == "zero_shot" else {}),
        }
    DatasetInfosDict(infos).to_dataset_card_data(card)
    MetadataConfigs(configs).to_dataset_card_data(card)
    order = {name: k for k, name in enumerate(CONFIG_NAMES)}
    for key in ("dataset_info", "configs"):  # datasets writes them sorted by name; keep the release order
        if isinstance(card[key], list):  # (one config's dataset_info is written as a mapping)
            card[key] = sorted(card[key], key=lambda c: order[c["config_name"]])
    found = hub_problems(yaml.safe_load(str(card)), rows=total)
    if found:
        raise BuildError(f"the dataset card's metadata would be refused by the Hub: {found[0]}")
    differences = release_differences(params_json, [s.name for s in specs])
    what = (f"**This is not the G2M release.** It is a local build that differs from it: {'; '.join(differences)}. "
            f"The release is `{HUB_REPO_ID}` at `{DATASET_REVISION}`; scores on this build are not scores on G2M."
            if differences else f"This is the G2M release, published as `{HUB_REPO_ID}` at `{DATASET_REVISION}`.")
    lines = ["", "## This build", "", what, "", f"Built by `g2m build` (grid2matrix {__version__}, prompt version "
             f"{PROMPT_VERSION}) with parameters "
             f"`{json.dumps(params_json, sort_keys=True)}`. `manifest.json` lists the sha256 of every file; "
             "`g2m verify` checks them and regenerates rows from their seeds.", "",
             "| config | split | rows |", "|---|---|---:|"]
    for spec in specs:
        for split in spec.splits:
            lines.append(f"| {spec.name} | {split.name} | {split_stats[(spec.name, split.name)]['rows']:,} |")
    return f"---\n{card}\n---\n\n{card_body().rstrip()}\n" + "\n".join(lines) + "\n"


def write_release_metadata(out: Path, specs: list[ConfigSpec], tasks: list, results: dict, params) -> dict:
    """Remove stale shards, then write README.md, eval.yaml (the Hub's benchmark file, when the build has the
    zero_shot config) and, last of all, manifest.json."""
    planned = {t.relpath for t in tasks}
    for spec in specs:
        for p in sorted((out / spec.name).glob("*.parquet")):
            rel = f"{spec.name}/{p.name}"
            if rel not in planned and SHARD_NAME.fullmatch(p.name):
                p.unlink()  # a shard of an abandoned build with other parameters: it would be read as data
    split_stats: dict = {}
    for t in tasks:
        r = results[t.relpath]
        st = split_stats.setdefault((t.config, t.split), {"rows": 0, "num_bytes": 0, "size": 0, "files": []})
        st["rows"] += r.rows
        st["num_bytes"] += r.num_bytes
        st["size"] += r.size
        st["files"].append(t.relpath)
    readme = render_readme(specs, split_stats, params.to_json())
    atomic_write_text(out / README_NAME, readme)
    files = {rel: {"sha256": r.sha256, "size": r.size, "rows": r.rows} for rel, r in sorted(results.items())}
    raw = readme.encode("utf-8")
    files[README_NAME] = {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    bench = eval_yaml([s.name for s in specs])
    if bench is not None:
        atomic_write_text(out / EVAL_YAML_NAME, bench)
        raw = bench.encode("utf-8")
        files[EVAL_YAML_NAME] = {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    elif (out / EVAL_YAML_NAME).is_file():
        (out / EVAL_YAML_NAME).unlink()  # not listed, so never pushed; verify would call it an extra file
    manifest = {
        "format": MANIFEST_FORMAT,
        "generator": {"package": "grid2matrix", "version": __version__, "prompt_version": PROMPT_VERSION},
        "intended_release": (None if release_differences(params.to_json(), [s.name for s in specs])
                             else {"repo_id": HUB_REPO_ID, "revision": DATASET_REVISION}),
        "params": params.to_json(),
        "configs": {
            s.name: {sp.name: {"rows": split_stats[(s.name, sp.name)]["rows"],
                               "files": split_stats[(s.name, sp.name)]["files"]}
                     for sp in s.splits}
            for s in sorted(specs, key=lambda s: CONFIG_NAMES.index(s.name))
        },
        "files": files,
        "environment": library_versions(),
    }
    atomic_write_text(out / MANIFEST_NAME, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
