"""Write the lm-eval task folder from the task catalog, in upstream's style.

The installed folder (``harness_tasks/lm_eval_tasks``) reads the Hub release. ``write_folder(...,
DataSource.local(DIR))`` writes the same tasks for a local build (``g2m tasks-dir --data DIR``; ``g2m eval --data DIR``
does it for you). The files are generated, never edited by hand: ``python scripts/gen_tasks.py`` rewrites the installed
folder and ``--check`` fails when it is out of sync.
"""

from __future__ import annotations

from pathlib import Path

from dataset_builder.grids.spec import cell_key
from harness_tasks import TASK_DIR
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
)
from scoring.catalog import PROTOCOLS, all_tasks, budget, tags_of

RELEASE = DataSource()



def _template(source: DataSource) -> str:
    return (
        HEADER
        + "# Shared by every g2m_n{NN}_c{C} task: the zero_shot config of the G2M release.\n"
        + data_yaml(source)
        + "output_type: generate_until\n"
        "num_fewshot: 0\n"
        "doc_to_image: !function utils.doc_to_image\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_target: !function utils.doc_to_target\n"
        "process_results: !function utils.process_results\n"
        f"metric_list:\n{metrics_yaml()}"
        + metadata_yaml(source)
    )


def _task(name: str, n: int, c: int, protocol: str) -> str:
    tag_lines = "".join(f"  - {t}\n" for t in tags_of(n, c, protocol))
    hooks = "process_results: !function utils.process_results_paper\n" if protocol == "paper" else ""
    return (
        HEADER
        + f"include: {TEMPLATE}\n"
        f"task: {name}\n"
        f"tag:\n{tag_lines}"
        f"process_docs: !function utils.docs_{cell_key(n, c)}\n"
        f"{hooks}"
        "generation_kwargs:\n"
        "  until: []\n"
        "  do_sample: false\n"
        "  temperature: 0.0\n"
        f"  max_gen_toks: {budget(n, protocol)}\n"
    )


def render_all(source: DataSource = RELEASE) -> dict[str, str]:
    """File name -> content, for every YAML file of the task folder."""
    files = {TEMPLATE: _template(source)}
    for protocol in PROTOCOLS:
        for name, n, c in all_tasks(protocol):
            files[f"{name}.yaml"] = _task(name, n, c, protocol)
    return files


def out_of_sync(folder: Path = TASK_DIR) -> list[str]:
    return sync_problems(render_all(), folder)


def write_all(folder: Path = TASK_DIR, source: DataSource = RELEASE) -> list[str]:
    return write_files(folder, render_all(source))


def write_folder(root: Path, source: DataSource) -> Path:
    """The task folder for ``source`` under ``root`` (``root/<key>/``), written once and reused."""
    files = render_all(source)
    return materialise(root / variant_key(source, files[TEMPLATE]), files, TASK_DIR)


def task_folder(source: str, revision: str | None, root: Path) -> Path:
    """The installed task folder for the release; for any other data, a folder written for it under ``root``."""
    if (source, revision) == (RELEASE.path, RELEASE.revision):
        return TASK_DIR
    data_source = DataSource.local(source) if revision is None else DataSource(source, revision)
    return write_folder(root, data_source)
