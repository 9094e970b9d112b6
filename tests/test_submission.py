"""Submissions: written from a real run, validated against hostile files, always re-scored."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import tarfile
import zipfile

import pytest
from helpers import g2m, submission_doc, write_file

from dataset_builder.spec import DATASET_REVISION
from harness_tasks.parsing import format_answer
from leaderboard.scoring import truth_matrix
from leaderboard.submission import MAX_FILE_BYTES, MAX_OUTPUT_CHARS, Rejected, validate, write_submission


@pytest.mark.slow
def test_a_perfect_submission_is_accepted_and_re_scored(tmp_path):
    v = validate(write_file(tmp_path, submission_doc(), "perfect.json.gz"))
    assert v.ok and v.scores["overall"]["exact_match"] == 1.0 and v.scores["overall"]["n"] == 4500
    assert set(v.scores["by_grid_size"]) == {"3", "4", "5", "6", "7", "8", "9", "10", "12", "16", "20", "24", "32", "48", "64"}


@pytest.mark.slow
def test_claimed_scores_are_ignored(tmp_path):
    doc = submission_doc(output=lambda t: "I cannot see the image.", scores={"exact_match": 1.0, "cell_accuracy": 1.0})
    for r in doc["records"]:
        r["cell_accuracy"] = 1.0
    v = validate(write_file(tmp_path, doc))
    assert v.ok and v.scores["overall"]["cell_accuracy"] == 0.0 and v.scores["overall"]["parse_failed"] == 1.0
    assert any("ignored top-level field 'scores'" in w for w in v.warnings)
    assert any("cell_accuracy in 4,500 records" in w for w in v.warnings)


def _dup(doc):
    doc["records"][7] = dict(doc["records"][3])
    return doc


HOSTILE = {
    "duplicate id": (lambda d: _dup(d), "appears more than once"),
    "missing ids": (lambda d: {**d, "records": d["records"][:-10]}, "10 of 4,500 ids are missing"),
    "unknown id": (lambda d: {**d, "records": d["records"] + [{"id": "zs-n99-c3-0000", "output": ""}]}, "unknown id"),
    "path-like id": (lambda d: {**d, "records": [{"id": "../../etc/passwd", "output": ""}] + d["records"]}, "unknown id"),
    "huge output": (lambda d: (d["records"][0].update(output="1 " * MAX_OUTPUT_CHARS), d)[1], "over 262,144"),
    "output not a string": (lambda d: (d["records"][0].update(output=None), d)[1], "a string output"),
    "wrong revision": (lambda d: (d["metadata"]["dataset"].update(revision="v0.9"), d)[1], "does not match the leaderboard"),
    "no revision": (lambda d: (d["metadata"]["dataset"].update(revision=None), d)[1], "not a scaled one"),
    "no model id": (lambda d: (d["metadata"]["model"].pop("id"), d)[1], "metadata.model.id"),
    "wrong format": (lambda d: {**d, "format": "something-else/9"}, "not a G2M submission"),
    "records not a list": (lambda d: {**d, "records": {"a": 1}}, "records must be a list"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_submissions_are_rejected_with_a_reason(tmp_path, case):
    change, reason = HOSTILE[case]
    v = validate(write_file(tmp_path, change(submission_doc())))
    assert not v.ok and reason in v.reason and v.scores == {}


@pytest.mark.parametrize(("raw", "reason"), [
    (b"{\"format\": \"g2m-submission/1\", ", "malformed JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (b'{"format": "g2m-submission/1", "format": "x"}', "repeats the key 'format'"),
    (pickle.dumps({"format": "g2m-submission/1", "x": os.system}), "not UTF-8"),
    (b"", "malformed JSON"),
])
def test_malformed_files_are_rejected_and_never_executed(tmp_path, raw, reason):
    v = validate(write_file(tmp_path, raw))
    assert not v.ok and reason in v.reason


def test_archives_with_traversal_paths_are_refused_without_extracting(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../escaped.json", json.dumps(submission_doc()))
    zpath = write_file(tmp_path, buf.getvalue(), "sub.zip")
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w") as t:
        data = b"{}"
        info = tarfile.TarInfo("../../escaped.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    tpath = write_file(tmp_path, tbuf.getvalue(), "sub.tar")
    for p in (zpath, tpath):
        v = validate(p)
        assert not v.ok and "archives are not accepted" in v.reason
    assert not (tmp_path.parent.parent / "escaped.json").exists()


def test_size_limits_and_gzip_bombs(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    assert "over the 64 MiB limit" in validate(big).reason
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        chunk = b" " * (1 << 20)
        for _ in range(140):
            f.write(chunk)
    assert bomb.stat().st_size < 1 << 20
    assert "decompresses to over 128 MiB" in validate(bomb).reason


@pytest.mark.slow
def test_submit_writes_the_run_and_its_metadata(random_run, tmp_path):
    with pytest.raises(Rejected, match="the run covers 90 of the 4,500 zero_shot ids"):
        write_submission(random_run, tmp_path / "s.json.gz")
    path = write_submission(random_run, tmp_path / "s.json.gz", allow_partial=True)
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert len(doc["records"]) == 90
    meta = doc["metadata"]
    assert meta["model"]["backend"] == "g2m-random" and meta["versions"]["lm_eval"] == "0.4.13"
    assert meta["versions"]["grid2matrix"] and meta["generation"]["max_gen_toks"]["g2m_n64_c10"] == 15584
    assert meta["dataset"]["revision"] is None and meta["dataset"]["manifest_sha256"]  # a scaled local build
    v = validate(path)
    assert not v.ok and "not a scaled one" in v.reason
    # the same outputs, completed with the rest of the release and the pinned revision, validate and score as run
    have = {r["id"]: r["output"] for r in doc["records"]}
    full = submission_doc(output=lambda t: have.get(t.id, format_answer(truth_matrix(t))))
    full["metadata"] = {**meta, "dataset": {**meta["dataset"], "revision": DATASET_REVISION}}
    v = validate(write_file(tmp_path, full))
    assert v.ok
    ran = [s for s in v.scored if s.id in have]
    assert len(ran) == 90 and sum(s.exact_match for s in ran) == 0 and 0.1 < sum(s.cell_accuracy for s in ran) / 90 < 0.4


@pytest.mark.slow
def test_validate_cli(tmp_path):
    good = write_file(tmp_path, submission_doc(), "good.json")
    res = g2m("validate", str(good), "--out", str(tmp_path / "scores.json"))
    assert res.returncode == 0 and res.stdout.startswith("ACCEPTED") and "exact match 1.0000" in res.stdout
    assert json.loads((tmp_path / "scores.json").read_text())["scores"]["overall"]["n"] == 4500
    bad = write_file(tmp_path, {"format": "nope"}, "bad.json")
    res = g2m("validate", str(bad))
    assert res.returncode == 1 and res.stderr.startswith("REJECTED: not a G2M submission")
