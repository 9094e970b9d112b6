"""Submissions: written from a real run, validated against hostile files, always re-scored, labelled by their data."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

from dataset_builder.grids.spec import RELEASE_CONTENT_SHA256
from scoring.parsing import format_answer
from scoring.rescoring.rescore import truth_matrix
from submission.submission import LOCAL, MAX_FILE_BYTES, MAX_OUTPUT_CHARS, RELEASE, submit_run, validate
from tests.support.helpers import g2m, partial_run, submission_doc, write_file

#: What the random run is submitted as: a baseline's own name is refused (the board computes the baselines itself).
ID = "org/random-run"


@pytest.mark.slow
def test_a_perfect_submission_is_accepted_and_re_scored(tmp_path):
    v = validate(write_file(tmp_path, submission_doc(), "perfect.json.gz"))
    assert v.ok and v.scores["overall"]["exact_match"] == 1.0 and v.scores["overall"]["n"] == 4500
    assert set(v.scores["by_grid_size"]) == {"3", "4", "5", "6", "7", "8", "9", "10", "12", "16", "20", "24", "32",
                                             "48", "64"}
    assert v.data == RELEASE and v.warnings == []


@pytest.mark.slow
def test_claimed_scores_are_ignored(tmp_path):
    doc = submission_doc(output=lambda t: "I cannot see the image.", scores={"exact_match": 1.0, "cell_accuracy": 1.0})
    for r in doc["records"]:
        r["cell_accuracy"] = 1.0
    v = validate(write_file(tmp_path, doc))
    assert v.ok and v.scores["overall"]["cell_accuracy"] == 0.0 and v.scores["overall"]["parse_failed"] == 1.0
    assert any("ignored top-level field 'scores'" in w for w in v.warnings)
    assert any("cell_accuracy in 4,500 records" in w for w in v.warnings)


@pytest.mark.slow
@pytest.mark.parametrize(("change", "warning"), [
    # any local build is accepted and labelled as one, whatever revision it claims
    (lambda d: d["metadata"]["dataset"].update(content_sha256="0" * 64, revision="v1.0.0"),
     "claims grid2matrix/g2m@v1.0.0"),
    (lambda d: d["metadata"]["dataset"].update(content_sha256="0" * 64, revision="v0.9"), "not the release"),
    (lambda d: d["metadata"]["dataset"].pop("content_sha256"), "did not record the content hash"),
])
def test_only_the_release_content_hash_makes_a_run_the_release(tmp_path, change, warning):
    doc = submission_doc()
    change(doc)
    v = validate(write_file(tmp_path, doc))
    assert v.ok and v.data == LOCAL and any(warning in w for w in v.warnings)


def _dup(doc):
    doc["records"][7] = dict(doc["records"][3])
    return doc


def _meta(**fields):
    def change(doc):
        doc["metadata"]["model"].update(fields)
        return doc
    return change


def _deep(depth: int) -> dict:
    node: dict = {}
    root = node
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return root


HOSTILE = {
    "duplicate id": (_dup, "appears more than once"),
    "missing ids": (lambda d: {**d, "records": d["records"][:-10]}, "10 of 4,500 ids are missing"),
    "unknown id": (lambda d: {**d, "records": d["records"] + [{"id": "zs-n99-c3-0000", "output": ""}]}, "unknown id"),
    "path-like id": (lambda d: {**d, "records": [{"id": "../../etc/passwd", "output": ""}] + d["records"]},
                     "unknown id"),
    "huge output": (lambda d: (d["records"][0].update(output="1 " * MAX_OUTPUT_CHARS), d)[1], "over 262,144"),
    "output not a string": (lambda d: (d["records"][0].update(output=None), d)[1], "a string output"),
    "no model id": (lambda d: (d["metadata"]["model"].pop("id"), d)[1], "metadata.model.id"),
    "wrong format": (lambda d: {**d, "format": "something-else/9"}, "not a G2M submission"),
    "records not a list": (lambda d: {**d, "records": {"a": 1}}, "records must be a list"),
    "lone surrogate in the model id": (_meta(id="evil\ud800"), "lone surrogate \\ud800"),
    "newline in the model id": (_meta(id="x\nACCEPTED fake.json (GPT-9): exact match 1.0"), "control character \\x0a"),
    "escape sequence in the model id": (_meta(id="x\x1b[2J\x1b[32mACCEPTED"), "control character \\x1b"),
    "bidi override in the model id": (_meta(id="abc\u202edcba"), "control character \\u202e"),
    "metadata nested 1,000 deep": (lambda d: (d["metadata"].update(extra=_deep(900)), d)[1], "nested more than"),
    "metadata nested 7 deep": (lambda d: (d["metadata"].update(extra=_deep(6)), d)[1], "nested more than 6 levels"),
    "an over-long metadata string": (_meta(backend="x" * 5000), "over 2,000"),
    "too many metadata values": (lambda d: (d["metadata"].update(extra=list(range(3000))), d)[1],
                                 "more than 2,000 values"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_submissions_are_rejected_with_a_reason(tmp_path, case):
    change, reason = HOSTILE[case]
    v = validate(write_file(tmp_path, change(submission_doc())))
    assert not v.ok and reason in v.reason and v.scores == {}
    assert "\n" not in v.reason and "\x1b" not in v.reason


@pytest.mark.parametrize(("raw", "reason"), [
    (b"{\"format\": \"g2m-submission/1\", ", "malformed JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"[" * 200_000 + b"]" * 200_000, "nested more than"),
    (b'{"format": "g2m-submission/1", "format": "x"}', "repeats the key 'format'"),
    (b'{"format": "g2m-submission/1", "metadata": {"a": 1, "a": 2}}', "repeats the key 'a'"),
    (pickle.dumps({"format": "g2m-submission/1", "x": os.system}), "not UTF-8"),
    (b"", "malformed JSON"),
    (b'{"format": "g2m-submission/1", "metadata": {"x": NaN}}', "NaN and Infinity are not JSON"),
    (b'{"format": "g2m-submission/1"} trailing', "extra data"),
    (b"[]" * 600_000, "bytes of JSON structure"),
    (b'{"records": [' + b"[]," * 400_000 + b"[]]}", "bytes of JSON structure"),
    (b'{"format": "g2m-submission/1", "records": [1, 2]}', "records 0 must be an object"),
    (b'{"format": "g2m-submission/1", "records": "x"}', "records must be a list"),
    (b'{"format": "g2m-submission/1", "metadata": {"x": ' + b"9" * 5000 + b"}}", "unreadable JSON value"),
    (b'{"format": "g2m-submission/1", "records": [{"id": "a", "n": ' + b"9" * 5000 + b"}]}", "unreadable JSON value"),
    (b'\xef\xbb\xbf{"format": "nope"}', "not a G2M submission"),  # a BOM is read past, as RFC 8259 allows
])
def test_malformed_files_are_rejected_and_never_executed(tmp_path, raw, reason):
    v = validate(write_file(tmp_path, raw))
    assert not v.ok and reason in v.reason, v.reason


def test_archives_with_traversal_paths_are_refused_without_extracting(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../escaped.json", json.dumps({"format": "g2m-submission/1"}))
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


def test_links_fifos_and_folders_are_not_read(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"format": "g2m-submission/1"}')
    (tmp_path / "link.json").symlink_to(secret)
    assert "symbolic link" in validate(tmp_path / "link.json").reason
    os.mkfifo(tmp_path / "fifo.json")
    assert "is not a file" in validate(tmp_path / "fifo.json").reason  # and it never blocks on the pipe
    assert "is not a file" in validate(tmp_path).reason


@pytest.mark.slow  # writes and reads files at the size caps
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
    assert validate(bomb).reason == "decompresses to over 128 MiB of JSON"


@pytest.mark.slow
def test_memory_stays_bounded_for_inputs_that_would_explode(tmp_path):
    """40 MiB of empty lists used to take 1 GB; every case here is refused or read within a few hundred MB."""
    cases = {
        "empty lists": b"[" + b"[]," * ((40 << 20) // 3) + b"[]]",
        "empty lists in records": b'{"format": "g2m-submission/1", "records": [' + b"[]," * ((40 << 20) // 3) + b"[]]}",
        "one huge output": b'{"format": "g2m-submission/1", "records": [{"id": "zs-n03-c3-0000", "output": "'
                           + b"\xf0\x9d\x9f\x98" * (30 << 20 >> 2) + b'"}]}',
    }
    for name, raw in cases.items():
        path = write_file(tmp_path, raw, f"{name.replace(' ', '_')}.json")
        code = ("import re\nfrom submission.submission import validate\n"
                f"v = validate({str(path)!r})\nprint(v.reason)\n"  # VmHWM: this process's peak, since its exec
                "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        reason, peak_kb = res.stdout.strip().rsplit("\n", 1)
        assert reason != "None" and int(peak_kb) < 400_000, (name, reason, int(peak_kb) // 1024)


@pytest.mark.slow
def test_submit_writes_the_run_and_its_metadata(random_run, tmp_path):
    # every row of a 0.02-scale build (2 of every cell's 100): complete, no --allow-partial, a local build
    done = submit_run(random_run, tmp_path / "s.json.gz", model_info={"id": ID})  # a baseline's own name is refused
    assert not done.partial
    doc = json.loads(gzip.decompress(done.path.read_bytes()))
    assert len(doc["records"]) == 90
    v = validate(done.path)
    assert v.ok and v.data == LOCAL and v.scores["overall"]["n"] == 90, v.reason
    assert any("the first 2 of every (N, C)'s grids" in w for w in v.warnings) and any("local build" in w
                                                                                     for w in v.warnings)
    meta = doc["metadata"]
    assert meta["model"]["backend"] == "g2m-random" and meta["versions"]["lm_eval"] == "0.4.13"
    assert meta["versions"]["grid2matrix"] and meta["generation"]["max_gen_toks"]["g2m_n64_c10"] == 15584
    assert meta["dataset"]["revision"] is None and meta["dataset"]["manifest_sha256"]  # a scaled local build
    assert meta["dataset"]["source"] == "a local build"  # the file is public: not the submitter's path
    assert len(meta["dataset"]["content_sha256"]) == 64 and meta["dataset"]["content_sha256"] != RELEASE_CONTENT_SHA256
    # the same outputs, completed with the rest of the release, validate and score as run; they ran on a local build
    have = {r["id"]: r["output"] for r in doc["records"]}
    full = submission_doc(output=lambda t: have.get(t.id, format_answer(truth_matrix(t))))
    full["metadata"] = meta
    v = validate(write_file(tmp_path, full))
    assert v.ok and v.data == LOCAL
    ran = [s for s in v.scored if s.id in have]
    assert len(ran) == 90 and sum(s.score.exact_match
                                  for s in ran) == 0 and 0.1 < sum(s.score.cell_accuracy for s in ran) / 90 < 0.4


@pytest.mark.slow
def test_validate_cli(tmp_path):
    good = write_file(tmp_path, submission_doc(), "good.json")
    res = g2m("validate", str(good), "--out", str(tmp_path / "scores.json"))
    assert res.returncode == 0 and res.stdout.startswith("ACCEPTED") and "exact match 1.0000" in res.stdout
    saved = (tmp_path / "scores.json").read_text()
    assert json.loads(saved)["scores"]["overall"]["n"] == 4500 and "NaN" not in saved
    bad = write_file(tmp_path, {"format": "nope"}, "bad.json")
    res = g2m("validate", str(bad))
    assert res.returncode == 1 and res.stderr.startswith("REJECTED: not a G2M submission")
    os.mkfifo(tmp_path / "pipe")  # a device or a FIFO is never replaced by the output
    for out, message in ((good, "this command's own input"), (tmp_path, "is a folder"), (tmp_path / "pipe", "not a "
                         "regular file"), ("", "is empty"), (tmp_path / "good.json" / "x", "is a file, not a folder")):
        res = g2m("validate", str(good), "--out", str(out))
        assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert json.loads(good.read_text())["format"] == "g2m-submission/1"


@pytest.mark.slow
def test_validate_never_prints_control_characters(tmp_path):
    doc = submission_doc()
    doc["metadata"]["model"]["id"] = "x\x1b[2J\nACCEPTED forged"
    path = write_file(tmp_path, doc, "evil\x1b[31m\nname.json")
    res = g2m("validate", str(path))
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "\x1b" not in res.stderr + res.stdout
    assert "\\x1b[31m\\x0aname.json" not in res.stdout and "control character \\x1b" in res.stderr


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("url", "javascript:alert(1)", "http(s) link"),
    ("url", "https://x.org/\"><script>", "http(s) link"),
    ("params", "<b>8B</b>", "8B, 0.5B or 235B-A22B"),
    ("params", 8, "8B, 0.5B or 235B-A22B"),
    ("open_weights", "yes", "true (open weights) or false"),
    ("release_date", "2025-13-40", "is not a date"),
    ("release_date", "last year", "YYYY-MM-DD"),
    ("params", "8B\n", "8B, 0.5B or 235B-A22B"),  # a final newline: "$" would have let it through
    ("url", "https://a.com/\n", "http(s) link"),
    ("release_date", "2025-10-01\n", "YYYY-MM-DD"),
])
def test_model_info_from_the_submitter_is_checked(field, value, reason):
    from submission.model_info import check

    with pytest.raises(ValueError, match=re.escape(reason)):
        check({field: value})
    assert check({"params": "235B-A22B", "open_weights": False, "release_date": "2025-09", "url": "https://a.b/c?d=1"})


@pytest.mark.slow
def test_hostile_model_info_rejects_the_submission(tmp_path):
    doc = submission_doc()
    doc["metadata"]["model"]["url"] = "javascript:alert(1)"
    v = validate(write_file(tmp_path, doc))
    assert not v.ok and "model.url must be an http(s) link" in v.reason


@pytest.mark.slow
def test_submit_asks_for_model_info_and_records_it(random_run, tmp_path):
    out = tmp_path / "s.json"
    run = partial_run(random_run, tmp_path)
    res = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--params", "7B", "--api",
              "--release-date", "2025-01-31", "--model-url", "https://example.org/model", "--model-id", ID)
    assert res.returncode == 0, res.stderr
    # a task's samples are missing: not to send
    assert res.stdout.startswith("PARTIAL submission") and "pull request" not in res.stdout
    model = json.loads(out.read_text())["metadata"]["model"]
    assert (model["params"], model["open_weights"], model["release_date"], model["url"]) == (
        "7B", False, "2025-01-31", "https://example.org/model")
    bad = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--params", "seven", "--model-id", ID)
    assert bad.returncode == 2 and "model.params must look like" in bad.stderr
    prompted = subprocess.run(  # at a terminal it asks; answers are checked like the flags
        [sys.executable, "-c", "import sys; from submission.model_info import ask; "
         "print(ask({'params': None, 'open_weights': None, 'release_date': None, 'url': None}, interactive=True))"],
        input="12B\ny\n\nhttps://x.org\n", capture_output=True, text=True, timeout=60)
    assert "{'params': '12B', 'open_weights': True, 'url': 'https://x.org'}" in prompted.stdout


@pytest.mark.parametrize(("model_id", "problem"), [
    ("g2m-oracle", None),
    ("Qwen/Qwen3-VL-8B-Instruct", None),
    ("gpt-4o-2024-08-06", None),
    ("OpenGVLab/InternVL3_5-8B", None),
    ("g2m-\u043eracle", "characters other than ASCII"),  # a Cyrillic о: looks like the baseline, is not it
    ("g2m\u2010oracle", "characters other than ASCII"),  # a Unicode hyphen
    ("\uff47\uff12\uff4d-oracle", "characters other than ASCII"),  # full-width letters
    (" G2M-Oracle ", "NAME or ORG/NAME"),  # blanks
    ("g2m-oracle\u200b", "characters other than ASCII"),  # an invisible space
    ("/home/alice/models/tiny", "a path"),  # a local folder: private, and nothing a reader could fetch
    ("./tiny", "a path"),
    ("org/name/extra", "a path"),
    ("a--b", "without '--'"),
    ("-oracle", "not starting or ending"),
    ("x" * 97, "at most 96"),
    ("<script>alert(1)</script>", "NAME or ORG/NAME"),
    ("claude-3-5-sonnet@20240620", "NAME or ORG/NAME"),
    ("", "not a string"),
    (7, "not a string"),
])
def test_a_model_id_must_be_one_the_hub_accepts(model_id, problem):
    from submission.model_info import check, id_problem

    got = id_problem(model_id)
    assert (got is None) == (problem is None) and (problem is None or problem in got), got
    if problem is not None:
        with pytest.raises(ValueError, match="is not a Hub model id"):
            check({"id": model_id})


@pytest.mark.slow
def test_validate_refuses_a_model_id_the_hub_would_not_accept_in_one_line(tmp_path):
    doc = submission_doc()
    doc["metadata"]["model"]["id"] = "g2m-\u043eracle"
    res = g2m("validate", str(write_file(tmp_path, doc)))
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "is not a Hub model id: it holds characters other than ASCII" in res.stderr


@pytest.mark.slow
def test_submit_of_a_local_folder_asks_for_the_model_id(random_run, tmp_path):
    """A run of a local folder is named by its path: private, and no id a reader or an audit could fetch. submit
    says so in one line and writes nothing; --model-id names the checkpoint."""
    run = partial_run(random_run, tmp_path)
    results = next(run.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["config"]["model_args"] = "pretrained=/home/alice/ckpt/tiny-vlm"
    results.write_text(json.dumps(data))
    out = tmp_path / "s.json"
    refused = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--no-input")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and not out.exists(), refused.stderr
    assert "not a Hub model id (it is a path" in refused.stderr and "--model-id ORG/NAME" in refused.stderr
    named = g2m("submit", str(run), "--out", str(out), "--allow-partial", "--no-input", "--model-id", "org/tiny-vlm")
    assert named.returncode == 0, named.stderr
    assert json.loads(out.read_text())["metadata"]["model"]["id"] == "org/tiny-vlm"


SAID = "is, or looks like, the built-in baseline"


@pytest.mark.slow
@pytest.mark.parametrize(("model_id", "baseline"), [("g2m-random", "g2m-random"), ("G2M-Oracle", "g2m-oracle"),
                                                    ("g2m\u2013random", None)])  # an en dash: no Hub id at all
def test_one_identity_rule_refuses_a_baselines_name_in_submit_validate_and_the_board(random_run, tmp_path, model_id,
                                                                                      baseline):
    """A baseline's name (or one a reader could not tell from it) is refused by ``g2m submit``, ``g2m validate`` and
    the board, each in the same words; an id that is no Hub id is refused as that, before it looks like anything."""
    from leaderboard.build import build_site

    words = (f"the model id {ascii(model_id)} {SAID} {baseline}; baselines are computed here, never taken from a "
             "submission")
    sub = g2m("submit", str(random_run), "--model-id", model_id, "--allow-partial", "--out", str(tmp_path / "s.json"))
    doc = submission_doc()
    doc["metadata"]["model"]["id"] = model_id
    (tmp_path / "subs").mkdir()
    path = write_file(tmp_path / "subs", doc, "named.json")
    checked = g2m("validate", str(path))
    board = build_site(tmp_path / "subs", tmp_path / "site", progress=False).rejected
    assert (sub.returncode, checked.returncode) == (2, 1) and not (tmp_path / "s.json").exists()  # 1: REJECTED
    assert [r["file"] for r in board] == ["named.json"] and board[0]["reason"] == validate(path).reason
    if baseline is None:
        assert all(SAID not in text and "not a Hub model id" in text for text in (sub.stderr, checked.stdout +
                                                                                   checked.stderr, board[0]["reason"]))
    else:
        assert words in sub.stderr and words in checked.stdout + checked.stderr and board[0]["reason"] == words
