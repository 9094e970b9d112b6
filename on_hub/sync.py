"""``g2m leaderboard sync``: answer the submissions repository's open pull requests.

For each open pull request, at its head revision: what it changes is checked against ``layout.refusal`` from the
two trees' paths and sizes (nothing is downloaded for a refused one); the one submission it adds is downloaded at
that revision, into a temporary folder, and validated as ``g2m validate`` does (plain JSON read with size caps,
never executed); the board posts one comment with the verdict in ``g2m validate``'s words, and with ``merge`` merges
an accepted one. A pull request answered at its current revision by this account is left alone (the comment's
marker says which revision), so a second run changes nothing and a new commit is checked again; a run that dies
after a comment and before its merge merges on the next run.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dataset_builder.grids.spec import HUB_TIMEOUT, SUBMISSIONS_REPO_ID
from g2m_base.bounded_json import MAX_FILE_BYTES
from g2m_base.errors import check_timeout, hub_session
from g2m_base.untrusted import term
from on_hub import comments, fetch, layout
from submission import said

#: Pull requests checked and answered in one run at most (those answered already cost a look each and do not count);
#: the rest wait for the next run, so a flood cannot hold a run for days.
MAX_PER_RUN = 200
_GZIP = b"\x1f\x8b"


@dataclass
class Answer:
    """What one run did with one pull request."""

    num: int
    revision: str
    verdict: str | None  # accepted / rejected; None when left alone
    lines: list[str] = field(default_factory=list)  # g2m validate's lines
    path: str | None = None  # the submission it adds, when it adds one
    commented: bool = False
    merged: bool = False
    note: str = ""  # why it was left alone, or what stopped its merge

    def said(self) -> str:
        if self.num == 0:  # not a pull request: what the run left for the next one
            return self.note
        if self.verdict is None:
            return f"#{self.num} at {self.revision[:12]}: left alone, {self.note}"
        done = [w for w, yes in (("commented", self.commented), ("merged", self.merged)) if yes]
        tail = "; ".join([*done, *([self.note] if self.note else [])])
        first = f"\n  {self.lines[0]}" if self.lines and self.commented else ""
        return f"#{self.num} at {self.revision[:12]}: {self.verdict.upper()}{f' ({tail})' if tail else ''}{first}"


def sync(repo_id: str = SUBMISSIONS_REPO_ID, merge: bool = False, api=None, timeout: float = HUB_TIMEOUT,
         limit: int = MAX_PER_RUN) -> list[Answer]:
    """Answer every open pull request of ``repo_id`` (see the module's docstring); ``api`` defaults to ``HfApi()``,
    which finds the token and endpoint the standard way. Any failure of the Hub ends it with one line (``HubError``);
    what was answered before it stays answered, and the next run goes on from there."""
    from huggingface_hub import HfApi

    timeout = check_timeout(timeout)
    api = api or HfApi()
    stage = "finding this account (a token of the board's account is needed: HF_TOKEN or `hf auth login`)"
    answers: list[Answer] = []
    left = 0

    def failed(why: str) -> str:
        done = f"; {len(answers)} answered before it stay answered" if answers else ""
        return f"sync of {repo_id} failed while {stage}: {why}{done}; run it again to go on"

    with hub_session(api, timeout, failed, "unset it to sync"):
        me = api.whoami()["name"]
        stage = f"listing the open pull requests of {repo_id}"
        prs = list(api.get_repo_discussions(repo_id, repo_type="dataset", discussion_type="pull_request",
                                            discussion_status="open"))
        repo = _Repo(api, repo_id, timeout)
        for d in sorted(prs, key=lambda d: d.num):
            stage = f"answering pull request #{d.num}"
            if d.status == "draft":  # its author is still at work: answered once they open it
                answers.append(Answer(d.num, "-" * 12, None, note="a draft: checked once its author opens it"))
            elif sum(a.commented for a in answers) >= limit:
                left += 1  # a run's share is spent: the rest wait (a flood cannot hold one run for days)
            else:
                answers.append(_answer(repo, d.num, me, merge))
    if left:
        answers.append(Answer(0, "-" * 12, None, note=f"{left} more open pull requests wait for the next run"))
    return answers


def _tree(api, repo_id: str, revision: str) -> tuple[dict[str, str], dict[str, int]]:
    """(path -> content id, path -> size) of the revision's files."""
    files = [f for f in api.list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True)
             if hasattr(f, "size") and hasattr(f, "blob_id")]
    return {f.path: (f.lfs.sha256 if f.lfs else f.blob_id) for f in files}, {f.path: f.size for f in files}


class _Repo:
    """What one run reads of the repository: main's files (read again before each merge) and main's history, read
    once and again only when a pull request's base is newer than it (a pull request opened after a merge of this
    run); a pull request's merge base is the newest of its commits that main has."""

    def __init__(self, api, repo_id: str, timeout: float = HUB_TIMEOUT) -> None:
        self.api, self.repo_id, self.timeout = api, repo_id, timeout
        self.main: dict[str, str] = {}
        self.main_sha = ""
        self.history: set[str] | None = set()
        self.refresh_main()
        self._read_history()

    def refresh_main(self) -> None:
        """Main's files at its head now (one revision: the tree is read at the commit the head names)."""
        self.main_sha = self.api.repo_info(self.repo_id, repo_type="dataset", revision="main").sha
        self.main, _ = _tree(self.api, self.repo_id, self.main_sha)

    def _read_history(self) -> None:
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

        try:
            self.history = {c.commit_id for c in self.api.list_repo_commits(self.repo_id, repo_type="dataset")}
        except (RepositoryNotFoundError, RevisionNotFoundError):
            raise
        except HfHubHTTPError as e:  # a Hub (or stand-in) without the history route: the diffs say what changed
            if e.response is None or e.response.status_code not in (404, 405, 501):
                raise
            self.history = None

    def change(self, head: str, num: int) -> tuple[str | None, str | None]:
        """``layout.refusal`` of pull request ``num``, whose head is ``head``: its merge base's files against its
        head's; from the pull request's diff where the Hub cannot list the history."""
        after, sizes = _tree(self.api, self.repo_id, head)
        if self.history is None:
            diff = self.api.get_discussion_details(self.repo_id, num, repo_type="dataset").diff or ""
            return layout.refusal(*layout.diff_change(diff), sizes, set(self.main))
        ours = [c.commit_id for c in self.api.list_repo_commits(self.repo_id, repo_type="dataset", revision=head)]
        base = next((c for c in ours if c in self.history), None)
        if base is None:  # main may have moved since the history was read: read it once more before refusing
            self._read_history()
            base = next((c for c in ours if c in (self.history or ())), None)
        if base is None:
            return None, "it shares no history with main: open it from the repository's main branch"
        before, _ = _tree(self.api, self.repo_id, base)
        return layout.refusal(before, after, sizes, set(self.main))


def _answer(repo: _Repo, num: int, me: str, merge: bool) -> Answer:
    api, repo_id = repo.api, repo.repo_id
    details = api.get_discussion_details(repo_id, num, repo_type="dataset")
    head = api.repo_info(repo_id, repo_type="dataset", revision=f"refs/pr/{num}").sha
    said_before = comments.answered([(e.author, getattr(e, "content", "")) for e in details.events
                                     if e.type == "comment"], me)
    if said_before is not None and said_before[0] == head:
        answer = Answer(num, head, None, note=f"answered at this revision already: {said_before[1]}")
        if said_before[1] == "accepted" and merge:  # a run that died between its comment and the merge
            answer.verdict = "accepted"
            _merge(repo, num, head, answer)
        return answer
    answer = _verdict(repo, head, num)
    api.comment_discussion(repo_id, num, comments.comment(head, answer.verdict, answer.lines, merge),
                           repo_type="dataset")
    answer.commented = True
    if answer.verdict == "accepted" and merge:
        _merge(repo, num, head, answer)
    return answer


def _verdict(repo: _Repo, head: str, num: int) -> Answer:
    path, why = repo.change(head, num)
    if why is not None:
        return Answer(num, head, "rejected", [said.rejected(why)])
    with tempfile.TemporaryDirectory(prefix="g2m-sync-") as tmp:  # a regular file, never a link into a cache
        local = fetch.download(repo.api, repo.repo_id, path, head, Path(tmp) / "submission", repo.timeout,
                               MAX_FILE_BYTES)
        lines = _check_file(local, path)
    return Answer(num, head, "rejected" if lines[0].startswith("REJECTED") else "accepted", lines, path)


def _check_file(local: Path, path: str) -> list[str]:
    """``g2m validate``'s lines for the downloaded file, with the two things a file name promises checked too: that it
    is gzip, and that it holds the outputs of the model it is named after."""
    from submission.submission import validate

    with open(local, "rb") as f:
        if f.read(2) != _GZIP:
            return [said.rejected(f"{path} is not gzip-compressed: send the .json.gz that g2m submit writes")]
    v = validate(local)
    if not v.ok:
        return [said.rejected(v.reason)]
    model, named = v.metadata["model"]["id"], layout.model_of(path)
    if model != named:
        return [said.rejected(f"{path} is named for {named} but holds the outputs of {model}: name it "
                              f"{layout.submission_path(model)}")]
    return [*(said.warning(w) for w in v.warnings), *said.accepted(v, path)]


def _merge(repo: _Repo, num: int, checked: str, answer: Answer) -> None:
    """Merge the pull request if its head is still the revision that was checked and it still adds one new
    submission to main as main is now (another pull request may have added the same file since: refused in a comment
    of its own); then check what landed. The Hub merges whatever head the pull request has when it merges, so a
    commit pushed between the last look and the merge would land unseen: main is read again after the merge, and
    anything but the checked file's bytes is reverted in one commit, with a comment saying why."""
    from huggingface_hub.errors import HfHubHTTPError

    api, repo_id = repo.api, repo.repo_id
    if api.repo_info(repo_id, repo_type="dataset", revision=f"refs/pr/{num}").sha != checked:
        answer.note = "not merged: a commit was pushed after the check; the next run checks it"
        return
    repo.refresh_main()
    answer.path, why = repo.change(checked, num)
    if why is not None:
        answer.verdict, answer.lines = "rejected", [said.rejected(why)]
        api.comment_discussion(repo_id, num, comments.comment(checked, "rejected", answer.lines, True),
                               repo_type="dataset")
        answer.commented = True
        return
    before, before_sha = dict(repo.main), repo.main_sha
    want = {answer.path: _tree(api, repo_id, checked)[0][answer.path]}  # the checked revision's bytes, by content id
    try:
        api.merge_pull_request(repo_id, num, repo_type="dataset")
    except HfHubHTTPError as e:
        if e.response is None or e.response.status_code not in (400, 403, 409, 422):
            raise
        answer.note = f"not merged: the Hub refused ({e.response.status_code}: {term(str(e).splitlines()[0], 200)})"
        return
    answer.merged = True
    repo.refresh_main()  # the next pull request is checked against main as it is now: one verdict per revision
    landed = {p: repo.main.get(p) for p in set(before) | set(repo.main) if before.get(p) != repo.main.get(p)}
    if landed != want:
        _revert(repo, num, before, before_sha, landed, answer)


def _revert(repo: _Repo, num: int, before: dict[str, str], before_sha: str, landed: dict[str, str | None],
            answer: Answer) -> None:
    """Put main's files back as they were before the merge, in one commit on the head the merge made (``parent_commit``:
    never over a commit of someone else's), and say why on the pull request."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api, repo_id = repo.api, repo.repo_id
    with tempfile.TemporaryDirectory(prefix="g2m-revert-") as tmp:
        ops = []
        for i, path in enumerate(sorted(landed)):
            if path not in before:
                ops.append(CommitOperationDelete(path))
            else:  # changed or removed by the unseen commit: its bytes as main had them
                old = fetch.download(api, repo_id, path, before_sha, Path(tmp) / str(i), repo.timeout)
                ops.append(CommitOperationAdd(path, old.read_bytes()))
        info = api.create_commit(repo_id, operations=ops, repo_type="dataset", parent_commit=repo.main_sha,
                                 commit_message=f"Revert #{num}: what landed is not what was checked")
    shown = ", ".join(sorted(landed))[:300]
    answer.merged, answer.note = False, f"reverted in {info.oid[:12]}: what landed ({shown}) is not what was checked"
    answer.lines = [said.rejected(f"the merge brought {shown} to main, not the bytes checked at {answer.revision[:12]} "
                                  f"(a commit pushed just before the merge); reverted in commit {info.oid[:12]}. Open "
                                  "a new pull request with the submission to have it checked")]
    gone = "The merge was undone: main holds what it held before. Open a new pull request to have it checked."
    api.comment_discussion(repo_id, num, comments.comment(answer.revision, "rejected", answer.lines, True, gone),
                           repo_type="dataset")
    answer.verdict, answer.commented = "rejected", True
    repo.refresh_main()
