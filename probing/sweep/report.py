"""A sweep's outputs: ``sweep.json`` (format ``spec.SWEEP_RESULT_FORMAT``), the figure, and the summary ``g2m`` prints.

``sweep.json`` holds one record per point, in depth order: ``stage`` (``tower``, ``projector`` or ``llm``), ``layer``
(1-based; null for the projector), ``readout`` (the ``g2m probe --readout`` the point equals, if any), the token grid
and width, ``cell_accuracy`` and ``exact_match`` on the test split with their 95% intervals (a seeded bootstrap over
images; Wilson), ``per_colour_accuracy``, the best validation step, and the point's disk use. Around them: the model,
the read-out settings (the tower's read-out, the probe, what the LLM was shown), the data's provenance and row counts,
the training settings, the forward passes made, the measured costs of this run, and ``reference`` (the model's own
end-to-end scores at this N, from ``--run``) when given. The per-point results, with each heatmap and training
history, stay in ``points/<point>/result.json``. What this particular run did and cost (forward passes, seconds,
disk, peak memory) goes to ``costs.json`` beside it, so that ``sweep.json`` and the figure are the same bytes for the
same settings and seed, however many processes made them and however often the run was resumed.
"""

from __future__ import annotations

import json
from pathlib import Path

from g2m_base.files import atomic_write_text
from g2m_base.untrusted import term
from probing.figures.sweep import plot_sweep


def write_sweep(sweep: dict, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    title = (f"{Path(sweep['model']['name']).name} on {sweep['config']} ({sweep['readout']['probe']} probe): "
             "where the grid is lost")
    test_rows = (sweep.get("rows") or {}).get("test")  # the n every point is scored on, as the sweep recorded it
    sweep["figures"] = plot_sweep(sweep["points"], out / "sweep.png", title, sweep["chance_cell_accuracy"],
                                  sweep.get("reference"), n=test_rows if isinstance(test_rows, int) else None)
    run_specific = ("passes", "costs")
    atomic_write_text(out / "sweep.json", json.dumps({k: v for k, v in sweep.items() if k not in run_specific},
                                                     indent=1) + "\n")
    atomic_write_text(out / "costs.json", json.dumps({k: sweep[k] for k in run_specific}, indent=1) + "\n")
    return {**sweep, "output_dir": str(out)}


def _gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def summary(sweep: dict) -> str:
    """A few lines for the terminal: the curve in brief, the costs, and where the files are."""
    pts = sweep["points"]
    best = max(pts, key=lambda p: p["cell_accuracy"])
    last = pts[-1]
    lines = [f"{term(sweep['model']['name'])} on {sweep['config']}: {len(pts)} points, chance "
             f"{sweep['chance_cell_accuracy']:.3f}"]
    for stage in ("tower", "projector", "deepstack", "llm"):
        sel = [p for p in pts if p["stage"] == stage]
        if sel:
            accs = " ".join(f"{p['cell_accuracy']:.3f}" for p in sel)
            lines.append(f"  {stage:<9} {accs}")
    lines.append(f"  best {best['point']} {best['cell_accuracy']:.3f}; last {last['point']} "
                 f"{last['cell_accuracy']:.3f}")
    if sweep.get("reference"):
        ref = sweep["reference"]["cell_accuracy"]
        lines.append(f"  end-to-end {ref:.3f}: gap at the last point {last['cell_accuracy'] - ref:+.3f}")
    c, p = sweep["costs"], sweep["passes"]
    lines.append(f"  costs: {p['forward_passes']} forward passes for {p['images']} images, extraction "
                 f"{c['extraction_seconds']:.1f} s, training {c['training_seconds']:.1f} s, features "
                 f"{_gb(c['disk_bytes'])} on disk, peak RSS {_gb(c['peak_rss_bytes'])}")
    lines.append(f"results: {term(sweep['output_dir'])}/sweep.json, sweep.png, costs.json")
    return "\n".join(lines)
