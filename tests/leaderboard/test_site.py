"""The static leaderboard in a real headless browser (Debian's chromium driven by Playwright, conftest's ``browser``),
and what it writes besides the pages (its CSV and markdown, the gap it reports), which needs no browser."""

from __future__ import annotations

import copy
import csv
import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

import leaderboard.build as site_module
from leaderboard.build import build_site
from tests.support.helpers import full_scale_probes, submission_doc, write_file

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

HOSTILE_NAME = "<img src=x onerror=alert(1)><script>alert(2)</script>"


#: What forging a probe section's per-point numbers writes: every number of every point (it changes nothing).
FORGED = {"cell_accuracy": 1.0, "cell_accuracy_ci": [1.0, 1.0], "exact_match": 1.0}


@pytest.fixture(scope="module")
def site(tmp_path_factory, probed_doc):
    subs = tmp_path_factory.mktemp("subs")
    full = full_scale_probes(probed_doc)  # the tiny VLM with its sweep's sections on the full config: ranked by gap
    write_file(subs, full, "probed.json")
    again = copy.deepcopy(full)  # the same model at another revision (another answer at N=3): an entry of its own
    again["metadata"]["model"]["revision"] = "r2"
    again["records"][0]["output"] = "[[0]]"
    write_file(subs, again, "probed-r2.json")
    forged = copy.deepcopy(full)
    for sec in forged["probes"]:
        for q in sec["points"]:
            q.update(FORGED)  # the same model sent again, every per-point number forged
    write_file(subs, forged, "probed-forged.json")  # the same entry again: listed under probed.json, not ranked
    perfect = submission_doc()
    perfect["metadata"]["model"].update(params="8B", open_weights=True, release_date="2025-10-01",
                                        url="https://huggingface.co/org/test-vlm")
    write_file(subs, perfect, "perfect.json.gz")
    oracle = submission_doc()  # a baseline sent in again, under a spelling of its name: the baseline stays ours
    oracle["metadata"]["model"]["id"] = "G2M-Oracle"  # a Hub id in another case: the board refuses it
    write_file(subs, oracle, "oracle-again.json")
    shutil.copyfile(subs / "perfect.json.gz", subs / "~perfect-again.json.gz")  # the same file twice: ranked once,
                                                                                # first by name
    junk = submission_doc(output=lambda t: "[[0]]", scores={"exact_match": 1.0})
    junk["metadata"]["model"].update(id="junk-vlm", backend=HOSTILE_NAME)  # free text: shown as text
    write_file(subs, junk, "junk.json")
    hostile = submission_doc()  # markup as the model's id: no Hub id, refused (its reason shown as text)
    hostile["metadata"]["model"]["id"] = HOSTILE_NAME
    write_file(subs, hostile, "hostile-name.json")
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
    write_file(subs, submission_doc(), "bug.json")  # scoring it trips a bug (injected below): the site goes on
    out = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as mp:
        real = site_module.validate
        mp.setattr(site_module, "validate", lambda p: real(p) if Path(p).name != "bug.json" else 1 / 0)
        res = build_site(subs, out)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}/", "dir": out, "result": res}
    server.shutdown()


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
    return page.eval_on_selector_all("#board tbody tr",
                                     f"rows => rows.map(r => r.cells[{index}].getAttribute('data-v'))")


def test_rows_sorting_and_no_console_errors(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    assert page.title() == "Grid2Matrix leaderboard"
    names = page.eval_on_selector_all("#board tbody tr", "rows => rows.map(r => r.getAttribute('data-name'))")
    # two accepted submissions on the release and the tiny VLM's two (answers and probes), the oracle sent in again
    # (shown once), and the random baseline
    assert len(names) == 6 and names.count("g2m-oracle") == 1 and "g2m-random" in names
    reported = page.eval_on_selector_all("#reported tbody tr", "rows => rows.map(r => r.cells[4].textContent)")
    assert len(reported) == 18 and set(reported) == {"not stated"}  # the paper's numbers, in their own table
    assert page.eval_on_selector("#reported", "t => t.closest('.scroll') === null && !t.classList.contains('board')")
    local = page.eval_on_selector_all("#local tbody tr", "rows => rows.map(r => r.getAttribute('data-name'))")
    assert local == ["Test-VLM"]  # the run on other data is shown apart, not ranked
    assert HOSTILE_NAME not in names and "junk-vlm" in names  # no id but a Hub id is ever a row's name
    headers = page.eval_on_selector_all("#board th", "ths => ths.map(t => t.textContent)")
    col = headers.index("cell accuracy")
    assert page.eval_on_selector(f"#board th:nth-child({col + 1})", "t => t.getAttribute('aria-sort')") == "descending"
    default = [float(v) for v in _column(page, col) if v]
    assert default == sorted(default, reverse=True) and len(default) == 6  # best first by the stated metric
    assert "Ranked by cell accuracy" in page.inner_text("body")
    fails = headers.index("parse failed")
    page.click(f"#board th:nth-child({fails + 1})")  # lower is better: best first is ascending
    asc = [float(v) for v in _column(page, fails) if v]
    assert asc == sorted(asc)
    page.click(f"#board th:nth-child({col + 1})")  # the first click on a score is best first too
    assert [float(v) for v in _column(page, col) if v] == default
    page.click(f"#board th:nth-child({col + 1})")
    assert [float(v) for v in _column(page, col) if v] == sorted(default)
    rejected = page.inner_text("#rejected")
    assert "broken.json" in rejected and "lone surrogate" in rejected and "deep.json" in rejected
    assert "link.json" in rejected and "fifo.json" in rejected
    assert "hostile-name.json" in rejected and HOSTILE_NAME in rejected  # its reason quotes it, as text
    assert page.eval_on_selector_all("#rejected script, #rejected img", "es => es.length") == 0
    assert "How to submit" in page.inner_text(".howto") and "g2m submit" in page.inner_text(".howto")
    assert problems == []


def test_the_model_column_stays_visible_when_scrolled_right(site, browser):
    page, _ = _open(browser, site["url"] + "index.html")
    page.set_viewport_size({"width": 900, "height": 800})
    box = page.eval_on_selector("#view-all .scroll",
                                "s => { s.scrollLeft = 100000; return s.getBoundingClientRect().left; }")
    assert page.eval_on_selector("#view-all .scroll", "s => s.scrollLeft") > 300  # it really scrolled
    first = page.eval_on_selector("#board tbody tr td:first-child", "c => c.getBoundingClientRect().left")
    assert abs(first - box) < 3
    last_header = page.eval_on_selector("#board thead th:last-child", "t => t.textContent")
    assert last_header == "N=64"


def test_the_palette_tabs_and_search_change_what_is_shown(site, browser):
    page, _ = _open(browser, site["url"] + "index.html")
    col = page.eval_on_selector_all("#board th", "ths => ths.map(t => t.textContent)").index("cell accuracy")

    def random_row(table: str) -> float:
        return float(page.eval_on_selector(f"{table} tr[data-name='g2m-random']",
                                           f"r => r.cells[{col}].getAttribute('data-v')"))

    assert random_row("#board") == pytest.approx(0.21, abs=0.02)  # 1/3, 1/5, 1/10 averaged over all palettes
    assert page.is_hidden("#board-c3")
    page.click("button[data-view=c3]")
    assert page.is_visible("#board-c3") and page.is_hidden("#board")
    assert random_row("#board-c3") == pytest.approx(1 / 3, abs=0.02)
    page.click("button[data-view=c10]")
    assert random_row("#board-c10") == pytest.approx(0.1, abs=0.02)
    page.click("button[data-view=all]")
    page.fill("#search", "RANDOM")
    visible = page.eval_on_selector_all("#board tbody tr",
                                        "rows => rows.filter(r => !r.hidden).map(r => r.getAttribute('data-name'))")
    assert visible == ["g2m-random"]


def test_every_submission_links_raw_outputs_that_download(site, browser):
    import gzip
    import json
    import urllib.request

    page, _ = _open(browser, site["url"] + "index.html")
    rows = page.eval_on_selector_all("#board tbody tr", """rows => rows.map(r => [r.getAttribute('data-name'),
        (r.querySelector('a[download]') || {}).href || null, r.className])""")
    for name, href, kind in rows:
        if kind == "baseline":
            assert href is None
            continue
        with urllib.request.urlopen(href) as resp:
            raw = resp.read()
        doc = json.loads(gzip.decompress(raw) if href.endswith(".gz") else raw)
        assert doc["metadata"]["model"]["id"] == name and len(doc["records"]) == 4500
    info = page.eval_on_selector("#board tr[data-name='Test-VLM']",
                                 "r => Array.from(r.cells).slice(1, 5).map(c => c.textContent)")
    assert info == ["self-reported", "8B", "open", "2025-10-01"]
    assert page.eval_on_selector("#board tr[data-name='Test-VLM'] a.ext",
                                 "a => a.href") == "https://huggingface.co/org/test-vlm"


def test_model_pages_load_their_figures(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    links = page.eval_on_selector_all("#board tbody tr td:first-child a:first-child",
                                      "as => as.map(a => a.getAttribute('href'))")
    assert len(links) == 6
    for link in links:
        page, problems = _open(browser, site["url"] + link)
        images = page.eval_on_selector_all("img", "ims => ims.map(i => [i.complete, i.naturalWidth])")
        assert len(images) == (5 if "tiny-vlm" in link else 4) and all(done and width > 0 for done,
                                                                       width in images), link
        assert problems == []
        tier = page.text_content(".tier")  # every page says whether its outputs are known to be the model's
        baseline = link in ("models/g2m-oracle.html", "models/g2m-random.html")
        assert tier.startswith("Tier: reproduced" if baseline else "Tier: self-reported"), (link, tier)


def test_csv_markdown_and_space_metadata(site):
    rows = list(csv.reader(open(site["dir"] / "leaderboard.csv")))
    assert rows[0][:9] == ["model", "kind", "data", "backend", "tier", "params", "weights", "released",
                           "cell accuracy"]
    assert len(rows) == 9 and rows[1][0] in ("Test-VLM", "g2m-oracle") and float(rows[1][8]) == 1.0
    # no submission is replayed yet: each says so, and only the board's own baselines are reproduced
    assert {(r[1], r[4]) for r in rows[1:]} == {("submission", "self-reported"), ("baseline", "reproduced")}
    md = (site["dir"] / "leaderboard.md").read_text()
    assert "| g2m-random |" in md and "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    assert "sdk: static" in (site["dir"] / "README.md").read_text()
    rejected = {r["file"]: r["reason"] for r in site["result"].rejected}
    assert rejected.pop("bug.json") == "could not be scored (internal error: ZeroDivisionError)"
    assert sorted(rejected) == ["broken.json", "deep.json", "fifo.json", "hostile-name.json", "link.json",
                                "oracle-again.json", "~perfect-again.json.gz"]
    assert "is not a Hub model id" in rejected["hostile-name.json"]
    assert "built-in baseline" in rejected["oracle-again.json"]
    assert rejected["~perfect-again.json.gz"] == "the same submission as perfect.json.gz (shown once)"


# --- the front-page figure: cell accuracy against N, one line per ranked model --------------------------------------

def _lines(page, view: str) -> list[tuple[str, bool]]:
    """(model, drawn) for every line of a tab's figure, best first."""
    return page.eval_on_selector_all(
        f"#figure-{view} g.line", "gs => gs.sort((a, b) => a.dataset.rank - b.dataset.rank).map(g => "
        "[g.getAttribute('data-model'), getComputedStyle(g).display !== 'none' && g.querySelectorAll('circle, "
        "polygon').length > 0])")


def _board_names(page, table: str) -> list[str]:
    return page.eval_on_selector_all(f"{table} tbody tr", "rows => rows.map(r => r.getAttribute('data-name'))")


def test_the_front_figure_draws_every_ranked_model_above_how_to_submit(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    lines = _lines(page, "all")
    assert [name for name, _ in lines] == _board_names(page, "#board")  # the board's models, in its order
    assert all(drawn for _, drawn in lines) and len(lines) == 6
    caption = page.inner_text("#figure-all figcaption")  # Test-VLM and g2m-oracle draw one line: said, not hidden
    assert "Drawn on one another (the same cell accuracy at every N): " in caption and "g2m-oracle" in caption
    assert ("is near 0 for every" not in page.inner_text("body")
            and "exact match beside it (past N = 8" in page.inner_text("body"))
    assert "junk-vlm" in [name for name, _ in lines]  # names are the rows' Hub ids
    chance = page.eval_on_selector_all("#figure-all line.chance", "ls => ls.map(l => +l.dataset.chance)")
    assert chance == [3, 5, 10]
    assert page.eval_on_selector("#figure-all", "f => !!(f.compareDocumentPosition(document.querySelector('.howto')) "
                                                "& Node.DOCUMENT_POSITION_FOLLOWING)")  # above "How to submit"
    oracle = page.eval_on_selector("#figure-all g.line[data-model='g2m-oracle'] polyline",
                                   "p => p.getAttribute('points')")
    assert len(oracle.split()) == 15  # one point per grid size
    page.click("button[data-view=c10]")
    assert page.is_visible("#figure-c10 svg") and page.is_hidden("#figure-all svg")
    assert page.eval_on_selector_all("#figure-c10 line.chance", "ls => ls.map(l => +l.dataset.chance)") == [10]
    assert [name for name, _ in _lines(page, "c10")] == _board_names(page, "#board-c10")
    assert problems == []


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """Thirteen ranked models (real outputs, really scored: model k misreads a share of cells that grows with N and
    k), so the figure has more lines than it draws at first."""
    import json

    import numpy as np

    from leaderboard.build import REPORTED
    from leaderboard.index_page import VIEWS, write_index
    from leaderboard.rows import summaries
    from scoring.parsing import format_answer
    from scoring.rescoring.rescore import score_output, truth_matrix, zero_shot_truth

    first = {}
    for t in zero_shot_truth().values():
        first.setdefault((t.grid_size, t.num_colors), t)
    rows = []
    for k in range(13):
        rng = np.random.default_rng(k)
        scored = []
        for (n, c), t in sorted(first.items()):
            target = truth_matrix(t)
            wrong = rng.random(target.shape) < min(1.0, 0.02 * k + (n / 64) ** 1.5 * (0.3 + 0.05 * k))
            scored.append(score_output(t.id, format_answer(np.where(wrong, (target + 1) % c, target)), target, c))
        row = {"name": HOSTILE_NAME if k == 11 else f"model-{k:02d}", "kind": "submission", "scored": scored,
               "meta": {"model": {"id": f"m{k}"}}, "data": "release", "page": f"models/m{k}.html"}
        row["views"] = {v: summaries(row, v) for v in VIEWS}
        rows.append(row)
    out = tmp_path_factory.mktemp("crowded")
    write_index(out, rows, json.loads(REPORTED.read_text()), [])
    return (out / "index.html").as_uri()


def test_the_front_figure_draws_the_top_ten_and_the_rest_on_request(crowded, browser):
    page, problems = _open(browser, crowded)
    page.set_viewport_size({"width": 1100, "height": 900})
    lines = _lines(page, "all")
    assert [name for name, _ in lines] == _board_names(page, "#board") and len(lines) == 13
    assert [drawn for _, drawn in lines] == [True] * 10 + [False] * 3
    legend = page.eval_on_selector_all("#figure-all .legend label", "ls => ls.map(l => l.textContent)")
    assert len(legend) == 13 and all(f"{k + 1}. {name}" in legend[k] for k, (name, _) in enumerate(lines))
    page.click("#figure-all details summary")
    page.check("#figure-all input[data-line='figure-all-line-12']")  # the 13th: drawn on request
    page.uncheck("#figure-all input[data-line='figure-all-line-0']")  # the best: hidden on request
    assert [drawn for _, drawn in _lines(page, "all")] == [False] + [True] * 9 + [False, False, True]
    box = page.eval_on_selector("#figure-all svg", "s => s.getBoundingClientRect().width")
    label = page.eval_on_selector("#figure-all svg text", "t => t.getBoundingClientRect().height")
    assert box >= 650 and label >= 11  # readable at 1,100 px: wide enough, labels at least 11 px high
    page.click("button[data-view=c3]")
    assert [drawn for _, drawn in _lines(page, "c3")] == [True] * 10 + [False] * 3  # each tab its own ten
    assert page.eval_on_selector_all("#figure-c3 line.chance", "ls => ls.map(l => +l.dataset.chance)") == [3]
    assert problems == []


# --- the Digital Agnosia gap on the board -------------------------------------------------------------------------

GAP_CSV = ["probe config", "probe scale", "probe test rows", "probe cell", "end-to-end cell", "gap"]


def _probed_pages(site) -> dict[str, Path]:
    """The tiny VLM's model pages, by the file each was built from."""
    pages = sorted((site["dir"] / "models").glob("*tiny-vlm*.html"))
    assert len(pages) == 3
    return {next(f for f in ("probed-forged.json", "probed-r2.json", "probed.json") if f in p.read_text()): p
            for p in pages}


def test_the_gap_tab_ranks_by_gap_says_how_to_add_probes_and_links_the_sweep_map(site, browser):
    page, problems = _open(browser, site["url"] + "index.html")
    header = " ".join(page.text_content("#definitions").split())  # the definitions, behind "What the columns mean"
    assert "Digital Agnosia gap" in header and "lost on the way out" in header and "same N and C" in header
    assert page.is_hidden("#board-gap")
    page.click("button[data-view=gap]")
    assert page.is_visible("#board-gap") and page.is_hidden("#board")
    headers = page.eval_on_selector_all("#board-gap th", "ths => ths.map(t => t.textContent)")
    assert headers == ["model", "probed config", "probe cell accuracy", "end-to-end cell accuracy", "gap", "sweep map"]
    rows = page.eval_on_selector_all("#board-gap tbody tr", """rows => rows.map(r => [r.getAttribute('data-name'),
        Array.from(r.cells).map(c => c.textContent.trim()), r.cells[4].getAttribute('data-v')])""")
    assert len(rows) == 6  # every ranked model: the two probed first (ranked by gap), the rest with - and last
    probed, rest = rows[:2], rows[2:]
    assert all(name.endswith("tiny-vlm") for name, _, _ in probed) and all(v == "" for _, _, v in rest)
    assert all(cells[1:] == ["-"] * 5 for _, cells, _ in rest)
    gaps = [float(v) for _, _, v in probed]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0  # the probe holds what the answers lose
    cells = probed[0][1]
    assert cells[1] == "N = 20, C = 3"
    assert re.fullmatch(r"[01]\.\d{3} \(\S+, (last vision block|projector|deepstack|best LLM layer|last LLM layer)\)",
                        cells[2]), cells[2]  # the best re-scored read-out, named
    assert float(cells[2].split()[0]) - float(cells[3]) == pytest.approx(float(cells[4]), abs=2e-3)
    howto = page.inner_text("#gap-howto")
    assert "g2m probe sweep --encoder YOUR/MODEL --config probe_n32_c3" in howto
    assert "g2m submit g2m-runs/YOUR__MODEL --probes g2m-probes" in howto and "g2m-probes, its default --out" in howto
    col = headers.index("gap")
    page.click(f"#board-gap th:nth-child({col + 1})")  # the gap is already the order: the click turns it around,
    keys = page.eval_on_selector_all("#board-gap tbody tr", "rows => rows.map(r => r.cells[4].getAttribute('data-v'))")
    assert [float(v) for v in keys[:2]] == sorted(gaps) and keys[2:] == [""] * 4  # and rows without a gap stay last
    page.click(f"#board-gap th:nth-child({col + 1})")
    page.click("#board-gap tbody tr:first-child a.sweep-map")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("#sweep-0") and "/models/" in page.url
    done, width, src = page.eval_on_selector("#sweep-0 + img",
                                             "i => [i.complete, i.naturalWidth, i.getAttribute('src')]")
    assert done and width > 0 and src.endswith("/sweep_0.png")
    text = page.inner_text("body")
    assert "the per-point numbers written in the submission are not shown" in text
    assert "Digital Agnosia gap" in text and "probe cell accuracy [95% CI]" in text
    assert problems == []


def test_a_forged_per_point_number_changes_nothing_on_the_board(site):
    """The two tiny-VLM files differ only in their sections' per-point numbers (all forged to 1.0 in one): the index's
    gap row, the CSV's gap columns, the model page and every figure beside it are the same, but for the file's name
    and hash (its page's name)."""
    import json

    out = site["dir"]
    rows = list(csv.DictReader(open(out / "leaderboard.csv")))
    assert list(rows[0])[-6:] == GAP_CSV
    probed = [r for r in rows if r["model"].endswith("tiny-vlm")]
    assert len(probed) == 3 and all([p[h] for h in GAP_CSV] == [probed[0][h] for h in GAP_CSV] for p in probed)
    assert probed[0]["gap"]
    assert probed[0]["probe config"] == "probe_n20_c3" and float(probed[0]["end-to-end cell"]) == 0.0
    assert (probed[0]["probe scale"], probed[0]["probe test rows"]) == ("1", "10000")
    assert all(r[h] == "" for r in rows if r not in probed for h in GAP_CSV)
    assert "| probe config | probe scale | probe test rows | probe cell | end-to-end cell | gap |" in (
        out / "leaderboard.md").read_text()
    index = (out / "index.html").read_text()  # one row per model, revision and settings: the repeat listed under it
    repeats = re.search(r'<table id="repeats">.*?</table>', index, re.S).group(0)
    # the first by file name is ranked (neither is reproduced); the other is listed under it
    assert repeats.count("<tr>") == 2 and ">probed.json</td>" in repeats and ">probed-forged.json</a>" in repeats
    pages = _probed_pages(site)
    slugs = {f: p.stem for f, p in pages.items()}

    def same(text: str, f: str) -> str:
        return text.replace(slugs[f], "SLUG").replace(f, "FILE")

    assert same(pages["probed.json"].read_text(), "probed.json") == same(pages["probed-forged.json"].read_text(),
                                                                        "probed-forged.json")
    figs = {f: {p.name: p.read_bytes() for p in (out / "models" / s).iterdir() if p.is_file()}
            for f, s in slugs.items()}
    assert "sweep_0.png" in figs["probed.json"] and figs["probed.json"] == figs["probed-forged.json"]
    html = (out / "index.html").read_text()
    data = json.loads(html.split('<script type="application/json" id="board-data">')[1].split("</script>")[0])
    gap_rows = {r["views"]["gap"]["html"]: r["views"]["gap"]["keys"] for r in data["rows"]
                if r["name"].endswith("tiny-vlm")}
    assert len({same(h, f) for h in gap_rows for f in slugs if slugs[f] in h}) == 1
    assert len({json.dumps(k) for k in gap_rows.values()}) == 1


def test_the_report_and_the_board_give_the_same_gap(probed_doc, vlm_run, sweep_dir, tmp_path):
    """``g2m report RUN --probes DIR`` and the board, from the same run and sweep, give the same gap for
    every re-scored read-out: within 1e-9 in their JSON, the CSV's 6 decimals, the same 3-decimal text on both pages.
    The sweep is on a 0.003-scale build: the board shows it apart, with its scale and test rows, never ranked."""
    import json

    from leaderboard.build import build_site
    from report.report import build_report

    report = build_report(vlm_run, tmp_path / "report", probes=sweep_dir)
    (sweep,) = report.document["sweeps"]
    rescored = {q["point"]: q for q in sweep["points"] if q["rescored"]}
    subs = tmp_path / "subs"
    subs.mkdir()
    write_file(subs, probed_doc, "probed.json")
    site = {"dir": tmp_path / "site"}
    build_site(subs, site["dir"], progress=False)
    entries = [json.loads(p.read_text())["body"] for p in (site["dir"] / ".g2m-cache").glob("*.json")]
    row = next(e["row"] for e in entries if (e.get("row") or {}).get("file") == "probed.json")
    (section,) = row["gap"]["sections"]
    # the end-to-end half: the run's answers at N=20, C=3 score 0 (a random-weight model), and so do the board's
    assert sweep["end_to_end_cell_accuracy"] == section["end_to_end"] == 0.0
    board = {q["point"]: q for q in section["readouts"]}
    assert set(rescored) == set(board) and len(board) >= 4
    for point, q in board.items():
        assert abs(rescored[point]["cell_accuracy"] - q["cell_accuracy"]) < 1e-9
        assert abs(rescored[point]["gap"] - q["gap"]) < 1e-9
    assert row["gap"]["headline"] is None and (section["scale"], section["rows"]) == (0.003, 30)  # never ranked
    index = (site["dir"] / "index.html").read_text()
    scaled = re.search(r'<table id="gap-scaled">.*?</table>', index, re.S).group(0)
    assert "probe_n20_c3 (N = 20, C = 3)</td><td class=\"text\">0.003</td><td class=\"text\">30</td>" in scaled
    head = row["gap"]["scaled"]
    (line,) = [r for r in csv.DictReader(open(site["dir"] / "leaderboard.csv")) if r["model"].endswith("tiny-vlm")
               and r["gap"]][:1]
    assert line["gap"] == f"{rescored[head['point']]['gap']:.6f}"

    def table_row(html: str, point: str) -> str:
        return next(r for r in re.split(r"<tr>", html) if f">{point}</td>" in r)

    page = next((site["dir"] / "models").glob("*tiny-vlm*.html")).read_text()
    assert "a build at scale 0.003 (shown apart on the gap tab, never ranked); 30 test rows" in page
    shown = (tmp_path / "report" / "index.html").read_text()
    for point, q in rescored.items():
        text = f">{q['gap']:.3f}</td>"
        assert text in table_row(page, point) and text in table_row(shown, point), point


def test_each_submissions_page_opens_the_viewer_of_its_re_scored_outputs(site, browser):
    """A submission's page links the sample viewer of its outputs (a baseline's does not: it has no submitted
    outputs); the viewer lists every output, as re-scored, and draws one with no console error."""
    page, _ = _open(browser, site["url"] + "index.html")
    links = page.eval_on_selector_all("#board tbody tr td:first-child a:first-child",
                                      "as => as.map(a => a.getAttribute('href'))")
    with_viewer = []
    for link in links:
        page, problems = _open(browser, site["url"] + link)
        found = page.eval_on_selector_all("a", "as => as.filter(a => a.textContent.startsWith('every answer'))"
                                               ".map(a => a.href)")
        assert problems == [] and len(found) == (0 if "g2m-" in link else 1), link
        with_viewer += found
    assert len(with_viewer) == 4
    page, problems = _open(browser, with_viewer[0])
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("() => window.g2mViewer.order().length") == 4500
    page.keyboard.press("j")  # the next sample: its chunk is loaded and drawn
    page.wait_for_selector("#detail[data-drawn]")
    assert problems == []
    page.click("header a")  # back to the model's page it came from
    page.wait_for_load_state()
    folder, page_slug = with_viewer[0].removesuffix("/viewer/index.html").rsplit("/", 1)
    assert page.url == f"{folder}/{page_slug}.html" and page.query_selector("a[download]") is not None
