"""Hostile text stays text on every page ``g2m leaderboard build`` and ``g2m report`` write, without a browser: a model
id, a file and run folder name, a model link and answer texts built to break out of an element, an attribute, a URL
or a template are parsed back from the written HTML and found only as text. Real submissions, a real VLMEvalKit
prediction file of real release ids, the real commands."""

from __future__ import annotations

import csv
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leaderboard.index_page import VIEWS, write_index
from scoring.parsing import format_answer
from scoring.rescoring.rescore import truth_matrix, zero_shot_truth
from tests.support.helpers import g2m, submission_doc, write_file

pytestmark = pytest.mark.slow  # builds a site (baselines over the full release) and a report

MODEL = "\"><script>alert(1)</script><img src=x onerror=alert(2)>{{7*7}}"
HUB_ID = "org/hostile-vlm"
#: A file or folder name cannot hold "/": the same attack without closing tags.
FILE_NAME = "\"><img src=x onerror=alert(3)>{{7*7}}"
ANSWERS = ("<script>alert(4)</script>", "</textarea><marquee onmouseover=alert(5)>x</marquee>", "{{7*7}} {% raw %}",
           "\"'><img src=x onerror=alert(6)>")
LINKS = ("javascript:alert(7)", "\"><script>alert(8)</script>")
#: A probe read-out's point name (at most 40 characters) and the name the model was probed as.
POINT = "<img src=x onerror=alert(9)>{{7*7}}"
PROBED_AS = "</h3><script>alert(10)</script>"
#: The site's index holds two scripts of its own: the board's data and the code the page was written with.
INDEX_SCRIPTS = 2


class _Page(HTMLParser):
    """Every tag with its attributes, the text of the page, and what each <script> holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._in_script: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1] = (self._in_script, self.scripts[-1][1] + data)
        else:
            self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _check(path: Path, must_show: tuple[str, ...], scripts: int = 0) -> None:
    """No injected script, event attribute, script link or element; each of ``must_show`` is on the page as text."""
    page = _parse(path)
    for tag, attrs in page.tags:
        assert not any(k.startswith("on") for k in attrs), f"{path.name}: <{tag} {attrs}>"
        for k in ("href", "src"):
            assert not (attrs.get(k) or "").strip().lower().startswith("javascript:"), f"{path.name}: <{tag} {attrs}>"
        assert not (tag == "img" and attrs.get("src") == "x"), f"{path.name}: an injected image"
        assert tag not in ("marquee", "textarea"), f"{path.name}: an injected <{tag}> from an answer"
    assert len(page.scripts) == scripts, f"{path.name}: {len(page.scripts)} scripts"
    text = "".join(page.text)
    for s in must_show:  # {{7*7}} among them: shown as written, never evaluated
        assert s in text, f"{path.name} does not show {s!r} as text"


def _probe_section(model: str) -> dict:
    """A sweep section of 30 rows of probe_n20_c3 whose one read-out, under a hostile point name, gets one cell of each
    grid wrong: real cells, re-scored by validate like any other."""
    from submission import probe_section

    truth = probe_section.test_truth("probe_n20_c3", 30)
    pred = truth.copy()
    pred[:, 0, 0] = (pred[:, 0, 0] + 1) % 3
    return {"kind": "sweep", "model": {"name": model, "probed_as": PROBED_AS}, "config": "probe_n20_c3",
            "grid_size": 20, "num_colors": 3, "data": {"build_params": {"scale": 0.003}},
            "rows": {"split": "test", "first": 0, "count": 30}, "encoding": probe_section.ENCODING,
            "readouts": [{"point": POINT, "role": "projector", "cells": probe_section.encode(pred, truth, 3)}],
            "points": [{"point": POINT, "stage": "projector", "layer": None, "cell_accuracy": 0.5,
                        "cell_accuracy_ci": None, "exact_match": 0.0}]}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    subs = tmp_path_factory.mktemp("subs")
    answers = iter(ANSWERS * 10_000)
    doc = submission_doc(output=lambda t: next(answers) + "\n" + format_answer(truth_matrix(t)))
    # the id must be a Hub id; markup rides in the free-text fields a page shows (the backend, the revision)
    doc["metadata"]["model"].update(id=HUB_ID, backend=MODEL, revision=FILE_NAME, url="https://example.org/m?a=1&b=2")
    doc["probes"] = [_probe_section(HUB_ID)]
    write_file(subs, doc, "hostile.json")
    named = submission_doc()  # markup as the id itself: refused, and its reason quotes it on the index, as text
    named["metadata"]["model"]["id"] = MODEL
    write_file(subs, named, "hostile-id.json")
    for k, link in enumerate(LINKS):  # refused by validation: listed as rejected, never linked
        bad = submission_doc()
        bad["metadata"]["model"].update(id=f"bad-link-{k}", url=link)
        write_file(subs, bad, f"link-{k}.json")
    write_file(subs, b"{not json", FILE_NAME + ".json")
    out = tmp_path_factory.mktemp("site")
    res = g2m("leaderboard", "build", str(subs), "--out", str(out), "--quiet", timeout=1200)
    assert res.returncode == 0, res.stderr
    return out


def test_every_site_page_shows_hostile_text_as_text(site):
    pages = [site / "index.html", *sorted((site / "models").glob("*.html"))]
    assert len(pages) == 4  # the index, the hostile submission's page and the two baselines'
    _check(site / "index.html", (MODEL, FILE_NAME + ".json", POINT), INDEX_SCRIPTS)  # the gap board names the point
    hostile = [p for p in pages[1:] if MODEL in "".join(_parse(p).text)]
    assert len(hostile) == 1
    _check(hostile[0], (MODEL, FILE_NAME, POINT, PROBED_AS))  # the revision is shown in the metadata table
    assert (site / "models" / hostile[0].stem / "sweep_0.png").stat().st_size > 0
    for p in pages[1:]:
        _check(p, ())
    scripts = _parse(site / "index.html").scripts
    data = json.loads(next(body for attrs, body in scripts if attrs.get("id") == "board-data"))
    code = next(body for attrs, body in scripts if "id" not in attrs)
    assert MODEL not in code and "alert" not in code  # the page's own script carries no data
    names = [r["name"] for r in data["rows"]]
    assert HUB_ID in names and MODEL not in names  # a row's name is its Hub id, never the markup
    rows = [v["html"] for r in data["rows"] for v in r["views"].values()]
    row = _Page()
    row.feed("".join(rows))
    assert not any(t == "script" or t == "img" or any(k.startswith("on") for k in a) for t, a in row.tags)


def test_a_link_that_is_not_http_is_never_written(tmp_path):
    """Validation refuses such links; the page refuses them again, whatever row it is given."""
    from dataset_builder.grids.configs import ZERO_SHOT_SIZES
    from scoring.rescoring.rescore import summarise

    view = {"overall": summarise([]).as_dict(), "paper": None, "paper_mark": "",
            "by_n": {n: summarise([]).as_dict() for n in ZERO_SHOT_SIZES}}
    rows = [{"name": f"m{k}", "kind": "submission", "data": "release", "page": f"models/m{k}.html", "raw": None,
             "meta": {"model": {"id": f"m{k}", "url": link}}, "views": dict.fromkeys(VIEWS, view)}
            for k, link in enumerate(LINKS)]
    reported = json.loads((Path(__file__).parents[2] / "leaderboard" / "reported.json").read_text())
    write_index(tmp_path, rows, reported, [])
    page = _parse(tmp_path / "index.html")
    assert not [a for t, a in page.tags if t == "a" and "ext" in (a.get("class") or "")]
    _check(tmp_path / "index.html", (), INDEX_SCRIPTS)


def test_the_report_shows_hostile_names_and_answers_as_text(tmp_path):
    folder = tmp_path / FILE_NAME  # a VLMEvalKit outputs folder; the file's stem names the model
    folder.mkdir()
    first = {}
    for t in zero_shot_truth().values():
        first.setdefault((t.grid_size, t.num_colors), t)
    with open(folder / f"{FILE_NAME}_Grid2Matrix.tsv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["index", "g2m_id", "prediction"], delimiter="\t")
        w.writeheader()
        for k, t in enumerate(first.values()):  # every answer wrong after its hostile start: each one is shown
            w.writerow({"index": k, "g2m_id": t.id, "prediction": ANSWERS[k % len(ANSWERS)] + " [[9]]"})
    res = g2m("report", str(folder), "--out", str(tmp_path / "report"))
    assert res.returncode == 0, res.stderr
    _check(tmp_path / "report" / "index.html", (FILE_NAME, *ANSWERS))
