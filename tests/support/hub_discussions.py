"""Users, discussions and pull requests of the stand-in Hub (``hub_server``), for tests only: NOT the Hub.

The answers follow the Hub's own OpenAPI description of these routes (field names, which are required, the 201 of a
new comment), so that the real ``huggingface_hub`` client parses them with its own code:

- ``GET /api/whoami-v2`` (``HfApi.whoami``): the user of the request's token, 401 without a known one;
- ``GET /api/{type}s/{repo}/discussions`` (``get_repo_discussions``): ``type``, ``status``, ``author`` and ``p``
  (page) parameters, newest first, ``server.page_size`` a page (50, as the Hub); ``status=open`` counts drafts as open
  and ``status=closed`` counts merged pull requests as closed;
- ``POST /api/{type}s/{repo}/discussions`` (``create_discussion``, ``create_pull_request``: a pull request made so is a
  ``draft`` until its status is set to ``open``, and its ``refs/pr/N`` starts at the base branch's head);
- ``GET .../discussions/{num}`` (``get_discussion_details``; with ``diff=1`` a git-style diff of a pull request);
- ``POST .../discussions/{num}/comment`` (``comment_discussion``: 201, ``newMessage``), ``/status``
  (``change_discussion_status``: ``newStatus``), ``/title`` (``rename_discussion``: ``newTitle``) and ``/merge``
  (``merge_pull_request``: the pull request's changes since its branch started, applied on the base branch's head as
  one squashed commit ``"{title} (#N)"``; 409 when the base changed a file the pull request changed too).

Users: ``server.tokens`` maps a token to a user name and ``server.orgs`` an organisation to its members. While
``tokens`` is empty (the push tests) every request is let through and its author is ``"anonymous"``. Once a test has
named a user, a write (a commit, a new repository, a discussion, a comment, a status, a title, a merge) needs a known
token (401 otherwise), and writing to a branch, merging, or changing someone else's discussion needs the right to write
to the repository: its namespace is that user or an organisation they belong to (403 otherwise; a namespace that is
neither a named user nor a named organisation is open to every user). Anyone with a token may open a discussion or
pull request, comment, and commit to a pull request's ``refs/pr/N`` until it is merged (400 then). A pull request's
author may close or reopen it, and only someone who may write to the repository merges it (400 unless it is
``open``: a draft, a closed or a merged one, or a discussion). Titles and comments are stored verbatim; the ``html`` of
a comment is its raw text escaped, not rendered Markdown.
"""

from __future__ import annotations

import difflib
import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

DISCUSSIONS_PATH = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)/discussions"
                          r"(?:/(\d+)(?:/(comment|status|title|merge))?)?$")
_PR_REF = re.compile(r"^refs/pr/(\d+)$")
_PREFIX = {"models": "", "datasets": "datasets/", "spaces": "spaces/"}
_ROUTE = {None: "discussion", "comment": "comment", "status": "status", "title": "title", "merge": "merge"}


def now() -> str:
    """The Hub's timestamps: ISO 8601 in UTC with milliseconds and a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def pr_number(rev: str) -> int | None:
    m = _PR_REF.match(rev)
    return int(m.group(1)) if m else None


def _hex24(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:24]


def user_json(name: str) -> dict:
    """A user as the Hub describes the author of a discussion or event."""
    return {"_id": _hex24("user", name), "avatarUrl": f"/avatars/{_hex24('avatar', name)}.svg", "fullname": name,
            "name": name, "type": "user", "isPro": False, "isHf": False, "isHfAdmin": False, "isMod": False,
            "followerCount": 0}


@dataclass
class Event:
    id: str
    type: str  # "comment", "commit", "status-change", "title-change"
    author: str
    created_at: str
    data: dict


@dataclass
class Discussion:
    num: int
    title: str
    author: str
    is_pr: bool
    status: str  # "open", "closed", "merged", "draft"
    created_at: str = field(default_factory=now)
    events: list[Event] = field(default_factory=list)
    base: str = "main"  # the branch a pull request merges into
    start: str | None = None  # the commit its refs/pr/N started from
    merge_commit: str | None = None


class DiscussionRoutes:
    """The handler's routes for users and discussions; mixed into ``hub_server._Handler``, whose plumbing
    (``_json``, ``_error``, ``_fault``, ``server``) they use."""

    # -- users --------------------------------------------------------------------------------------------------
    def _token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return auth[7:].strip() if auth.lower().startswith("bearer ") else None

    def _writer(self) -> str | None:
        """The author of a write, or None once a 401 has been answered (no known token while users are named)."""
        if not self.server.tokens:
            return "anonymous"
        token = self._token()
        if token is None:
            self._error(401, "Unauthorized", "You must be authenticated to do this")  # the client: RepositoryNotFound
            return None
        if token not in self.server.tokens:
            self._error(401, "Unauthorized", "Invalid credentials in Authorization header")
            return None
        return self.server.tokens[token]

    def _may_write(self, user: str, repo_id: str) -> bool:
        if not self.server.tokens:
            return True
        namespace = repo_id.split("/")[0]
        if namespace in self.server.orgs:
            return user in self.server.orgs[namespace]
        if namespace in self.server.tokens.values():
            return user == namespace
        return True

    def _refuse_write(self, repo_id: str) -> None:
        self._error(403, "Forbidden", f"You don't have the rights to write to {repo_id}")

    def _whoami(self) -> None:
        self._fault("whoami", True)
        name = self.server.tokens.get(self._token() or "")
        if name is None:
            return self._error(401, "Unauthorized", "Invalid credentials in Authorization header")
        orgs = [{"type": "org", "id": _hex24("org", org), "name": org, "fullname": org,
                 "avatarUrl": f"/avatars/{_hex24('avatar', org)}.svg", "roleInOrg": "write"}
                for org, members in sorted(self.server.orgs.items()) if name in members]
        self._json(200, {"type": "user", "id": _hex24("user", name), "name": name, "fullname": name, "email": None,
                         "emailVerified": True, "canPay": False, "isPro": False, "periodEnd": None,
                         "avatarUrl": f"/avatars/{_hex24('avatar', name)}.svg", "orgs": orgs,
                         "auth": {"type": "access_token",
                                  "accessToken": {"displayName": "stand-in", "role": "write",
                                                  "createdAt": "2026-12-01T00:00:00.000Z"}}})

    # -- events -------------------------------------------------------------------------------------------------
    def add_event(self, disc: Discussion, kind: str, author: str, data: dict) -> Event:
        event = Event(_hex24("event", str(disc.num), str(len(disc.events)), self.server.new_oid()), kind, author,
                      now(), data)
        disc.events.append(event)
        return event

    def add_comment(self, disc: Discussion, author: str, text: str) -> Event:
        return self.add_event(disc, "comment", author, {"raw": text})

    def _event_json(self, repo, event: Event) -> dict:
        namespace = repo.repo_id.split("/")[0]
        author = {**user_json(event.author), "isOwner": event.author == namespace,
                  "isOrgMember": event.author in self.server.orgs.get(namespace, ())}
        data = event.data
        if event.type == "comment":
            data = {"edited": False, "hidden": False, "numEdits": 0, "editors": [event.author],
                    "editorAvatarUrls": [author["avatarUrl"]], "reactions": [],
                    "latest": {"raw": data["raw"], "html": f"<p>{html.escape(data['raw'])}</p>",
                               "updatedAt": event.created_at, "author": user_json(event.author)}}
        return {"id": event.id, "type": event.type, "createdAt": event.created_at, "author": author, "data": data}

    def open_pull_request(self, repo, title: str, description: str, author: str, base: str, start: str,
                          draft: bool) -> Discussion:
        """A new pull request (under the server's lock): its number, its refs/pr/N at ``start``, its first comment."""
        num = len(repo.discussions) + 1
        disc = Discussion(num, title, author, True, "draft" if draft else "open", base=base, start=start)
        repo.discussions[num] = disc
        repo.pr_heads[num] = start
        self.add_comment(disc, author, description)
        return disc

    # -- routes -------------------------------------------------------------------------------------------------
    def _discussions(self, kind: str, repo_id: str, num: str | None, action: str | None, query: dict,
                     body: bytes) -> None:
        route = ("create-discussion" if self.command == "POST" else "discussions") if num is None else _ROUTE[action]
        self._fault(route, True)
        repo = self.server.repo(kind, repo_id)
        if repo is None:
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        try:
            doc = json.loads(body) if body.strip() else {}
        except ValueError:
            return self._error(400, "BadRequest", "the body is not JSON")
        doc = doc if isinstance(doc, dict) else {}
        if num is None:
            if self.command == "GET":
                return self._list(repo, query)
            if self.command == "POST":
                return self._create(repo, doc)
        disc = repo.discussions.get(int(num))
        if disc is None:
            return self._error(404, "NotFound", f"Discussion #{num} not found")
        if action is None and self.command == "GET":
            return self._details(repo, disc, query.get("diff", ["0"])[0] in ("1", "true"))
        if self.command != "POST" or action is None:
            return self._error(405, "MethodNotAllowed", f"{self.command} is not allowed here")
        user = self._writer()
        if user is None:
            return None
        with self.server.lock:
            answer = getattr(self, f"_{action}")(repo, disc, user, doc)
        return self._answer(route, answer)

    def _answer(self, route: str, answer: tuple[int, dict] | None) -> None:
        """Send a write's answer, done under the lock, once the lock is released (None: an error already sent);
        a ``hang_after`` fault lets the write happen and then never answers."""
        if answer is not None:
            self._fault(route, False)
            self._json(*answer)

    def _listed(self, repo, disc: Discussion) -> dict:
        namespace = repo.repo_id.split("/")[0]
        return {"num": disc.num, "author": user_json(disc.author),
                "repo": {"name": repo.repo_id, "type": repo.kind[:-1]}, "title": disc.title,
                "status": disc.status, "createdAt": disc.created_at, "isPullRequest": disc.is_pr,
                "numComments": sum(e.type == "comment" for e in disc.events), "numReactionUsers": 0,
                "topReactions": [], "pinned": False,
                "repoOwner": {"name": namespace, "type": "org" if namespace in self.server.orgs else "user",
                              "isParticipating": any(e.author == namespace for e in disc.events),
                              "isDiscussionAuthor": disc.author == namespace}}

    def _list(self, repo, query: dict) -> None:
        kind = query.get("type", ["all"])[0]
        status = query.get("status", ["all"])[0]
        author = query.get("author", [None])[0]
        if kind not in ("all", "discussion", "pull_request") or status not in ("all", "open", "closed"):
            return self._error(400, "BadRequest", "invalid type or status")
        try:
            page = int(query.get("p", ["0"])[0])
        except ValueError:
            return self._error(400, "BadRequest", "invalid page")
        with self.server.lock:
            chosen = [d for d in sorted(repo.discussions.values(), key=lambda d: -d.num)
                      if (kind == "all" or d.is_pr == (kind == "pull_request"))
                      and (author is None or d.author == author)]
            closed = sum(d.status in ("closed", "merged") for d in chosen)
            if status != "all":
                chosen = [d for d in chosen if (d.status in ("closed", "merged")) == (status == "closed")]
            size = self.server.page_size
            start = max(page, 0) * size
            entries = [self._listed(repo, d) for d in chosen[start:start + size]]
        self._json(200, {"discussions": entries, "count": len(chosen), "start": start,
                         "numClosedDiscussions": closed})

    def _create(self, repo, doc: dict) -> None:
        user = self._writer()
        if user is None:
            return None
        title = str(doc.get("title") or "").strip()
        if not 3 <= len(title) <= 200 or not isinstance(doc.get("description"), str):
            return self._error(400, "BadRequest", "a title of 3 to 200 characters and a description are needed")
        return self._answer("create-discussion", self._open(repo, user, title, doc))

    def _open(self, repo, user: str, title: str, doc: dict) -> tuple[int, dict]:
        with self.server.lock:
            if doc.get("pullRequest"):
                disc = self.open_pull_request(repo, title, doc["description"], user, "main",
                                              repo.branches["main"], draft=True)
            else:
                disc = Discussion(len(repo.discussions) + 1, title, user, False, "open")
                repo.discussions[disc.num] = disc
                self.add_comment(disc, user, doc["description"])
        answer = {"url": self._discussion_url(repo, disc.num), "num": disc.num, "pullRequest": disc.is_pr}
        if disc.is_pr:
            answer["references"] = {"base": f"refs/heads/{disc.base}"}
        return 200, answer

    def _discussion_url(self, repo, num: int) -> str:
        return f"{self.server.url}/{_PREFIX[repo.kind]}{repo.repo_id}/discussions/{num}"

    def _details(self, repo, disc: Discussion, with_diff: bool) -> None:
        with self.server.lock:
            out = {"_id": _hex24("discussion", repo.repo_id, str(disc.num)), **self._listed(repo, disc),
                   "events": [self._event_json(repo, e) for e in disc.events], "locked": False,
                   "collection": "discussions"}
            for key in ("numComments", "numReactionUsers", "topReactions", "repoOwner"):
                out.pop(key)
            if disc.is_pr:
                out["changes"] = {"base": f"refs/heads/{disc.base}"}
                if disc.merge_commit:
                    out["changes"]["mergeCommitId"] = disc.merge_commit
                out["filesWithConflicts"] = [] if disc.status == "merged" else self._conflicts(repo, disc)
                if with_diff:
                    out["diff"] = self._diff(repo, disc)
            else:
                out["isReport"] = False
        self._json(200, out)

    def _changes(self, repo, disc: Discussion) -> dict:
        """What the pull request changed since its branch started: path -> new Blob, or None where deleted."""
        before = repo.commits[disc.start].files
        after = repo.commits[repo.pr_heads[disc.num]].files
        return {p: after.get(p) for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)}

    def _conflicts(self, repo, disc: Discussion) -> list[str]:
        before = repo.commits[disc.start].files
        base = repo.commits[repo.branches[disc.base]].files
        return [p for p, blob in self._changes(repo, disc).items() if base.get(p) not in (before.get(p), blob)]

    def _diff(self, repo, disc: Discussion) -> str:
        before = repo.commits[disc.start].files
        out = []
        for path, blob in self._changes(repo, disc).items():
            old = before.get(path)
            out.append(f"diff --git a/{path} b/{path}\n")
            if old is None:
                out.append("new file mode 100644\n")
            elif blob is None:
                out.append("deleted file mode 100644\n")
            out.append(f"index {old.git_oid[:7] if old else '0000000'}..{blob.git_oid[:7] if blob else '0000000'}\n")
            if any(b is not None and (b.lfs or not _is_text(b.data)) for b in (old, blob)):
                out.append(f"Binary files {'a/' + path if old else '/dev/null'} and "
                           f"{'b/' + path if blob else '/dev/null'} differ\n")
                continue
            a, b = (x.data.decode("utf-8").splitlines(True) if x is not None else [] for x in (old, blob))
            out.extend(difflib.unified_diff(a, b, f"a/{path}" if old else "/dev/null",
                                            f"b/{path}" if blob else "/dev/null"))
        return "".join(out)

    def _comment(self, repo, disc: Discussion, user: str, doc: dict) -> tuple[int, dict] | None:
        text = doc.get("comment")
        if not isinstance(text, str) or not text:
            return self._error(400, "BadRequest", "a comment is needed")
        event = self.add_comment(disc, user, text)
        return 201, {"newMessage": self._event_json(repo, event)}

    def _may_change(self, repo, disc: Discussion, user: str) -> bool:
        return user == disc.author or self._may_write(user, repo.repo_id)

    def _status(self, repo, disc: Discussion, user: str, doc: dict) -> tuple[int, dict] | None:
        status = doc.get("status")
        if status not in ("open", "closed"):
            return self._error(400, "BadRequest", "the status must be 'open' or 'closed'")
        if not self._may_change(repo, disc, user):
            return self._refuse_write(repo.repo_id)
        if disc.status == "merged":
            return self._error(400, "BadRequest", f"#{disc.num} is merged: its status cannot change")
        if doc.get("comment"):
            self.add_comment(disc, user, str(doc["comment"]))
        disc.status = status
        event = self.add_event(disc, "status-change", user, {"status": status})
        return 200, {"newStatus": self._event_json(repo, event)}

    def _title(self, repo, disc: Discussion, user: str, doc: dict) -> tuple[int, dict] | None:
        title = str(doc.get("title") or "").strip()
        if not 3 <= len(title) <= 200:
            return self._error(400, "BadRequest", "a title of 3 to 200 characters is needed")
        if not self._may_change(repo, disc, user):
            return self._refuse_write(repo.repo_id)
        event = self.add_event(disc, "title-change", user, {"from": disc.title, "to": title})
        disc.title = title
        return 200, {"newTitle": self._event_json(repo, event)}

    def _merge(self, repo, disc: Discussion, user: str, doc: dict) -> tuple[int, dict] | None:
        if not self._may_write(user, repo.repo_id):
            return self._refuse_write(repo.repo_id)
        if not disc.is_pr or disc.status != "open":
            what = "not a pull request" if not disc.is_pr else disc.status
            return self._error(400, "BadRequest", f"#{disc.num} cannot be merged: it is {what}")
        conflicts = self._conflicts(repo, disc)
        if conflicts:
            return self._error(409, "Conflict", f"#{disc.num} conflicts with {disc.base}: {', '.join(conflicts)}")
        head = repo.commits[repo.branches[disc.base]]
        files = dict(head.files)
        for path, blob in self._changes(repo, disc).items():
            if blob is None:
                files.pop(path, None)
            else:
                files[path] = blob
        merged = self.server.add_commit(repo, head, f"{disc.title} (#{disc.num})", files)
        repo.branches[disc.base] = merged.oid
        if doc.get("comment"):
            self.add_comment(disc, user, str(doc["comment"]))
        disc.status, disc.merge_commit = "merged", merged.oid
        self.add_event(disc, "status-change", user, {"status": "merged"})
        return 200, {}


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data
