"""The static board and the Hub agree: ``g2m leaderboard build --hub`` lists what the Hub's own
leaderboard of the release reports, apart and unranked, read by the real ``huggingface_hub`` client from the loopback
stand-in (``hub_server``, through HF_ENDPOINT), marking the model whose raw outputs the board re-scored itself. What
the Hub says is untrusted: text escaped, only http(s) links, non-finite or out-of-range values refused. Offline, or
with a Hub that fails, the section says it was skipped and the board is built all the same."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from dataset_builder.grids.spec import HUB_REPO_ID
from tests.support.helpers import cheap_doc, g2m, write_file
from tests.support.hub_server import HubStandIn

pytestmark = pytest.mark.slow  # builds a site: scores a submission and draws its figures

_ORG = {"name": "org", "type": "org", "fullname": "Org", "avatarUrl": ""}


def _entry(rank: int, model: str, value, **extra) -> dict:
    return {"rank": rank, "modelId": model, "value": value, "filename": ".eval_results/grid2matrix.yaml",
            "verified": False, "author": _ORG, **extra}


HUB = [
    _entry(1, "org/Cheap-VLM", 0.9, source={"url": "https://example.org/raw", "name": "raw outputs"},
           notes="<script>alert('notes')</script>", verified=True),
    _entry(2, "other/<b>Bold</b>-VLM", 0.5, source={"url": "javascript:alert(1)", "name": "<i>src</i>"}),
    _entry(3, "bad/infinite", math.inf),
    _entry(4, "bad/percent", 71.19),
    _entry(5, "bad/nan", math.nan),
    _entry(6, "bad/text", "0.5"),
    _entry(7, "bad/negative", -0.1),
]


def _build(subs, site, *extra, **env):
    env = {"HF_HUB_DISABLE_XET": "1", **env}
    res = g2m("leaderboard", "build", str(subs), "--out", str(site), "--quiet", *extra, env=env, timeout=900)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return res


def test_the_board_lists_the_hubs_leaderboard_apart_unranked_and_untrusted(tmp_path):
    subs, site = tmp_path / "subs", tmp_path / "site"
    subs.mkdir()
    doc = cheap_doc("org/Cheap-VLM")
    write_file(subs, doc, "a.json")
    with HubStandIn() as hub:
        hub.leaderboards[HUB_REPO_ID] = HUB
        res = _build(subs, site, "--hub", HF_ENDPOINT=hub.url, HF_HUB_OFFLINE="0")
        assert ("GET", "leaderboard") in hub.log
        assert (f"the Hub's leaderboard: 2 entries of the Hub's leaderboard of {HUB_REPO_ID} at {hub.url}, 1 of them "
                "re-scored here, 5 refused") in res.stdout
        page = (site / "index.html").read_text()
        hub_part = page[page.index("Reported on the Hub"):page.index("Rejected submissions")]
        ours = next(r for r in csv.DictReader(io.StringIO((site / "leaderboard.csv").read_text()))
                    if r["model"] == "org/Cheap-VLM")
        rescored = f"{float(ours['cell accuracy']):.3f}"
        assert f">yes: {rescored}</a>" in hub_part and ">0.9<" in hub_part  # the Hub's value beside ours, as reported
        assert "&lt;script&gt;alert(&#39;notes&#39;)&lt;/script&gt;" in hub_part and "<script>alert" not in page
        assert "other/&lt;b&gt;Bold&lt;/b&gt;-VLM" in hub_part and "<b>Bold" not in page
        assert 'href="https://example.org/raw"' in hub_part and "javascript:" not in page
        for model, why in (("bad/infinite", "inf is not finite"), ("bad/percent", "71.19 is outside [0, 1]"),
                           ("bad/nan", "nan is not finite"), ("bad/text", "is not a number"),
                           ("bad/negative", "-0.1 is outside [0, 1]")):
            assert model in hub_part and why in hub_part, model
        boards = json.loads(page[page.index('id="board-data">') + len('id="board-data">'):page.index("</script>",
                                                                                                     page.index('id="board-data">'))])
        assert not any(r["name"] == "other/<b>Bold</b>-VLM" for r in boards["rows"])  # never a ranked row
        assert "org/Cheap-VLM" in (site / "leaderboard.md").read_text().split("Reported on the Hub")[1]
        hub.fail("leaderboard", "500")  # a failing Hub: a note, and the board all the same
        res = _build(subs, site, "--hub", HF_ENDPOINT=hub.url, HF_HUB_OFFLINE="0")
        assert ("the Hub's leaderboard: skipped: the Hub's leaderboard of grid2matrix/g2m could not be read"
                in res.stdout)
        assert ("could not be read" in (site / "index.html").read_text()
                and "org/Cheap-VLM" in (site / "index.html").read_text())
    res = _build(subs, site, "--hub-endpoint", "http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    assert "the Hub's leaderboard: skipped: offline (HF_HUB_OFFLINE is set)" in res.stdout
    assert "skipped: offline" in (site / "index.html").read_text()
    res = _build(subs, site)  # not asked for: no section, no request
    assert "the Hub's leaderboard" not in res.stdout and "Reported on the Hub" not in (site / "index.html").read_text()
