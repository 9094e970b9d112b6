"""Probe sections carry their trained heads, validate checks them without loading them, and the audit replays a keyed
sample of test rows from the named checkpoint: the tiny VLM's honest sweep is reproduced, a block of the truth or a
head of another read-out is refuted."""

from __future__ import annotations

import base64
import copy
import json

import pytest

from g2m_base.bounded_json import Rejected
from g2m_base.errors import UsageError
from submission import probe_heads, probe_section

pytestmark = pytest.mark.slow  # the tiny VLM's sweep, and its features extracted again

KEY = b"board key of the test" * 2
OUTPUTS = "ab" * 32


def _sweep(submitted) -> dict:
    return next(s for s in submitted["probes"] if s["kind"] == "sweep")


def test_a_sweep_section_carries_a_checked_head_and_recipe_for_every_headline_read_out(submitted):
    sec = _sweep(submitted)
    assert sec["recipe"] and all(ro["head"]["encoding"] == probe_heads.HEAD_ENCODING for ro in sec["readouts"])
    assert all(ro["feature_dim"] and ro["stored_grid"] for ro in sec["readouts"])
    scored = probe_section.rescore([sec], submitted["metadata"]["model"]["id"], submitted["metadata"]["model"])
    assert all(r["replayable"] for r in scored[0]["readouts"])
    old = copy.deepcopy(sec)  # a section made before heads were saved: re-scored, not replayable
    for ro in old["readouts"]:
        ro["head"] = None
    assert not any(r["replayable"] for r in probe_section.rescore([old], submitted["metadata"]["model"]["id"])[0][
        "readouts"])


def _head_mutation(sec: dict, how: str) -> dict:
    s = copy.deepcopy(sec)
    ro = s["readouts"][0]
    raw = base64.b64decode(ro["head"]["data"])
    if how == "not base64":
        ro["head"]["data"] = "@@@"
    elif how == "cut short":
        ro["head"]["data"] = base64.b64encode(raw[: len(raw) // 2]).decode()
    elif how == "another width":
        ro["feature_dim"] += 1
    elif how == "header past the end":
        ro["head"]["data"] = base64.b64encode((10**9).to_bytes(8, "little") + raw[8:]).decode()
    elif how == "over the cap":
        ro["head"]["data"] = "A" * (4 * (probe_heads.MAX_HEAD_BYTES // 3) + 8)
    elif how == "no recipe":
        s.pop("recipe")
    elif how == "encoding":
        ro["head"]["encoding"] = "pickle"
    return s


@pytest.mark.parametrize(("how", "words"), [
    ("not base64", "head is not base64"),
    ("cut short", ".head: "),
    ("another width", ".head: "),
    ("header past the end", ".head: "),
    ("over the cap", "head is over"),
    ("no recipe", "recipe must be an object"),
    ("encoding", "must be null or an object with encoding 'safetensors/base64'"),
])
def test_a_hostile_head_is_refused_in_one_line(submitted, how, words):
    with pytest.raises(Rejected) as e:
        probe_section.rescore([_head_mutation(_sweep(submitted), how)], submitted["metadata"]["model"]["id"])
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def _audit(sections, tiny_vlm, tiny_release, k: int = 6):
    from audit.probe_replay import ProbeAccess, audit_probes

    return audit_probes(sections, OUTPUTS, KEY, ProbeAccess(str(tiny_vlm), str(tiny_release)), k, progress=False)


def test_an_honest_sweep_is_reproduced_from_the_checkpoint(submitted, tiny_vlm, tiny_release):
    shown, found = _audit([_sweep(submitted)], tiny_vlm, tiny_release)
    assert found.tier == "reproduced", found.reason
    readouts = shown[0]["readouts"]
    assert all(r["tier"] == "reproduced" for r in readouts)
    assert all(i["outcome"] == "same matrix" and i["cell_agreement"] == 1.0 for r in readouts for i in r["items"])
    again, _ = _audit([_sweep(submitted)], tiny_vlm, tiny_release)
    assert again[0]["ids"] == shown[0]["ids"]  # the keyed sample: the same rows for the same outputs
    json.dumps(shown)  # the record holds it as plain JSON


def test_a_forged_prediction_block_or_another_heads_weights_are_refuted(submitted, tiny_vlm, tiny_release):
    sec = _sweep(submitted)
    forged = copy.deepcopy(sec)
    block = probe_section.test_truth(sec["config"], sec["rows"]["count"])
    forged["readouts"][0]["cells"] = probe_section.encode(block, block, sec["num_colors"])  # the truth: scores 1.0
    shown, found = _audit([forged], tiny_vlm, tiny_release)
    assert found.tier == "refuted" and "probe predictions" in found.reason, found.reason
    assert shown[0]["readouts"][0]["tier"] == "refuted" and shown[0]["readouts"][0]["submitted_cell_accuracy"] == 1.0
    same_width = [ro for ro in sec["readouts"] if ro["feature_dim"] == sec["readouts"][-1]["feature_dim"]
                  and ro["stored_grid"] == sec["readouts"][-1]["stored_grid"]]
    if len(same_width) >= 2:  # a head that fits, taken from another read-out: its predictions are not these
        swapped = copy.deepcopy(sec)
        a, b = (next(r for r in swapped["readouts"] if r["point"] == q["point"]) for q in same_width[:2])
        a["head"], b["head"] = b["head"], a["head"]
        _, found = _audit([swapped], tiny_vlm, tiny_release)
        assert found.tier == "refuted", found.reason


def test_probes_made_on_other_data_are_not_replayed_on_it(submitted, tiny_vlm, small_release):
    with pytest.raises(UsageError, match="other data"):
        _audit([_sweep(submitted)], tiny_vlm, small_release)
