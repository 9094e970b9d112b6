"""A board of many rows in a real headless browser: 50 rows drawn at a time, paged, sorted and searched over all
rows, and the first page the script draws is the one the page was written with (so it reads without JavaScript)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from leaderboard.index_page import PAGE_ROWS, VIEWS, write_index
from scoring.rescoring.rescore import summarise

pytestmark = pytest.mark.slow  # starts a browser

HOSTILE = "</script><img src=x onerror=alert(1)>"
ROWS = 123


def _summary(cell: float, failed: float) -> dict:
    s = summarise([]).as_dict()
    s.update(n=4500, exact_match=cell / 2, cell_accuracy=cell, cell_accuracy_strict=cell, parse_failed=failed,
             truncated=0.0, request_failed=0.0)
    return s


def _row(k: int) -> dict:
    """Row k: cell accuracy falls with k, parse failures are highest for the middle rows."""
    cell, failed = 1 - k / 200, abs(k - ROWS // 2) / ROWS
    view = {"overall": _summary(cell, failed), "paper": None, "paper_mark": "*",
            "by_n": {n: _summary(cell, failed) for n in ZERO_SHOT_SIZES}}
    name = HOSTILE if k == 77 else f"model-{k:03d}"
    return {"name": name, "kind": "submission", "data": "release", "page": f"models/m{k}.html", "raw": f"raw/m{k}.json",
            "meta": {"model": {"id": name, "params": "8B", "url": "https://example.org/m"}},
            "views": dict.fromkeys(VIEWS, view)}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    out = tmp_path_factory.mktemp("board")
    reported = json.loads((Path(__file__).parents[2] / "leaderboard" / "reported.json").read_text())
    write_index(out, [_row(k) for k in range(ROWS)], reported, [])
    return (out / "index.html").as_uri()


def _open(browser, url, javascript=True):
    page = browser.new_page(java_script_enabled=javascript)
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(url)
    return page, problems


def _rows(page, table="#board"):
    return page.eval_on_selector_all(f"{table} tbody tr", """rows => rows.map(r => [r.getAttribute('data-name'),
        r.className, Array.from(r.cells).map(c => [c.getAttribute('data-v'), c.textContent, c.className,
        Array.from(c.querySelectorAll('a')).map(a => [a.getAttribute('href'), a.className, a.hasAttribute('download')])])])""")  # noqa: E501 (the script's text stays as it is)


def test_the_script_draws_the_first_page_the_page_was_written_with(index, browser):
    written, _ = _open(browser, index, javascript=False)
    drawn, problems = _open(browser, index)
    assert len(_rows(written)) == PAGE_ROWS and _rows(drawn) == _rows(written)
    assert "leaderboard.csv" in written.inner_text("#view-all")  # without the script, where the other rows are
    assert problems == []


def test_pages_of_50_rows_cover_every_row(index, browser):
    page, problems = _open(browser, index)
    seen = []
    for expected in ("rows 1\u201350 of 123", "rows 51\u2013100 of 123", "rows 101\u2013123 of 123"):
        assert page.inner_text("#pager-board .where") == expected
        seen += [r[0] for r in _rows(page)]
        if not page.is_disabled("#pager-board .next"):
            page.click("#pager-board .next")
    assert page.is_disabled("#pager-board .next") and len(seen) == len(set(seen)) == ROWS
    assert HOSTILE in seen and page.eval_on_selector_all("img", "ims => ims.length") == 0  # text, never markup
    assert problems == []


def test_sorting_and_search_reach_rows_on_other_pages(index, browser):
    page, problems = _open(browser, index)
    headers = page.eval_on_selector_all("#board th", "ths => ths.map(t => t.textContent)")
    col = headers.index("parse failed")
    page.click("#pager-board .next")
    page.click(f"#board th:nth-child({col + 1})")  # lower is better: best first, from the first page again
    first = [float(r[2][col][0]) for r in _rows(page)]
    assert page.inner_text("#pager-board .where").startswith("rows 1\u201350") and first == sorted(first)
    assert first[0] == 0.0  # the global best, which the default order had on page 2
    page.fill("#search", "MODEL-120")
    assert [r[0] for r in _rows(page)] == ["model-120"] and page.is_hidden("#pager-board")
    assert problems == []
