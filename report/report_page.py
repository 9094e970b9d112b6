"""The report's files: ``index.html`` and ``index.md`` (figures beside them), ``summary.csv`` with its intervals, and
``report.json``. A banner says what the numbers stand on (data, scale, grids per cell, harness, backend, protocol).
Every value from a run is escaped (HTML by the page's template, markdown by ``untrusted.md``); answer texts
are shown as text, never markup.
"""

from __future__ import annotations

import csv
from pathlib import Path

from dataset_builder.grids.spec import PALETTE, RELEASE_CONTENT_SHA256
from drawing.html import fmt, fmt_ci, md_table, render
from g2m_base.files import atomic_open, atomic_write_text
from g2m_base.untrusted import md as md_text
from g2m_base.untrusted import strict_json, term
from scoring.paper import STRATEGY_NAMES as PAPER_STRATEGY_NAMES
from scoring.parsing import STRATEGY_NAMES
from scoring.rescoring.patch_crossing import INTERVAL, in_words
from scoring.rescoring.rescore import NO_COLOUR
from scoring.runs.vlmevalkit import EXCEL_CELL_LIMIT
from scoring.score import METRICS

TEMPLATES = Path(__file__).with_name("templates")

#: A table of more rows than this is folded on the page (its summary line names it and its rows); shorter ones open.
FOLD_ROWS = 12
#: The per-cell rates of the CSV and the tables: every metric but the strict cell accuracy (a column of its own).
RATES = tuple(m for m in METRICS if m != "cell_accuracy_strict")

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


def banner(p: dict) -> str:
    """One line: what the numbers stand on."""
    data = f"{p['data']}@{p['revision']}" if p.get("revision") else f"local build {p['data']}"
    if p.get("content_sha256") == RELEASE_CONTENT_SHA256:
        data += " (its rows hash to the release's)"
    elif p.get("content_sha256"):
        data += f" (rows hash {p['content_sha256'][:12]}, not the release's)"
    scale = "" if p.get("scale") in (None, 1, 1.0) else f" at scale {p['scale']:g} (a subset: not the full benchmark)"
    lo, hi = p["per_cell"]
    per_cell = f"{lo} grids per (N, C)" if lo == hi else f"{lo}-{hi} grids per (N, C)"
    return (f"Data: {data}{scale}; {per_cell}; harness {p['harness']}, backend {p['backend']}; "
            f"protocol{'s' if len(p['protocols']) > 1 else ''} {', '.join(p['protocols'])}; task version "
            f"{p.get('task_version')}.")


def _csv(out: Path, tasks: dict) -> None:
    with atomic_open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        head = ["grid_size", "num_colors", "n"]
        for k in RATES:
            head += [k, f"{k}_ci_low", f"{k}_ci_high"]
        w.writerow(head)
        for (n, c), s in tasks.items():
            w.writerow([n, c, s["n"], *(v for k in RATES for v in (s[k], *s[f"{k}_ci"]))])


def _difference(r: dict) -> str:
    """A patch-alignment difference with its 95% interval over grids (``patch_crossing.in_words``)."""
    return in_words(r["difference"], r.get("difference_ci"))


def _sections(report: dict, tasks: dict, overall: dict, options) -> list[tuple[str, str, list, list, list[str]]]:
    """(title, text, table headers, table rows, figure keys) in reading order."""
    rates = [k for k in RATES if k != "request_failed" or overall.get("request_failed")]
    headers = ["N", "C", "n", *(f"{k.replace('_', ' ')} [95% CI]" for k in rates)]
    rows = [[str(n), str(c), str(s["n"]), *(fmt_ci(s[k], s[f"{k}_ci"]) for k in rates)] for (n, c), s in tasks.items()]
    rows.append(["all", "", str(overall["n"]), *(fmt_ci(overall[k], overall[f"{k}_ci"]) for k in rates)])
    names = list(STRATEGY_NAMES if report["protocol"] == "g2m" else PAPER_STRATEGY_NAMES)
    align_rows = []
    for a in report["patch_alignment"]:
        align_rows += [[f"{a['patch']:g}", str(r["grid_size"]), f"{r['grids_compared']} of {r['grids']}",
                        f"{r['mean_crossing']:.2f}", fmt(r["less_crossed_accuracy"]), fmt(r["more_crossed_accuracy"]),
                        _difference(r), f"{fmt(r['less_crossed_missing'])} / {fmt(r['more_crossed_missing'])}",
                        fmt(r["correlation"])] for r in a["per_n"]]
        align_rows.append([f"{a['patch']:g}", "all", "", "", "", "", _difference(a), "", ""])
    bias_rows = [[c, PALETTE[i].name, fmt(b["bias"][i]), *(fmt(b["no_colour"][k][i]) for k in NO_COLOUR)]
                 for c, b in report["colour_bias"].items() for i in range(int(c))]
    out = [
        ("Scores by task", "Exact match, cell accuracy, parse failures and truncation per (N, C), re-scored from the "
         "logged samples. Intervals: Wilson for rates, seeded bootstrap for cell accuracy.", headers, rows, []),
        ("Protocols side by side", PROTOCOL_NOTE, *protocol_rows(report["protocols"]), []),
        ("How answers were read", f"Per task ({report['protocol']} protocol), how many answers each parse strategy "
         "read (the first that finds a matrix wins); none is a parse failure.", ["N", "C", *names],
         [[str(t["grid_size"]), str(t["num_colors"]), *(str(t["parse_strategies"].get(k, 0)) for k in names)]
          for t in report["tasks"]], []),
        ("Per-cell accuracy", "Each cell's accuracy over every grid of that size (palettes pooled), drawn where the "
         "cell is in the image.", [], [], ["heatmaps"]),
        ("Patch alignment", "Does a cell that crosses patch boundaries get read worse? Compared within each grid size "
         "(pooling sizes would mistake the grid size's effect for alignment) and over answered cells only (a cell "
         "an answer never reached is missing, shown apart: truncation is not misreading): the cells are split at the "
         "median share outside their dominant patch, for a model that sees the image at "
         f"{options.input_size:g} px. Difference: more crossed minus less crossed accuracy, with its 95% "
         f"{INTERVAL['method']} ({INTERVAL['resamples']} resamples, seeded), given from "
         f"{INTERVAL['minimum_grids']} grids with answers up; \"none beyond noise\" where the interval holds 0; "
         "n/a where all cells cross alike or none was answered. The row \"all\" is the mean over the compared "
         "sizes, weighted by grids compared.",
         ["patch px", "N", "grids compared", "mean share crossing", "less crossed", "more crossed",
          "difference [95% CI]", "missing (less / more crossed)", "r"],
         align_rows,
         ["alignment"]),
        ("Colour confusion", "Per palette size, every cell counted once. The confusion and over/under prediction "
         "count only cells read as a palette colour; a value outside the palette, a missing cell (past what the "
         "answer wrote) and an unparseable answer's cells are each their own share, apart.",
         ["C", "colour", "predicted / actual - 1 (cells read as a colour)", *(f"{k} share" for k in NO_COLOUR)],
         bias_rows, ["confusion"]),
    ]
    if report["digital_agnosia_gap"]:
        other = any(g.get("other_model") for g in report["digital_agnosia_gap"])
        out.append(("Digital Agnosia gap", "Probe on the frozen encoder against the end-to-end model, same N and C."
                    + (" OTHER MODELS, compared on request (--compare-other-models): each row names both." if other
                       else ""),
                    ["N", "C", "probe", "probe cell acc", "end-to-end cell acc", "gap"],
                    [[str(g["grid_size"]), str(g["num_colors"]), g["probe"], fmt(g["probe_cell_accuracy"]),
                      fmt(g["end_to_end_cell_accuracy"]), fmt(g["gap"])] for g in report["digital_agnosia_gap"]], []))
    for i, sw in enumerate(report.get("sweeps") or []):
        e2e = sw["end_to_end_cell_accuracy"]
        out.append((f"Where the grid is lost: {sw['model']} on {sw['config']}"
                    + (f" (ANOTHER MODEL: {sw['other_model']})" if sw.get("other_model") else ""),
                    "A probe at every depth of the model (g2m probe sweep): each vision block, the projector and each "
                    "LLM layer at the image positions, against this run's end-to-end cell accuracy at the same N and C"
                    + (f" ({fmt(e2e)})." if e2e is not None else " (the run has no task there)."),
                    ["point", "stage", "layer", "probe cell acc [95% CI]", "exact match", "gap to end-to-end"],
                    [[q["point"], q["stage"], "" if q["layer"] is None else str(q["layer"]),
                      fmt_ci(q["cell_accuracy"], q["cell_accuracy_ci"]), fmt(q["exact_match"]), fmt(q["gap"])]
                     for q in sw["points"]], [f"sweep_{i}"]))
    return out


def _how(e: dict) -> str:
    """One line on an answer that was not exact: its id, how it was read, why not."""
    return (f"{e['id']}: read by {e['strategy']}, cell accuracy {fmt(e['cell_accuracy'])}"
            + (", truncated" if e["truncated"] else "") + (", request failed" if e["request_failed"] else "")
            + (f"; {e['reason']}" if e["reason"] else "") + f"; {e['chars']:,} characters")


def _examples(report: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """A few answers per N that were not exactly right: (N, [(what it was, its text)])."""
    return [(n, [(_how(e), e["text"]) for e in items])
            for n, items in sorted(report["failed_examples"].items(), key=lambda kv: int(kv[0])) if items]


def _examples_md(examples: list[tuple[str, list[tuple[str, str]]]]) -> list[str]:
    md = ["## Answers that were not exact", ""] if examples else []
    for n, items in examples:
        md.append(f"### N = {n}")
        for how, text in items:
            md += [md_text(how, 500), "", "```text", term(text, 1000).replace("```", "`\u200b``"), "```", ""]
    return md


def cut_note(report: dict) -> str:
    """One paragraph naming every row the spreadsheet format cut (empty when none was)."""
    cut = report.get("cut_by_spreadsheet") or []
    if not cut:
        return ""
    ids = ", ".join(f"{c['id']} ({c['chars']:,} characters)" for c in cut)
    return (f"{len(cut):,} prediction{'s' if len(cut) > 1 else ''} stop at exactly {EXCEL_CELL_LIMIT:,} characters, "
            f"the limit of an .xlsx cell: VLMEvalKit's spreadsheet cut {'them' if len(cut) > 1 else 'it'}, not the "
            f"model, so {'they are' if len(cut) > 1 else 'it is'} left out of every number here (not counted as parse "
            f"failures): {ids}. Rerun VLMEvalKit with PRED_FORMAT=tsv and report the .tsv, which keeps every "
            f"character.")


def write_report(out: Path, report: dict, tasks: dict, overall: dict, run, options) -> None:
    _csv(out, tasks)
    atomic_write_text(out / "report.json", strict_json(report, indent=1) + "\n")
    figs = report["figures"]
    line = banner(report["provenance"])
    if report.get("partial"):  # said before any number: these scores do not cover what the run was asked to do
        line = (f"PARTIAL RUN: {len(report['partial'])} task(s) are incomplete (first: {report['partial'][0]}); "
                f"every number below covers only the samples that were logged. {line}")
    title = f"{run.model} (PARTIAL run)" if report.get("partial") else run.model
    cut = cut_note(report)
    md = [f"# G2M report: {md_text(title)}", "", f"> {md_text(line, 2000)}", "",
          *([f"> **Cut by the spreadsheet:** {md_text(cut, 100_000)}", ""] if cut else []),
          f"Run: {md_text(run.results_path.name)}, {len(run.samples):,} samples.", "",
          *([f"Every sample, one at a time: [{report['viewer']}]({report['viewer']})", ""] if report.get("viewer")
            else []),
          f"![accuracy against N]({figs['accuracy']})", ""]
    sections = []
    for heading, text, h, r, keys in _sections(report, tasks, overall, options):
        md += [f"## {heading}", "", text, ""] + [f"![{k}]({figs[k]})"
                                                 for k in keys] + ([md_table(h, r), ""] if h else [""])
        sections.append({"title": heading, "text": text, "figures": [figs[k] for k in keys], "headers": h, "rows": r})
    examples = _examples(report)
    atomic_write_text(out / "index.md", "\n".join(md + _examples_md(examples)) + "\n")
    atomic_write_text(out / "index.html", render(TEMPLATES, "report.html.j2", title=f"G2M report: {run.model}",
                                                 heading=title, banner=line, cut=cut,
                                                 results_file=run.results_path.name, samples=len(run.samples),
                                                 accuracy_figure=figs["accuracy"], sections=sections,
                                                 examples=examples, viewer=report.get("viewer"),
                                                 fold_rows=FOLD_ROWS))
