"""``g2m audit`` end to end on a real tiny VLM: an honest run replayed in-process and through a server is reproduced;
forged answers under its name are refuted; the board shows each tier, ignores a record it did not sign, and never
ranks a refuted row."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from leaderboard.audit.audit import audit
from leaderboard.audit.replay import Access
from leaderboard.rescoring.rescore import truth_matrix, zero_shot_truth
from scoring.parsing import format_answer
from tests.support import vlm_server
from tests.support.helpers import as_hub_model, g2m, submission_doc, write_file
from tests.support.tiny_models import make_tiny_llava

pytestmark = pytest.mark.slow  # runs a tiny VLM on a small build and replays it

K = 12  # the 12 largest (N, C) cells of the small build, one item each
GEN = "max_gen_toks=8"


@pytest.fixture(scope="module")
def honest(small_release, tmp_path_factory) -> dict:
    """A tiny llava's real answers on every row of the small build (in-process, hf-multimodal), as a submission:
    every other id of the release gets a filler answer (validate needs all 4,500; an audit draws only from rows the
    data holds)."""
    from harness_tasks import EvalSpec, run_eval
    from leaderboard.submissions.submission import write_submission

    root = tmp_path_factory.mktemp("audit")
    folder = make_tiny_llava(root / "llava")  # the submitter's copy; the audit loads the weights by their Hub id
    model = as_hub_model(folder, "org/tiny-llava", Path(os.environ["HF_HUB_CACHE"]))
    res = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={folder},dtype=float32", device="cpu",
                            data=str(small_release), output=str(root / "runs"), gen_kwargs=GEN, progress=False))
    part = json.loads(gzip.decompress(write_submission(res["output_dir"], root / "part.json.gz", allow_partial=True,
                                                       model_info={"open_weights": True, "id": model}
                                                       ).read_bytes()))
    ran = {r["id"]: r["output"] for r in part["records"]}
    doc = submission_doc(output=lambda t: "")
    for r in doc["records"]:
        r["output"] = ran.get(r["id"], "")
    doc["metadata"] = part["metadata"]
    return {"doc": doc, "model": model, "folder": folder, "data": small_release, "ran": ran}


def _forged(honest: dict, share: float) -> dict:
    """The honest submission with the answers of the densest ``share`` of the build's rows replaced by the truth."""
    doc = json.loads(json.dumps(honest["doc"]))
    truth = zero_shot_truth()
    dense = sorted(honest["ran"], key=lambda i: (-truth[i].grid_size, i))[: round(share * len(honest["ran"]))]
    for r in doc["records"]:
        if r["id"] in dense:
            r["output"] = format_answer(truth_matrix(truth[r["id"]]))
    return doc


def _in_process(honest: dict) -> Access:
    return Access(model="hf-multimodal", model_args="pretrained={model},dtype=float32", device="cpu")


def test_an_honest_run_is_reproduced_in_process_and_through_a_server(honest, tmp_path):
    sub = write_file(tmp_path, honest["doc"], "honest.json")
    done = audit(sub, _in_process(honest), tmp_path / "audits", str(honest["data"]), K, progress=False)
    assert done.tier == "reproduced", done.reason
    record = json.loads(done.path.read_text())
    assert [i["outcome"] for i in record["items"]] == ["same text"] * K
    assert record["replay"]["model"]["id"] == str(honest["model"]) and record["replay"]["versions"]["transformers"]
    assert record["replay"]["access"]["model_args"] == f"pretrained={honest['model']},dtype=float32"
    # the same model behind a server (the stand-in, a real transformers model): the same answers, by another path
    httpd = vlm_server.serve(vlm_server.TransformersVLM(honest["folder"], honest["model"]))
    try:
        served = audit(sub, Access(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1"), tmp_path / "served",
                       str(honest["data"]), K, progress=False)
    finally:
        httpd.shutdown()
    assert served.tier == "reproduced", served.reason
    assert json.loads(served.path.read_text())["sample"]["ids"] == record["sample"]["ids"]  # the same keyed sample


@pytest.mark.parametrize(("share", "differing"), [(1.0, K), (0.3, None)])
def test_answers_the_model_did_not_write_are_refuted(honest, tmp_path, share, differing):
    """All answers right (the stand-in's oracle answers, sent under the tiny model's name), or 30 % of them taken
    from the truth (the densest grids): the replay disagrees, and the row is refuted."""
    sub = write_file(tmp_path, _forged(honest, share), "forged.json")
    done = audit(sub, _in_process(honest), tmp_path / "audits", str(honest["data"]), K, progress=False)
    assert done.tier == "refuted", done.reason
    n = int(re.match(r"(\d+) of", done.reason).group(1))
    assert n > 1 and (differing is None or n == differing)


def test_settings_the_replay_cannot_honour_leave_it_self_reported(honest, tmp_path):
    doc = json.loads(json.dumps(honest["doc"]))
    doc["metadata"]["generation"]["chat_template_sha"] = "0" * 64  # made with another chat template
    sub = write_file(tmp_path, doc, "other-template.json")
    done = audit(sub, _in_process(honest), tmp_path / "audits", str(honest["data"]), 4, progress=False)
    assert done.tier == "self-reported" and "chat template" in done.reason
    doc["metadata"]["model"]["open_weights"] = False  # an API model: nothing to replay, and nothing is run
    api = audit(write_file(tmp_path, doc, "api.json"), _in_process(honest), tmp_path / "audits",
                str(honest["data"]), K, progress=False)
    assert api.tier == "self-reported" and "API model" in api.reason


def test_the_board_shows_each_tier_and_never_ranks_a_refuted_row(honest, tmp_path, browser):
    subs = tmp_path / "subs"
    subs.mkdir()
    write_file(subs, honest["doc"], "honest.json")
    forged = _forged(honest, 1.0)
    forged["metadata"]["model"]["params"] = "8B"  # another file of the same model
    write_file(subs, forged, "forged.json")
    common = ["--model", "hf-multimodal", "--model-args", "pretrained={model},dtype=float32", "--device", "cpu",
              "--k", "6", "--data", str(honest["data"]), "--quiet"]
    res = g2m("leaderboard", "audit", str(subs), *common)
    assert res.returncode == 0, res.stderr
    assert "honest.json: reproduced" in res.stdout and "forged.json: refuted" in res.stdout
    again = g2m("leaderboard", "audit", str(subs), *common)  # resumable: audited files are not replayed again
    assert again.returncode == 0 and again.stderr.count("audited already") == 2
    planted = subs / "audits" / f"{'ab' * 32}.json"
    planted.write_text(json.dumps({"format": "g2m-audit/1", "verdict": {"tier": "reproduced"}}))
    built = g2m("leaderboard", "build", str(subs), "--out", str(tmp_path / "site"), "--quiet")
    assert built.returncode == 0, built.stderr
    assert f"ignored the audit record {planted.name}" in built.stderr
    lines = (tmp_path / "site" / "leaderboard.csv").read_text().splitlines()
    tiers = {line.split(",")[4] for line in lines[1:] if line.startswith(str(honest["model"]))}
    assert tiers == {"reproduced", "refuted"}
    html = (tmp_path / "site" / "index.html").read_text()
    data = json.loads(re.search(r'id="board-data">(.*?)</script>', html, re.S).group(1))
    refuted = [i for i, r in enumerate(data["rows"]) if r["tier"] == "refuted"]
    assert refuted and all(i not in data["boards"]["board"]["order"] for i in refuted)  # never ranked
    assert data["boards"]["refuted"]["order"] == refuted and "differ from the submitted ones" in html
    # an edited record is ignored on the next build: the row goes back to self-reported
    record = next(p for p in (subs / "audits").glob("*.json") if p != planted and "refuted" in p.read_text())
    record.write_text(record.read_text().replace('"refuted"', '"reproduced"'))
    g2m("leaderboard", "build", str(subs), "--out", str(tmp_path / "site"), "--quiet", check=True)
    lines = (tmp_path / "site" / "leaderboard.csv").read_text().splitlines()
    assert {line.split(",")[4] for line in lines[1:] if line.startswith(str(honest["model"]))} == {
        "reproduced", "self-reported"}
    # a reader can keep the reproduced rows only: the forged file, now self-reported, leaves the board of local builds
    page = browser.new_page()
    page.goto((tmp_path / "site" / "index.html").as_uri())
    assert page.locator("#local tbody tr").count() == 2
    page.check("#reproduced-only")
    assert page.locator("#local tbody tr").count() == 1 and page.locator("#board tbody tr").count() == 2
    page.uncheck("#reproduced-only")
    assert page.locator("#local tbody tr").count() == 2


def test_one_line_refusals(honest, tmp_path):
    sub = write_file(tmp_path, honest["doc"], "honest.json")
    none = g2m("audit", str(sub))
    assert none.returncode == 2 and "one of --serve MODEL, --base-url URL or --model BACKEND" in none.stderr
    from dataset_builder.release.build import BuildParams, build

    smaller = tmp_path / "smaller"
    build(smaller, "zero_shot", BuildParams(scale=0.01), progress=False)  # other rows: another content hash
    other = g2m("audit", str(sub), "--model", "hf-multimodal", "--k", "3", "--data", str(smaller))
    assert other.returncode == 2 and "replay it on the same data" in other.stderr
    bad_k = g2m("audit", str(sub), "--model", "hf-multimodal", "--k", "0")
    assert bad_k.returncode == 2 and "--k must be an integer from 1 to 1,000" in bad_k.stderr
    for r in (none, other, bad_k):  # one line, after whatever progress bars the data's loading drew
        assert r.stderr.strip().split("\r")[-1].splitlines()[-1].startswith("g2m: error: "), r.stderr


def test_a_cycle_audits_its_queue_sends_the_records_and_publishes_the_tier(honest, tmp_path, monkeypatch):
    """``g2m leaderboard cycle`` given a way to replay (a server holding the tiny model): the merged submission is
    audited, its signed record goes up beside the submissions, and the published board shows it reproduced."""
    from huggingface_hub import constants

    from tests.support.hub_board import ALICE, SUB, board, board_hub, board_said, open_pr

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # this process talks to the stand-in Hub only
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    name = "submissions/" + honest["model"].replace("/", "--") + ".json.gz"
    data = gzip.compress(json.dumps(honest["doc"]).encode(), mtime=0)
    httpd = vlm_server.serve(vlm_server.TransformersVLM(honest["folder"], honest["model"]))
    try:
        with board_hub(accepted=False) as hub:
            num = open_pr(hub, ALICE, {name: data}, honest["model"])
            work, space = tmp_path / "work", "board-test/g2m-board"
            res = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--merge", "--quiet",
                        "--base-url", f"http://127.0.0.1:{httpd.server_address[1]}/v1", "--data",
                        str(honest["data"]), "--k", str(K))
            assert res.returncode == 0, res.stderr
            assert "ACCEPTED" in board_said(hub, num)[0] and hub.files("datasets", SUB)[name] == data
            assert re.search(rf"audit {re.escape(name.split('/')[1])}: reproduced", res.stdout), res.stdout
            records = [p for p in hub.files("datasets", SUB) if p.startswith("audits/")]
            assert len(records) == 1 and "audit queue" not in res.stdout
            page = hub.files("spaces", space)["index.html"].decode()
            assert "reproduced" in page and honest["model"] in page
            again = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--quiet",
                          "--base-url", f"http://127.0.0.1:{httpd.server_address[1]}/v1", "--data",
                          str(honest["data"]), "--k", str(K))
            assert again.returncode == 0 and "reproduced" not in again.stdout  # audited already: nothing replayed
            assert "shows this build already" in again.stdout
    finally:
        httpd.shutdown()
