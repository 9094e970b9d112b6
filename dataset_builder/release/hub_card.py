"""The Hub's rules for a dataset card's YAML metadata and for a benchmark's ``eval.yaml``, checked offline.

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

import yaml

from dataset_builder.grids.spec import (
    DEFAULT_RESOLUTION,
    EVAL_YAML_NAME,
    HUB_TASK_CONFIG,
    HUB_TASK_SPLIT,
    HUB_TASKS,
    PACKAGE_URL,
)

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


#: What the Hub's documentation and huggingface.js (``packages/tasks/src/eval.ts``) ask of an ``eval.yaml``, and
#: what ``inspect-ai``'s own reader of Hub tasks (``inspect_ai/_eval/task/hf.py``, ``HFTask``) accepts as solvers and
#: scorers by name. G2M's scoring (parser, partial credit) is none of inspect's built-in scorers: the file names the
#: nearest one, and its description says that the value each leaderboard shows is G2M's re-scored cell accuracy.
EVAL_FRAMEWORKS = frozenset({"inspect-ai", "exgentic", "math-arena", "mteb", "olmocr-bench", "harbor", "archipelago",
                             "apex-evals", "screenspot-pro", "swe-bench", "swe-bench-pro", "nemo-evaluator"})
INSPECT_SOLVERS = frozenset({"prompt_template", "system_message", "user_message", "chain_of_thought", "use_tools",
                             "generate", "self_critique", "multiple_choice"})
INSPECT_SCORERS = frozenset({"includes", "match", "pattern", "answer", "exact", "f1", "model_graded_qa",
                             "model_graded_fact", "choice", "math"})
EVAL_DESCRIPTION = (
    "Grid2Matrix (G2M): a vision-language model sees an NxN grid of coloured cells (a {res}x{res} PNG) and a colour to "
    "integer mapping, and must write out the NxN matrix: N from 3 to 64, with 3, 5 or 10 colours. "
    "Each task is one leaderboard: {tasks}. The value of each is G2M's cell accuracy (the mean fraction of cells "
    "transcribed correctly, with G2M's parser and partial credit) over those grids, re-scored from the model's raw "
    "outputs by `g2m validate`; run it with `g2m eval` (any harness, inspect-ai included: "
    f"harness_tasks/with_inspect), see {PACKAGE_URL}.")


def eval_yaml(configs: list[str]) -> str | None:
    """The release's ``eval.yaml``: one task per leaderboard G2M ranks on (``spec.HUB_TASKS``), each reading the
    zero_shot test split; None for a build without the zero_shot config (it holds no benchmark task)."""
    return _eval_yaml() if HUB_TASK_CONFIG in configs else None


@cache
def _eval_yaml() -> str:
    views = "; ".join(f"{tid}: {what}" for tid, what in HUB_TASKS.items())
    doc = {
        "name": "Grid2Matrix (G2M)",
        "description": EVAL_DESCRIPTION.format(tasks=views, res=DEFAULT_RESOLUTION),
        "evaluation_framework": "inspect-ai",
        "tasks": [{"id": tid, "config": HUB_TASK_CONFIG, "split": HUB_TASK_SPLIT,
                   "field_spec": {"input": "prompt", "target": "matrix", "input_image": "image", "id": "id",
                                  "metadata": ["grid_size", "num_colors"]},
                   "solvers": [{"name": "generate"}], "scorers": [{"name": "exact"}]} for tid in HUB_TASKS],
    }
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=100)
    found = eval_yaml_problems(yaml.safe_load(text), {HUB_TASK_CONFIG: [HUB_TASK_SPLIT]})
    if found:  # never written: a test holds this function to the same rules
        raise ValueError(f"{EVAL_YAML_NAME} would be refused by the Hub: {found[0]}")
    return text


def _named(items: object, allowed: frozenset[str], what: str, tid: str) -> list[str]:
    if not isinstance(items, list) or not items:
        return [f"task {tid}: {what} must be a non-empty list"]
    return [f"task {tid}: {what} entry {i!r} is not one of inspect-ai's by name" for i in items
            if not isinstance(i, dict) or i.get("name") not in allowed or not isinstance(i.get("args", {}), dict)]


def eval_yaml_problems(doc: object, splits: dict[str, list[str]] | None = None) -> list[str]:
    """Everything in a parsed ``eval.yaml`` that the Hub's stated rules refuse: ``name``, ``description`` and
    ``evaluation_framework`` present, ``tasks`` a list whose every task has a unique string ``id`` (the
    ``task_id`` of results files), optional string ``config`` and ``split`` (with ``splits``: ones the dataset has),
    and, for inspect-ai, ``field_spec`` (``input``, ``target``), ``solvers`` and ``scorers`` by name."""
    if not isinstance(doc, dict):
        return [f"{EVAL_YAML_NAME} is not a YAML mapping"]
    out = [f"{key} must be a non-empty string" for key in ("name", "description", "evaluation_framework")
           if not isinstance(doc.get(key), str) or not doc[key].strip()]
    framework = doc.get("evaluation_framework")
    if isinstance(framework, str) and framework not in EVAL_FRAMEWORKS:
        out.append(f"evaluation_framework: {framework!r} is not one the Hub knows")
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, dict) for t in tasks):
        return [*out, "tasks must be a non-empty list of mappings"]
    ids = [t.get("id") for t in tasks]
    if not all(isinstance(i, str) and i.strip() for i in ids) or len(set(ids)) != len(ids):
        out.append("tasks: every task needs a unique string id")
    for t in tasks:
        tid = str(t.get("id"))
        for key in ("config", "split"):
            if key in t and not isinstance(t[key], str):
                out.append(f"task {tid}: {key} must be a string")
        config, split = t.get("config", "default"), t.get("split", "test")
        if splits is not None and split not in splits.get(config, ()):
            out.append(f"task {tid}: reads {config}/{split}, which the dataset does not have")
        if framework == "inspect-ai":
            spec = t.get("field_spec")
            if not isinstance(spec, dict) or not all(isinstance(spec.get(k), str) for k in ("input", "target")):
                out.append(f"task {tid}: field_spec must name the input and target fields")
            out += _named(t.get("solvers"), INSPECT_SOLVERS, "solvers", tid)
            out += _named(t.get("scorers"), INSPECT_SCORERS, "scorers", tid)
    return out
