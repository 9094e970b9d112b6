"""What a pull request on the submissions repository may change (``layout.refusal``), how a submission is named
(``layout.model_of``), and the board's comment (``comments``): pure functions, as tables."""

from __future__ import annotations

import pytest

from g2m_base.bounded_json import MAX_FILE_BYTES
from on_hub import comments, layout

A = "submissions/org--model.json.gz"
BASE = {".gitattributes": "g0", "submissions/old--one.json.gz": "s1", "audits/" + "a" * 64 + ".json": "r1"}

# (name, head relative to BASE: path -> content id or None to remove, sizes, on main now, expected path or words)
CASES = [
    ("one new submission", {A: "x"}, {}, set(), A),
    ("a labelled second submission", {"submissions/org--model--v2.json.gz": "x"}, {}, set(),
     "submissions/org--model--v2.json.gz"),
    ("nothing changed", {}, {}, set(), "changes no file"),
    ("a file outside submissions/", {A: "x", "audits/" + "b" * 64 + ".json": "y"}, {}, set(), "outside submissions/"),
    ("only a file outside", {"README.md": "x"}, {}, set(), "outside submissions/"),
    ("a folder inside submissions/", {"submissions/org/model.json.gz": "x"}, {}, set(), "outside submissions/"),
    ("two submissions", {A: "x", "submissions/org--other.json.gz": "y"}, {}, set(), "adds 2 files"),
    ("not gzip by name", {"submissions/org--model.json": "x"}, {}, set(), "not named as a submission"),
    ("a Hub id without an organisation", {"submissions/gpt2.json.gz": "x"}, {}, set(), "submissions/gpt2.json.gz"),
    ("a path trick", {"submissions/..--x.json.gz": "x"}, {}, set(), "not named as a submission"),
    ("markup in the name", {"submissions/<b>--x.json.gz": "x"}, {}, set(), "not named as a submission"),
    ("an accepted file changed", {"submissions/old--one.json.gz": "s2"}, {}, set(), "accepted files are never changed"),
    ("an accepted file removed", {"submissions/old--one.json.gz": None}, {}, set(), "it removes"),
    ("the attributes changed", {".gitattributes": "g1"}, {}, set(), "outside submissions/"),
    ("too large", {A: "x"}, {A: MAX_FILE_BYTES + 1}, set(), "over the 64 MiB limit"),
    ("on main by now", {A: "x"}, {}, {A}, "on the board by now"),
    ("a twin in another case", {A: "x"}, {}, {"submissions/Org--Model.json.gz"}, "differs only in case"),
]


@pytest.mark.parametrize(("name", "change", "sizes", "on_main", "expected"), CASES, ids=[c[0] for c in CASES])
def test_what_a_pull_request_may_change(name, change, sizes, on_main, expected):
    head = {**BASE, **{p: c for p, c in change.items() if c is not None}}
    for p in [p for p, c in change.items() if c is None]:
        del head[p]
    path, why = layout.refusal(BASE, head, {p: 100 for p in head} | sizes, set(BASE) | on_main)
    if expected.startswith("submissions/") and "/" in expected:
        assert (path, why) == (expected, None)
    else:
        assert path is None and expected in why, why


@pytest.mark.parametrize(("path", "model"), [
    ("submissions/Qwen--Qwen2.5-VL-7B-Instruct.json.gz", "Qwen/Qwen2.5-VL-7B-Instruct"),
    ("submissions/a.b--c_d--run-2.json.gz", "a.b/c_d"),
    ("submissions/org--na--me.json.gz", "org/na"),  # a label, since a Hub id never holds "--"
    ("submissions/org---name.json.gz", None),
    ("submissions/org--name.json.gz.json.gz", None),
    ("submissions/-org--name.json.gz", None),
    ("submissions/bert-base-uncased.json.gz", "bert-base-uncased"),
    ("other/org--name.json.gz", None),
    ("submissions/org--name.JSON.GZ", None),
])
def test_a_submission_is_named_after_its_model(path, model):
    assert layout.model_of(path) == model
    if model:
        assert layout.model_of(layout.submission_path(model)) == model


def test_the_comment_fences_whatever_the_submitter_wrote_and_ends_with_its_marker():
    hostile = ["REJECTED: submissions/``` <script>alert(1)</script> ````x", "**bold** [link](javascript:1)"]
    text = comments.comment("a" * 40, "rejected", hostile, merged_on_accept=True)
    fence = "`````"  # longer than the longest run of backticks inside
    assert f"{fence}text\n{hostile[0]}\n{hostile[1]}\n{fence}" in text
    assert text.endswith(comments.marker("a" * 40, "rejected"))
    assert comments.answered([("g2m-board", text)], "g2m-board") == ("a" * 40, "rejected")


@pytest.mark.parametrize(("thread", "expected"), [
    ([], None),
    ([("bob", comments.marker("b" * 40, "accepted"))], None),  # a submitter's forged marker counts for nothing
    ([("me", "ok " + comments.marker("b" * 40, "rejected")), ("me", "x " + comments.marker("c" * 40, "accepted"))],
     ("c" * 40, "accepted")),
    ([("me", comments.marker("b" * 40, "accepted") + " and more text after it")], None),
])
def test_only_this_accounts_last_marker_says_what_was_answered(thread, expected):
    assert comments.answered(thread, "me") == expected


def test_a_marker_names_a_revision_and_a_verdict():
    with pytest.raises(ValueError, match="40-hex"):
        comments.marker("HEAD", "accepted")


DIFF = """diff --git a/submissions/new--one.json.gz b/submissions/new--one.json.gz
new file mode 100644
index 0000000..1234567
Binary files /dev/null and b/submissions/new--one.json.gz differ
diff --git a/submissions/old--one.json.gz b/submissions/old--one.json.gz
deleted file mode 100644
index 1234567..0000000
Binary files a/submissions/old--one.json.gz and /dev/null differ
diff --git a/README.md b/README.md
index 1111111..2222222
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 hello
+diff --git a/submissions/x--y.json.gz b/submissions/x--y.json.gz
"""


def test_a_diff_says_what_a_pull_request_adds_removes_and_changes():
    base, head = layout.diff_change(DIFF)
    assert set(head) - set(base) == {"submissions/new--one.json.gz"}
    assert set(base) - set(head) == {"submissions/old--one.json.gz"}
    assert {p for p in set(base) & set(head) if base[p] != head[p]} == {"README.md"}  # a content line is no header
    path, why = layout.refusal(base, head, {}, set())
    assert path is None and "it removes submissions/old--one.json.gz" in why
    only_new = DIFF.split("diff --git a/submissions/old")[0]
    assert layout.refusal(*layout.diff_change(only_new), {}, set()) == ("submissions/new--one.json.gz", None)
    odd = layout.diff_change("diff --git a/x b/y\n")  # a rename, or a path the header cannot say once: refused
    assert layout.refusal(*odd, {}, set())[0] is None
