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

from audit.audit import audit
from audit.replay import Access
from scoring.parsing import format_answer
from scoring.rescoring.rescore import truth_matrix, zero_shot_truth
from tests.support import vlm_server
from tests.support.helpers import as_hub_model, g2m, submission_doc, write_file
from tests.support.tiny_models import make_tiny_llava

pytestmark = pytest.mark.slow  # runs a tiny VLM on a small build and replays it

K = 12  # the 12 largest (N, C) cells of the small build, one item each
GEN = "max_gen_toks=8"


#: The tasks of the 12 largest (N, C) cells of the small build: the only ones a sample of K = 12 (or fewer) draws
#: from (``audit.sample.allocate``: one item a cell, from the largest grids down).
LARGEST = tuple(f"g2m_n{n:02d}_c{c}" for n in (24, 32, 48, 64) for c in (3, 5, 10))


@pytest.fixture(scope="module")
def honest(small_release, tmp_path_factory) -> dict:
    """A tiny llava's real answers on the rows of the 12 largest cells of the small build (in-process,
    hf-multimodal), the only rows an audit of K <= 12 replays, as a submission: every other id of the release gets a
    filler answer (validate needs all 4,500)."""
    from harness_tasks import EvalSpec, run_eval

    root = tmp_path_factory.mktemp("audit")
    folder = make_tiny_llava(root / "llava")  # the submitter's copy; the audit loads the weights by their Hub id
    model = as_hub_model(folder, "org/tiny-llava", Path(os.environ["HF_HUB_CACHE"]))
    res = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={folder},dtype=float32", device="cpu",
                            data=str(small_release), output=str(root / "runs"), gen_kwargs=GEN, tasks=LARGEST,
                            progress=False))
    doc, ran = _submission(res["output_dir"], root / "part.json.gz", model)
    return {"doc": doc, "model": model, "folder": folder, "data": small_release, "ran": ran}


def _submission(run_dir: Path, out: Path, model: str) -> tuple[dict, dict[str, str]]:
    """The run's answers as a submission of every release id (filler answers for the ids it did not run), and the
    answers it ran."""
    from submission.submission import write_submission

    part = json.loads(gzip.decompress(write_submission(run_dir, out, allow_partial=True,
                                                       model_info={"open_weights": True, "id": model}).read_bytes()))
    ran = {r["id"]: r["output"] for r in part["records"]}
    doc = submission_doc(output=lambda t: "")
    for r in doc["records"]:
        r["output"] = ran.get(r["id"], "")
    doc["metadata"] = part["metadata"]
    return doc, ran


@pytest.fixture(scope="module")
def with_settings(honest, tmp_path_factory) -> dict:
    """Two more honest runs of the tiny llava on the sampled cells, each with a setting that changes its answers: a
    processor size in its model arguments (``image_max_side=128``), and ``--no-chat-template``."""
    from harness_tasks import EvalSpec, run_eval

    root = tmp_path_factory.mktemp("settings")
    out = {}
    for name, extra, chat in (("image_max_side", ",image_max_side=128", True), ("no_chat_template", "", False)):
        res = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={honest['folder']},dtype=float32{extra}",
                                device="cpu", data=str(honest["data"]), output=str(root / name), gen_kwargs=GEN,
                                tasks=LARGEST, apply_chat_template=chat, progress=False))
        out[name] = _submission(res["output_dir"], root / f"{name}.json.gz", honest["model"])[0]
    return out


def _forged(honest: dict, share: float) -> dict:
    """The honest submission with the answers of the densest ``share`` of the rows it ran replaced by the truth (at
    0.3, the 64 x 64 cells' rows and one more: a sample of 12 meets a forged answer in 3 or 4 of its cells)."""
    doc = json.loads(json.dumps(honest["doc"]))
    truth = zero_shot_truth()
    dense = sorted(honest["ran"], key=lambda i: (-truth[i].grid_size, i))[: round(share * len(honest["ran"]))]
    for r in doc["records"]:
        if r["id"] in dense:
            r["output"] = format_answer(truth_matrix(truth[r["id"]]))
    return doc


def _in_process(honest: dict) -> Access:
    return Access(model="hf-multimodal", model_args="pretrained={model},dtype=float32", device="cpu")


def _served_audit(honest: dict, sub: Path, audits: Path):
    """``sub`` audited through a server: the stand-in holding the tiny model (a real transformers model)."""
    httpd = vlm_server.serve(vlm_server.TransformersVLM(honest["folder"], honest["model"]))
    try:
        return audit(sub, Access(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1"), audits,
                     str(honest["data"]), K, progress=False)
    finally:
        httpd.shutdown()


def test_an_honest_run_is_reproduced_in_process_and_through_a_server(honest, tmp_path):
    sub = write_file(tmp_path, honest["doc"], "honest.json")
    done = audit(sub, _in_process(honest), tmp_path / "audits", str(honest["data"]), K, progress=False)
    assert done.tier == "reproduced", done.reason
    record = json.loads(done.path.read_text())
    assert [i["outcome"] for i in record["items"]] == ["same text"] * K
    assert record["replay"]["model"]["id"] == str(honest["model"]) and record["replay"]["versions"]["transformers"]
    assert record["replay"]["access"]["model_args"] == f"pretrained={honest['model']},dtype=float32"
    # the same model behind a server (the stand-in, a real transformers model): the same answers, by another path
    served = _served_audit(honest, sub, tmp_path / "served")
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


@pytest.mark.parametrize(("name", "carried"), [("image_max_side", "image_max_side=128 (a model argument)"),
                                               ("no_chat_template", "no chat template (--no-chat-template)")])
def test_an_honest_run_with_its_own_settings_is_reproduced_never_refuted(with_settings, honest, tmp_path, name,
                                                                         carried):
    """The maintainer's usual command replays what the run recorded (the processor size, the template's absence),
    so the honest submitter is reproduced; without that setting the same replay disagreed (3 and 1 of 12)."""
    sub = write_file(tmp_path, with_settings[name], f"{name}.json")
    done = audit(sub, _in_process(honest), tmp_path / "audits", str(honest["data"]), K, progress=False)
    assert done.tier == "reproduced", done.reason
    record = json.loads(done.path.read_text())
    assert record["replay"]["settings"]["carried"] == [carried] and not record["replay"]["settings"]["unmet"]
    assert record["replay"]["generation"]["chat_template"] is (name != "no_chat_template")
    assert f"{K} of {K} replayed answers agree" in done.reason and "the same text" in done.reason


def test_a_setting_a_running_server_may_not_hold_never_refutes(with_settings, honest, tmp_path):
    """Through a server (the stand-in holding the same tiny model, at its own processor size) the processor setting
    cannot be given: the answers disagree, and the row is self-reported with the setting named, not refuted."""
    sub = write_file(tmp_path, with_settings["image_max_side"], "image_max_side.json")
    done = _served_audit(honest, sub, tmp_path / "audits")
    assert done.tier == "self-reported" and "cannot refute" in done.reason and "image_max_side=128" in done.reason
    assert re.search(r"what the sample showed: \d+ of 12 replayed answers differ", done.reason), done.reason


def test_a_record_vouches_only_for_the_claims_it_replayed(honest, tmp_path):
    """The reproduced outputs sent again as a new file claiming another revision and size: the board does not show
    them reproduced, its own audit says self-reported (the revision cannot be honoured), and neither record
    overwrites the other."""
    subs, audits = tmp_path / "subs", tmp_path / "subs" / "audits"
    subs.mkdir()
    first = audit(write_file(tmp_path, honest["doc"], "honest.json"), _in_process(honest), audits,
                  str(honest["data"]), 4, progress=False)
    assert first.tier == "reproduced", first.reason
    resent = json.loads(json.dumps(honest["doc"]))
    resent["metadata"]["model"].update(revision="f" * 40, params="235B")
    path = write_file(subs, resent, "resent.json")
    g2m("leaderboard", "build", str(subs), "--out", str(tmp_path / "site"), "--quiet", check=True)
    lines = (tmp_path / "site" / "leaderboard.csv").read_text().splitlines()
    assert [line.split(",")[4] for line in lines[1:] if line.startswith(honest["model"])] == ["self-reported"]
    second = audit(path, _in_process(honest), audits, str(honest["data"]), 4, progress=False)
    assert second.tier == "self-reported" and f"names revision {'f' * 40}" in second.reason, second.reason
    assert second.path != first.path and first.path.exists()
    assert json.loads(first.path.read_text())["verdict"]["tier"] == "reproduced"


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
