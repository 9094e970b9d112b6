"""A run's outputs scored as one: every sample under a protocol (``score_run``), the g2m outputs under both protocols
(``score_both_ways``), and a run's end-to-end scores at one (N, C), the reference line of a probe sweep
(``sweep_reference``: ``g2m probe sweep --run`` reads it here, with nothing handed down)."""

from __future__ import annotations

from pathlib import Path

from g2m_base.errors import UsageError
from scoring.rescoring.load import load_run
from scoring.rescoring.rescore import by_task, score_output, score_outputs, summarise
from scoring.runs import identity


def sweep_reference(run_dir: str | Path, grid_size: int, num_colors: int, probed: dict | None = None,
               allow_other_model: bool = False) -> dict:
    """The run's end-to-end scores at (N, C), re-scored from its samples: the reference line of a probe sweep.
    ``probed``: the sweep's model record (name, revision); a run of another model is refused (``identity``) unless
    ``allow_other_model``, and then its source names both models."""
    run = load_run(run_dir)
    other = identity.other_models(identity.of_run(run), {"the sweep": probed}, allow_other_model, "--run") \
        if probed else {}
    protocol = "g2m" if any(s.protocol == "g2m" for s in run.samples) else "paper"
    tasks = {k: summarise(v) for k, v in by_task(score_run(run, protocol)).items()}
    if (grid_size, num_colors) not in tasks:
        have = ", ".join(f"N={n} C={c}" for n, c in sorted(tasks)) or "none"
        raise UsageError(f"{run_dir}: the run has no task at N={grid_size}, C={num_colors} to compare the sweep with "
                         f"(it has: {have})")
    t = tasks[(grid_size, num_colors)]
    source = f"{run.model} ({protocol} protocol)" + (f", ANOTHER MODEL: {other['the sweep']}" if other else "")
    return {"source": source, "run": str(run_dir), "model": run.model, "other_model": bool(other),
            "grid_size": grid_size, "num_colors": num_colors, "samples": t.n,
            "cell_accuracy": t.cell_accuracy, "cell_accuracy_ci": t.cell_accuracy_ci, "exact_match": t.exact_match,
            "exact_match_ci": t.exact_match_ci}


def score_run(run, protocol: str = "g2m", outputs_of: str | None = None) -> list:
    """The samples of the run's ``outputs_of`` tasks (default: ``protocol``'s own), scored under ``protocol``."""
    source = outputs_of or protocol
    return [score_output(s.id, s.output, s.target, s.num_colors, s.finish_reason, protocol=protocol)
            for s in run.samples if s.protocol == source]


def score_both_ways(run) -> tuple[list, list]:
    """The run's g2m outputs scored under G2M's protocol and under the paper's rule, each output under both in turn
    (``score_outputs``: its target read and a plain JSON answer decoded once)."""
    own, rule = [], []
    for s in run.samples:
        if s.protocol == "g2m":
            g2m, paper = score_outputs(s.id, s.output, s.target, s.num_colors, s.finish_reason, ("g2m", "paper"))
            own.append(g2m)
            rule.append(paper)
    return own, rule
