"""The probe half of a report: ``g2m probe`` results (curves by N) and ``g2m probe sweep`` results (points by depth)
read from a folder, and each sweep set against the run's end-to-end cell accuracy at its (N, C), its headline
read-outs re-scored as the leaderboard re-scores them."""

from __future__ import annotations

from pathlib import Path

from dataset_builder.grids.spec import (
    MAX_COLORS,
    MAX_GRID_SIZE,
    MAX_PROBE_RESULT_BYTES,
    MAX_SWEEP_BYTES,
    MIN_COLORS,
    PROBE_RESULT_FORMAT,
    SWEEP_RESULT_FORMAT,
)
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.errors import UsageError
from g2m_base.untrusted import term
from submission.probe_section import rescored_sweep


def load_probes(folder: str | Path, required: bool = True,
                models: dict[str, dict] | None = None) -> dict[tuple[int, str], dict[int, float]]:
    """(C, readout) -> {N: test cell accuracy} from every ``result.json`` of ``g2m probe`` below ``folder`` (and
    each label's model record into ``models``, for the identity rule).

    Files with another format are skipped; a file that claims the probe format but is malformed is an error naming it.
    """
    curves: dict[tuple[int, str], dict[int, float]] = {}
    paths = sorted(Path(folder).rglob("result.json"))
    for p in paths:
        try:  # a FIFO, a device (a link to /dev/zero), something far larger than a result, not JSON: not ours
            r = read_json(p, MAX_PROBE_RESULT_BYTES, "probe result")
        except Rejected:
            continue
        if not (isinstance(r, dict) and r.get("format") == PROBE_RESULT_FORMAT):
            continue
        try:
            n, c, acc = r["grid_size"], r["num_colors"], float(r["test"]["cell_accuracy"])
            probe = (r.get("train") or {}).get("probe", "conv")
            label = f"{Path(str(r['encoder']['name'])).name} {r['encoder']['readout']}" + (
                "" if probe == "conv" else f" ({probe} probe)")
            if (type(n) is not int or type(c) is not int or not 1 <= n <= MAX_GRID_SIZE
                or not MIN_COLORS <= c <= MAX_COLORS
                    or not 0 <= acc <= 1):
                raise ValueError("grid_size/num_colors/cell_accuracy out of range")
        except (KeyError, TypeError, ValueError) as e:
            raise UsageError(f"{p}: a malformed probe result ({type(e).__name__}: {e})") from None
        curves.setdefault((c, label), {})[n] = acc
        if models is not None:
            models[label] = r["encoder"] if isinstance(r["encoder"], dict) else {}
    if not curves and required:
        raise UsageError(f"no g2m probe results (result.json, {PROBE_RESULT_FORMAT}) under {folder}")
    return curves


def load_sweeps(folder: str | Path) -> list[dict]:
    """Every ``sweep.json`` of ``g2m probe sweep`` below ``folder``, checked: a file that claims the sweep format but
    is malformed is an error naming it; other JSON files are skipped."""
    sweeps = []
    for p in sorted(Path(folder).rglob("sweep.json")):
        try:
            r = read_json(p, MAX_SWEEP_BYTES, "probe sweep")
        except (Rejected, OSError):
            continue
        if not (isinstance(r, dict) and r.get("format") == SWEEP_RESULT_FORMAT):
            continue
        try:
            n, c = r["grid_size"], r["num_colors"]
            if (type(n) is not int or type(c) is not int or not 1 <= n <= MAX_GRID_SIZE
                    or not MIN_COLORS <= c <= MAX_COLORS):
                raise ValueError("grid_size/num_colors out of range")
            points = [{"point": str(q["point"]), "stage": str(q["stage"]), "layer": q["layer"],
                       "readout": q.get("readout"), "feature_grid": [int(v) for v in q["feature_grid"]][:2],
                       "cell_accuracy": float(q["cell_accuracy"]),
                       "cell_accuracy_ci": [float(v) for v in q["cell_accuracy_ci"]],
                       "exact_match": float(q["exact_match"])} for q in r["points"]]
            if not points or any(not 0 <= q["cell_accuracy"] <= 1
                                 or q["stage"] not in ("tower", "projector", "deepstack", "llm")
                                 or not (q["layer"] is None or type(q["layer"]) is int) for q in points):
                raise ValueError("a point out of range")
            test = (r.get("rows") or {}).get("test") if isinstance(r.get("rows"), dict) else None
            sweeps.append({"file": str(p), "model": str(r["model"]["name"]), "model_record": dict(r["model"]),
                           "config": str(r["config"]),
                           "grid_size": n, "num_colors": c, "test_rows": test if type(test) is int else None,
                           "points": _rescored_points(points, p, r)})
        except (KeyError, TypeError, ValueError) as e:
            raise UsageError(f"{p}: a malformed probe sweep ({type(e).__name__}: {e})") from None
    return sweeps


def sweep_sections(sweeps: list[dict], tasks: dict, out: Path, model: str,
                   others: dict[str, str] | None = None) -> tuple[list[dict], dict]:
    """Each sweep against this run's end-to-end cell accuracy at its (N, C), point by point, and its figure.
    ``others``: sweep file -> "probe of X, answers of Y" for a sweep of another model (compared on request)."""
    from probing.figures.sweep import plot_sweep

    rows, figs = [], {}
    for i, sw in enumerate(sweeps):
        e2e = tasks.get((sw["grid_size"], sw["num_colors"]))
        other = (others or {}).get(sw["file"])
        ref = {"cell_accuracy": e2e["cell_accuracy"], "source": model} if e2e else None
        figs[f"sweep_{i}"] = plot_sweep(sw["points"], out / f"sweep_{i}.png", f"{term(Path(sw['model']).name, 60)} on "
                                        f"{sw['config']}: probe by depth against the answers of {model}"
                                        + (" (ANOTHER MODEL)" if other else ""), 1 / sw["num_colors"], ref,
                                        n=sw.get("test_rows"))[0]
        rows.append({**sw, "other_model": other, "end_to_end_cell_accuracy": e2e["cell_accuracy"] if e2e else None,
                     "points": [{**q, "gap": q["cell_accuracy"] - e2e["cell_accuracy"] if e2e else None}
                                for q in sw["points"]]})
    return rows, figs


def _rescored_points(points: list[dict], path: Path, record: dict) -> list[dict]:
    """The sweep's points (read from ``path`` as ``record``), its headline read-outs re-scored from their saved test
    predictions against the seeds' truth exactly as the leaderboard re-scores them (``probe_section.rescored_sweep``;
    marked ``rescored``), so the report and the board give the same gap. A sweep made before predictions
    were saved keeps its own numbers."""
    try:
        rescored = {q["point"]: q for q in rescored_sweep(path, record)["readouts"]}
    except (Rejected, OSError, KeyError, TypeError, ValueError):
        rescored = {}
    keys = ("cell_accuracy", "cell_accuracy_ci", "exact_match")
    return [{**q, **{k: rescored[q["point"]][k] for k in keys}, "rescored": True} if q["point"] in rescored
            else {**q, "rescored": False} for q in points]
