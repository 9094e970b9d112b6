"""``g2m report RUN_DIR``: tables and figures from an lm-eval run (and, optionally, probe results).

Every output is re-parsed and re-scored from the logged samples (the numbers do not depend on which parser version
wrote the run), and the report is plain files: ``index.html`` and ``index.md`` with the figures beside them,
``summary.csv`` and ``report.json``, readable without this tool.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dataset_builder.grids.spec import DEFAULT_RESOLUTION, PATCH_SIZES
from g2m_base.errors import UsageError
from g2m_base.files import ensure_dir
from g2m_base.untrusted import term
from report import figures
from report.probes import load_probes, load_sweeps, sweep_sections
from report.report_page import write_report
from scoring.rescoring import patch_crossing
from scoring.rescoring.gap import report_rows as gap_rows
from scoring.rescoring.load import load_run
from scoring.rescoring.rescore import (
    TaskScores,
    by_task,
    cell_outcomes,
    color_bias,
    confusion_by_palette,
    heatmaps,
    summarise,
)
from scoring.rescoring.run_scores import score_both_ways, score_run
from scoring.runs import identity
from scoring.score import PROTOCOL_TITLES
from viewer.write import write_viewer


@dataclass(frozen=True)
class ReportOptions:
    patches: tuple[float, ...] = PATCH_SIZES
    input_size: float = float(DEFAULT_RESOLUTION)
    overlay_patch: float | None = None  # patch grid drawn on the heatmaps
    allow_partial: bool = False  # report a run whose samples do not match its record, marked partial everywhere
    compare_other_models: bool = False  # draw a gap between the run and a probe of another model (both named)

    def __post_init__(self) -> None:
        if not self.patches or any(p <= 0 for p in self.patches) or self.input_size <= 0:
            raise UsageError("patch sizes and the input size must be positive")
        if self.overlay_patch is not None and self.overlay_patch <= 0:
            raise UsageError("--overlay-patch must be positive")


def protocol_comparison(run, known: dict[str, list] | None = None) -> dict:
    """Scores per (N, C) under both protocols, each labelled with where its outputs came from.

    ``g2m``: the run's g2m tasks under G2M's protocol; ``paper``: its g2m_paper tasks under the paper's (its own
    budget); ``paper_rule_on_g2m``: the g2m outputs re-scored with the paper's parser and scoring (same outputs, G2M's
    budget: the parser's effect alone). ``known``: rows the caller already scored, by the keys above, used as they
    are rather than scored a second time.
    """
    ran = {s.protocol for s in run.samples}
    out = {}
    for key, protocol, source in (("g2m", "g2m", "g2m"), ("paper", "paper", "paper"),
                                  ("paper_rule_on_g2m", "paper", "g2m")):
        if source in ran:
            scored = (known or {}).get(key)
            if scored is None:
                scored = score_run(run, protocol, source)
            out[key] = {"overall": summarise(scored).as_dict(),
                        "tasks": {k: summarise(v).as_dict() for k, v in by_task(scored).items()}}
    return out


@dataclass(frozen=True)
class Report:
    """What ``build_report`` wrote: ``document`` is ``report.json`` as written (the tables, analyses and figures'
    names), ``overall`` the run's scores under its main protocol, ``run_read`` which results file was read and what
    else the folder holds."""

    document: dict
    overall: TaskScores
    output_dir: Path
    run_read: str

    @property
    def model(self) -> str:
        return self.document["model"]

    @property
    def partial(self) -> list[str]:
        """The tasks whose samples did not match the run's record (reported with ``allow_partial``)."""
        return self.document["partial"]

    @property
    def cut_by_spreadsheet(self) -> list[dict]:
        return self.document["cut_by_spreadsheet"]


@dataclass(frozen=True)
class _Probes:
    """The probe results a report draws against the run: curves (``(C, label) -> {N: accuracy}``, a probe of
    another model labelled with both), sweeps, and the labels of probes of another model."""

    curves: dict
    sweeps: list
    others: dict[str, str]
    named: set[str]


def build_report(run_dir: str | Path, out: str | Path | None = None, probes: str | Path | None = None,
                 options: ReportOptions = ReportOptions(), run: str | None = None) -> Report:
    """The report of the run ``run`` names in ``run_dir`` (``load_run``; default its newest), written to ``out``."""
    run = load_run(run_dir, allow_partial=options.allow_partial, run=run)
    out = ensure_dir(Path(out) if out else run.folder / "report")
    main, scored, protocols = _scores(run)
    tasks = protocols[main]["tasks"]  # the same rows: summarised once
    found = _probes(run, probes, options)
    partial = " (PARTIAL run)" if run.incomplete else ""
    model = term(run.model, 60) + partial  # every figure writes its text as text (escaped in SVG)
    outcomes = cell_outcomes(scored)
    conf = confusion_by_palette(scored)
    bias = {c: color_bias(m) for c, m in conf.items()}
    align = [patch_crossing.alignment(outcomes, p, options.input_size) for p in options.patches]
    figs = _figures(out, model, PROTOCOL_TITLES[main], tasks, found.curves, outcomes, conf, bias, align, options)
    sweep_rows, sweep_figs = sweep_sections(found.sweeps, tasks, out, f"{model} ({main} protocol)", found.others)
    figs.update(sweep_figs)
    strategies = {k: Counter(r.score.strategy for r in v) for k, v in by_task(scored).items()}
    document = {"model": run.model, "results_file": run.results_path.name, "other_runs": list(run.others),
                "protocol": main, "overall": protocols[main]["overall"], "provenance": provenance(run, tasks),
                "protocols": {k: {"overall": v["overall"], "tasks": [{"grid_size": n, "num_colors": c, **t}
                                                                      for (n, c), t in v["tasks"].items()]}
                              for k, v in protocols.items()},
                "tasks": [{"grid_size": n, "num_colors": c, **t, "parse_strategies": dict(strategies[(n, c)])}
                          for (n, c), t in tasks.items()],
                "patch_alignment": align, "confusion": {str(c): m.tolist() for c, m in conf.items()},
                "colour_bias": {str(c): b for c, b in bias.items()}, "failed_examples": failed_examples(run, scored),
                "digital_agnosia_gap": [r.as_dict() for r in gap_rows(found.curves, tasks, found.named)],
                "sweeps": sweep_rows, "figures": figs, "partial": list(run.incomplete),
                "cut_by_spreadsheet": [{"id": i, "chars": chars} for i, chars in run.cut]}
    document["viewer"] = write_viewer(out, run, scored, main, model)
    write_report(out, document, tasks, document["overall"], run, options)
    return Report(document, TaskScores(**document["overall"]), out, run.which())


def _scores(run) -> tuple[str, list, dict]:
    """The run's main protocol (G2M's when it has g2m tasks), its outputs scored under it, and every protocol's
    summaries (``protocol_comparison``), the main protocol's rows scored once."""
    main = "g2m" if any(s.protocol == "g2m" for s in run.samples) else "paper"
    if main == "g2m":
        scored, rule = score_both_ways(run)
        known = {"g2m": scored, "paper_rule_on_g2m": rule}
    else:
        scored = score_run(run, main)
        known = {main: scored}
    return main, scored, protocol_comparison(run, known)


def _probes(run, probes: str | Path | None, options: ReportOptions) -> _Probes:
    """The probe results in ``probes`` (none without it); a probe of another model is refused unless asked for,
    and then named with both models wherever its gap shows (legend, table, JSON)."""
    if not probes:
        return _Probes({}, [], {}, set())
    models: dict[str, dict] = {}
    curves = load_probes(probes, required=False, models=models)
    sweeps = load_sweeps(probes)
    if not curves and not sweeps:
        load_probes(probes)  # says what it looked for
    others = identity.other_models(identity.of_run(run),
                                   {**models, **{sw["file"]: sw["model_record"] for sw in sweeps}},
                                   options.compare_other_models, str(probes))
    named = {lab: f"{lab} ({others[lab]})" for lab in others}
    return _Probes({(c, named.get(lab, lab)): v for (c, lab), v in curves.items()}, sweeps, others,
                   set(named.values()))


def _figures(out: Path, model: str, protocol: str, tasks: dict, curves: dict, outcomes: dict, conf: dict,
             bias: dict, align: list, options: ReportOptions) -> dict[str, str]:
    """The report's four figures, each titled with the model and how its numbers were read (the paper's budget ends
    at N = 32); returns their file names."""
    hms = heatmaps(outcomes)
    counts = {n: len(o.parsed) for n, o in outcomes.items()}
    return {"accuracy": figures.accuracy_vs_n(tasks, out / "accuracy_vs_n.png", curves,
                                              f"{model}: accuracy against grid size\n{protocol}"),
            "heatmaps": figures.heatmap_grid(hms, counts, out / "heatmaps.png", f"{model}: accuracy of each cell\n"
                                             f"{protocol}", options.overlay_patch, options.input_size),
            "confusion": figures.confusion(conf, bias, out / "confusion.png",
                                           f"{model}: colour confusion per palette size\n{protocol}"),
            "alignment": figures.alignment(align, out / "patch_alignment.png",
                                           f"{model}: patch alignment within each grid size\n{protocol}")}


def provenance(run, tasks: dict) -> dict:
    """What the banner says: which data (the release at a revision, or a local build and its scale), how many grids
    per (N, C), which harness and backend, which protocol."""
    g2m = run.results.get("g2m") or {}
    data = g2m.get("data") or {}
    params = data.get("build_params") if isinstance(data.get("build_params"), dict) else {}
    counts = [t["n"] for t in tasks.values()]
    cfg = run.results.get("config") or {}
    return {"data": str(data.get("source") or "unknown"), "revision": data.get("revision"),
            "scale": params.get("scale", 1.0 if data.get("revision") else None),
            "content_sha256": data.get("content_sha256"), "per_cell": [min(counts), max(counts)] if counts else [0, 0],
            "harness": str(g2m.get("harness") or "lm-eval"), "backend": str(cfg.get("model") or "unknown"),
            "protocols": sorted({s.protocol for s in run.samples}), "task_version": g2m.get("task_version")}


def failed_examples(run, scored: list, per_n: int = 3, chars: int = 400) -> dict[str, list[dict]]:
    """A few answers per N that were not exactly right, the most telling first (failed requests, parse failures,
    truncations, then the lowest cell accuracy) and from different palettes where there are: the start of the
    text, how it was read, and why not."""
    text = {s.id: s.output for s in run.samples}
    wrong: dict[int, list] = {}
    for r in scored:
        if r.score.exact_match != 1.0:
            wrong.setdefault(r.grid_size, []).append(r)
    out: dict[str, list[dict]] = {}
    for n, rows in sorted(wrong.items()):
        rows.sort(key=lambda r: (not r.score.request_failed, not r.score.parse_failed, not r.score.truncated,
                                 r.score.cell_accuracy, r.id))
        picked, palettes = [], set()
        for r in rows + rows:  # first pass: one per palette; second: fill up
            if len(picked) == per_n:
                break
            if r not in picked and (r.num_colors not in palettes or len(palettes) >= len({x.num_colors for x in rows})):
                picked.append(r)
                palettes.add(r.num_colors)
        out[str(n)] = [{"id": r.id, "strategy": r.score.strategy, "reason": r.score.reason or "",
                        "cell_accuracy": r.score.cell_accuracy, "truncated": r.score.truncated,
                        "request_failed": r.score.request_failed,
                        "chars": len(text.get(r.id, "")),
                        "text": text.get(r.id, "")[:chars] + (" ..." if len(text.get(r.id, "")) > chars else "")}
                       for r in picked]
    return out
