"""The board at a glance, in a real headless browser (conftest's ``browser``): at 1,280 px its whole table is in view
with no horizontal scroll and no cell cut, the column definitions wait behind a link, and the front figure draws its
two baselines apart from each other and from the models, each named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from leaderboard import front_figure
from leaderboard.index_page import VIEWS, write_index
from scoring.rescoring.rescore import summarise

pytestmark = pytest.mark.slow  # starts a browser

#: Names as long as the Hub's (and one with no place to break), the tiers' longest words, every column filled.
NAMES = ["meta-llama/Llama-3.2-90B-Vision-Instruct", "llava-hf/llava-onevision-qwen2-72b-ov-hf",
         "HuggingFaceTB/SmolVLM2-2.2B-Instruct", "org/" + "x" * 60, "Qwen/Qwen2.5-VL-72B-Instruct"]


def _summary(cell: float) -> dict:
    s = summarise([]).as_dict()
    s.update(n=4500, exact_match=cell / 3, cell_accuracy=cell, cell_accuracy_strict=cell * 0.9, parse_failed=0.125,
             truncated=1.0, request_failed=0.0)
    return s


def _row(name: str, kind: str, cell: float) -> dict:
    view = {"overall": _summary(cell), "paper": _summary(cell * 0.8), "paper_mark": "*",
            "by_n": {n: _summary(cell if n > 3 else 1.0) for n in ZERO_SHOT_SIZES}}
    model = {"id": name} if kind == "baseline" else {"id": name, "params": "124B", "open_weights": True,
                                                      "release_date": "2025-10-01", "url": "https://example.org/m"}
    return {"name": name, "kind": kind, "data": "release", "page": f"models/{len(name)}.html",
            "raw": None if kind == "baseline" else "raw/m.json.gz", "meta": {"model": model},
            "views": dict.fromkeys(VIEWS, view)}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    out = tmp_path_factory.mktemp("board")
    reported = json.loads((Path(__file__).parents[2] / "leaderboard" / "reported.json").read_text())
    rows = [_row("g2m-oracle", "baseline", 1.0), _row("g2m-random", "baseline", 0.21)]
    rows += [_row(name, "submission", 0.9 - 0.1 * k) for k, name in enumerate(NAMES)]
    write_index(out, rows, reported, [])
    return (out / "index.html").as_uri()


def _open(browser, url, width=1280):
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(url)
    return page, problems


#: The cells whose text does not fit their box (drawn cut, or ellipsised): each text's boxes against the cell's.
CUT = """cells => cells.filter(c => {
  const r = document.createRange(); r.selectNodeContents(c);
  const s = getComputedStyle(c), room = c.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return Array.from(r.getClientRects()).some(b => b.width > room + 0.5);
}).map(c => c.textContent)"""


def test_the_whole_board_fits_1280_px_with_no_horizontal_scroll_and_no_cell_cut(index, browser):
    page, problems = _open(browser, index)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    last = page.eval_on_selector("#board thead th:last-child", "t => [t.textContent, t.getBoundingClientRect().right]")
    assert last[0] == "N=64" and last[1] <= 1280  # the last column within the viewport
    assert page.eval_on_selector("#board", "t => t.getBoundingClientRect().right") <= 1280
    assert page.eval_on_selector("#view-all .scroll", "s => s.scrollWidth <= s.clientWidth")  # nothing to scroll to
    headers = page.eval_on_selector_all("#board thead th", "ths => ths.map(t => t.textContent)")
    assert "parse failed" in headers and "truncated" in headers and len(headers) == 13 + len(ZERO_SHOT_SIZES)
    assert page.eval_on_selector_all("#board th, #board td", CUT) == []  # every header and number shown whole
    assert len(page.eval_on_selector_all("#board tbody tr", "rs => rs")) == 2 + len(NAMES)
    by_n = page.eval_on_selector_all("#board tbody tr:first-child td", "cs => cs.slice(-2).map(c => c.textContent)")
    assert by_n == [".90", ".90"] or by_n == ["1", "1"]  # per-N cells compact: no leading zero
    assert problems == []


def test_at_900_px_the_table_scrolls_inside_its_box_and_the_page_does_not(index, browser):
    page, _ = _open(browser, index, width=900)
    assert page.evaluate("document.documentElement.scrollWidth") <= 900
    assert page.eval_on_selector("#view-all .scroll", "s => s.scrollWidth > s.clientWidth")


def test_the_column_definitions_are_behind_a_link(index, browser):
    page, _ = _open(browser, index)
    summary = page.eval_on_selector("#definitions", "d => [d.open, d.querySelector('summary').textContent]")
    assert summary == [False, "What the columns mean"]
    assert "Ranked by cell accuracy" in page.inner_text("body")
    assert not page.is_visible("text=Strict cell counts 0 cells")  # folded
    above = page.eval_on_selector("#board", "t => t.getBoundingClientRect().top")
    assert above < 320  # the table starts on the first screen, a few lines below the title
    page.click("#definitions summary")
    assert page.is_visible("text=Strict cell counts 0 cells")
    assert "Tier" in page.inner_text("#definitions")


def test_the_two_baselines_are_drawn_apart_and_named(index, browser):
    page, problems = _open(browser, index)
    style = """g => { const p = g.querySelector('polyline');
        return [p.getAttribute('stroke'), p.getAttribute('stroke-dasharray') || '']; }"""
    oracle = page.eval_on_selector("#figure-all g.line[data-model='g2m-oracle']", style)
    random = page.eval_on_selector("#figure-all g.line[data-model='g2m-random']", style)
    assert oracle[0] != random[0] and oracle[1] != random[1] and oracle[1] and random[1]  # colour and dashes differ
    assert [oracle, random] == [list(front_figure.BASELINE_STYLES[n]) for n in ("g2m-oracle", "g2m-random")]
    models = page.eval_on_selector_all("#figure-all g.line",
                                       f"gs => gs.filter(g => !g.dataset.model.startsWith('g2m-')).map({style})")
    assert models and all(m[1] not in (oracle[1], random[1]) for m in models)
    legend = page.eval_on_selector_all("#figure-all .legend label", """ls => ls.map(l => [l.textContent,
        l.querySelector('svg line').getAttribute('stroke'), l.querySelector('svg line').getAttribute('stroke-dasharray')
        || ''])""")
    named = {text.split(". ", 1)[1].split()[0]: [colour, dash] for text, colour, dash in legend if "baseline" in text}
    assert named == {"g2m-oracle": oracle, "g2m-random": random}  # each labelled, its swatch drawn as its line
    assert problems == []


def test_a_baseline_ranked_past_the_ten_drawn_is_drawn_all_the_same():
    rows = [_row(f"org/model-{k:02d}", "submission", 0.95 - 0.01 * k) for k in range(12)]
    rows.append(_row("g2m-random", "baseline", 0.21))
    f = front_figure.figure(rows, "all", "figure-all")
    shown = [m["name"] for m in f["lines"] if m["shown"]]
    assert shown == [f"org/model-{k:02d}" for k in range(10)] + ["g2m-random"]
    assert [m["name"] for m in f["legend"]] == shown and len(f["more"]) == 2  # named with the lines drawn
