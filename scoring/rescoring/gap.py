"""The Digital Agnosia gap of one model: what a small probe trained on its frozen internals recovers about the grid,
minus what its answers get right, at the same N and C. Positive: the information is there, but lost on the way out.

Both halves are re-scored numbers: the probe half is a read-out re-scored against the seeds' truth
(``submission.probe_section.rescore``), the end-to-end half the cell accuracy of the same model's outputs re-scored
under G2M's protocol (``cell_accuracy_by_task``). ``g2m report`` (``report_rows``) and the board (``summary``) both
compute the gap here, so the same run and probes give the same gap in both. Pure functions: no files, no pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

import numpy as np

from scoring.rescoring.rescore import Scored, by_task

#: What a read-out of a section keeps (its re-scored numbers, and where it sits on the map).
READOUT_KEYS = ("point", "role", "stage", "layer", "cell_accuracy", "cell_accuracy_ci", "exact_match", "exact_match_ci",
                "gap")
SECTION_KEYS = ("kind", "config", "grid_size", "num_colors", "probed_as", "end_to_end", "figure", "readouts", "scale",
                "rows")
HEADLINE_KEYS = ("section", "point", "role", "config", "grid_size", "num_colors", "probe_cell_accuracy",
                 "end_to_end_cell_accuracy", "gap", "scale", "rows")


def cell_accuracy_by_task(scored: Iterable[Scored]) -> dict[tuple[int, int], float]:
    """(N, C) -> the mean cell accuracy of the outputs at that task: ``rescore.summarise``'s number, without its
    intervals."""
    return {k: float(np.array([r.score.cell_accuracy for r in v]).mean()) for k, v in by_task(scored).items() if v}


def gap(probe: float, e2e: float | None) -> float | None:
    return None if e2e is None else probe - e2e


@dataclass(frozen=True)
class GapRow:
    """One row of ``g2m report``'s gap table: a probe's cell accuracy at (N, C) against the run's own answers there.
    ``other_model``: the probe is of another model than the run's (compared on request, named in the row)."""

    grid_size: int
    num_colors: int
    probe: str
    other_model: bool
    probe_cell_accuracy: float
    end_to_end_cell_accuracy: float
    gap: float

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def report_rows(curves: dict[tuple[int, str], dict[int, float]], tasks: dict[tuple[int, int], dict],
                others: set[str]) -> list[GapRow]:
    """``g2m report``'s gap table: each probe curve (``(C, label) -> {N: probe cell accuracy}``) against the run's
    re-scored cell accuracy at the same (N, C) (``tasks``: ``rescore.summarise`` per task, as JSON), where the run
    has that task; ``others``: the labels of probes of another model."""
    return [GapRow(n, c, label, label in others, curve[n], tasks[(n, c)]["cell_accuracy"],
                   gap(curve[n], tasks[(n, c)]["cell_accuracy"]))
            for (c, label), curve in sorted(curves.items()) for n in sorted(curve) if (n, c) in tasks]


def sections(probes: list[dict], e2e: dict[tuple[int, int], float]) -> list[dict]:
    """Each re-scored probe section (``probe_section.rescore``) against the end-to-end cell accuracy at its (N, C)
    (None where the model has no end-to-end task there, e.g. N = 28): its read-outs in depth order, each with its gap.
    Stage and layer come from the section's submitted point of the same name (where it is drawn); every number is
    the re-scored one: the submitted per-point numbers are never used."""
    out = []
    for i, sec in enumerate(probes):
        ref = e2e.get((sec["grid_size"], sec["num_colors"]))
        where = {q["point"]: q for q in sec["points"]}
        order = {q["point"]: k for k, q in enumerate(sec["points"])}
        readouts = [{"point": r["point"], "role": r["role"], "stage": where[r["point"]]["stage"],
                     "layer": where[r["point"]]["layer"], "cell_accuracy": r["cell_accuracy"],
                     "cell_accuracy_ci": [float(v) for v in r["cell_accuracy_ci"]], "exact_match": r["exact_match"],
                     "exact_match_ci": [float(v) for v in r["exact_match_ci"]], "gap": gap(r["cell_accuracy"], ref)}
                    for r in sorted(sec["readouts"], key=lambda r: order[r["point"]])]
        out.append({"kind": sec["kind"], "config": sec["config"], "grid_size": sec["grid_size"],
                    "num_colors": sec["num_colors"], "probed_as": sec["probed_as"], "end_to_end": ref,
                    "figure": f"sweep_{i}.png", "readouts": readouts, "scale": float(sec.get("scale", 1.0)),
                    "rows": int(sec["rows"])})
    return out


def headline(secs: list[dict], scaled: bool = False) -> dict | None:
    """The row's gap: the section with an end-to-end counterpart at the largest N (ties: the larger C, then a sweep
    before a single probe), at its best re-scored read-out (ties: the earlier, shallower one). None when no section
    has an end-to-end counterpart. Only sections probed on the full config count (a probe trained and tested on a
    scaled build is a noisier number): ``scaled`` gives the same pick among the scaled ones, shown apart."""
    have = [i for i, s in enumerate(secs) if s["end_to_end"] is not None and (s["scale"] < 1.0) == scaled]
    if not have:
        return None
    i = max(have, key=lambda i: (secs[i]["grid_size"], secs[i]["num_colors"], secs[i]["kind"] == "sweep", -i))
    s = secs[i]
    best = max(s["readouts"], key=lambda r: r["cell_accuracy"])  # max keeps the first of equals
    return {"section": i, "point": best["point"], "role": best["role"], "config": s["config"],
            "grid_size": s["grid_size"], "num_colors": s["num_colors"], "probe_cell_accuracy": best["cell_accuracy"],
            "end_to_end_cell_accuracy": s["end_to_end"], "gap": best["gap"], "scale": s["scale"], "rows": s["rows"]}


def summary(probes: list[dict], scored: Iterable[Scored]) -> dict | None:
    """A model's gap, as a leaderboard row keeps it: every section with its read-outs' gaps, the headline (probes on
    the full config) and the headline among probes on scaled builds (``scaled``, shown apart, never ranked). None for
    a model without probe results."""
    if not probes:
        return None
    secs = sections(probes, cell_accuracy_by_task(scored))
    return {"headline": headline(secs), "scaled": headline(secs, scaled=True), "sections": secs}
