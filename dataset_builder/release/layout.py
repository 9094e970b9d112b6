"""What a release folder may hold, and where its README may send ``load_dataset``.

The hashes in ``manifest.json`` prove that the listed files are unchanged; they cannot prove that the listed files are
the ones that will be read. A release could add a parquet file with other rows, list it in the manifest, and point the
README's ``data_files`` at it. So, beside the hashes:

- every path in the manifest is a plain relative path inside the folder (no ``..``, no absolute path, no link), and
  is exactly one of the shards the build parameters plan, or the README;
- the folder holds nothing else that is visible (hidden files, such as the build lock or ``.git``, are never data);
- the README's ``configs`` (what ``load_dataset`` reads) and ``dataset_info`` (the features it decodes with) say
  exactly what this package writes for the manifest's configs: each split's ``data_files`` is ``<config>/<split>-*``;
- the ``eval.yaml`` (the Hub's benchmark file, which names the configs and splits each leaderboard reads) is byte for
  byte the one this package writes for those configs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from dataset_builder.grids.configs import get_config
from dataset_builder.grids.spec import EVAL_YAML_NAME, MANIFEST_NAME, README_NAME
from dataset_builder.release.hub_card import eval_yaml
from dataset_builder.release.table import FEATURES_DICT

_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
MAX_FRONT_MATTER = 1 << 20  # the full release's front matter is ~20 KB
MAX_YAML_NESTING = 32


def _safe_relpath(rel: object) -> bool:
    return (isinstance(rel, str) and not rel.startswith("/") and "\\" not in rel
            and all(_SAFE_PART.fullmatch(part) and part != ".." for part in rel.split("/")))


def check_paths(root: Path, manifest: dict, planned: set[str], allow_extra: bool = False) -> list[str]:
    """Problems with the manifest's paths and with what is on disk (before anything is hashed). ``allow_extra``
    tolerates unlisted files (``g2m push`` uploads only listed ones)."""
    files = manifest.get("files")
    if not isinstance(files, dict):
        return ["manifest: it lists no files"]
    problems = [f"manifest: {rel!r} is not a plain path inside the release folder" for rel in files
                if not _safe_relpath(rel)]
    if problems:
        return problems
    configs = manifest.get("configs")
    want = planned | {README_NAME} | metadata_files(list(configs) if isinstance(configs, dict) else [])
    problems += [f"manifest: lists {rel}, which is not one of the files this build plans"
                 for rel in sorted(set(files) - want)]
    problems += [f"manifest: does not list {rel}" for rel in sorted(want - set(files))]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        for name in sorted(filenames) + [d for d in dirnames if (here / d).is_symlink()]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if name.startswith(".") or rel == MANIFEST_NAME:
                continue
            if path.is_symlink():
                problems.append(f"{rel}: a symbolic link; a release holds only regular files")
            elif rel not in files and not allow_extra:
                problems.append(f"{rel}: not in the manifest (an extra file in the release folder)")
    return problems


def metadata_files(configs: list[str]) -> set[str]:
    """The files beside the shards that a build of ``configs`` writes and lists (the manifest aside)."""
    return {README_NAME} | ({EVAL_YAML_NAME} if eval_yaml(configs) is not None else set())


def check_eval_yaml(root: Path, configs: list[str]) -> list[str]:
    """The folder's eval.yaml must be the one this package writes for its configs (it tells the Hub which config and
    split each leaderboard reads)."""
    want = eval_yaml(configs)
    if want is None:
        return []
    try:
        got = (root / EVAL_YAML_NAME).read_bytes()
    except OSError as e:
        return [f"{EVAL_YAML_NAME}: does not read ({e.strerror or e})"]
    return [] if got == want.encode("utf-8") else [f"{EVAL_YAML_NAME}: differs from the one this package writes for "
                                                   "these configs (what the Hub's leaderboards read)"]


def expected_front_matter(manifest: dict, configs: list[str]) -> tuple[dict, dict]:
    """(configs, dataset_info) as this package writes them, by config name; data-loading fields only."""
    entries, infos = {}, {}
    for name in configs:
        splits = [s.name for s in get_config(name).splits]  # the release's order, as the README writes them
        entry: dict = {"config_name": name, "data_files": [{"split": s, "path": f"{name}/{s}-*"} for s in splits]}
        if name == "zero_shot":
            entry["default"] = True
        entries[name] = entry
        infos[name] = {"features": _features_yaml(),
                       "splits": {s: (manifest["configs"][name].get(s) or {}).get("rows") for s in splits}}
    return entries, infos


def _features_yaml() -> list:
    """The release features in the README's YAML form (what ``datasets`` writes for ``FEATURES_DICT``)."""
    import datasets

    return datasets.Features.from_dict(FEATURES_DICT)._to_yaml_list()


def check_readme(root: Path, manifest: dict, configs: list[str]) -> list[str]:
    """Problems with the README's front matter (any config, data file or feature that is not this release's), then
    with eval.yaml."""
    return _check_front_matter(root, manifest, configs) or check_eval_yaml(root, configs)


def _check_front_matter(root: Path, manifest: dict, configs: list[str]) -> list[str]:
    try:
        text = (root / README_NAME).read_text(encoding="utf-8")
        m = _FRONT.match(text)
        front = _plain_yaml(m.group(1)) if m else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError) as e:
        return [f"{README_NAME}: its front matter does not read ({type(e).__name__}: {str(e)[:120]})"]
    if m is None:
        return [f"{README_NAME}: no YAML front matter"]
    if not isinstance(front, dict):
        return [f"{README_NAME}: its front matter is {type(front).__name__}, not a mapping of fields"]
    want_configs, want_infos = expected_front_matter(manifest, configs)
    problems = []
    got_configs = front.get("configs")
    if not isinstance(got_configs, list) or not all(isinstance(c, dict) for c in got_configs):
        return [f"{README_NAME}: configs is missing or not a list"]
    by_name = {c.get("config_name"): c for c in got_configs}
    if len(by_name) != len(got_configs):
        problems.append(f"{README_NAME}: a config is named twice")
    for name in sorted(set(by_name) - set(want_configs), key=str):
        problems.append(f"{README_NAME}: config {str(name)!r} is not in the manifest")
    for name, want in want_configs.items():
        got = by_name.get(name)
        if got is None:
            problems.append(f"{README_NAME}: config {name} is missing")
        elif got != want:
            problems.append(f"{README_NAME}: config {name} points at {_describe(got)}, not at its shards "
                            f"({_describe(want)})")
    infos = front.get("dataset_info")
    infos = [infos] if isinstance(infos, dict) else infos
    got_infos = {i.get("config_name"): i for i in infos if isinstance(i, dict)} if isinstance(infos, list) else {}
    for name, want in want_infos.items():
        got = got_infos.get(name) or {}
        splits = {s.get("name"): s.get("num_examples") for s in got.get("splits") or [] if isinstance(s, dict)}
        if got.get("features") != want["features"]:
            problems.append(f"{README_NAME}: dataset_info of {name} declares other features than the release's")
        elif splits != want["splits"]:
            problems.append(f"{README_NAME}: dataset_info of {name} declares splits {splits}, the manifest "
                            f"{want['splits']}")
    return problems


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key written twice in one mapping (YAML parsers disagree on which one wins)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                if key in seen:
                    raise ValueError(f"the key {str(key)[:80]!r} is written twice in one mapping")
                seen.add(key)
            except TypeError:
                pass  # an unhashable key: the base constructor refuses it
        return super().construct_mapping(node, deep)


def _nesting(text: str) -> int:
    """The deepest nesting of flow collections (``[`` and ``{``), counted in one pass; PyYAML's pure-Python parser
    takes time that grows faster than the depth (20,000 levels: half a minute)."""
    depth = deepest = 0
    for ch in re.findall(r"[\[\]{}]", text):
        depth = depth + 1 if ch in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _plain_yaml(text: str) -> object:
    """YAML without anchors or aliases (which let a few lines expand into a structure of any size), deep nesting or
    repeated keys."""
    if len(text) > MAX_FRONT_MATTER:
        raise ValueError(f"front matter of {len(text):,} characters, over {MAX_FRONT_MATTER:,}")
    if _nesting(text) > MAX_YAML_NESTING:
        raise ValueError(f"nested more than {MAX_YAML_NESTING} levels deep (a release README has 5)")
    indent = max((len(line) - len(line.lstrip(" ")) for line in text.splitlines()), default=0)
    if indent > 2 * MAX_YAML_NESTING:
        raise ValueError(f"indented {indent} columns deep (a release README is indented at most 10)")
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise ValueError("anchors and aliases are not used by a release README")
    loader = _StrictLoader(text)  # what yaml.safe_load does, with the stricter constructor
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _describe(entry: dict) -> str:
    files = entry.get("data_files")
    if isinstance(files, list):
        return ", ".join(str(f.get("path")) if isinstance(f, dict) else str(f) for f in files)[:200]
    return repr(files)[:200] if files is not None else repr({k: v for k, v in entry.items()
                                                             if k != "config_name"})[:200]
