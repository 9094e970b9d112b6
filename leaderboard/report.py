"""``g2m report RUN_DIR``: tables and figures from an lm-eval run (and, optionally, probe results).

Every output is re-parsed and re-scored from the logged samples (the numbers do not depend on which parser version
wrote the run), and the report is plain files: ``index.html`` and ``index.md`` with the figures beside them,
``summary.csv`` and ``report.json``, readable without this tool.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dataset_builder.errors import UsageError
from dataset_builder.fsutil import atomic_write_text, ensure_dir
from dataset_builder.spec import DEFAULT_RESOLUTION, PATCH_SIZES, PROBE_RESULT_FORMAT
from dataset_builder.untrusted import md as md_text
from dataset_builder.untrusted import plot, strict_json
from harness_tasks.paper import STRATEGY_NAMES as PAPER_STRATEGY_NAMES
from harness_tasks.parsing import STRATEGY_NAMES

from . import figures
from . import geometry as geo
from .html import esc, fmt, fmt_ci, md_table, page, table
from .runs import load_run
from .scoring import by_task, confusion, heatmaps, score_output, summarise


@dataclass(frozen=True)
class ReportOptions:
    patches: tuple[float, ...] = PATCH_SIZES
    input_size: float = float(DEFAULT_RESOLUTION)
    overlay_patch: float | None = None  # patch grid drawn on the heatmaps

    def __post_init__(self) -> None:
        if not self.patches or any(p <= 0 for p in self.patches) or self.input_size <= 0:
            raise UsageError("patch sizes and the input size must be positive")
        if self.overlay_patch is not None and self.overlay_patch <= 0:
            raise UsageError("--overlay-patch must be positive")


def load_probes(folder: str | Path) -> dict[tuple[int, str], dict[int, float]]:
    """(C, readout) -> {N: test cell accuracy} from every ``result.json`` of ``g2m probe`` below ``folder``.

    Files with another format are skipped; a file that claims the probe format but is malformed is an error naming it.
    """
    curves: dict[tuple[int, str], dict[int, float]] = {}
    paths = sorted(Path(folder).rglob("result.json"))
    for p in paths:
        try:
            r = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, RecursionError, UnicodeDecodeError, OSError):
            continue
        if not (isinstance(r, dict) and r.get("format") == PROBE_RESULT_FORMAT):
            continue
        try:
            n, c, acc = r["grid_size"], r["num_colors"], float(r["test"]["cell_accuracy"])
            label = f"{Path(str(r['encoder']['name'])).name} {r['encoder']['readout']}"
            if type(n) is not int or type(c) is not int or not 0 <= acc <= 1:
                raise ValueError("grid_size/num_colors/cell_accuracy out of range")
        except (KeyError, TypeError, ValueError) as e:
            raise UsageError(f"{p}: a malformed probe result ({type(e).__name__}: {e})") from None
        curves.setdefault((c, label), {})[n] = acc
    if not curves:
        raise UsageError(f"no g2m probe results (result.json, {PROBE_RESULT_FORMAT}) under {folder}")
    return curves


def score_run(run, protocol: str = "g2m", outputs_of: str | None = None) -> list:
    """The samples of the run's ``outputs_of`` tasks (default: ``protocol``'s own), scored under ``protocol``."""
    source = outputs_of or protocol
    return [score_output(s.id, s.output, s.target, s.num_colors, s.finish_reason, protocol=protocol)
            for s in run.samples if s.protocol == source]


def protocol_comparison(run) -> dict:
    """Scores per (N, C) under both protocols, each labelled with where its outputs came from.

    ``g2m``: the run's g2m tasks under G2M's protocol; ``paper``: its g2m_paper tasks under the paper's (its own
    budget); ``paper_rule_on_g2m``: the g2m outputs re-scored with the paper's parser and scoring (same outputs, G2M's
    budget: the parser's effect alone).
    """
    ran = {s.protocol for s in run.samples}
    out = {}
    for key, protocol, source in (("g2m", "g2m", "g2m"), ("paper", "paper", "paper"),
                                  ("paper_rule_on_g2m", "paper", "g2m")):
        if source in ran:
            scored = score_run(run, protocol, source)
            out[key] = {"overall": summarise(scored), "tasks": {k: summarise(v) for k, v in by_task(scored).items()}}
    return out


def build_report(run_dir: str | Path, out: str | Path | None = None, probes: str | Path | None = None,
                 options: ReportOptions = ReportOptions()) -> dict:
    run = load_run(run_dir)
    out = ensure_dir(Path(out) if out else run.folder / "report")
    main = "g2m" if any(s.protocol == "g2m" for s in run.samples) else "paper"
    scored = score_run(run, main)
    protocols = protocol_comparison(run)
    tasks = {k: summarise(v) for k, v in by_task(scored).items()}
    overall = summarise(scored)
    hms = heatmaps(scored)
    counts = {n: sum(1 for r in scored if r.grid_size == n) for n in hms}
    curves = load_probes(probes) if probes else {}
    figs = {"accuracy": figures.accuracy_vs_n(tasks, out / "accuracy_vs_n.png", curves)}
    for n, hm in hms.items():
        figs[f"heatmap_n{n:02d}"] = figures.heatmap(hm, out / f"heatmap_n{n:02d}.png", f"{plot(run.model, 60)}: N={n}, "
                                                    f"{counts[n]} grids", options.overlay_patch, options.input_size)
    conf = confusion(scored)
    figs["confusion"] = figures.confusion(conf, out / "confusion.png")
    align = [geo.alignment(hms, counts, p, options.input_size) for p in options.patches]
    figs["alignment"] = figures.alignment(align, out / "patch_alignment.png")
    gap = [{"grid_size": n, "num_colors": c, "probe": label, "probe_cell_accuracy": curve[n],
            "end_to_end_cell_accuracy": tasks[(n, c)]["cell_accuracy"], "gap": curve[n] - tasks[(n, c)]["cell_accuracy"]}
           for (c, label), curve in sorted(curves.items()) for n in sorted(curve) if (n, c) in tasks]
    strategies = {k: Counter(r.score.strategy for r in v) for k, v in by_task(scored).items()}
    report = {"model": run.model, "results_file": run.results_path.name, "protocol": main, "overall": overall,
              "protocols": {k: {"overall": v["overall"],
                                "tasks": [{"grid_size": n, "num_colors": c, **t} for (n, c), t in v["tasks"].items()]}
                            for k, v in protocols.items()},
              "tasks": [{"grid_size": n, "num_colors": c, **s, "parse_strategies": dict(strategies[(n, c)])}
                        for (n, c), s in tasks.items()],
              "patch_alignment": align, "confusion": conf.tolist(), "digital_agnosia_gap": gap, "figures": figs}
    _write(out, report, tasks, overall, align, gap, figs, run, options)
    report["output_dir"] = str(out)
    return report


PROTOCOL_NOTE = ("G2M: G2M's parser with partial credit, G2M's answer budget; strict: the same parse, 0 cells "
                 "unless exactly N x N (the authors' rule). Paper: the authors' parser and scoring on the run's "
                 "g2m_paper tasks (their budget, min(4N^2+20N+50, 2048)). Paper rule on G2M outputs: the run's g2m "
                 "outputs re-scored with the authors' parser and scoring (their rule, G2M's budget).")
PROTOCOL_COLUMNS = (("g2m", "G2M", ("exact_match", "cell_accuracy", "cell_accuracy_strict")),
                    ("paper", "paper", ("exact_match", "cell_accuracy")),
                    ("paper_rule_on_g2m", "paper rule on G2M outputs", ("exact_match", "cell_accuracy")))


def protocol_rows(protocols: dict) -> tuple[list[str], list[list[str]]]:
    """The side-by-side table: one row per (N, C), a column group per protocol the run has."""
    present = [(k, label, metrics) for k, label, metrics in PROTOCOL_COLUMNS if k in protocols]
    headers = ["N", "C"] + [f"{label} {m.replace('cell_accuracy_strict', 'strict cell').replace('_', ' ')}"
                            for _, label, metrics in present for m in metrics]
    by_key = {k: {(t["grid_size"], t["num_colors"]): t for t in protocols[k]["tasks"]} for k, _, _ in present}
    cells = sorted({nc for v in by_key.values() for nc in v})
    rows = [[str(n), str(c)] + [fmt(by_key[k].get((n, c), {}).get(m)) for k, _, metrics in present for m in metrics]
            for n, c in cells]
    rows.append(["all", ""] + [fmt(protocols[k]["overall"].get(m)) for k, _, metrics in present for m in metrics])
    return headers, rows


def _write(out: Path, report: dict, tasks: dict, overall: dict, align: list, gap: list, figs: dict, run,
           options: ReportOptions) -> None:
    rates = ["exact_match", "cell_accuracy", "parse_failed", "truncated"]
    if overall.get("request_failed"):
        rates.append("request_failed")  # answers that never came: shown only when there are some
    headers = ["N", "C", "n", *(f"{k.replace('_', ' ')} [95% CI]" for k in rates)]
    rows = [[str(n), str(c), str(s["n"]), *(fmt_ci(s[k], s[f"{k}_ci"]) for k in rates)] for (n, c), s in tasks.items()]
    rows.append(["all", "", str(overall["n"]), *(fmt_ci(overall[k], overall[f"{k}_ci"]) for k in rates)])
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["grid_size", "num_colors", "n", "exact_match", "cell_accuracy", "parse_failed", "truncated",
                    "request_failed"])
        for (n, c), s in tasks.items():
            w.writerow([n, c, s["n"], s["exact_match"], s["cell_accuracy"], s["parse_failed"], s["truncated"],
                        s["request_failed"]])
    atomic_write_text(out / "report.json", strict_json(report, indent=1) + "\n")
    align_rows = [[f"{a['patch']:g}", b["bin"], str(b["cells"]), fmt(b["cell_accuracy"])] for a in align for b in a["bins"]]
    gap_rows = [[str(g["grid_size"]), str(g["num_colors"]), g["probe"], fmt(g["probe_cell_accuracy"]),
                 fmt(g["end_to_end_cell_accuracy"]), fmt(g["gap"])] for g in gap]
    heat = [k for k in figs if k.startswith("heatmap_")]
    sections = [
        ("Scores by task", "Exact match, cell accuracy, parse failures and truncation per (N, C), re-scored from the "
         "logged samples. Intervals: Wilson for rates, seeded bootstrap for cell accuracy.", headers, rows),
        ("Patch alignment", "Cell accuracy against the share of each cell that lies outside its dominant patch, "
         f"for a model that sees the image at {options.input_size:g} px.",
         ["patch px", "share outside dominant patch", "cells", "cell accuracy"], align_rows),
    ]
    sections.append(("Protocols side by side", PROTOCOL_NOTE, *protocol_rows(report["protocols"])))
    names = list(STRATEGY_NAMES if report["protocol"] == "g2m" else PAPER_STRATEGY_NAMES)
    sections.append(("How answers were read", f"Per task ({report['protocol']} protocol), how many answers each parse "
                     "strategy read (the first that finds a matrix wins); none is a parse failure.", ["N", "C", *names],
                     [[str(t["grid_size"]), str(t["num_colors"]), *(str(t["parse_strategies"].get(k, 0)) for k in names)]
                      for t in report["tasks"]]))
    if gap:
        sections.append(("Digital Agnosia gap", "Probe on the frozen encoder against the end-to-end model, same N and C.",
                         ["N", "C", "probe", "probe cell acc", "end-to-end cell acc", "gap"], gap_rows))
    md = [f"# G2M report: {md_text(run.model)}", "", f"Run: {md_text(run.results_path.name)}, {len(run.samples):,} samples.", "",
          f"![accuracy against N]({figs['accuracy']})", ""]
    body = [f"<h1>G2M report: {esc(run.model)}</h1>",
            f"<p class=\"muted\">Run {esc(run.results_path.name)}, {len(run.samples):,} samples.</p>",
            f"<img src=\"{esc(figs['accuracy'])}\" alt=\"accuracy against N\">"]
    for title, text, h, r in sections:
        md += [f"## {title}", "", text, "", md_table(h, r), ""]
        body += [f"<h2>{esc(title)}</h2><p>{esc(text)}</p>", table(h, r, text_cols=0)]
    for title, names in (("Per-cell heatmaps", heat), ("Patch alignment", ["alignment"]), ("Colour confusion", ["confusion"])):
        md += [f"## {title}", ""] + [f"![{k}]({figs[k]})" for k in names] + [""]
        body += [f"<h2>{esc(title)}</h2>"] + [f"<img src=\"{esc(figs[k])}\" alt=\"{esc(k)}\">" for k in names]
    atomic_write_text(out / "index.md", "\n".join(md) + "\n")
    atomic_write_text(out / "index.html", page(f"G2M report: {run.model}", "\n".join(body)))
