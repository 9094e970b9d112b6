"""The board's world on the stand-in Hub, for the tests of ``g2m leaderboard sync``, ``publish`` and ``cycle``: a
submissions repository whose organisation only the board's account may write to, submitters who open pull requests
on it, and the board's commands run as a maintainer runs them (a child process, online to the stand-in)."""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterator

from tests.support.helpers import cheap_doc, g2m
from tests.support.hub_server import HubStandIn

SUB = "board-test/g2m-submissions"
BOARD, ALICE, BOB, MALLORY = "hf_board", "hf_alice", "hf_bob", "hf_mallory"


def api_of(hub, token):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=token)


def gz(model: str, answer: str = "[[0]]", open_weights: bool = True) -> bytes:
    """A valid submission of ``model`` (every id answered ``answer``), gzip'd as g2m submit writes it."""
    doc = cheap_doc(model, answer)
    doc["metadata"]["model"]["open_weights"] = open_weights
    return gzip.compress(json.dumps(doc).encode(), mtime=0)


def open_pr(hub, token: str, files: dict[str, bytes | None], title: str) -> int:
    """A pull request by ``token``'s user adding (or, for None, removing) ``files``; its number."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    ops = [CommitOperationDelete(p) if data is None else CommitOperationAdd(p, data) for p, data in files.items()]
    return api_of(hub, token).create_commit(SUB, operations=ops, commit_message=title, repo_type="dataset",
                                            create_pr=True).pr_num


def push_to(hub, token: str, num: int, files: dict[str, bytes]) -> None:
    from huggingface_hub import CommitOperationAdd

    api_of(hub, token).create_commit(SUB, operations=[CommitOperationAdd(p, d) for p, d in files.items()],
                                     commit_message="fix", repo_type="dataset", revision=f"refs/pr/{num}")


def thread(hub, num: int):
    return api_of(hub, BOARD).get_discussion_details(SUB, num, repo_type="dataset")


def board_said(hub, num: int) -> list[str]:
    """The comments the board's account wrote on pull request ``num``, in order."""
    return [e.content for e in thread(hub, num).events if e.type == "comment" and e.author == "g2m-board"]


def board(hub, *args: str):
    """``g2m leaderboard ARGS`` as the maintainer runs it: a child process with the board's token, online to the
    stand-in."""
    return g2m("leaderboard", *args, env={"HF_ENDPOINT": hub.url, "HF_TOKEN": BOARD, "HF_HUB_OFFLINE": "0",
                                          "HF_HUB_DISABLE_XET": "1"}, timeout=300)


@contextlib.contextmanager
def board_hub(accepted: bool = True) -> Iterator[HubStandIn]:
    """The stand-in with the board, alice, bob and mallory, and the submissions repository, holding one accepted
    submission (``submissions/old--accepted.json.gz``) unless ``accepted`` is false. The caller puts its own process
    online (the suite runs offline) when it calls the client itself."""
    from huggingface_hub import CommitOperationAdd

    with HubStandIn() as hub:
        hub.tokens.update({BOARD: "g2m-board", ALICE: "alice", BOB: "bob", MALLORY: "mallory"})
        hub.orgs["board-test"] = {"g2m-board"}
        api = api_of(hub, BOARD)
        api.create_repo(SUB, repo_type="dataset")
        if accepted:
            api.create_commit(SUB, repo_type="dataset", commit_message="an accepted submission",
                              operations=[CommitOperationAdd("submissions/old--accepted.json.gz",
                                                             gz("old/accepted", "[[2]]"))])
        yield hub
