"""The static leaderboard in a real headless browser (Debian's chromium driven by Playwright)."""

from __future__ import annotations

import csv
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest
from helpers import submission_doc, write_file

from leaderboard.site import build_site

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HOSTILE_NAME = "<img src=x onerror=alert(1)><script>alert(2)</script>"

if not Path(CHROMIUM).exists():
    if os.environ.get("G2M_REQUIRE_BROWSER"):
        raise RuntimeError("chromium is required (G2M_REQUIRE_BROWSER is set): apt-get install chromium")
    pytest.skip("chromium is not installed (CI installs it: apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    write_file(subs, submission_doc(), "perfect.json.gz")
    junk = submission_doc(output=lambda t: "[[0]]", scores={"exact_match": 1.0})
    junk["metadata"]["model"]["id"] = HOSTILE_NAME
    write_file(subs, junk, "junk.json")
    wrong = submission_doc()
    wrong["metadata"]["dataset"].update(revision="v0.1", content_sha256="f" * 64)
    write_file(subs, wrong, "wrong-revision.json")
    broken = submission_doc()
    broken["metadata"]["model"]["id"] = "surrogate \ud800 and $\\frac{ mathtext"
    write_file(subs, broken, "broken.json")
    deep = submission_doc()
    deep["metadata"]["extra"] = {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}
    write_file(subs, deep, "deep.json")
    (subs / "notes.txt").write_text("not a submission")
    (subs / "link.json").symlink_to(subs / "deep.json")
    os.mkfifo(subs / "fifo.json")
    out = tmp_path_factory.mktemp("site")
    res = build_site(subs, out)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}/", "dir": out, "result": res}
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def _open(browser, url):
    page = browser.new_page()
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return page, problems


def _column(page, index):
    return page.eval_on_selector_all("#board tbody tr", f"rows => rows.map(r => r.cells[{index}].getAttribute('data-v'))")


def test_rows_sorting_and_no_console_errors(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    assert page.title() == "Grid2Matrix leaderboard"
    names = page.eval_on_selector_all("#board tbody tr td:first-child", "cells => cells.map(c => c.textContent)")
    assert len(names) == 2 + 2  # two accepted submissions on the release and two baselines: nothing else is ranked
    reported = page.eval_on_selector_all("#reported tbody tr", "rows => rows.map(r => r.cells[4].textContent)")
    assert len(reported) == 18 and set(reported) == {"not stated"}  # the paper's numbers, in their own table
    local = page.eval_on_selector_all("#local tbody tr td:first-child", "cells => cells.map(c => c.textContent)")
    assert local == ["Test-VLM"]  # the run on other data is shown apart, not ranked
    assert any(HOSTILE_NAME in n for n in names)  # shown as text, never run as markup
    headers = page.eval_on_selector_all("#board th", "ths => ths.map(t => t.textContent)")
    col = headers.index("cell accuracy")
    page.click(f"#board th:nth-child({col + 1})")
    asc = [float(v) for v in _column(page, col) if v]
    assert asc == sorted(asc) and len(asc) == 4
    page.click(f"#board th:nth-child({col + 1})")
    desc = [float(v) for v in _column(page, col) if v]
    assert desc == sorted(desc, reverse=True)
    rejected = page.inner_text("table:not(#board):not(#local):not(#reported)")
    assert "broken.json" in rejected and "lone surrogate" in rejected and "deep.json" in rejected
    assert "link.json" in rejected and "fifo.json" in rejected
    assert problems == []


def test_model_pages_load_their_figures(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    links = page.eval_on_selector_all("#board a", "as => as.map(a => a.getAttribute('href'))")
    assert len(links) == 4
    for link in links:
        page, problems = _open(browser, site["url"] + link)
        images = page.eval_on_selector_all("img", "ims => ims.map(i => [i.complete, i.naturalWidth])")
        assert len(images) == 18 and all(done and width > 0 for done, width in images), link
        assert problems == []


def test_csv_markdown_and_space_metadata(site):
    rows = list(csv.reader(open(site["dir"] / "leaderboard.csv")))
    assert rows[0][:6] == ["model", "kind", "data", "backend", "exact match", "cell accuracy"] and len(rows) == 6
    assert rows[1][0] in ("Test-VLM", "g2m-oracle") and float(rows[1][5]) == 1.0
    md = (site["dir"] / "leaderboard.md").read_text()
    assert "| g2m-random |" in md and "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    assert "sdk: static" in (site["dir"] / "README.md").read_text()
    assert sorted(r["file"] for r in site["result"]["rejected"]) == ["broken.json", "deep.json", "fifo.json", "link.json"]
