"""Minimal, escaped HTML and markdown building blocks for the report and the static leaderboard site.

Every value that comes from a run or a submission is escaped: a model name is data, never markup, in HTML
(``esc``) and in markdown (``md_table``, ``untrusted.md``) alike.
"""

from __future__ import annotations

import math

from g2m_base.untrusted import esc, md

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}th,td{border:1px solid #ccc;padding:.3rem .55rem;text-align:right}
th{background:#f3f3f3;cursor:default}td.text,th.text{text-align:left}img{max-width:100%;height:auto;border:1px solid #eee}
th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999}.badge{font-size:.75rem;padding:.05rem .35rem;
border-radius:.3rem;background:#eee;margin-left:.3rem}.reported{color:#666;font-style:italic}.baseline{background:#fafaf0}
.muted{color:#777;font-size:.85rem}.banner{background:#fff8e1;border:1px solid #e0c97f;padding:.5rem .8rem;border-radius:.3rem}
pre{white-space:pre-wrap;word-break:break-all;background:#f7f7f7;padding:.5rem;font-size:.8rem;max-height:12rem;overflow:auto}
"""



def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def fmt_ci(value: float, ci: tuple[float, float]) -> str:
    return f"{fmt(value)} [{fmt(ci[0])}, {fmt(ci[1])}]"


def page(title: str, body: str, script: str = "") -> str:
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>"
            f"<body>\n{body}\n{f'<script>{script}</script>' if script else ''}</body></html>\n")


def table(headers: list[str], rows: list[list[str]], text_cols: int = 1, attrs: str = "") -> str:
    """An HTML table; cells are escaped here, so pass plain text."""
    head = "".join(f"<th class=\"{'text' if i < text_cols else ''}\">{esc(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td class=\"{'text' if i < text_cols else ''}\">{esc(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table {attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table; every cell is escaped (``untrusted.md``), so pass plain text."""
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
