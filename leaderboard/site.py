"""``g2m leaderboard build``: a static site of validated, re-scored submissions (servable as it is, e.g. as a Hugging
Face static Space), plus a CSV and a markdown table.

Rows: every submission that passes ``validate`` (scores recomputed here, never read from the file), the two
reference models computed offline from the generator (the oracle's and the random model's real outputs), and the
paper's reported numbers, marked "reported, not re-scored". Rejected files are listed with their reasons.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import traceback
from functools import lru_cache
from pathlib import Path

from PIL import Image

from dataset_builder.configs import ZERO_SHOT_SIZES
from dataset_builder.errors import UsageError
from dataset_builder.fsutil import atomic_write_text, ensure_dir, safe_name
from dataset_builder.render import render_rgb
from dataset_builder.spec import PATCH_SIZES, README_NAME
from dataset_builder.untrusted import md as md_text
from dataset_builder.untrusted import plot, term
from harness_tasks.baselines import oracle_answer, random_answer

from . import figures
from . import geometry as geo
from .html import esc, fmt, fmt_ci, md_table, page, table
from .scoring import by_task, confusion, heatmaps, score_output, summarise, truth_matrix, zero_shot_truth
from .submission import RELEASE, validate

REPORTED = Path(__file__).with_name("reported.json")
SORT_JS = """
document.querySelectorAll('table.sortable th.sortable').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0], col = th.cellIndex;
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      if (x === '' || x === null) { return 1; }
      if (y === '' || y === null) { return -1; }
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def slug(name: str, suffix: str = "") -> str:
    """A file name for a model page: only [A-Za-z0-9_.-], never hidden or '..', unique through ``suffix``."""
    base = safe_name(name, "-")
    return f"{base}-{suffix}" if suffix else base


@lru_cache(maxsize=1)
def _baseline_scores() -> dict[str, dict[str, list]]:
    """The oracle's and the random model's outputs on the full release, made offline by the same functions the
    lm-eval models call, then scored like any other (under G2M's protocol and the paper's rule)."""
    out: dict[str, dict[str, list]] = {"g2m-oracle": {"g2m": [], "paper_rule_on_g2m": []},
                                       "g2m-random": {"g2m": [], "paper_rule_on_g2m": []}}
    for sid, t in zero_shot_truth().items():
        m = truth_matrix(t)
        answers = {"g2m-oracle": oracle_answer(Image.fromarray(render_rgb(m)), t.grid_size),
                   "g2m-random": random_answer(t.grid_size, t.num_colors, sid)}
        for name, answer in answers.items():
            out[name]["g2m"].append(score_output(sid, answer, m, t.num_colors))
            out[name]["paper_rule_on_g2m"].append(score_output(sid, answer, m, t.num_colors, protocol="paper"))
    return out


def baseline_rows() -> list[dict]:
    return [{"name": name, "kind": "baseline", "scored": scored["g2m"],
             "protocols": {k: summarise(v) for k, v in scored.items()},
             "meta": {"model": {"id": name, "backend": "built-in"}}}
            for name, scored in _baseline_scores().items()]


def paper_column(row: dict) -> tuple[dict | None, str]:
    """The paper-protocol scores a row has: from its g2m_paper outputs if it sent them, else its g2m outputs
    re-scored with the paper's rule (marked with an asterisk)."""
    protocols = row.get("protocols") or {}
    if "paper" in protocols:
        return protocols["paper"], ""
    return protocols.get("paper_rule_on_g2m"), "*"


def _model_page(row: dict, folder: Path) -> str:
    name, scored = row["name"], row["scored"]
    page_slug = slug(name, (row.get("sha256") or "")[:10])
    assets = folder / page_slug
    assets.mkdir(parents=True, exist_ok=True)
    tasks = {k: summarise(v) for k, v in by_task(scored).items()}
    hms = heatmaps(scored)
    counts = {n: sum(1 for r in scored if r.grid_size == n) for n in hms}
    figs = [figures.accuracy_vs_n(tasks, assets / "accuracy_vs_n.png")]
    figs += [figures.heatmap(hms[n], assets / f"heatmap_n{n:02d}.png", f"{plot(name, 60)}: N={n}", 16) for n in hms]
    figs.append(figures.confusion(confusion(scored), assets / "confusion.png"))
    figs.append(figures.alignment([geo.alignment(hms, counts, p) for p in PATCH_SIZES],
                                  assets / "patch_alignment.png"))
    meta_rows = [[k, json.dumps(v) if not isinstance(v, str) else v] for k, v in _flat(row["meta"]).items()]
    rows = [[str(n), str(c), fmt_ci(s["exact_match"], s["exact_match_ci"]), fmt_ci(s["cell_accuracy"], s["cell_accuracy_ci"]),
             fmt(s["parse_failed"]), fmt(s["truncated"])] for (n, c), s in tasks.items()]
    body = [f"<p><a href=\"../index.html\">&larr; leaderboard</a></p><h1>{esc(name)}</h1>",
            f"<p class=\"muted\">{esc(row['kind'])}; every score re-computed from the raw outputs.</p>",
            table(["field", "value"], meta_rows, text_cols=2),
            table(["N", "C", "exact match [95% CI]", "cell accuracy [95% CI]", "parse failed", "truncated"], rows, text_cols=0)]
    body += [f"<img src=\"{esc(page_slug)}/{esc(f)}\" alt=\"{esc(f)}\">" for f in figs]
    path = folder / f"{page_slug}.html"
    atomic_write_text(path, page(f"G2M: {name}", "\n".join(body)))
    return f"models/{path.name}"


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and k != "max_gen_toks":
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def build_site(submissions: str | Path, out: str | Path) -> dict:
    """Validate and re-score every submission, then write the site. A file that is refused, or that breaks a page,
    is listed as rejected with its reason; it never stops the rest of the site."""
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise UsageError(f"{submissions} is not a folder of submissions")
    files = sorted(p for p in submissions.iterdir() if p.name.endswith((".json", ".json.gz")))
    rows, rejected = [], []
    for f in files:
        v = validate(f)
        if v.ok:
            rows.append({"name": v.metadata["model"]["id"], "kind": "submission", "scored": v.scored, "meta": v.metadata,
                         "file": f.name, "sha256": v.sha256, "warnings": v.warnings, "data": v.data,
                         "protocols": v.scores.get("protocols", {})})
        else:
            rejected.append({"file": f.name, "reason": v.reason})
    ensure_dir(out / "models")
    built = []
    for r in rows + baseline_rows():
        try:
            r["overall"] = summarise(r["scored"])
            r["by_n"] = {n: summarise([s for s in r["scored"] if s.grid_size == n]) for n in ZERO_SHOT_SIZES}
            r["page"] = _model_page(r, out / "models")
            built.append(r)
        except Exception as e:  # one broken submission must not stop the site; baselines are ours: let bugs show
            if r["kind"] == "baseline":
                raise
            print(f"g2m leaderboard: {term(r['file'])} broke its page:\n{term(traceback.format_exc(), 4000)}",
                  file=sys.stderr)
            rejected.append({"file": r["file"], "reason": f"could not be rendered ({type(e).__name__}: {e})"})
    reported = json.loads(REPORTED.read_text())
    _write_index(out, built, reported, rejected)
    return {"rows": len(built), "submissions": sum(r["kind"] == "submission" for r in built), "rejected": rejected,
            "output_dir": str(out)}


def _csv_cell(value: str) -> str:
    """A spreadsheet reads a cell that starts with = + - @ as a formula; a model name must stay text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _board(rows: list[dict], ns: list[int], table_id: str) -> tuple[str, list]:
    headers = ["model", "kind", "backend", "exact match", "cell accuracy", "strict cell", "paper exact", "paper cell",
               "parse failed", "truncated", *[f"N={n}" for n in ns]]
    html_rows, csv_rows = [], []
    for r in sorted(rows, key=lambda r: -r["overall"]["cell_accuracy"]):
        o = r["overall"]
        paper, mark = paper_column(r)
        vals = [o["exact_match"], o["cell_accuracy"], o["cell_accuracy_strict"],
                (paper or {}).get("exact_match"), (paper or {}).get("cell_accuracy"), o["parse_failed"], o["truncated"],
                *[r["by_n"][n]["cell_accuracy"] for n in ns]]
        backend = (r["meta"].get("model") or {}).get("backend") or ""
        cells = [f"<td class=\"text\" data-v=\"{esc(r['name'])}\"><a href=\"{esc(r['page'])}\">{esc(r['name'])}</a>"
                 + (" <span class=\"badge\">baseline</span>" if r["kind"] == "baseline" else "") + "</td>",
                 f"<td class=\"text\" data-v=\"{esc(r['kind'])}\">{esc(r['kind'])}</td>",
                 f"<td class=\"text\" data-v=\"{esc(backend)}\">{esc(backend)}</td>"]
        cells += ["<td data-v=\"\">-</td>" if v is None else
                  f"<td data-v=\"{v:.6f}\">{fmt(v)}{mark if k in (3, 4) else ''}</td>" for k, v in enumerate(vals)]
        html_rows.append(f"<tr class=\"{esc(r['kind'])}\">" + "".join(cells) + "</tr>")
        csv_rows.append([r["name"], r["kind"], r.get("data", RELEASE), backend,
                         *["" if v is None else f"{v:.6f}" for v in vals]])
    head = "".join(f"<th class=\"sortable{' text' if i < 3 else ''}\">{esc(h)}</th>" for i, h in enumerate(headers))
    board = (f"<div style=\"overflow-x:auto\"><table id=\"{table_id}\" class=\"sortable\"><thead><tr>{head}</tr>"
             f"</thead><tbody>{''.join(html_rows)}</tbody></table></div>")
    return board, csv_rows


REPORTED_HEADERS = ["model", "what", "metric", "grid", "palette", "as stated", "where in the paper"]


def _reported_rows(reported: dict) -> list[list[str]]:
    return [[r["model"], r["kind"], r["metric"], r["grid"], "not stated", r["value"], r["where"]] for r in reported["rows"]]


def _write_index(out: Path, rows: list[dict], reported: dict, rejected: list[dict]) -> None:
    ns = list(ZERO_SHOT_SIZES)
    ranked = [r for r in rows if r.get("data", RELEASE) == RELEASE]
    local = [r for r in rows if r.get("data", RELEASE) != RELEASE]
    board, csv_rows = _board(ranked, ns, "board")
    local_board, local_csv = _board(local, ns, "local")
    rej = (table(["file", "reason"], [[r["file"], r["reason"]] for r in rejected], text_cols=2) if rejected
           else "<p class=\"muted\">none</p>")
    reported_table = table(REPORTED_HEADERS, _reported_rows(reported), text_cols=7, attrs="id=\"reported\"")
    body = ("<h1>Grid2Matrix leaderboard</h1><p>Every submission is validated and every output re-parsed and re-scored "
            "here; numbers in submitted files are ignored. Scores use G2M's protocol (its parser, partial credit, its "
            "answer budget); strict cell counts 0 cells for an answer that is not exactly N x N (the authors' rule); "
            "the paper columns use the authors' parser and scoring: on the model's g2m_paper outputs (the authors' "
            "budget) when it sent them, else, marked *, on its g2m outputs. Cell accuracy per grid size N averages "
            "the palettes (3, 5, 10 colours). Click a column to sort.</p>" + board +
            "<h2>Runs on other data (not ranked)</h2><p class=\"muted\">Accepted and re-scored, but the data these runs "
            "read does not hash to the release's, so their numbers are not comparable.</p>"
            + (local_board if local else "<p class=\"muted\">none</p>") +
            f"<h2>Reported in the paper (not re-scored, not ranked)</h2><p class=\"muted\">{esc(reported['note'])} "
            f"Source: <a href=\"{esc(reported['url'])}\">{esc(reported['source'])}</a>.</p>{reported_table}"
            f"<h2>Rejected submissions</h2>{rej}"
            "<p class=\"muted\">Also as <a href=\"leaderboard.csv\">CSV</a> and <a href=\"leaderboard.md\">markdown</a>.</p>")
    atomic_write_text(out / "index.html", page("Grid2Matrix leaderboard", body, SORT_JS))
    headers = ["model", "kind", "data", "backend", "exact match", "cell accuracy", "strict cell", "paper exact",
               "paper cell", "parse failed", "truncated", *[f"N={n}" for n in ns]]
    buf = io.StringIO()
    csv.writer(buf).writerows([headers, *[[_csv_cell(str(c)) for c in r] for r in csv_rows + local_csv]])
    atomic_write_text(out / "leaderboard.csv", buf.getvalue())
    md = [md_table(headers, [[c if c else "-" for c in r] for r in csv_rows + local_csv]), "",
          "## Reported in the paper (not re-scored, not ranked)", "", md_text(reported["note"]), "",
          md_table(REPORTED_HEADERS, _reported_rows(reported))]
    atomic_write_text(out / "leaderboard.md", "\n".join(md) + "\n")
    atomic_write_text(out / README_NAME, "---\ntitle: Grid2Matrix leaderboard\nsdk: static\napp_file: index.html\n"
                      "pinned: false\n---\n\nStatic site built by `g2m leaderboard build`.\n")
