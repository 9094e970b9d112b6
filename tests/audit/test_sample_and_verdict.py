"""The audit's pure parts, as tables: the keyed sample, the item comparison, the verdict and its odds, and the signed
record the board believes (or ignores)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audit import records as audit_records
from audit import sample, verdict
from audit.key import signing_key
from audit.verdict import DIFFERS, NOT_REPLAYED, SAME_MATRIX, SAME_TEXT, Item
from scoring.rescoring.rescore import zero_shot_truth

RELEASE = [(i, t.grid_size, t.num_colors) for i, t in zero_shot_truth().items()]
OUTPUTS = "ab" * 32
CONTENT = "12" * 32  # the submission: these outputs under its claims


def test_the_sample_is_a_function_of_the_key_and_the_outputs_and_covers_every_cell():
    key = sample.sample_key(b"k" * 32, OUTPUTS)
    drawn = sample.draw(key, RELEASE, 100)
    assert drawn == sample.draw(key, list(reversed(RELEASE)), 100) and len(drawn) == 100 == len(set(drawn))
    cells = {(zero_shot_truth()[i].grid_size, zero_shot_truth()[i].num_colors) for i in drawn}
    assert cells == {(n, c) for _, n, c in RELEASE}  # every (N, C) of the release: 45 cells
    per_n = {n: sum(zero_shot_truth()[i].grid_size == n for i in drawn) for n, _ in cells}
    assert per_n[64] == per_n[48] == 9 and per_n[3] == 6  # the 10 left over go to the largest grids first
    # without the board's key the sample cannot be computed: another key, or other outputs, draw other items
    assert len(set(drawn) & set(sample.draw(sample.sample_key(b"K" * 32, OUTPUTS), RELEASE, 100))) < 20
    assert len(set(drawn) & set(sample.draw(sample.sample_key(b"k" * 32, "cd" * 32), RELEASE, 100))) < 20


@pytest.mark.parametrize(("cells", "k", "want"), [
    ({(3, 3): 5, (64, 3): 5}, 4, {(3, 3): 2, (64, 3): 2}),
    ({(3, 3): 5, (64, 3): 5}, 5, {(3, 3): 2, (64, 3): 3}),  # the odd one to the larger grid
    ({(3, 3): 5, (64, 3): 1}, 4, {(3, 3): 3, (64, 3): 1}),  # never more than a cell holds
    ({(3, 3): 2, (64, 3): 2}, 9, {(3, 3): 2, (64, 3): 2}),  # K past what there is: all of it
    ({(3, 3): 9, (9, 3): 9, (64, 3): 9}, 2, {(3, 3): 0, (9, 3): 1, (64, 3): 1}),  # K under the cells: largest first
])
def test_allocation(cells, k, want):
    assert sample.allocate(cells, k) == want


TARGET = np.array([[0, 1], [1, 0]])


@pytest.mark.parametrize(("submitted", "replayed", "outcome", "agreement", "unparseable"), [
    ("[[0, 1], [1, 0]]", "[[0, 1], [1, 0]]", SAME_TEXT, 1.0, None),
    ("[[0, 1], [1, 0]]", "[[0,1],[1,0]]", SAME_MATRIX, 1.0, None),  # another spelling of the same reading
    ("[[0, 1], [1, 0]]", "[[0, 1], [1, 1]]", DIFFERS, 0.75, None),
    ("[[0, 1], [1, 0]]", "[[0, 1], [1, 0]] and more", SAME_MATRIX, 1.0, None),
    ("[[0, 1], [1, 0]]", "I cannot see the image", DIFFERS, 0.0, "replayed"),
    ("I cannot see it", "[[0, 1], [1, 0]]", DIFFERS, 0.0, "submitted"),
    # two different unparseable texts are not "the same matrix": nothing says which matrix either meant
    ("no grid", "still no grid", DIFFERS, 0.0, "both"),
    ("no grid", "no grid", SAME_TEXT, 1.0, "both"),  # the very same text agrees, and is counted as unparseable
    ("[[0, 1], [1, 0]]", None, NOT_REPLAYED, None, None),
])
def test_compare(submitted, replayed, outcome, agreement, unparseable):
    assert verdict.compare("x", submitted, replayed, TARGET, 2) == Item("x", outcome, agreement, unparseable)


def test_the_verdict_says_how_the_items_agreed():
    """The record and the page say how many agreed as text, as parsed matrix, and how many did not parse."""
    texts = [("[[0, 1], [1, 0]]",) * 2, ("[[0, 1], [1, 0]]", "[[0,1],[1,0]]"), ("no grid", "no grid"),
             ("no grid", "still no grid"), ("[[0, 1], [1, 0]]", "[[1, 1], [1, 1]]")]
    found = verdict.decide([verdict.compare(f"i{k}", a, b, TARGET, 2) for k, (a, b) in enumerate(texts)])
    assert (found.same_text, found.same_matrix, found.differ, found.unparseable) == (2, 1, 2, 2)
    assert "2 the same text, 1 the same parsed matrix, 2 differ; 2 unparseable on either side" in found.reason


def _items(differ: int, missing: int = 0, k: int = 100) -> list[Item]:
    return ([Item(f"d{i}", DIFFERS, 0.5) for i in range(differ)] + [Item(f"m{i}", NOT_REPLAYED, None)
            for i in range(missing)] + [Item(f"s{i}", SAME_TEXT, 1.0) for i in range(k - differ - missing)])


@pytest.mark.parametrize(("differ", "missing", "tier"), [
    (0, 0, "reproduced"), (5, 0, "reproduced"), (6, 0, "refuted"), (100, 0, "refuted"),
    (0, 5, "reproduced"), (3, 3, "self-reported"),  # the 3 not replayed could have tipped it
    (0, 40, "self-reported"), (30, 40, "refuted"),  # 30 differ whatever the others would say
])
def test_decide(differ, missing, tier):
    assert verdict.decide(_items(differ, missing)).tier == tier


def test_the_odds_of_catching_a_forgery_at_the_default_k():
    assert verdict.tolerance(100) == 5 and verdict.tolerance(20) == 1
    assert 1 - verdict.catch_probability(0.30, 100) < 1e-8  # 30 % forged: missed less than once in 10^8
    assert verdict.catch_probability(0.10, 100) == pytest.approx(0.9424, abs=1e-4)
    assert verdict.catch_probability(0.05, 100) == pytest.approx(0.3840, abs=1e-4)  # a small share can slip through
    assert verdict.catch_probability(0.0, 100) == 0.0


def _record(outputs: str = OUTPUTS, tier: str = "reproduced", model: str = "org/m", content: str = CONTENT) -> dict:
    return {"submission": {"file": "s.json", "sha256": "0" * 64, "outputs_sha256": outputs, "content_sha256": content,
                           "model": model, "revision": None, "data_sha256": None},
            "sample": {"k": 1, "offered": 1, "ids": ["zs-n03-c3-0000"]}, "replay": {"finished": "2026-12-04T00:00:00Z"},
            "items": [], "verdict": {"tier": tier, "reason": "1 of 1 replayed answers agree"}}


def test_a_record_is_believed_only_as_the_board_signed_it(tmp_path):
    key = signing_key()
    good = audit_records.write(tmp_path, key, _record())
    assert audit_records.verified(good, key)["verdict"]["tier"] == "reproduced"
    assert audit_records.verified(good, b"\1" * 32) is None  # another board's key
    doc = json.loads(good.read_text())
    for change in ({"verdict": {"tier": "reproduced", "reason": "edited"}},  # an edited verdict
                   {"submission": {**doc["submission"], "model": "org/other"}},
                   {"extra": 1}, {"hmac": "0" * 64}):
        forged = tmp_path / "forged" / good.name
        forged.parent.mkdir(exist_ok=True)
        forged.write_text(json.dumps({**doc, **change}))
        assert audit_records.verified(forged, key) is None, change
    copy = tmp_path / "copy" / f"{'cd' * 32}.json"  # filed under another submission than it audited
    copy.parent.mkdir()
    copy.write_bytes(good.read_bytes())
    assert audit_records.verified(copy, key) is None
    records, ignored = audit_records.read_folder(tmp_path / "forged", key)
    assert records == {} and ignored == [good.name]
    records, _ = audit_records.read_folder(tmp_path, key)
    assert audit_records.tier_of(records, CONTENT, "org/m")["tier"] == "reproduced"
    assert audit_records.tier_of(records, CONTENT, "org/other")["tier"] == "self-reported"  # the same outputs renamed
    assert audit_records.tier_of(records, "ef" * 32, "org/m")["why"] == audit_records.NOT_AUDITED
    # filed by its outputs, as format 1 was: one record would cover any claims sent with them; not believed
    old = {**_record(), "format": "g2m-audit/1"}
    old["hmac"] = audit_records.sign(key, old)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / f"{OUTPUTS}.json").write_text(json.dumps(old))
    assert audit_records.read_folder(tmp_path / "old", key) == ({}, [f"{OUTPUTS}.json"])
    with pytest.raises(ValueError, match="decides one of"):
        audit_records.write(tmp_path, key, _record(tier="verified"))


@pytest.mark.parametrize(("model_id", "ok"), [
    ("Qwen/Qwen3-VL-8B-Instruct", True), ("/models/qwen3-vl", True),
    ("evil/m,trust_remote_code=True", False),  # would add a model argument
    ("--trust-remote-code", False),  # would be a flag of vllm serve
    ("m {revision}", False), ("", False),
])
def test_a_submissions_model_id_goes_into_a_replay_command_only_when_plain(model_id, ok):
    from audit.replay import Access
    from g2m_base.errors import UsageError

    access = Access(model="hf-multimodal", model_args="pretrained={model},dtype=float32")
    meta = {"model": {"id": model_id}}
    if ok:
        assert access.named(meta).model_args == f"pretrained={model_id},dtype=float32"
    else:
        with pytest.raises(UsageError, match="not a plain Hub id or path"):
            access.named(meta)
    assert Access(model="hf-multimodal", model_args="pretrained=/m").named(meta).model_args == "pretrained=/m"


def test_a_record_vouches_for_the_claims_it_was_made_for(tmp_path):
    """The same outputs sent again claiming another revision or size are another submission: its record is its own
    (never overwriting the first one's), and until it is audited the first one's record does not cover it."""
    from submission.submission import claims_sha256

    meta = {"model": {"id": "org/m", "revision": "abc", "params": "8B"}, "dataset": {}}
    first = claims_sha256(OUTPUTS, meta)
    assert first == claims_sha256(OUTPUTS, json.loads(json.dumps(meta, sort_keys=True)))  # any key order
    others = [claims_sha256(OUTPUTS, {**meta, "model": {**meta["model"], k: v}})
              for k, v in (("revision", "def"), ("params", "235B"), ("open_weights", True))]
    assert len({first, *others, claims_sha256("cd" * 32, meta)}) == 5
    key = signing_key()
    a = audit_records.write(tmp_path, key, _record(content=first))
    b = audit_records.write(tmp_path, key, _record(content=others[0], tier="refuted"))
    assert a != b and a.exists() and b.exists()
    records, _ = audit_records.read_folder(tmp_path, key)
    assert audit_records.tier_of(records, first, "org/m")["tier"] == "reproduced"
    assert audit_records.tier_of(records, others[0], "org/m")["tier"] == "refuted"
    assert audit_records.tier_of(records, others[1], "org/m")["why"] == audit_records.NOT_AUDITED
