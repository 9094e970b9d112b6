"""The Hub's rules for a dataset card's YAML metadata, checked offline.

The Hub validates a README's front matter when it is pushed; here the same rules run before a card is written, so a
build (full or partial) never produces metadata the Hub refuses. Value lists come from where the Hub keeps them:
size categories, creators, multilinguality and language codes from the resources ``datasets`` ships
(``datasets/utils/resources``); licenses and task categories from huggingface.js (``packages/hub/src/types/public.ts``
and ``packages/tasks/src/pipelines.ts``, commit fe42e6801), pinned below because they are not installed anywhere.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

#: The Hub's license identifiers (huggingface.js ``License``).
LICENSES = frozenset("""
apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0 bigcode-openrail-m afl-3.0
artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5 cc-by-3.0
cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0 cc-by-nc-nd-4.0
cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0
epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0
odc-by odbl openrail++ osl-3.0 postgresql ofl-1.1 ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 llama3
llama3.1 llama3.2 llama3.3 gemma apple-ascl apple-amlr unknown other
""".split())

#: The Hub's task categories (huggingface.js pipeline types).
TASK_CATEGORIES = frozenset("""
text-classification token-classification table-question-answering question-answering zero-shot-classification
feature-extraction text-generation fill-mask sentence-similarity text-to-speech text-to-audio
automatic-speech-recognition audio-to-audio audio-classification audio-text-to-text voice-activity-detection
depth-estimation image-classification object-detection image-segmentation text-to-image image-to-text image-to-image
image-to-video unconditional-image-generation video-classification reinforcement-learning tabular-classification
tabular-regression tabular-to-text table-to-text multiple-choice text-ranking text-retrieval time-series-forecasting
text-to-video image-text-to-text image-text-to-image image-text-to-video visual-question-answering
document-question-answering zero-shot-image-classification graph-ml mask-generation zero-shot-object-detection
text-to-3d image-to-3d image-feature-extraction video-text-to-text keypoint-detection visual-document-retrieval
any-to-any video-to-video other
""".split())

_LIST_FIELDS = ("language", "task_categories", "task_ids", "tags", "annotations_creators", "language_creators",
                "multilinguality", "size_categories", "source_datasets")


@cache
def _resource(name: str):
    return json.loads(resources.files("datasets.utils.resources").joinpath(name).read_text(encoding="utf-8"))


def size_categories() -> list[str]:
    """The Hub's size buckets, smallest first ("unknown" dropped)."""
    return [c for c in _resource("size_categories.json") if c != "unknown"]


def size_category(rows: int) -> str:
    """The bucket a dataset of ``rows`` rows belongs to (n<1K, 1K<n<10K, ..., n>1T)."""
    if rows < 0:
        raise ValueError(f"a dataset cannot have {rows} rows")
    buckets = size_categories()
    k = 0
    while k < len(buckets) - 1 and rows >= 1000 * 10**k:
        k += 1
    return buckets[k]


def problems(front: object, rows: int | None = None) -> list[str]:
    """Everything in ``front`` (a parsed front matter) that the Hub would refuse; with ``rows``, also a size
    category that does not match the real row count."""
    if not isinstance(front, dict):
        return ["the front matter is not a YAML mapping"]
    out = [f"{key} must be a list of strings" for key in _LIST_FIELDS
           if key in front and not (isinstance(front[key], list) and all(isinstance(v, str) for v in front[key]))]
    if out:
        return out
    allowed = {
        "license": LICENSES,
        "task_categories": TASK_CATEGORIES,
        "size_categories": set(size_categories()) | {"unknown"},
        "annotations_creators": set(_resource("creators.json")["annotations"]),
        "language_creators": set(_resource("creators.json")["language"]),
        "multilinguality": set(_resource("multilingualities.json")),
        "language": set(_resource("languages.json")),
    }
    for key, values in allowed.items():
        got = front.get(key, [])
        for v in [got] if isinstance(got, str) else got:
            if v not in values:
                out.append(f"{key}: {v!r} is not a value the Hub knows")
    for v in front.get("source_datasets", []):
        if v != "original" and not v.startswith("extended|"):
            out.append(f"source_datasets: {v!r} must be 'original' or 'extended|<dataset>'")
    if len(front.get("size_categories", [])) > 1:
        out.append("size_categories: a dataset has one size")
    if rows is not None and front.get("size_categories") != [size_category(rows)]:
        out.append(f"size_categories: {front.get('size_categories')} for {rows:,} rows; it is {size_category(rows)!r}")
    out += _configs_problems(front.get("configs"))
    if "pretty_name" in front and not isinstance(front["pretty_name"], str):
        out.append("pretty_name must be a string")
    return out


def _configs_problems(configs: object) -> list[str]:
    if configs is None:
        return []
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        return ["configs must be a list of mappings"]
    out = []
    names = [c.get("config_name") for c in configs]
    if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
        out.append("configs: every config needs a unique config_name")
    if sum(bool(c.get("default")) for c in configs) > 1:
        out.append("configs: at most one config is the default")
    for c in configs:
        files = c.get("data_files")
        ok = isinstance(files, (str, list)) and (isinstance(files, str) or all(
            isinstance(f, str) or (isinstance(f, dict) and isinstance(f.get("split"), str)
                                   and isinstance(f.get("path"), (str, list))) for f in files))
        if not ok:
            out.append(f"configs: {c.get('config_name')}'s data_files must be paths or split/path mappings")
    return out
