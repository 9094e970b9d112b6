"""The stand-in Hub (tests/support/hub_server.py, hub_discussions.py) answers what a leaderboard maintainer's bot calls,
proven with the real huggingface_hub client against it: users and their tokens, pull requests made by commits, the
discussions API (pages, details, comments, status, merge), a static Space uploaded twice, and a fault on a new route."""

from __future__ import annotations

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants
from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError

from tests.support.hub_server import HubStandIn

REPO = "g2m/board"
HOSTILE = '<script>alert("x")</script> **bold** ]]></p><img src=x onerror=alert(1)> & \u202e'
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.fixture
def hub(monkeypatch):
    """The stand-in with three users; g2m-board is the only member of the g2m organisation. The suite runs offline
    (tests/conftest.py): the client is put online for these calls, and uploads without Xet."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    with HubStandIn() as server:
        server.tokens.update({"hf_board": "g2m-board", "hf_alice": "alice", "hf_mallory": "mallory"})
        server.orgs["g2m"] = {"g2m-board"}
        yield server


def _api(hub: HubStandIn, token: str) -> HfApi:
    return HfApi(endpoint=hub.url, token=token)


def _status(excinfo) -> int:
    return excinfo.value.response.status_code


def _board_repo(hub: HubStandIn) -> HfApi:
    board = _api(hub, "hf_board")
    board.create_repo(REPO, repo_type="dataset")
    board.upload_file(path_or_fileobj=b'{"rows": []}\n', path_in_repo="results.json", repo_id=REPO,
                      repo_type="dataset", commit_message="the board's results")
    return board


def test_whoami_and_tokens(hub):
    me = _api(hub, "hf_board").whoami()
    assert (me["name"], me["type"], [o["name"] for o in me["orgs"]]) == ("g2m-board", "user", ["g2m"])
    assert _api(hub, "hf_alice").whoami()["orgs"] == []
    with pytest.raises(HfHubHTTPError, match="Invalid user token") as err:
        _api(hub, "hf_unknown").whoami()
    assert _status(err) == 401
    _board_repo(hub)
    # a write needs a known token, and writing to main needs the right to write to the g2m organisation
    with pytest.raises(HfHubHTTPError) as err:
        _api(hub, "hf_unknown").create_commit(REPO, [CommitOperationAdd("x.json", b"{}")], commit_message="x",
                                              repo_type="dataset", create_pr=True)
    assert _status(err) == 401
    with pytest.raises(HfHubHTTPError) as err:
        _api(hub, "hf_alice").upload_file(path_or_fileobj=b"{}", path_in_repo="results.json", repo_id=REPO,
                                          repo_type="dataset")
    assert _status(err) == 403
    assert hub.files("datasets", REPO)["results.json"] == b'{"rows": []}\n'
    assert ("GET", "whoami") in hub.log


def test_a_pull_request_made_by_commits_is_read_commented_and_merged(hub, tmp_path):
    board, alice, mallory = _board_repo(hub), _api(hub, "hf_alice"), _api(hub, "hf_mallory")
    main_before = board.repo_info(REPO, repo_type="dataset").sha
    first = alice.create_commit(REPO, [CommitOperationAdd("submissions/alice.json", b'{"model": "a/b"}\n')],
                                commit_message=HOSTILE, commit_description="my **run**", repo_type="dataset",
                                create_pr=True)
    assert (first.pr_num, first.pr_revision) == (1, "refs/pr/1")
    assert first.pr_url == f"{hub.url}/datasets/{REPO}/discussions/1"
    assert "submissions/alice.json" not in hub.files("datasets", REPO)  # on refs/pr/1, not on main
    assert board.repo_info(REPO, repo_type="dataset").sha == main_before
    second = alice.create_commit(REPO, [CommitOperationAdd("submissions/alice.png", PNG)], commit_message="figure",
                                 repo_type="dataset", revision=first.pr_revision)
    assert second.pr_url is None and second.oid != first.oid

    # reads at refs/pr/1 and at a commit id, before the merge
    got = alice.hf_hub_download(REPO, "submissions/alice.json", repo_type="dataset", revision="refs/pr/1",
                                cache_dir=tmp_path)
    assert open(got, "rb").read() == b'{"model": "a/b"}\n'
    assert open(alice.hf_hub_download(REPO, "submissions/alice.png", repo_type="dataset", revision="refs/pr/1",
                                      cache_dir=tmp_path), "rb").read() == PNG
    assert board.repo_info(REPO, repo_type="dataset", revision="refs/pr/1").sha == second.oid
    assert sorted(board.list_repo_files(REPO, repo_type="dataset", revision=first.oid)) == [
        ".gitattributes", "results.json", "submissions/alice.json"]
    tree = {e.path for e in board.list_repo_tree(REPO, repo_type="dataset", revision="refs/pr/1", recursive=True)}
    assert {"submissions", "submissions/alice.png"} <= tree
    (png,) = board.get_paths_info(REPO, ["submissions/alice.png"], repo_type="dataset", revision="refs/pr/1")
    assert png.lfs is not None and png.lfs.size == len(PNG)
    with pytest.raises(RemoteEntryNotFoundError):
        board.hf_hub_download(REPO, "submissions/alice.json", repo_type="dataset", cache_dir=tmp_path / "main")
    refs = board.list_repo_refs(REPO, repo_type="dataset", include_pull_requests=True)
    assert [(r.ref, r.target_commit) for r in refs.pull_requests] == [("refs/pr/1", second.oid)]

    (pr,) = board.get_repo_discussions(REPO, repo_type="dataset", discussion_type="pull_request",
                                       discussion_status="open")
    assert (pr.num, pr.title, pr.author, pr.status, pr.is_pull_request) == (1, HOSTILE, "alice", "open", True)
    assert pr.git_reference == "refs/pr/1"
    details = board.get_discussion_details(REPO, 1, repo_type="dataset")
    assert [e.type for e in details.events] == ["comment", "commit", "commit"]
    assert details.events[0].content == "my **run**" and details.events[0].author == "alice"
    assert [(e.summary, e.oid, e.author) for e in details.events[1:]] == [
        (HOSTILE, first.oid, "alice"), ("figure", second.oid, "alice")]
    assert (details.target_branch, details.conflicting_files, details.merge_commit_oid) == (
        "refs/heads/main", [], None)
    assert "+++ b/submissions/alice.json" in details.diff and '+{"model": "a/b"}' in details.diff
    assert "Binary files /dev/null and b/submissions/alice.png differ" in details.diff

    said = board.comment_discussion(REPO, 1, HOSTILE, repo_type="dataset")
    assert (said.author, said.content, said.edited, said.hidden) == ("g2m-board", HOSTILE, False, False)
    assert "<script>" not in said.rendered
    assert board.get_discussion_details(REPO, 1, repo_type="dataset").events[-1].content == HOSTILE

    for outsider in (mallory, alice):  # no right to write to g2m: neither a stranger nor the author may merge
        with pytest.raises(HfHubHTTPError) as err:
            outsider.merge_pull_request(REPO, 1, repo_type="dataset")
        assert _status(err) == 403
    board.upload_file(path_or_fileobj=b"# board\n", path_in_repo="README.md", repo_id=REPO, repo_type="dataset")
    board.merge_pull_request(REPO, 1, comment="merged by the bot", repo_type="dataset")
    main = board.repo_info(REPO, repo_type="dataset")
    stored = hub.files("datasets", REPO)
    assert stored["submissions/alice.json"] == b'{"model": "a/b"}\n' and stored["submissions/alice.png"] == PNG
    assert stored["README.md"] == b"# board\n"  # main's own commit since the branch started is kept
    assert hub.repo("datasets", REPO).commits[main.sha].title == f"{HOSTILE} (#1)"
    merged = board.get_discussion_details(REPO, 1, repo_type="dataset")
    assert (merged.status, merged.merge_commit_oid) == ("merged", main.sha)
    assert [(e.type, e.author) for e in merged.events[-2:]] == [("comment", "g2m-board"),
                                                                ("status-change", "g2m-board")]
    assert merged.events[-1].new_status == "merged" and merged.events[-2].content == "merged by the bot"
    with pytest.raises(HfHubHTTPError) as err:
        board.merge_pull_request(REPO, 1, repo_type="dataset")
    assert _status(err) == 400
    with pytest.raises(HfHubHTTPError) as err:  # a merged pull request takes no more commits
        alice.create_commit(REPO, [CommitOperationAdd("late.json", b"{}")], commit_message="late",
                            repo_type="dataset", revision="refs/pr/1")
    assert _status(err) == 400
    assert board.repo_info(REPO, repo_type="dataset").sha == main.sha
    assert list(board.get_repo_discussions(REPO, repo_type="dataset", discussion_status="open")) == []
    assert [d.num for d in board.get_repo_discussions(REPO, repo_type="dataset", discussion_status="closed")] == [1]


def test_discussions_pages_filters_statuses_and_conflicts(hub):
    board, alice, mallory = _board_repo(hub), _api(hub, "hf_alice"), _api(hub, "hf_mallory")
    hub.page_size = 2
    for k in range(4):
        (alice if k % 2 else mallory).create_discussion(REPO, f"question {k}", description=f"body {k}",
                                                        repo_type="dataset")
    draft = alice.create_pull_request(REPO, "an empty pull request", repo_type="dataset")
    assert (draft.num, draft.status, draft.is_pull_request, draft.git_reference) == (5, "draft", True, "refs/pr/5")
    assert draft.events[0].content.startswith("Pull Request opened with the")
    conflict = alice.create_commit(REPO, [CommitOperationAdd("results.json", b'{"rows": [1]}\n')],
                                   commit_message="edit the results", repo_type="dataset", create_pr=True)
    assert conflict.pr_num == 6

    pages_before = hub.log.count(("GET", "discussions"))
    listed = list(board.get_repo_discussions(REPO, repo_type="dataset"))
    assert [d.num for d in listed] == [6, 5, 4, 3, 2, 1]  # newest first, 3 pages of 2
    assert hub.log.count(("GET", "discussions")) - pages_before == 3
    assert [d.num for d in board.get_repo_discussions(REPO, repo_type="dataset", author="alice")] == [6, 5, 4, 2]
    assert [d.num for d in board.get_repo_discussions(REPO, repo_type="dataset", discussion_type="discussion")] == [
        4, 3, 2, 1]

    with pytest.raises(HfHubHTTPError) as err:  # someone else's discussion
        mallory.change_discussion_status(REPO, 2, "closed", repo_type="dataset")
    assert _status(err) == 403
    closed = alice.change_discussion_status(REPO, 2, "closed", comment="answered", repo_type="dataset")
    assert (closed.new_status, closed.author) == ("closed", "alice")
    board.change_discussion_status(REPO, 3, "closed", repo_type="dataset")  # the repository's writer may close any
    assert [d.num for d in board.get_repo_discussions(REPO, repo_type="dataset", discussion_status="closed")] == [3, 2]
    assert [d.num for d in board.get_repo_discussions(REPO, repo_type="dataset", discussion_status="open")] == [
        6, 5, 4, 1]  # a draft counts as open
    renamed = alice.rename_discussion(REPO, 4, "a better title", repo_type="dataset")
    assert (renamed.old_title, renamed.new_title) == ("question 3", "a better title")

    with pytest.raises(HfHubHTTPError) as err:  # a draft is not merged until it is opened
        board.merge_pull_request(REPO, 5, repo_type="dataset")
    assert _status(err) == 400
    board.upload_file(path_or_fileobj=b'{"rows": [2]}\n', path_in_repo="results.json", repo_id=REPO,
                      repo_type="dataset")
    assert board.get_discussion_details(REPO, 6, repo_type="dataset").conflicting_files == ["results.json"]
    with pytest.raises(HfHubHTTPError) as err:
        board.merge_pull_request(REPO, 6, repo_type="dataset")
    assert _status(err) == 409
    assert hub.files("datasets", REPO)["results.json"] == b'{"rows": [2]}\n'


def test_a_static_space_uploaded_twice(hub, tmp_path):
    board = _api(hub, "hf_board")
    space = "g2m/board-site"
    for _ in range(2):  # the second answers 409, which exist_ok accepts
        board.create_repo(space, repo_type="space", space_sdk="static", exist_ok=True)
    assert board.space_info(space).sdk == "static"
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, files in ((first, {"index.html": b"<h1>one</h1>", "logo.png": PNG, "old/page.html": b"old"}),
                          (second, {"index.html": b"<h1>two</h1>", "logo.png": PNG, "new.png": PNG[::-1]})):
        for rel, data in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
    board.upload_folder(repo_id=space, repo_type="space", folder_path=first, delete_patterns="*")
    assert set(hub.files("spaces", space)) == {".gitattributes", "index.html", "logo.png", "old/page.html"}
    uploads = hub.log.count(("PUT", "lfs-upload"))
    board.upload_folder(repo_id=space, repo_type="space", folder_path=second, delete_patterns="*",
                        commit_message="the second site")
    stored = hub.files("spaces", space)
    assert stored == {".gitattributes": stored[".gitattributes"], "index.html": b"<h1>two</h1>", "logo.png": PNG,
                      "new.png": PNG[::-1]}
    assert hub.repo("spaces", space).resolve("main").files["new.png"].lfs
    assert hub.log.count(("PUT", "lfs-upload")) == uploads + 1  # the unchanged logo is not sent again
    assert {"tree", "preupload", "lfs-batch", "commit"} <= hub.routes()


def test_a_fault_on_a_new_route_is_the_clients_error(hub):
    board = _board_repo(hub)
    alice = _api(hub, "hf_alice")
    alice.create_discussion(REPO, "a question", description="why?", repo_type="dataset")
    hub.fail("comment", "500", times=1)
    with pytest.raises(HfHubHTTPError) as err:
        board.comment_discussion(REPO, 1, "first try", repo_type="dataset")
    assert _status(err) == 500
    board.comment_discussion(REPO, 1, "second try", repo_type="dataset")
    comments = [e.content for e in board.get_discussion_details(REPO, 1, repo_type="dataset").events]
    assert comments == ["why?", "second try"]
    assert hub.log.count(("POST", "comment")) == 2
