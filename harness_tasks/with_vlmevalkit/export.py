"""``g2m export``: the release's rows as VLMEvalKit's TSV (its format is the run format's: ``scoring.runs.vlmevalkit``),
read from the data a run would evaluate."""

from __future__ import annotations

from pathlib import Path

from g2m_base.errors import UsageError
from scoring.runs.vlmevalkit import write_tsv


def export(out: str | Path, data: str | None = None, tasks: tuple[str, ...] = ("g2m",)) -> int:
    """Write the TSV for the rows of ``tasks`` (tags or task names; the g2m protocol's rows) of the resolved data."""
    import datasets

    from harness_tasks.evaluation import data as data_module
    from scoring.catalog import task_info, task_names

    cells = {task_info(t)[:2] for t in task_names(tasks)}
    if not cells:
        raise UsageError(f"no G2M task in {', '.join(tasks)}")
    ds = data_module.rows(data).cast_column("image", datasets.Image(decode=False))
    keep = [i for i, (n, c) in enumerate(zip(ds["grid_size"], ds["num_colors"], strict=True)) if (n, c) in cells]
    return write_tsv(ds.select(keep), Path(out), data_module.content_sha256(data))
