"""The sample viewer ``g2m report`` writes, in Chromium from disk: every sample listed, filters and sorting over all
of them, keyboard navigation, the answer drawn cell for cell as it was parsed, hostile text shown as text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from scoring.parsing import format_answer, parse_matrix

pytestmark = pytest.mark.slow  # a report of a real lm-eval run, opened in a browser

HOSTILE = "</script><img src=x onerror=alert(1)><mark>not markup</mark>"


def _answer(k: int, m: np.ndarray, c: int) -> tuple[str, str | None]:
    """The k-th sample's answer (and finish reason): a spread of what models write."""
    kind = k % 8
    if kind == 0:
        return format_answer(m), "stop"
    if kind == 1:  # a row skipped: every later row is the next one's
        return format_answer(np.vstack([m[1:], m[-1:]])), "stop"
    if kind == 2:  # stopped early: the last row missing, and the one before cut
        return format_answer(m)[: len(format_answer(m[:-1])) - 3], "length"
    if kind == 3:  # a value outside the palette
        bad = m.copy()
        bad[0, 0] = 7 if c < 7 else 12
        return format_answer(bad), "stop"
    if kind == 4:
        return "I cannot read the colours in this image.", "stop"
    if kind == 5:  # markup around a right answer: text, never markup
        return f"{HOSTILE}\n{format_answer(m)}\nThat is the grid.", "stop"
    if kind == 6:  # an extra row
        return format_answer(np.vstack([m, m[:1]])), "stop"
    return format_answer(m.T), "stop"


@pytest.fixture(scope="module")
def viewer(random_run, tmp_path_factory) -> dict:
    from report.report import build_report

    run = tmp_path_factory.mktemp("viewer") / "run"
    shutil.copytree(random_run, run, ignore=shutil.ignore_patterns("report", "submission*"))
    answers = {}
    k = 0
    for f in sorted(run.glob("samples_*.jsonl")):
        rows = []
        for line in f.read_text().splitlines():
            row = json.loads(line)
            doc = row["doc"]
            text, finish = _answer(k, np.asarray(doc["matrix"]), doc["num_colors"])
            row["resps"], row["filtered_resps"] = [[text]], [text]
            doc["g2m"]["finish_reason"] = finish
            answers[doc["id"]] = (text, doc["grid_size"], doc["num_colors"])
            rows.append(row)
            k += 1
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = build_report(run, run / "report")
    return {"report": report, "page": run / "report" / report.document["viewer"], "answers": answers}


def _open(browser, path: Path, fragment: str = ""):
    page = browser.new_page()
    problems = []
    # the test's own pixel read-back makes Chromium advise willReadFrequently: not the page's warning
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning")
            and not m.text.startswith("Canvas2D: Multiple readback") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector("body[data-ready='1']")
    return page, problems


def _index(viewer) -> dict:
    html = viewer["page"].read_text()
    return json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', html,
                                re.S).group(1))


def test_every_sample_is_listed_with_what_the_report_scored(viewer):
    index = _index(viewer)
    assert len(index["rows"]) == 90 and {r[0] for r in index["rows"]} == set(viewer["answers"])
    outcomes = {r[4] for r in index["rows"]}
    assert {"exact", "wrong cells", "parse failure", "truncated"} <= outcomes
    assert {r[7] for r in index["rows"]} & {"row shift", "transposition"}  # error shapes are named
    report = viewer["report"]
    assert sum(r[4] == "exact" for r in index["rows"]) == round(report.overall.exact_match * 90)
    assert "Every sample, one at a time" in (viewer["page"].parent.parent / "index.html").read_text()


def _choose(page, select: str, label: str) -> None:
    """Pick the option of ``select`` whose label is ``label`` (the page adds each option's count in brackets)."""
    value = page.evaluate("([s, l]) => [...document.querySelector(s).options].find(o => o.textContent.startsWith("
                          "l + ' (')).value", [select, label])
    page.select_option(select, value)


def test_filters_sorting_and_keyboard_navigation(viewer, browser):
    page, problems = _open(browser, viewer["page"])
    index = _index(viewer)
    order = page.evaluate("g2mViewer.order()")
    assert sorted(order) == list(range(90))
    _choose(page, "#f-n", "12 x 12")
    shown = page.evaluate("g2mViewer.order()")
    assert shown and all(index["rows"][i][2] == 12 for i in shown)
    assert len(shown) == sum(r[2] == 12 for r in index["rows"])
    page.select_option("#f-n", "")
    _choose(page, "#f-outcome", "parse failure")
    failed = page.evaluate("g2mViewer.order()")
    assert failed and all(index["rows"][i][4] == "parse failure" for i in failed)
    page.select_option("#f-outcome", "")
    page.select_option("#sort", "acc-asc")
    accs = [index["rows"][i][6] for i in page.evaluate("g2mViewer.order()")]
    assert accs == sorted(accs)
    first = page.evaluate("g2mViewer.current()")
    page.keyboard.press("j")
    page.wait_for_function(f"g2mViewer.current() !== {first}")
    order = page.evaluate("g2mViewer.order()")
    assert page.evaluate("g2mViewer.current()") == order[order.index(first) + 1]
    page.keyboard.press("ArrowUp")
    page.wait_for_function(f"g2mViewer.current() === {first}")
    assert problems == []


def _drawn(page, which: str, n: int, rows: int, cols: list[int]) -> list[list[str]]:
    """The colour at each cell centre of a canvas, read back from its pixels."""
    return page.evaluate("""([which, n, rows, cols]) => {
        const canvas = document.querySelector('canvas#' + which), ctx = canvas.getContext('2d');
        const out = [];
        for (let r = 0; r < rows; r++) {
            const line = [];
            for (let c = 0; c < cols[r]; c++) {
                const [x, y] = g2mViewer.cellCentre(which, n, r, c);
                const d = ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data;
                line.push('#' + [d[0], d[1], d[2]].map(v => v.toString(16).padStart(2, '0')).join(''));
            }
            out.push(line);
        }
        return out;
    }""", [which, n, rows, cols])


def test_the_answer_is_drawn_cell_for_cell_as_it_was_parsed(viewer, browser):
    index = _index(viewer)
    palette = index["palette"]
    checked = 0
    for row in index["rows"]:
        sid, n, c = row[0], row[2], row[3]
        if n > 12 or row[4] == "parse failure":
            continue
        page, problems = _open(browser, viewer["page"], f"#{sid}")
        page.wait_for_selector(f"[data-drawn='{sid}']")
        parsed = parse_matrix(viewer["answers"][sid][0], n).matrix
        rows = min(len(parsed), n)
        cols = [min(len(parsed[r]), n) for r in range(rows)]
        drawn = _drawn(page, "answer", n, rows, cols)
        want = [[palette[v] if 0 <= v < c else None for v in parsed[r][: cols[r]]] for r in range(rows)]
        for r in range(rows):
            for col in range(cols[r]):
                if want[r][col] is not None:  # a value outside the palette is hatched grey, not a palette colour
                    assert drawn[r][col] == want[r][col], (sid, r, col)
                else:
                    assert drawn[r][col] not in palette[:c], (sid, r, col)
        truth = _drawn(page, "grid", n, n, [n] * n)
        assert all(cell in palette[:c] for line in truth for cell in line)
        assert problems == []
        page.close()
        checked += 1
        if checked == 6:
            break
    assert checked == 6


def test_a_hostile_answer_stays_text(viewer, browser):
    sid = next(s for s, (text, _, _) in viewer["answers"].items() if HOSTILE in text)
    page, problems = _open(browser, viewer["page"], f"#{sid}")
    page.wait_for_selector(f"[data-drawn='{sid}']")
    assert HOSTILE in page.inner_text("pre#text")
    assert page.eval_on_selector_all("img", "ims => ims.length") == 0
    marked = page.eval_on_selector_all("pre#text mark", "ms => ms.map(m => m.textContent)")
    assert marked and marked[-1].startswith("[[") and "not markup" not in marked[-1]  # the parsed part only
    assert problems == []


def test_a_chunk_is_deflated_and_one_that_will_not_inflate_is_said_not_loaded(viewer, browser, tmp_path):
    """Chunks are written deflated (a third of the size); a damaged one never breaks the page: the sample says its
    details could not be loaded, and every other sample still opens."""
    import base64
    import zlib

    folder = tmp_path / "viewer"
    shutil.copytree(viewer["page"].parent, folder)
    first = (folder / "chunks" / "0000.js").read_text()
    data = re.fullmatch(r'g2mChunkZ\(0, "([A-Za-z0-9+/=]+)"\);\n', first).group(1)
    items = json.loads(zlib.decompress(base64.b64decode(data)))
    assert len(items) == 50 and items[0]["id"] == _index(viewer)["rows"][0][0]
    (folder / "chunks" / "0000.js").write_text('g2mChunkZ(0, "bm90IGRlZmxhdGVk");\n')  # base64, not deflate
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / "index.html").as_uri())
    page.wait_for_selector("#status:not([hidden])")
    page.wait_for_function("document.querySelector('#status').textContent.includes('could not be loaded')")
    assert errors == []
    page.goto((folder / "index.html").as_uri() + f"#{_index(viewer)['rows'][60][0]}")  # in the second chunk
    page.wait_for_selector("#detail[data-drawn]")
    assert errors == []
