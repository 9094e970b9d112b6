"""Write the lmms-eval task folder from the same task definitions as the lm-eval one (``taskgen``).

Same tasks (names, rows, prompt, budgets, greedy decoding, protocols), same hooks (``lmms_eval_tasks/utils.py`` adapts
``scoring.score.score_answer``), same sets. What differs is lmms-eval's schema and its pitfalls:

- the budget key is ``max_new_tokens``, and ``include:`` merges shallowly, so every task repeats the whole
  ``generation_kwargs`` (greedy, temperature 0.0, ``until`` explicit: lmms-eval's default stops at a blank line);
- lmms-eval logs neither the doc nor a row id, and its ``doc_hash`` is the same for every row: each sample returns a
  ``g2m_sample`` record (row id, parse strategy, finish reason...), which lmms-eval writes on the sample's line;
- it strips ``<think>`` blocks before scoring unless a task says ``reasoning_tags: none``: G2M's parsers see the raw
  text, as in every other harness;
- its sets are groups (lmms-eval aggregates groups, weighted by size). Requesting two overlapping groups runs the
  shared tasks twice there, so ``g2m eval --harness lmms-eval`` passes task names;
- there is no ``custom_dataset`` and no environment expansion in YAML, so a local build gets its own folder
  (``write_folder``), as with lm-eval.

``python scripts/gen_tasks.py`` writes both folders; ``--check`` fails when either is out of sync.
"""

from __future__ import annotations

from pathlib import Path

from dataset_builder.grids.spec import cell_key
from harness_tasks.evaluation.task_yaml import (
    HEADER,
    TEMPLATE,
    DataSource,
    data_yaml,
    materialise,
    metadata_yaml,
    metrics_yaml,
    sync_problems,
    variant_key,
    write_files,
    yaml_scalar,
)
from scoring.catalog import METRICS, TASK_VERSION, all_tasks, budget, tags
from scoring.score import PROTOCOLS

LMMS_TASK_DIR = Path(__file__).resolve().parent.parent / "lmms_eval_tasks"
RELEASE = DataSource()
#: Never produced by a model answering G2M: the generation stops at the budget or the model's end of turn.
UNTIL = "<|g2m-no-stop-string|>"


def _template(source: DataSource) -> str:
    metrics = metrics_yaml() + (
        "  - metric: g2m_sample\n    aggregation: !function utils.count_samples\n    higher_is_better: true\n")
    return (
        HEADER
        + "# Shared by every G2M lmms-eval task: the zero_shot config of the G2M release.\n"
        + data_yaml(source)
        + "output_type: generate_until\n"
        "doc_to_visual: !function utils.doc_to_visual\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_target: !function utils.doc_to_target\n"
        "process_results: !function utils.process_results\n"
        "reasoning_tags: none\n"
        f"metric_list:\n{metrics}"
        + metadata_yaml(source)
    )


def _task(name: str, n: int, c: int, protocol: str, extra_tokens: int = 0) -> str:
    hooks = "process_results: !function utils.process_results_paper\n" if protocol == "paper" else ""
    return (
        HEADER
        + f"include: {TEMPLATE}\n"
        f"task: {name}\n"
        f"process_docs: !function utils.docs_{cell_key(n, c)}\n"
        f"{hooks}"
        "generation_kwargs:\n"
        f"  until: [{yaml_scalar(UNTIL)}]\n"
        "  do_sample: false\n"
        "  temperature: 0.0\n"
        f"  max_new_tokens: {budget(n, protocol) + extra_tokens}\n"
    )


def _group(name: str, members: list[str]) -> str:
    tasks = "".join(f"  - {m}\n" for m in members)
    aggregate = "".join(f"  - metric: {m}\n    aggregation: mean\n    weight_by_size: true\n" for m, _ in METRICS)
    return HEADER + (f"group: {name}\ntask:\n{tasks}aggregate_metric_list:\n{aggregate}metadata:\n  version: "
                     f"{TASK_VERSION}\n")


def render_all(source: DataSource = RELEASE, extra_tokens: int = 0) -> dict[str, str]:
    """File name -> content; ``extra_tokens`` (a reasoning budget) is added to every answer budget."""
    files = {TEMPLATE: _template(source)}
    for protocol in PROTOCOLS:
        for name, n, c in all_tasks(protocol):
            files[f"{name}.yaml"] = _task(name, n, c, protocol, extra_tokens)
    for group, members in tags().items():
        files[f"_group_{group}.yaml"] = _group(group, members)
    return files


def out_of_sync(folder: Path = LMMS_TASK_DIR) -> list[str]:
    return sync_problems(render_all(), folder)


def write_all(folder: Path = LMMS_TASK_DIR, source: DataSource = RELEASE, extra_tokens: int = 0) -> list[str]:
    return write_files(folder, render_all(source, extra_tokens))


def write_folder(root: Path, source: DataSource, extra_tokens: int = 0) -> Path:
    """The lmms-eval task folder for ``source`` under ``root`` (written once and reused), hooks included."""
    files = render_all(source, extra_tokens)
    folder = root / f"lmms-{variant_key(source, files[TEMPLATE])}" / (f"reasoning-{extra_tokens}" if extra_tokens
                                                                      else "answers")
    folder.parent.mkdir(parents=True, exist_ok=True)
    return materialise(folder, files, LMMS_TASK_DIR)


def task_folder(source: str, revision: str | None, root: Path, extra_tokens: int = 0) -> Path:
    """The installed folder for the release; a folder written under ``root`` for other data or a reasoning budget."""
    if (source, revision) == (RELEASE.path, RELEASE.revision) and not extra_tokens:
        return LMMS_TASK_DIR
    data_source = DataSource.local(source) if revision is None else DataSource(source, revision)
    return write_folder(root, data_source, extra_tokens)
