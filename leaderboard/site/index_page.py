"""The leaderboard's index page, CSV and markdown: one board per view (all palettes, then C = 3, 5 and 10), ranked
by the stated metric best-first, with a sticky model column, a search box, how to submit, and the paper's reported
numbers in a table of their own. Everything from a submission is escaped; links are the validated http(s) ones.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from dataset_builder.configs import ZERO_SHOT_SIZES
from dataset_builder.spec import README_NAME, SUBMISSIONS_REPO_ID, SUBMISSIONS_URL
from g2m_base.files import atomic_write_text
from g2m_base.untrusted import esc
from g2m_base.untrusted import md as md_text
from leaderboard.pages.html import fmt, md_table, page, table
from leaderboard.site import front_figure
from leaderboard.submissions.submission import RELEASE

VIEWS = ("all", "c3", "c5", "c10")
VIEW_NAMES = {"all": "All palettes", "c3": "C = 3", "c5": "C = 5", "c10": "C = 10"}
RANK_METRIC = "cell accuracy"
#: (header, where the number comes from, higher is better)
SCORES = (("cell accuracy", ("overall", "cell_accuracy"), True), ("exact match", ("overall", "exact_match"), True),
          ("strict cell", ("overall", "cell_accuracy_strict"), True), ("paper cell", ("paper", "cell_accuracy"), True),
          ("paper exact", ("paper", "exact_match"), True), ("parse failed", ("overall", "parse_failed"), False),
          ("truncated", ("overall", "truncated"), False))
INFO = ("params", "weights", "released")

#: Rows per page of a board. The rows of every board travel once, as JSON data in the page; the browser draws only
#: the page in view (sorted and filtered over all rows), so a board of thousands of rows opens as fast as one of 50.
PAGE_ROWS = 50

SCRIPT = Path(__file__).with_name("board.js").read_text(encoding="utf-8")

EXTRA_STYLE = """
body{max-width:1500px}.scroll{overflow-x:auto;max-width:100%;border:1px solid #ddd}
table.board{margin:0;font-size:.82rem}table.board td,table.board th{white-space:nowrap}
table.board th:first-child,table.board td:first-child{position:sticky;left:0;background:#fff;z-index:2;
box-shadow:2px 0 0 #ccc}table.board thead th:first-child{background:#f3f3f3}tr.baseline td:first-child{background:#fafaf0}
th[aria-sort=descending]:after{content:" \\2193"}th[aria-sort=ascending]:after{content:" \\2191"}
.tabs{margin:.8rem 0}.tab{border:1px solid #bbb;background:#f7f7f7;padding:.3rem .8rem;cursor:pointer;border-radius:.3rem}
.tab[aria-selected=true]{background:#222;color:#fff}#search{padding:.3rem .5rem;width:18rem;margin-left:1rem}
.howto{background:#f4f8ff;border:1px solid #c9dafc;padding:.5rem 1rem;border-radius:.3rem}code{font-size:.85rem}
.pager{margin:.4rem 0;font-size:.85rem}.pager button{padding:.15rem .6rem;cursor:pointer}
"""


def _info(row: dict) -> list[str]:
    model = row["meta"].get("model") or {}
    weights = model.get("open_weights")
    return [model.get("params") or "", "" if weights is None else ("open" if weights else "API"),
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
    return out + [[f"{v:.6f}", fmt(v, 2)] for v in (numbers["by_n"][n]["cell_accuracy"] for n in ZERO_SHOT_SIZES)]


def _row_data(r: dict) -> dict:
    """A row as the page's data carries it: everything a cell shows, as text (the script never formats a number)."""
    return {"name": r["name"], "kind": r["kind"], "page": r["page"], "raw": r.get("raw"),
            "url": (r["meta"].get("model") or {}).get("url"), "info": _info(r),
            "views": {view: _cells(r, view) for view in VIEWS}}


def _row_html(d: dict, view: str) -> str:
    """One row of a board, the same cells the script draws (``rowOf``) for pages other than the first."""
    name = (f"<a href=\"{esc(d['page'])}\">{esc(d['name'])}</a>"
            + (f" <a class=\"ext\" href=\"{esc(d['url'])}\" rel=\"noopener nofollow\" title=\"model link\">&#8599;</a>"
               if d["url"] else "")
            + (" <span class=\"badge\">baseline</span>" if d["kind"] == "baseline" else ""))
    cells = [f"<td class=\"text\" data-v=\"{esc(d['name'])}\">{name}</td>"]
    cells += [f"<td class=\"text\" data-v=\"{esc(v)}\">{esc(v) or '-'}</td>" for v in d["info"]]
    values = [f"<td data-v=\"{esc(v)}\">{esc(text)}</td>" for v, text in d["views"][view]]
    cells += values[: len(SCORES)]
    cells.append(f"<td class=\"text\"><a href=\"{esc(d['raw'])}\" download>download</a></td>" if d["raw"]
                 else "<td class=\"text muted\">built in</td>")
    cells += values[len(SCORES):]
    return f"<tr class=\"{esc(d['kind'])}\" data-name=\"{esc(d['name'])}\">" + "".join(cells) + "</tr>"


def _board(data: list[dict], order: list[int], view: str, table_id: str) -> str:
    """A board's header, its first page of rows (the script draws the rest on demand) and its pager."""
    head = ["<th class=\"text sortable\" data-first=\"ascending\">model</th>"]
    head += [f"<th class=\"text sortable\" data-first=\"ascending\">{h}</th>" for h in INFO]
    head += [f"<th class=\"sortable\" data-first=\"{'descending' if best else 'ascending'}\""
             + (" aria-sort=\"descending\"" if h == RANK_METRIC else "") + f">{esc(h)}</th>" for h, _, best in SCORES]
    head += ["<th class=\"text\">raw outputs</th>"]
    head += [f"<th class=\"sortable\" data-first=\"descending\">N={n}</th>" for n in ZERO_SHOT_SIZES]
    body = "".join(_row_html(data[i], view) for i in order[:PAGE_ROWS])
    more = (f"<noscript><p class=\"muted\">The first {PAGE_ROWS} of {len(order):,} rows; all of them are in "
            "<a href=\"leaderboard.csv\">leaderboard.csv</a>.</p></noscript>" if len(order) > PAGE_ROWS else "")
    return (f"<div class=\"scroll\"><table id=\"{table_id}\" class=\"sortable board\"><thead><tr>{''.join(head)}</tr>"
            f"</thead><tbody>{body}</tbody></table></div><div class=\"pager\" id=\"pager-{table_id}\" hidden>"
            "<button class=\"prev\" type=\"button\">&lsaquo; previous</button> <span class=\"where\"></span> "
            f"<button class=\"next\" type=\"button\">next &rsaquo;</button></div>{more}")


def _ranked(rows: list[dict], view: str) -> list[int]:
    return sorted(range(len(rows)), key=lambda i: -rows[i]["views"][view]["overall"]["cell_accuracy"])


def _json_in_html(value: object) -> str:
    """JSON inside a ``<script type="application/json">``: no character of it can close the element."""
    return (json.dumps(value, ensure_ascii=True, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


HOW_TO = f"""<div class="howto"><h2>How to submit</h2><ol>
<li>Evaluate your model on the release, in any harness: <code>g2m eval --serve YOUR/MODEL</code> (or
<code>--base-url URL</code>, <code>--harness lmms-eval</code>, <code>--harness inspect</code>; see the README).</li>
<li>Write the submission (it asks for the parameter count, open weights or API, release date and a link):
<code>g2m submit g2m-runs/YOUR__MODEL --params 8B --open-weights --release-date 2025-10-01 --model-url https://...</code></li>
<li>Check it the way this site will: <code>g2m validate g2m-runs/YOUR__MODEL/submission.json.gz</code></li>
<li>Open a pull request adding the file under <code>submissions/</code> to the dataset repository
<a href="{esc(SUBMISSIONS_URL)}">{esc(SUBMISSIONS_REPO_ID)}</a>. This site is built from that folder with
<code>g2m leaderboard build</code>: every output is re-parsed and re-scored; no number in your file is read.</li>
</ol></div>"""


def _reported_rows(reported: dict) -> list[list[str]]:
    return [[r["model"], r["kind"], r["metric"], r["grid"], "not stated", r["value"], r["where"]] for r in reported["rows"]]


REPORTED_HEADERS = ["model", "what", "metric", "grid", "palette", "as stated", "where in the paper"]


def write_index(out: Path, rows: list[dict], reported: dict, rejected: list[dict]) -> None:
    ranked = [r for r in rows if r.get("data", RELEASE) == RELEASE]
    local = [r for r in rows if r.get("data", RELEASE) != RELEASE]
    data = [_row_data(r) for r in ranked + local]
    boards = {("board" if v == "all" else f"board-{v}"): {"view": v, "order": _ranked(ranked, v)} for v in VIEWS}
    if local:
        boards["local"] = {"view": "all", "order": [len(ranked) + i for i in _ranked(local, "all")]}
    tabs = "".join(f"<button class=\"tab\" data-view=\"{v}\" aria-selected=\"{str(v == 'all').lower()}\">"
                   f"{VIEW_NAMES[v]}</button>" for v in VIEWS)
    views = "".join(f"<div class=\"view\" id=\"view-{v}\"{'' if v == 'all' else ' hidden'}>"
                    f"{_board(data, boards[t]['order'], v, t)}"
                    f"{front_figure.figure(ranked, v, f'figure-{v}') if ranked else ''}</div>"
                    for t, v in ((t, b["view"]) for t, b in boards.items()) if t != "local")
    rej = (table(["file", "reason"], [[r["file"], r["reason"]] for r in rejected], text_cols=2) if rejected
           else "<p class=\"muted\">none</p>")
    payload = {"page": PAGE_ROWS, "scores": len(SCORES), "rows": data, "boards": boards}
    body = (
        "<h1>Grid2Matrix leaderboard</h1>"
        f"<p><b>Ranked by {RANK_METRIC}</b> (G2M protocol), best first; exact match beside it (it is near 0 for every "
        "model past N = 8, so it cannot rank). Every submission is validated and every output re-parsed and re-scored "
        "here; numbers in submitted files are ignored. Strict cell counts 0 cells for an answer that is not exactly "
        "N x N (the authors' rule); the paper columns use the authors' parser and scoring, on the model's g2m_paper "
        "outputs (the authors' budget) when it sent them, else, marked *, on its g2m outputs. N columns: cell accuracy "
        f"per grid size. Click a column to sort (best first on the first click); {PAGE_ROWS} rows a page.</p>"
        f"<div class=\"tabs\">{tabs}<input id=\"search\" type=\"search\" placeholder=\"search models\" "
        f"aria-label=\"search models\"></div>{views}" + HOW_TO +
        "<h2>Runs on other data (not ranked)</h2><p class=\"muted\">Accepted and re-scored, but the data these runs "
        "read does not hash to the release's, so their numbers are not comparable.</p>"
        + (_board(data, boards["local"]["order"], "all", "local") if local else "<p class=\"muted\">none</p>")
        + f"<h2>Reported in the paper (not re-scored, not ranked)</h2><p class=\"muted\">{esc(reported['note'])} "
        f"Source: <a href=\"{esc(reported['url'])}\">{esc(reported['source'])}</a>.</p>"
        + table(REPORTED_HEADERS, _reported_rows(reported), text_cols=7, attrs="id=\"reported\"")
        + f"<h2>Rejected submissions</h2>{rej}"
        "<p class=\"muted\">Also as <a href=\"leaderboard.csv\">CSV</a> and <a href=\"leaderboard.md\">markdown</a>.</p>"
        f"<script type=\"application/json\" id=\"board-data\">{_json_in_html(payload)}</script>")
    html = page("Grid2Matrix leaderboard", body, SCRIPT + front_figure.SCRIPT).replace(
        "</style>", EXTRA_STYLE + front_figure.STYLE + "</style>", 1)
    atomic_write_text(out / "index.html", html)
    _write_tables(out, ranked, local, reported)


def _csv_cell(value: str) -> str:
    """A spreadsheet reads a cell that starts with = + - @ as a formula; a model name must stay text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _write_tables(out: Path, ranked: list[dict], local: list[dict], reported: dict) -> None:
    ns = list(ZERO_SHOT_SIZES)
    headers = ["model", "kind", "data", "backend", *INFO, *(h for h, _, _ in SCORES), *[f"N={n}" for n in ns]]
    lines = []
    for r in sorted(ranked, key=lambda r: -r["views"]["all"]["overall"]["cell_accuracy"]) + local:
        numbers = r["views"]["all"]
        vals = [_value(numbers, w) for _, w, _ in SCORES] + [numbers["by_n"][n]["cell_accuracy"] for n in ns]
        lines.append([r["name"], r["kind"], r.get("data", RELEASE), (r["meta"].get("model") or {}).get("backend") or "",
                      *_info(r), *("" if v is None else f"{v:.6f}" for v in vals)])
    buf = io.StringIO()
    csv.writer(buf).writerows([headers, *[[_csv_cell(str(c)) for c in line] for line in lines]])
    atomic_write_text(out / "leaderboard.csv", buf.getvalue())
    md = [f"Ranked by {RANK_METRIC} (G2M protocol), best first.", "",
          md_table(headers, [[c if c else "-" for c in line] for line in lines]), "",
          "## Reported in the paper (not re-scored, not ranked)", "", md_text(reported["note"]), "",
          md_table(REPORTED_HEADERS, _reported_rows(reported))]
    atomic_write_text(out / "leaderboard.md", "\n".join(md) + "\n")
    atomic_write_text(out / README_NAME, "---\ntitle: Grid2Matrix leaderboard\nsdk: static\napp_file: index.html\n"
                      "pinned: false\n---\n\nStatic site built by `g2m leaderboard build`.\n")
