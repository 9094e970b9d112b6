"""The board run on the Hub, against the loopback stand-in (``tests/support/hub_server.py``) with the real
``huggingface_hub`` client: pull requests from submitters are answered and merged by ``g2m leaderboard sync``, the
site is published to a static Space by ``g2m leaderboard publish``, and ``g2m leaderboard cycle`` does the whole
loop, once at a time, and resumes after a failure."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from audit import records as audit_records
from audit.key import signing_key
from g2m_base.files import folder_lock
from on_hub.cycle import LOCK
from submission.submission import validate
from tests.support.helpers import cheap_doc, g2m
from tests.support.hub_board import (
    ALICE,
    BOARD,
    BOB,
    MALLORY,
    SUB,
    api_of,
    board,
    board_hub,
    board_said,
    gz,
    open_pr,
    push_to,
    thread,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def hub(monkeypatch):
    """The board's world (``hub_board``); the client in this process is put online (the suite runs offline) and
    uploads without Xet (the stand-in speaks LFS)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    with board_hub() as hub:
        yield hub


@pytest.mark.parametrize("history", ["listed", "from the diffs"])
def test_one_sync_answers_honest_and_hostile_pull_requests_and_a_second_changes_nothing(hub, tmp_path, history):
    if history == "from the diffs":  # a Hub that cannot list a pull request's commits: its diff says what it changes
        hub.fail("commits", "404")
    alice = gz("alice/vlm-a")
    bob = gz("bob/vlm-b", "[[1]]")
    honest = {open_pr(hub, ALICE, {"submissions/alice--vlm-a.json.gz": alice}, "alice/vlm-a"): "alice--vlm-a",
              open_pr(hub, BOB, {"submissions/bob--vlm-b.json.gz": bob}, "bob/vlm-b"): "bob--vlm-b"}
    outside = open_pr(hub, MALLORY, {"submissions/mallory--x.json.gz": gz("mallory/x", "[[3]]"),
                                     "run.py": b"import os"}, "a helper script")
    plain = open_pr(hub, MALLORY, {"submissions/mallory--y.json.gz": json.dumps(cheap_doc("mallory/y")).encode()},
                "not gzip")
    named = open_pr(hub, MALLORY, {"submissions/alice--vlm-c.json.gz": gz("mallory/z", "[[4]]")}, "alice's, really")
    removes = open_pr(hub, MALLORY, {"submissions/old--accepted.json.gz": None, "submissions/mallory--w.json.gz":
                                 gz("mallory/w", "[[8]]")}, "a replacement")
    title = '<img src=x onerror="alert(1)"> **urgent** [click](javascript:alert(1))'
    changes = open_pr(hub, MALLORY, {"submissions/old--accepted.json.gz": gz("old/accepted", "[[5]]")}, title)
    head = api_of(hub, MALLORY).repo_info(SUB, repo_type="dataset", revision=f"refs/pr/{changes}").sha
    api_of(hub, MALLORY).comment_discussion(SUB, changes, f"<!-- g2m-board revision={head} verdict=accepted -->",
                                          repo_type="dataset")  # a forged marker: not the board's account
    main_before = hub.files("datasets", SUB)

    res = board(hub, "sync", "--repo", SUB, "--merge")
    assert res.returncode == 0, res.stderr
    print(res.stdout)  # the transcript, for the closing note
    main = hub.files("datasets", SUB)
    # the honest ones: merged, byte for byte, with g2m validate's own words on their pull requests
    assert main["submissions/alice--vlm-a.json.gz"] == alice
    for num, name in honest.items():
        (said,) = board_said(hub, num)
        local = tmp_path / "submissions" / f"{name}.json.gz"
        local.parent.mkdir(exist_ok=True)
        local.write_bytes(main[f"submissions/{name}.json.gz"])
        validated = g2m("validate", f"submissions/{name}.json.gz", cwd=tmp_path)
        assert validated.returncode == 0 and validated.stdout.strip() in said
        assert "**G2M board: ACCEPTED**" in said and thread(hub, num).status == "merged"
    # the hostile ones: one REJECTED comment each, in g2m validate's form, nothing merged
    expected = {outside: "adds run.py, outside submissions/", plain: "is not gzip-compressed",
                named: "is named for alice/vlm-c but holds the outputs of mallory/z",
                removes: "it removes submissions/old--accepted.json.gz",
                changes: "a submission already on the board: accepted files are never changed"}
    for num, words in expected.items():
        (said,) = board_said(hub, num)
        assert "REJECTED: " in said and words in said, said
        assert thread(hub, num).status == "open"
    assert set(main) - set(main_before) == {"submissions/alice--vlm-a.json.gz", "submissions/bob--vlm-b.json.gz"}
    assert main["submissions/old--accepted.json.gz"] == main_before["submissions/old--accepted.json.gz"]
    assert "<img" not in "".join(board_said(hub, changes)) and "javascript" not in "".join(board_said(hub, changes))

    commits = len(hub.repo("datasets", SUB).commits)
    again = board(hub, "sync", "--repo", SUB, "--merge")
    assert again.returncode == 0 and again.stdout.count("answered at this revision already") == 5, again.stdout
    assert len(hub.repo("datasets", SUB).commits) == commits
    assert all(len(board_said(hub, n)) == 1 for n in expected)

    push_to(hub, MALLORY, plain, {"submissions/mallory--y.json.gz": gz("mallory/y", "[[6]]")})  # fixed: checked again
    third = board(hub, "sync", "--repo", SUB, "--merge")
    assert third.returncode == 0, third.stderr
    assert len(board_said(hub, plain)) == 2
    assert "ACCEPTED submissions/mallory--y.json.gz" in board_said(hub, plain)[-1]
    assert thread(hub, plain).status == "merged"
    assert all(len(board_said(hub, n)) == 1 for n in (outside, named, changes))


def test_a_commit_pushed_after_the_check_is_never_merged_unseen(hub):
    from on_hub import sync

    num = open_pr(hub, ALICE, {"submissions/alice--vlm-a.json.gz": gz("alice/vlm-a")}, "alice/vlm-a")
    api = api_of(hub, BOARD)
    real = api.comment_discussion

    def comment_then_push(*args, **kw):  # the submitter pushes between the board's check and its merge
        out = real(*args, **kw)
        push_to(hub, ALICE, num, {"submissions/alice--vlm-a.json.gz": gz("alice/vlm-a", "[[7]]")})
        return out

    api.comment_discussion = comment_then_push
    (answer,) = sync.sync(SUB, merge=True, api=api)
    assert answer.verdict == "accepted" and not answer.merged and "pushed after the check" in answer.note
    assert "submissions/alice--vlm-a.json.gz" not in hub.files("datasets", SUB)
    api.comment_discussion = real
    (answer,) = sync.sync(SUB, merge=True, api=api)  # the new head is checked, then merged
    assert answer.merged and answer.commented
    assert validate_bytes(hub.files("datasets", SUB)["submissions/alice--vlm-a.json.gz"]) == "[[7]]"


def validate_bytes(data: bytes) -> str:
    return json.loads(gzip.decompress(data))["records"][0]["output"]


def test_the_site_is_published_to_a_static_space_and_the_loop_resumes(hub, tmp_path):
    open_pr(hub, ALICE, {"submissions/alice--vlm-a.json.gz": gz("alice/vlm-a")}, "alice/vlm-a")
    open_pr(hub, BOB, {"submissions/bob--vlm-b.json.gz": gz("bob/vlm-b", "[[1]]", open_weights=False)}, "bob/vlm-b")
    work, space = tmp_path / "work", "board-test/g2m-board"
    with folder_lock(work, LOCK, "held"):  # a cycle already running: the second does nothing
        busy = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--merge", "--quiet")
    assert busy.returncode != 0 and "another g2m leaderboard cycle is running" in busy.stderr
    assert hub.repo("spaces", space) is None and not board_said(hub, 1)

    hub.fail("commit", "500", times=1)  # merges take a route of their own: the first commit is the Space's
    first = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--merge", "--quiet")
    assert first.returncode == 1 and first.stderr.count("\n") == 1 and "answered HTTP 500" in first.stderr, first
    hub.heal()
    second = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--merge", "--quiet")
    assert second.returncode == 0, second.stderr
    assert "answered at this revision already" not in second.stdout  # merged PRs are closed: nothing to answer
    assert len(board_said(hub, 1)) == 1 and len(board_said(hub, 2)) == 1
    # the audit queue: the open-weight submission without a record, never the API model's
    assert re.search(r"audit queue: alice--vlm-a\.json\.gz", second.stdout) and "bob--vlm-b" not in \
        "".join(line for line in second.stdout.splitlines() if line.startswith("audit queue"))
    site = {p.relative_to(work / "site").as_posix() for p in (work / "site").rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(work / "site").parts)}
    published = hub.files("spaces", space)
    assert set(published) == site | {".gitattributes"}
    assert "sdk: static" in published["README.md"].decode()
    assert [p for p in site if published[p] != (work / "site" / p).read_bytes()] == []
    assert hub.repo("spaces", space).sdk == "static"

    # an audit finished here after the last cycle (its upload never happened): the next cycle sends it and shows it
    v = validate(work / "repo" / "submissions" / "alice--vlm-a.json.gz")
    audit_records.write(work / "repo" / "audits", signing_key(), {
        "submission": {"outputs_sha256": v.outputs_sha256, "content_sha256": v.content_sha256, "model": "alice/vlm-a"},
        "sample": {}, "items": [],
        "replay": {"finished": "2026-12-05T00:00:00Z"}, "verdict": {"tier": "reproduced", "reason": "10 of 10 agree"}})
    # and the maintainers took bob's submission down
    from huggingface_hub import CommitOperationDelete

    api_of(hub, BOARD).create_commit(SUB, repo_type="dataset", commit_message="take down",
                                   operations=[CommitOperationDelete("submissions/bob--vlm-b.json.gz")])
    third = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--quiet")
    assert third.returncode == 0, third.stderr
    assert f"audits/{v.content_sha256}.json" in hub.files("datasets", SUB)
    assert "audit queue: alice" not in third.stdout and "audit queue: old--accepted" in third.stdout
    published = hub.files("spaces", space)
    assert not any("bob" in p for p in published) and any("bob" in p for p in site)
    index = published["index.html"].decode()
    assert "reproduced" in index and "alice/vlm-a" in index
    fourth = board(hub, "cycle", "--repo", SUB, "--work", str(work), "--space", space, "--quiet")
    assert fourth.returncode == 0 and "shows this build already" in fourth.stdout, fourth.stdout


def test_publish_says_in_one_line_when_the_hub_cannot_be_reached(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html></html>")
    (site / "README.md").write_text("---\nsdk: static\n---\n")
    res = g2m("leaderboard", "publish", str(site), "--space", "a/b", "--timeout", "2",
              env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": BOARD, "HF_HUB_OFFLINE": "0"})
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "could not connect" in res.stderr, res.stderr
    bad = g2m("leaderboard", "publish", str(tmp_path), "--space", "a/b")
    assert bad.returncode == 2 and "not a built site" in bad.stderr


def test_a_hub_failing_mid_sync_is_one_line_and_the_next_run_goes_on(hub):
    nums = [open_pr(hub, ALICE, {f"submissions/alice--vlm-{k}.json.gz": gz(f"alice/vlm-{k}", f"[[{k}]]")}, str(k))
            for k in (1, 2)]
    hub.fail("comment", "500", times=1_000, after=1)  # the first pull request is answered, then the Hub fails
    res = board(hub, "sync", "--repo", SUB, "--merge", "--timeout", "5")
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "while answering pull request #2" in res.stderr and "answered HTTP 500" in res.stderr
    assert "1 answered before it stay answered" in res.stderr
    assert len(board_said(hub, nums[0])) == 1 and thread(hub, nums[0]).status == "merged"
    assert not board_said(hub, nums[1])
    hub.heal()
    again = board(hub, "sync", "--repo", SUB, "--merge")
    assert again.returncode == 0 and f"#{nums[1]} at" in again.stdout and f"#{nums[0]} at" not in again.stdout
    assert len(board_said(hub, nums[1])) == 1 and thread(hub, nums[1]).status == "merged"


def test_a_draft_is_left_alone_until_its_author_opens_it(hub):
    from on_hub import sync

    bob = api_of(hub, BOB)
    num = bob.create_pull_request(SUB, title="work in progress", repo_type="dataset").num
    push_to(hub, BOB, num, {"submissions/bob--vlm-b.json.gz": gz("bob/vlm-b", "[[1]]")})
    (answer,) = sync.sync(SUB, merge=True, api=api_of(hub, BOARD))
    assert answer.verdict is None and "a draft" in answer.note and not board_said(hub, num)
    bob.change_discussion_status(SUB, num, "open", repo_type="dataset")
    (answer,) = sync.sync(SUB, merge=True, api=api_of(hub, BOARD))
    assert answer.merged and "ACCEPTED submissions/bob--vlm-b.json.gz" in board_said(hub, num)[0]


def test_a_flood_of_pull_requests_is_answered_a_bounded_share_a_run(hub):
    from on_hub import sync

    nums = [open_pr(hub, MALLORY, {f"junk{k}.txt": b"x"}, f"junk {k}") for k in range(3)]
    first = sync.sync(SUB, api=api_of(hub, BOARD), limit=2)
    assert [a.num for a in first] == [*nums[:2], 0] and first[-1].said() == "1 more open pull requests wait for " \
        "the next run"
    second = sync.sync(SUB, api=api_of(hub, BOARD), limit=2)  # the two answered already do not take the share
    assert [(a.num, a.verdict) for a in second] == [(nums[0], None), (nums[1], None), (nums[2], "rejected")]


def _online(hub, **extra: str) -> dict:
    return {"HF_ENDPOINT": hub.url, "HF_TOKEN": BOARD, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1", **extra}


def test_two_pull_requests_of_the_same_path_get_one_verdict_each(hub):
    """Both add ``submissions/alice--vlm-a.json.gz`` and one ``sync --merge`` answers both: the first is accepted
    and merged, the second is told once that the file is on the board by now, never first that it will be merged."""
    path = "submissions/alice--vlm-a.json.gz"
    first = open_pr(hub, ALICE, {path: gz("alice/vlm-a")}, "alice/vlm-a")
    second = open_pr(hub, BOB, {path: gz("alice/vlm-a", "[[3]]")}, "alice/vlm-a again")
    res = board(hub, "sync", "--repo", SUB, "--merge")
    assert res.returncode == 0, res.stderr
    assert thread(hub, first).status == "merged" and thread(hub, second).status == "open"
    (said,) = board_said(hub, second)
    assert "REJECTED" in said and "ACCEPTED" not in said and "merged" not in said.split("\n")[0]
    assert validate_bytes(hub.files("datasets", SUB)[path]) == "[[0]]"
    again = board(hub, "sync", "--repo", SUB, "--merge")  # nothing new: nothing said again
    assert again.returncode == 0 and len(board_said(hub, second)) == 1


def test_a_commit_landing_just_before_the_merge_never_stays_on_main(hub):
    """The submitter pushes other bytes after the board's last look at the head and before its merge call (the Hub
    merges whatever head it has then): what landed is not what was checked, so it is reverted in one commit and the
    pull request told why; main holds what it held before, and no unchecked byte is left on it."""
    path = "submissions/alice--vlm-a.json.gz"
    num = open_pr(hub, ALICE, {path: gz("alice/vlm-a")}, "alice/vlm-a")
    before = hub.files("datasets", SUB)
    hub.before("merge", lambda: push_to(hub, ALICE, num, {path: gz("alice/vlm-a", "[[7]]")}))
    res = board(hub, "sync", "--repo", SUB, "--merge")
    assert res.returncode == 0, res.stderr
    assert hub.files("datasets", SUB) == before  # the unchecked bytes are gone; nothing else changed
    assert "reverted in" in res.stdout and "is not what was checked" in res.stdout
    accepted, reverted = board_said(hub, num)
    assert "ACCEPTED" in accepted and "REJECTED" in reverted and "reverted in commit" in reverted
    assert "Open a new pull request" in reverted and "push a new commit" not in reverted
    history = api_of(hub, BOARD).list_repo_commits(SUB, repo_type="dataset")
    assert history[0].title.startswith(f"Revert #{num}")


@pytest.mark.parametrize("command", ["sync", "cycle"])
def test_a_stalled_download_ends_within_the_timeout(hub, tmp_path, command):
    """A Hub that accepts the download's connection and never answers: ``sync`` (a pull request's file) and the
    cycle's mirror (main's files) each end within --timeout and a few seconds, in one line, exit 1."""
    import time

    if command == "sync":
        open_pr(hub, ALICE, {"submissions/alice--vlm-a.json.gz": gz("alice/vlm-a")}, "alice/vlm-a")
        args = ["sync", "--repo", SUB, "--merge"]
    else:
        args = ["cycle", "--repo", SUB, "--work", str(tmp_path / "work"), "--quiet"]
    hub.fail("resolve", "hang")
    started = time.monotonic()
    res = g2m("leaderboard", *args, "--timeout", "4", env=_online(hub), timeout=120)
    took = time.monotonic() - started
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "within 4 s (--timeout)" in res.stderr and took < 4 + 12, took  # a child's start-up included


def test_no_stray_warning_on_stderr_whatever_hf_hub_variables_say(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/alice--vlm-a.json.gz": gz("alice/vlm-a")}, "alice/vlm-a")
    quiet = _online(hub, HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HUB_VERBOSITY="debug")
    res = g2m("leaderboard", "sync", "--repo", SUB, "--merge", env=quiet)
    assert res.returncode == 0 and res.stderr == "" and f"#{num} at" in res.stdout, res.stderr
    res = g2m("leaderboard", "cycle", "--repo", SUB, "--work", str(tmp_path / "work"), "--quiet", env=quiet)
    assert res.returncode == 0 and res.stderr == "", res.stderr
