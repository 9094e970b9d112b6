"""The leaderboard's index page, CSV and markdown: one board per view (all palettes, then C = 3, 5 and 10), ranked
by the stated metric best-first, with a sticky model column, a search box, how to submit, and the paper's reported
numbers in a table of their own. The page is ``templates/index.html.j2`` and each board row ``board_row.html.j2``
(autoescaped: everything from a submission is text); links are the validated http(s) ones.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

from markupsafe import Markup

from audit.records import TIERS
from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from dataset_builder.grids.spec import README_NAME, SUBMISSIONS_REPO_ID, SUBMISSIONS_URL
from drawing.html import fmt, md_table, render
from g2m_base.files import atomic_write_text
from g2m_base.untrusted import md as md_text
from leaderboard import front_figure
from leaderboard.gap_board import CSV_HEADERS as GAP_CSV
from leaderboard.gap_board import (
    GAP_BOARD,
    GAP_HEADERS,
    GAP_VIEW,
    SCALED_HEADERS,
    csv_cells,
    gap_order,
    gap_row,
    scaled_rows,
)
from submission.submission import RELEASE


def tier(row: dict) -> tuple[str, str]:
    """(the row's tier, why): a built-in baseline is reproduced; a submission what its audit found (``row["tier"]``,
    set by the build from a verified audit record), else self-reported."""
    if row.get("kind") == "baseline":
        return "reproduced", TIERS["reproduced"]
    found = row.get("tier") or {}
    return found.get("tier", "self-reported"), found.get("why", TIERS["self-reported"])


def settings_key(row: dict) -> str:
    """What makes two submissions the same entry: the model, its revision and the generation settings its answers were
    made with (generation arguments, answer budgets, chat template, task version)."""
    meta = row["meta"]
    gen = meta.get("generation") or {}
    return json.dumps([row["name"], (meta.get("model") or {}).get("revision"),
                       *(gen.get(k) for k in ("gen_kwargs", "max_gen_toks", "chat_template_sha", "task_version"))],
                      sort_keys=True, default=str)


_TIER_RANK = {"reproduced": 0, "self-reported": 1, "refuted": 2}


def one_per_entry(rows: list[dict]) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """One row per (model, revision, settings): the best-tiered (reproduced before self-reported; then the first by
    file name), and the others, each with the row it is listed under (shown, never ranked)."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        key = settings_key(r) if r["kind"] == "submission" else f"baseline:{r['name']}"
        groups.setdefault(key, []).append(r)
    shown, others = [], []
    for group in groups.values():
        first, *rest = sorted(group, key=lambda r: (_TIER_RANK[tier(r)[0]], r.get("file") or ""))
        shown.append(first)
        others += [(r, first) for r in rest]
    return shown, others


VIEWS = ("all", "c3", "c5", "c10")
VIEW_NAMES = {"all": "All palettes", "c3": "C = 3", "c5": "C = 5", "c10": "C = 10"}
RANK_METRIC = "cell accuracy"
#: (header, where the number comes from, higher is better)
SCORES = (("cell accuracy", ("overall", "cell_accuracy"), True), ("exact match", ("overall", "exact_match"), True),
          ("strict cell", ("overall", "cell_accuracy_strict"), True), ("paper cell", ("paper", "cell_accuracy"), True),
          ("paper exact", ("paper", "exact_match"), True), ("parse failed", ("overall", "parse_failed"), False),
          ("truncated", ("overall", "truncated"), False))
INFO = ("tier", "params", "weights", "released")

#: Rows per page of a board. The rows of every board travel once, as JSON data in the page: each as the HTML its
#: template rendered here and its columns' sort keys; the browser draws only the page in view (sorted and filtered over
#: all rows), so a board of thousands of rows opens as fast as one of 50.
PAGE_ROWS = 50

TEMPLATES = Path(__file__).with_name("templates")
_WEB_LINK = re.compile(r"https?://")


def _info(row: dict) -> list[str]:
    model = row["meta"].get("model") or {}
    weights = model.get("open_weights")
    return [tier(row)[0], model.get("params") or "", "" if weights is None else ("open" if weights else "API"),
            model.get("release_date") or ""]


def _value(numbers: dict, where: tuple[str, str]):
    part = numbers.get(where[0])
    return None if part is None else part.get(where[1])


def _cells(r: dict, view: str) -> list[list[str]]:
    """The score and per-N cells of a row in one view: [sort value (``data-v``), text], for the page and the script."""
    numbers = r["views"][view]
    out = []
    for _h, where, _ in SCORES:
        v = _value(numbers, where)
        mark = numbers["paper_mark"] if where[0] == "paper" else ""
        out.append(["", "-"] if v is None else [f"{v:.6f}", f"{fmt(v)}{mark}"])
    return out + [[f"{v:.6f}", compact(v)] for v in (numbers["by_n"][n]["cell_accuracy"] for n in ZERO_SHOT_SIZES)]


def compact(v: float | None) -> str:
    """A per-N cell as narrow as it reads: two decimals without the leading zero (".93"), 1 for 1.00, "-" for none."""
    text = fmt(v, 2)
    return "1" if text == "1.00" else text[1:] if text.startswith("0.") else text


def _row(r: dict, views: tuple[str, ...]) -> dict:
    """A row as the page's data carries it: its name (what the search box matches) and, for each view it is shown in,
    the HTML of ``board_row.html.j2`` and the sort key of each column (its cells' ``data-v``; none for raw outputs)."""
    model = r["meta"].get("model") or {}
    url = model.get("url")
    values = {"name": r["name"], "kind": r["kind"], "page": r["page"], "raw": r.get("raw"), "info": _info(r),
              "url": url if isinstance(url, str) and _WEB_LINK.match(url) else None}
    out = {"name": r["name"], "tier": values["info"][0], "views": {}}
    for view in views:
        cells = _cells(r, view)
        scores, by_n = cells[: len(SCORES)], cells[len(SCORES):]
        html = render(TEMPLATES, "board_row.html.j2", **values, scores=scores, by_n=by_n)
        keys = [r["name"], *values["info"], *(v for v, _ in scores), None, *(v for v, _ in by_n)]
        out["views"][view] = {"html": html, "keys": keys}
    return out


def _board(data: list[dict], order: list[int], view: str, table_id: str) -> dict:
    """A board for ``index.html.j2``: its id, its first page of rows (the script draws the rest on demand), how many.
    The rows are ``board_row.html.j2``'s output, escaped there: the only HTML marked safe on this page."""
    return {"id": table_id, "rows": [Markup(data[i]["views"][view]["html"]) for i in order[:PAGE_ROWS]],
            "total": len(order)}


def _ranked(rows: list[dict], view: str) -> list[int]:
    return sorted(range(len(rows)), key=lambda i: -rows[i]["views"][view]["overall"]["cell_accuracy"])


def _reported_rows(reported: dict) -> list[list[str]]:
    return [[r["model"], r["kind"], r["metric"], r["grid"], "not stated", r["value"], r["where"]]
            for r in reported["rows"]]


REPORTED_HEADERS = ["model", "what", "metric", "grid", "palette", "as stated", "where in the paper"]
#: The header's sentence on exact match is about the grids larger than this, where an answer is all right less often.
EXACT_PAST = 8


def exact_note(ranked: list[dict]) -> str:
    """What the header says of exact match past N = ``EXACT_PAST``, computed from the rows on this page (a sentence
    written once by hand went stale: it said "near 0 for every model" above a 1.000); empty with no such number."""
    best = None
    for r in sorted(ranked, key=lambda r: -r["views"]["all"]["overall"]["cell_accuracy"]):  # ties: the board's first
        for n, s in r["views"]["all"]["by_n"].items():
            v = s.get("exact_match")
            if n > EXACT_PAST and isinstance(v, float) and not math.isnan(v) and (best is None or v > best[0]):
                best = (v, r["name"], n)
    if best is None:
        return ""
    v, name, n = best
    return f"past N = {EXACT_PAST}, the highest here is {v:.3f}, {name} at N = {n}"


def _hub_rows(hub) -> list[list[str]]:
    """The Hub's entries as text cells: the value as the Hub reported it, and this board's number where it re-scored
    the same model's raw outputs."""
    out = []
    for e in hub.rows:
        ours = e["rescored"]
        mark = "no" if ours is None else f"yes: {fmt(ours['cell_accuracy'])}" + (
            "" if ours["data"] == RELEASE else " (on other data)")
        out.append([e["model"], str(e["value"]), "yes" if e["verified"] else "no", mark, e["source"], e["file"],
                    e["notes"]])
    return out


HUB_HEADERS = ["model", "value (as the Hub reports it)", "verified on the Hub", "re-scored here (cell accuracy)",
               "source", "results file", "notes"]


#: The files ``write_index`` writes at the top of the site folder.
INDEX_FILES = ("index.html", "leaderboard.csv", "leaderboard.md", README_NAME)


def write_index(out: Path, rows: list[dict], reported: dict, rejected: list[dict], hub=None) -> None:
    """The index, CSV and markdown. ``hub`` (``hub_board.HubBoard``, or None when not asked for) is the Hub's own
    leaderboard, listed apart and unranked."""
    refuted = [r for r in rows if tier(r)[0] == "refuted"]  # shown with their numbers and reason, never ranked
    ranked, repeats = one_per_entry([r for r in rows if r.get("data", RELEASE) == RELEASE and tier(r)[0] != "refuted"])
    local = [r for r in rows if r.get("data", RELEASE) != RELEASE and tier(r)[0] != "refuted"]
    data = [_row(r, VIEWS) for r in ranked] + [_row(r, ("all",)) for r in local + refuted]
    for d, r in zip(data, ranked, strict=False):  # the gap board: ranked rows only, as the palette boards
        d["views"][GAP_VIEW] = gap_row(r)
    boards = {("board" if v == "all" else f"board-{v}"): {"view": v, "order": _ranked(ranked, v)} for v in VIEWS}
    boards[GAP_BOARD] = {"view": GAP_VIEW, "order": gap_order(ranked)}
    if local:
        boards["local"] = {"view": "all", "order": [len(ranked) + i for i in _ranked(local, "all")]}
    if refuted:
        boards["refuted"] = {"view": "all", "order": [len(ranked) + len(local) + i for i in _ranked(refuted, "all")]}
    views = [{"view": b["view"], "board": _board(data, b["order"], b["view"], t),
              "figure": front_figure.figure(ranked, b["view"], f"figure-{b['view']}") if ranked else None}
             for t, b in boards.items() if t not in ("local", "refuted", GAP_BOARD)]
    html = render(TEMPLATES, "index.html.j2", title="Grid2Matrix leaderboard", views=views, view_names=VIEW_NAMES,
                  rank_metric=RANK_METRIC, exact_note=exact_note(ranked), page_rows=PAGE_ROWS, info=INFO, tiers=TIERS,
                  scores=[(h, best) for h, _, best in SCORES],
                  sizes=ZERO_SHOT_SIZES, submissions_url=SUBMISSIONS_URL, submissions_repo=SUBMISSIONS_REPO_ID,
                  local=_board(data, boards["local"]["order"], "all", "local") if local else None, reported=reported,
                  refuted=_board(data, boards["refuted"]["order"], "all", "refuted") if refuted else None,
                  refuted_why=[[r["name"], r.get("file") or "", tier(r)[1]] for r in refuted],
                  repeats=[{"name": r["name"], "page": r["page"], "file": r.get("file"), "tier": tier(r)[0],
                            "cell": fmt(r["views"]["all"]["overall"]["cell_accuracy"]), "under": first["page"],
                            "under_file": first.get("file")} for r, first in repeats],
                  gap=_board(data, boards[GAP_BOARD]["order"], GAP_VIEW, GAP_BOARD), gap_headers=GAP_HEADERS,
                  scaled_headers=SCALED_HEADERS, scaled_rows=scaled_rows(ranked),
                  reported_headers=REPORTED_HEADERS, reported_rows=_reported_rows(reported),
                  rejected=[[r["file"], r["reason"]] for r in rejected], hub=hub, hub_headers=HUB_HEADERS,
                  hub_rows=list(zip(hub.rows, _hub_rows(hub), strict=True)) if hub else [],
                  payload={"page": PAGE_ROWS, "rows": data, "boards": boards})
    atomic_write_text(out / "index.html", html)
    _write_tables(out, ranked, local + [r for r, _ in repeats] + refuted, reported, hub)


def _csv_cell(value: str) -> str:
    """A spreadsheet reads a cell that starts with = + - @ as a formula; a model name must stay text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _write_tables(out: Path, ranked: list[dict], local: list[dict], reported: dict, hub=None) -> None:
    ns = list(ZERO_SHOT_SIZES)
    headers = ["model", "kind", "data", "backend", *INFO, *(h for h, _, _ in SCORES), *[f"N={n}" for n in ns], *GAP_CSV]
    lines = []
    for r in sorted(ranked, key=lambda r: -r["views"]["all"]["overall"]["cell_accuracy"]) + local:
        numbers = r["views"]["all"]
        vals = [_value(numbers, w) for _, w, _ in SCORES] + [numbers["by_n"][n]["cell_accuracy"] for n in ns]
        lines.append([r["name"], r["kind"], r.get("data", RELEASE), (r["meta"].get("model") or {}).get("backend") or "",
                      *_info(r), *("" if v is None else f"{v:.6f}" for v in vals), *csv_cells(r)])
    buf = io.StringIO()
    csv.writer(buf).writerows([headers, *[[_csv_cell(str(c)) for c in line] for line in lines]])
    atomic_write_text(out / "leaderboard.csv", buf.getvalue())
    md = [f"Ranked by {RANK_METRIC} (G2M protocol), best first.", "",
          md_table(headers, [[c if c else "-" for c in line] for line in lines]), "",
          "## Reported in the paper (not re-scored, not ranked)", "", md_text(reported["note"]), "",
          md_table(REPORTED_HEADERS, _reported_rows(reported))]
    if hub is not None:
        md += ["", "## Reported on the Hub (not re-scored, not ranked)", "", md_text(hub.note), ""]
        if hub.rows:
            md.append(md_table(HUB_HEADERS, [[c or "-" for c in row] for row in _hub_rows(hub)]))
        if hub.refused:
            md += ["", md_table(["model", "refused because"], hub.refused)]
    atomic_write_text(out / "leaderboard.md", "\n".join(md) + "\n")
    atomic_write_text(out / README_NAME, "---\ntitle: Grid2Matrix leaderboard\nsdk: static\napp_file: index.html\n"
                      "pinned: false\n---\n\nStatic site built by `g2m leaderboard build`.\n")
