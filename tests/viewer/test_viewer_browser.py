"""The viewer at a glance, in Chromium from disk, on the report of a real g2m-random run: an address names a sample
(it is scrolled into view and selected, on load and on hashchange) and the filters (kept in the query, restored on
load); the cells of the grid and of the answer are drawn with borders; on a 64 x 64 wrong answer the wrong cells are
marked without hiding the grid; the patch grid is a dark and a light line."""

from __future__ import annotations

import json
import re
import shutil

import pytest

pytestmark = pytest.mark.slow  # a report of a real lm-eval run, opened in a browser

VIEWPORT = {"width": 1280, "height": 900}
OUTLINE = "#3c3c3c"


@pytest.fixture(scope="module")
def viewer(random_run, tmp_path_factory) -> dict:
    from report.report import build_report

    run = tmp_path_factory.mktemp("viewer-browser") / "run"
    shutil.copytree(random_run, run, ignore=shutil.ignore_patterns("report", "submission*"))
    report = build_report(run, run / "report")
    page = run / "report" / report.document["viewer"]
    index = json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>',
                                 page.read_text(), re.S).group(1))
    return {"page": page, "rows": index["rows"], "palette": index["palette"]}


def _open(browser, url: str):
    page = browser.new_page(viewport=VIEWPORT)
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning")
            and not m.text.startswith("Canvas2D: Multiple readback") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page, problems


def _row_in_view(page, i: int) -> bool:
    """The list's row of sample ``i`` is selected and wholly inside the window and inside the list's box."""
    return page.evaluate("""i => {
        const tr = document.querySelector(`#list tbody tr[data-i="${i}"]`);
        if (!tr || !tr.classList.contains('sel')) { return false; }
        const r = tr.getBoundingClientRect(), box = document.querySelector('#list-scroll').getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight && r.top >= box.top && r.bottom <= box.bottom;
    }""", i)


def test_an_address_naming_a_sample_far_down_the_list_scrolls_it_into_view_and_selects_it(viewer, browser):
    rows = viewer["rows"]
    last = len(rows) - 1
    page, problems = _open(browser, viewer["page"].as_uri() + "#" + rows[last][0])
    page.wait_for_selector(f"[data-drawn='{rows[last][0]}']")
    assert page.evaluate("g2mViewer.current()") == last
    assert _row_in_view(page, last)
    page.evaluate(f"location.hash = {json.dumps('#' + rows[0][0])}")  # back to the top: a hashchange
    page.wait_for_selector(f"[data-drawn='{rows[0][0]}']")
    assert _row_in_view(page, 0) and not page.evaluate(f"!!document.querySelector('tr[data-i=\"{last}\"].sel')")
    n = rows[0][2]  # a filter that leaves the sample out, then an address naming it: the filter is cleared
    page.select_option("#f-n", page.evaluate(f"[...document.querySelector('#f-n').options].find(o => "
                                             f"o.textContent.startsWith('{rows[last][2]} x ')).value"))
    assert n != rows[last][2] and page.evaluate("g2mViewer.order()").count(0) == 0
    page.evaluate(f"location.hash = {json.dumps('#' + rows[1][0])}")
    page.wait_for_selector(f"[data-drawn='{rows[1][0]}']")
    assert page.input_value("#f-n") == "" and _row_in_view(page, 1)
    assert problems == []
    page.close()


def test_filters_are_kept_in_the_address_and_a_reload_restores_them(viewer, browser):
    page, problems = _open(browser, viewer["page"].as_uri())
    value = page.evaluate("[...document.querySelector('#f-n').options]"
                          ".find(o => o.textContent.startsWith('12 x ')).value")
    page.select_option("#f-n", value)
    page.fill("#q", "c5")
    page.select_option("#sort", "acc-desc")
    url = page.url
    assert "n=12" in url and "q=c5" in url and "sort=acc-desc" in url
    shown = page.evaluate("g2mViewer.order()")
    current = page.evaluate("g2mViewer.current()")
    assert shown and all(viewer["rows"][i][2] == 12 and "c5" in viewer["rows"][i][0] for i in shown)
    assert url.endswith("#" + viewer["rows"][current][0])  # and the sample shown
    page.close()
    page, more = _open(browser, url)  # the link, opened again: the same view
    assert page.input_value("#f-n") == value and page.input_value("#q") == "c5"
    assert page.input_value("#sort") == "acc-desc"
    assert page.evaluate("g2mViewer.order()") == shown and page.evaluate("g2mViewer.current()") == current
    page.select_option("#f-n", "")
    page.click("#reset")
    assert page.url.endswith("?sort=acc-desc#" + viewer["rows"][current][0])  # clearing the filters keeps the sort
    assert problems == [] and more == []
    page.close()


PIXELS = """([which, n]) => {  // the colour at each cell centre, and on the edge between each cell and the next
    const cv = document.querySelector('canvas#' + which);
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    const e = g2mViewer.cellEdges(which, n);
    const at = (x, y) => { const k = 4 * (y * cv.width + x);
        return '#' + [d[k], d[k + 1], d[k + 2]].map(v => v.toString(16).padStart(2, '0')).join(''); };
    const centre = [], edge = [];
    for (let r = 0; r < n; r++) {
        const cy = Math.floor((e[r] + e[r + 1]) / 2), c1 = [], e1 = [];
        for (let c = 0; c < n; c++) {
            c1.push(at(Math.floor((e[c] + e[c + 1]) / 2), cy));
            e1.push(c + 1 < n ? at(e[c + 1], cy) : null);
        }
        centre.push(c1); edge.push(e1);
    }
    return {centre, edge};
}"""


@pytest.mark.parametrize("size", [8, 64])
def test_cells_are_drawn_with_borders_on_the_answer_and_the_grid(viewer, browser, size):
    """Between two neighbours of one colour there is a grey line, on the answer as on the grid, at 64 x 64 too."""
    row = next(r for r in viewer["rows"] if r[2] == size and r[3] == 3 and r[4] == "wrong cells")
    page, problems = _open(browser, viewer["page"].as_uri() + "#" + row[0])
    page.wait_for_selector(f"[data-drawn='{row[0]}']")
    page.uncheck("#t-wrong")
    for which in ("answer", "grid"):
        px = page.evaluate(PIXELS, [which, size])
        pairs = [(r, c) for r in range(size) for c in range(size - 1)
                 if px["centre"][r][c] == px["centre"][r][c + 1] and px["centre"][r][c] in viewer["palette"]]
        assert pairs, which
        assert all(px["edge"][r][c] == OUTLINE for r, c in pairs), which
        assert all(cell in viewer["palette"] for line in px["centre"] for cell in line), which  # colours shown
    assert problems == []
    page.close()


def test_a_64x64_wrong_answer_is_marked_without_hiding_the_grid(viewer, browser):
    row = min((r for r in viewer["rows"] if r[2] == 64 and r[4] == "wrong cells"), key=lambda r: r[6])
    page, problems = _open(browser, viewer["page"].as_uri() + "#" + row[0])
    page.wait_for_selector(f"[data-drawn='{row[0]}']")
    assert page.is_checked("#t-wrong")  # marked by default
    marked = page.evaluate(PIXELS, ["grid", 64])
    share = page.evaluate("""() => {
        const cv = document.querySelector('canvas#grid'), ctx = cv.getContext('2d');
        const box = document.querySelector('#t-wrong');
        const a = ctx.getImageData(0, 0, cv.width, cv.height).data;
        box.click(); const b = ctx.getImageData(0, 0, cv.width, cv.height).data; box.click();
        let changed = 0, red = 0;
        for (let k = 0; k < a.length; k += 4) {
            if (a[k] !== b[k] || a[k + 1] !== b[k + 1] || a[k + 2] !== b[k + 2]) { changed++; }
            if (a[k] > 200 && a[k + 1] < 40 && a[k + 2] < 40) { red++; }
        }
        return {changed: changed / (a.length / 4), red: red / (a.length / 4)};
    }""")
    assert 0.02 < share["changed"] < 0.25 and share["red"] < 0.25, share  # marked, yet most of the grid shows
    page.uncheck("#t-wrong")
    plain = page.evaluate(PIXELS, ["grid", 64])
    assert marked["centre"] == plain["centre"]  # every cell's colour still shows where the marking is
    assert page.locator(".legend i.wrong.corner").count() == 1
    assert problems == []
    page.close()


MARKS = """n => {  // per cell of the grid: how far the wrong-cell mark's colour is from the cell's (0: unmarked), and
                   // the cell's colour
    const cv = document.querySelector('canvas#grid'), ctx = cv.getContext('2d');
    const box = document.querySelector('#t-wrong');
    const a = ctx.getImageData(0, 0, cv.width, cv.height).data;
    box.click(); const b = ctx.getImageData(0, 0, cv.width, cv.height).data; box.click();
    const e = g2mViewer.cellEdges('grid', n), out = [];
    for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
            const m = 4 * (Math.floor((e[r] + e[r + 1]) / 2) * cv.width + Math.floor((e[c] + e[c + 1]) / 2));
            let most = 0;  // over the pixels the mark changed: how far the mark's colour is from the cell's
            for (let y = e[r]; y < e[r + 1]; y++) {
                for (let x = e[c]; x < e[c + 1]; x++) {
                    const k = 4 * (y * cv.width + x);
                    if (a[k] === b[k] && a[k + 1] === b[k + 1] && a[k + 2] === b[k + 2]) { continue; }
                    most = Math.max(most, 1e-9, Math.hypot(a[k] - b[m], a[k + 1] - b[m + 1], a[k + 2] - b[m + 2]));
                }
            }
            out.push([r, c, most, [b[m], b[m + 1], b[m + 2]]]);
        }
    }
    return out;
}"""


def test_a_wrong_cell_is_marked_in_a_colour_far_from_its_own_red_cells_too(viewer, browser):
    """On a 64 x 64 answer every wrong cell, and no other, gets a mark that differs from the cell by a clear distance
    in RGB (the palette's red, 205 78 78, lies 112 from the mark's red alone: its white edge shows it)."""
    row = min((r for r in viewer["rows"] if r[2] == 64 and r[4] == "wrong cells"), key=lambda r: r[6])
    page, problems = _open(browser, viewer["page"].as_uri() + "#" + row[0])
    page.wait_for_selector(f"[data-drawn='{row[0]}']")
    answer, grid = page.evaluate(PIXELS, ["answer", 64])["centre"], page.evaluate(PIXELS, ["grid", 64])["centre"]
    cells = page.evaluate(MARKS, 64)
    wrong = {(r, c) for r, c, *_ in cells if answer[r][c] != grid[r][c]}
    assert {(r, c) for r, c, most, _ in cells if most > 0} == wrong  # marked exactly where the answer is wrong
    red = [most for r, c, most, rgb in cells if (r, c) in wrong and rgb == [205, 78, 78]]
    assert len(red) > 100, len(red)  # the hard case is there
    assert min(most for r, c, most, _ in cells if (r, c) in wrong) >= 150
    assert problems == []
    page.close()


def test_the_patch_grid_is_a_dark_and_a_light_line(viewer, browser):
    row = next(r for r in viewer["rows"] if r[2] == 3)
    page, problems = _open(browser, viewer["page"].as_uri() + "#" + row[0])
    page.wait_for_selector(f"[data-drawn='{row[0]}']")
    page.check("#t-patch")
    colours = page.evaluate("""() => {
        const cv = document.querySelector('canvas#answer'), ctx = cv.getContext('2d');
        const p = Math.round(16 * cv.width / 512), y = Math.floor(cv.height / 2) + 3;
        return [p - 1, p, p + 4].map(x => { const d = ctx.getImageData(x, y, 1, 1).data; return [d[0], d[1], d[2]]; });
    }""")
    dark, light, cell = colours  # a dark line and a cyan one, both letting the cell's colour through
    assert sum(dark) < sum(cell) - 150 and sum(dark) > 0 and min(light[1:]) >= 200 and light[0] < 60, colours
    assert light != [0, 229, 255], colours
    assert problems == []
    page.close()
