"""Checking samples against the release: a logged row must be the row its id names, in the task it was logged for,
and a VLMEvalKit row's target comes from its id (regenerated from its seed), never from the file. Nothing a run
writes about its targets is trusted."""

from __future__ import annotations

import numpy as np

from dataset_builder.grids.generate import make_matrices
from scoring.rescoring.rescore import Truth, truth_matrix, zero_shot_truth
from scoring.runs.run import Sample
from scoring.score import REQUEST_FAILED


def check_row(s: Sample, task_n: int, task_c: int, truth: dict[str, Truth]) -> None:
    """Raise ValueError unless ``s`` names a row of the release, of the (N, C) task it was logged for (its target is
    checked with its file's others: ``first_off_release``)."""
    if (s.grid_size, s.num_colors) != (task_n, task_c):
        raise ValueError(f"a {s.grid_size}x{s.grid_size}, C={s.num_colors} row in the samples of the "
                         f"{task_n}x{task_n}, C={task_c} task")
    t = truth.get(s.id)
    if t is None:
        raise ValueError(f"unknown G2M id {s.id[:80]!r}")
    if (t.grid_size, t.num_colors) != (task_n, task_c):
        raise ValueError(f"id {s.id} is a {t.grid_size}x{t.grid_size}, C={t.num_colors} row, not of this task")


def first_off_release(samples: list[Sample], truth: dict[str, Truth]) -> tuple[int, str] | None:
    """The first of ``samples`` (each passed by ``check_row``) whose logged target is not the release's row, and why;
    None when every one is. The rows are regenerated from their seeds together, each (N, C) in one batch
    (``make_matrices``: seeding numpy's generator one row at a time was most of the cost of reading a run)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for k, s in enumerate(samples):
        groups.setdefault((s.grid_size, s.num_colors), []).append(k)
    off = []
    for (n, c), ks in groups.items():
        rows = make_matrices([truth[samples[k].id].seed for k in ks], n, c)
        same = (np.stack([samples[k].target for k in ks]) == rows).all(axis=(1, 2))
        off += [k for k, ok in zip(ks, same.tolist(), strict=True) if not ok][:1]
    if not off:
        return None
    k = min(off)
    return k, f"the logged target of {samples[k].id} is not the release's row (regenerated from its seed)"


def release_samples(rows) -> tuple[list[Sample], list[tuple[str, int]]]:
    """VLMEvalKit's rows (``scoring.runs.vlmevalkit.Prediction``) as samples of the release, each target
    regenerated from its id (an id the release does not hold is a ValueError), and the rows the spreadsheet cut (id,
    characters kept): those are neither scored nor counted as the model's parse failure."""
    truth = zero_shot_truth()
    samples, cut = [], []
    for p in rows:
        t = truth.get(p.id)
        if t is None:
            raise ValueError(f"unknown G2M id {p.id[:80]!r}")
        if p.cut and not p.request_failed:
            cut.append((p.id, len(p.text)))
            continue
        samples.append(Sample(p.id, t.grid_size, t.num_colors, truth_matrix(t), "" if p.request_failed else p.text,
                              finish_reason=REQUEST_FAILED if p.request_failed else None))
    return samples, cut
