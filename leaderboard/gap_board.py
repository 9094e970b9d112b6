"""The Digital Agnosia gap on the board: the gap tab of the index, its columns in the CSV and markdown,
the sweep maps and tables of a model page, and the check a cached row's gap must pass.

A row's gap (``scoring.rescoring.gap.summary``) holds only re-scored numbers: each probe read-out re-scored against the
seeds' truth, the end-to-end cell accuracy re-scored from the same submission's outputs. The per-point numbers a
submission carries beside its read-outs (``points``) are never shown nor drawn: a forged one changes nothing here.
Every string from a submission (point names, the name it was probed as) goes through the templates (autoescape).
"""

from __future__ import annotations

import math
from pathlib import Path

from drawing.html import fmt, fmt_ci, render
from g2m_base.untrusted import term
from scoring.rescoring.gap import HEADLINE_KEYS, READOUT_KEYS, SECTION_KEYS
from submission.probe_section import ROLES

TEMPLATES = Path(__file__).with_name("templates")
GAP_VIEW, GAP_BOARD = "gap", "board-gap"
#: (header, higher is better or None for a column that does not sort by number)
GAP_HEADERS = (("probed config", None), ("probe cell accuracy", True), ("end-to-end cell accuracy", True),
               ("gap", True))
CSV_HEADERS = ["probe config", "probe scale", "probe test rows", "probe cell", "end-to-end cell", "gap"]
STAGES = ("tower", "projector", "deepstack", "llm", "probe")


def _anchor(i: int) -> str:
    return f"sweep-{i}"


def gap_row(r: dict) -> dict:
    """A row of the gap board as the page's data carries it: ``gap_row.html.j2``'s HTML and its columns' sort keys
    (empty for a model without probes, which sorts last)."""
    h = (r.get("gap") or {}).get("headline")
    values = {"name": r["name"], "kind": r["kind"], "page": r["page"], "h": h,
              "link": f"{r['page']}#{_anchor(h['section'])}" if h else None}
    if h:
        cells = [[f"{h['grid_size']:03d}{h['num_colors']:03d}", f"N = {h['grid_size']}, C = {h['num_colors']}"],
                 [f"{h['probe_cell_accuracy']:.6f}", f"{fmt(h['probe_cell_accuracy'])} ({h['point']}, {h['role']})"],
                 *([f"{v:.6f}", fmt(v)] if v is not None else ["", "-"]
                   for v in (h["end_to_end_cell_accuracy"], h["gap"]))]
    else:
        cells = [["", "-"]] * 4
    html = render(TEMPLATES, "gap_row.html.j2", **values, cells=cells)
    return {"html": html, "keys": [r["name"], *(v for v, _ in cells), None]}


def gap_order(rows: list[dict]) -> list[int]:
    """Rows by gap, largest first; rows without a gap (no probes, or no end-to-end task at the probed N and C) last,
    in the order they came."""
    def key(i: int) -> tuple[bool, float]:
        g = ((rows[i].get("gap") or {}).get("headline") or {}).get("gap")
        return (g is None, -(g or 0.0))
    return sorted(range(len(rows)), key=key)


def csv_cells(r: dict) -> list[str]:
    """The gap columns of the CSV (6 decimals) and markdown: probe config, its scale and test rows, probe cell,
    end-to-end cell, gap; from the probes on the full config, else (scale below 1, so a reader sees it) a scaled
    build's."""
    g = r.get("gap") or {}
    h = g.get("headline") or g.get("scaled")
    if not h:
        return [""] * len(CSV_HEADERS)
    return [h["config"], f"{h['scale']:g}", str(h["rows"]), *("" if v is None else f"{v:.6f}" for v in
                                                               (h["probe_cell_accuracy"], h["end_to_end_cell_accuracy"],
                                                                h["gap"]))]


def draw_sweeps(row: dict, assets: Path) -> list[dict]:
    """Each probe section's sweep map, drawn from its re-scored read-outs only (in depth order, stage and layer from
    the submitted point of the same name), with the row's end-to-end cell accuracy at its (N, C) as the reference
    line; and its table. What ``model.html.j2`` shows under "Digital Agnosia gap"."""
    from probing.figures.sweep import plot_sweep

    out = []
    for i, s in enumerate((row.get("gap") or {}).get("sections", [])):
        points = [{"point": q["point"], "stage": q["stage"], "layer": q["layer"], "readout": None,
                   "cell_accuracy": q["cell_accuracy"], "cell_accuracy_ci": q["cell_accuracy_ci"],
                   "exact_match": q["exact_match"]} for q in s["readouts"]]
        ref = None if s["end_to_end"] is None else {"cell_accuracy": s["end_to_end"],
                                                    "source": "its answers, G2M protocol"}
        plot_sweep(points, assets / s["figure"], f"{term(row['name'], 60)} on {s['config']}: re-scored probe "
                   "read-outs by depth", 1 / s["num_colors"], ref, n=s["rows"])
        out.append({"id": _anchor(i), "figure": s["figure"], "kind": s["kind"], "config": s["config"],
                    "scale": f"{s['scale']:g}", "test_rows": f"{s['rows']:,}",
                    "grid_size": s["grid_size"], "num_colors": s["num_colors"], "probed_as": s["probed_as"],
                    "end_to_end": fmt(s["end_to_end"]),
                    "rows": [[q["point"], q["role"], fmt_ci(q["cell_accuracy"], q["cell_accuracy_ci"]),
                              fmt_ci(q["exact_match"], q["exact_match_ci"]), fmt(s["end_to_end"]), fmt(q["gap"])]
                             for q in s["readouts"]]})
    return out


def _rate(v: object, none_ok: bool = False) -> bool:
    if v is None:
        return none_ok
    return isinstance(v, float) and math.isfinite(v) and 0 <= v <= 1


def _signed(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isfinite(v) and -1 <= v <= 1)


def _interval(v: object) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_rate(x) for x in v)


def _text(v: object) -> bool:
    return isinstance(v, str) and 0 < len(v) <= 200


def well_formed(g: object, page_slug: str, files: set[str]) -> bool:
    """A cached row's gap is exactly of the kind ``scoring.rescoring.gap.summary`` writes: None, or its sections (each
    read-out with its numbers in range) and a headline that is one of them; every sweep map it names is on the page's
    list."""
    if g is None:
        return True
    if not isinstance(g, dict) or set(g) != {"headline", "scaled", "sections"} or not isinstance(g["sections"], list):
        return False
    secs = g["sections"]
    if not 1 <= len(secs) <= 16:
        return False
    for i, s in enumerate(secs):
        if not isinstance(s, dict) or set(s) != set(SECTION_KEYS) or s["kind"] not in ("sweep", "probe"):
            return False
        if not (_text(s["config"]) and s["config"].startswith("probe_") and _text(s["probed_as"])
                and type(s["grid_size"]) is int and type(s["num_colors"]) is int and _rate(s["end_to_end"], True)
                and isinstance(s["scale"], float) and 0 < s["scale"] <= 1 and type(s["rows"]) is int and s["rows"] > 0
                and s["figure"] == f"sweep_{i}.png" and f"models/{page_slug}/{s['figure']}" in files):
            return False
        ros = s["readouts"]
        if not isinstance(ros, list) or not 1 <= len(ros) <= 12:
            return False
        for q in ros:
            if not (isinstance(q, dict) and set(q) == set(READOUT_KEYS) and _text(q["point"]) and q["role"] in ROLES
                    and q["stage"] in STAGES and (q["layer"] is None or type(q["layer"]) is int)
                    and _rate(q["cell_accuracy"]) and _rate(q["exact_match"]) and _interval(q["cell_accuracy_ci"])
                    and _interval(q["exact_match_ci"]) and _signed(q["gap"])):
                return False
    return _headline_of(g["headline"], secs, scaled=False) and _headline_of(g["scaled"], secs, scaled=True)


def _headline_of(h: object, secs: list[dict], scaled: bool) -> bool:
    """``h`` is None, or one read-out of one of ``secs`` (a full-config one, or with ``scaled`` a scaled one)."""
    if h is None:
        return True
    if not isinstance(h, dict) or set(h) != set(HEADLINE_KEYS) or type(h["section"]) is not int \
            or not 0 <= h["section"] < len(secs):
        return False
    s = secs[h["section"]]
    match = [q for q in s["readouts"] if q["point"] == h["point"]]
    return (len(match) == 1 and h["role"] == match[0]["role"] and h["probe_cell_accuracy"] == match[0]["cell_accuracy"]
            and h["gap"] == match[0]["gap"] and h["end_to_end_cell_accuracy"] == s["end_to_end"]
            and (s["scale"] < 1.0) == scaled and (h["scale"], h["rows"]) == (s["scale"], s["rows"])
            and (h["config"], h["grid_size"], h["num_colors"]) == (s["config"], s["grid_size"], s["num_colors"]))


SCALED_HEADERS = ["model", "probed config", "scale", "test rows", "probe cell accuracy", "end-to-end cell accuracy",
                  "gap"]


def scaled_rows(rows: list[dict]) -> list[list[str]]:
    """The gap tab's table of probes on scaled builds (never ranked): each row's best scaled probe, with its scale and
    row count, so a reader sees how little data stands behind it."""
    out = []
    for r in rows:
        h = (r.get("gap") or {}).get("scaled")
        if h:
            out.append([r["name"], f"{h['config']} (N = {h['grid_size']}, C = {h['num_colors']})", f"{h['scale']:g}",
                        f"{h['rows']:,}", f"{fmt(h['probe_cell_accuracy'])} ({h['point']}, {h['role']})",
                        fmt(h["end_to_end_cell_accuracy"]), fmt(h["gap"])])
    return out
