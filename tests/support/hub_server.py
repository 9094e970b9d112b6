"""A stand-in for the Hugging Face Hub on 127.0.0.1, for tests only: NOT the Hub, and no part of grid2matrix.

It answers the routes that the real ``huggingface_hub`` client (and ``datasets`` on top of it) calls to push a
release and read it back by its Hub id, with the headers the client expects, and keeps repositories as real commits
(each one a full tree of files, LFS objects stored by their sha256), branches and tags:

- ``POST /api/repos/create`` (a Space keeps its ``sdk`` and starts with a README.md whose front matter names it);
  ``GET /api/{type}s/{repo}[/revision/{rev}]`` (repository info; a Space's carries its ``sdk``);
- ``POST /api/{type}s/{repo}/preupload/{rev}``; ``POST /{prefix}{repo}.git/info/lfs/objects/batch`` and the ``PUT``
  of each object to the upload link it hands out; ``POST /api/validate-yaml``;
- ``POST /api/{type}s/{repo}/commit/{rev}`` (ndjson: header, file, lfsFile, deletedFile, deletedFolder) on a branch,
  or on ``refs/pr/N`` (a ``commit`` event on pull request N); with ``create_pr=1`` it opens a pull request instead:
  a new number N, ``refs/pr/N`` started at the branch's head (or the header's ``parentCommit``), the commit on it,
  and ``pullRequestUrl`` ``{url}/{prefix}{repo}/discussions/N``;
- ``POST /api/{type}s/{repo}/tag/{rev}``; ``GET /api/{type}s/{repo}/refs`` (``pullRequests`` with ``include_prs=1``);
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]``; ``POST /api/{type}s/{repo}/paths-info/{rev}``;
  ``GET /api/{type}s/{repo}/commits/{rev}`` (``list_repo_commits``: the revision's history, newest first);
- ``HEAD``/``GET /{prefix}{repo}/resolve/{rev}/{path}`` (ETag, X-Repo-Commit, Content-Length, X-Linked-Etag and
  X-Linked-Size for LFS files, byte ranges);
- ``GET /api/datasets/{repo}/leaderboard`` (``HfApi.get_dataset_leaderboard``): the list a test put in
  ``server.leaderboards[repo]``, as the Hub's JSON (``rank``, ``modelId``, ``value``, ``filename``, ``verified``,
  ``source``, ``author``, ``notes``), or 404 for a dataset without one;
- users (``server.tokens``, ``server.orgs``), ``GET /api/whoami-v2``, and the discussions and pull requests routes:
  see ``hub_discussions``, which says who may write what.

Every revision a route takes may be a branch, a tag, a commit id or ``refs/pr/N`` (the client URL-quotes it).
The client must upload without Xet (``HF_HUB_DISABLE_XET=1``, or ``huggingface_hub.constants.HF_HUB_DISABLE_XET``
set in the process): the stand-in speaks the LFS protocol only.

Faults for the failure tests: ``server.fail(route, mode, times, after)`` makes the next ``times`` requests of a route
answer HTTP 500 (``"500"``), answer 404 as a Hub without the route would (``"404"``), close the connection without
an answer (``"drop"``), never answer (``"hang"``), or do their work and then never answer (``"hang_after"``: a commit
that is made but whose answer never comes). Every request is logged in ``server.log`` as (method, route), so a test
can say which routes the client used. The routes of ``hub_discussions`` are ``whoami``, ``discussions`` (the list),
``create-discussion``, ``discussion`` (details), ``comment``, ``status``, ``title`` and ``merge``; the history is
``commits``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.support.hub_discussions import DISCUSSIONS_PATH, Discussion, DiscussionRoutes, pr_number

LFS_SUFFIXES = (".parquet", ".png", ".bin", ".safetensors")
_API = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+?)"
                  r"(?:/(preupload|commit|commits|tag|tree|paths-info|revision|refs)"
                  r"(?:/([^/]+))?(?:/(.*))?)?$")
_LFS_BATCH = re.compile(r"^/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch$")
_LEADERBOARD = re.compile(r"^/api/datasets/([^/]+/[^/]+)/leaderboard$")
_RESOLVE = re.compile(r"^/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")
_PREFIX = {"models": "", "datasets": "datasets/", "spaces": "spaces/"}


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def git_oid(self) -> str:
        return hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.git_oid


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    files: dict[str, Blob]


@dataclass
class Repo:
    kind: str
    repo_id: str
    private: bool
    sdk: str | None = None  # a Space's
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pr_heads: dict[int, str] = field(default_factory=dict)  # N -> the head of refs/pr/N
    discussions: dict[int, Discussion] = field(default_factory=dict)  # discussions and pull requests, from 1

    def resolve(self, rev: str) -> Commit | None:
        num = pr_number(rev)
        oid = (self.pr_heads.get(num) if num is not None else
               self.branches.get(rev) or self.tags.get(rev) or (rev if rev in self.commits else None))
        return self.commits.get(oid) if oid else None


class HubStandIn(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.log: list[tuple[str, str]] = []
        self.faults: dict[str, list] = {}
        self.hooks: dict[str, list] = {}  # route -> what runs once before the next request of it is answered
        self.leaderboards: dict[str, list] = {}  # dataset id -> the entries its leaderboard route answers
        self.tokens: dict[str, str] = {}  # token -> user name; while empty, no request needs one (hub_discussions)
        self.orgs: dict[str, set[str]] = {}  # organisation -> its members, who may write to its repositories
        self.page_size = 50  # discussions a page, as the Hub
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self._counter = 0
        # a short poll: shutdown() waits for serve_forever to notice, half a second a test at the default 0.5 s
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> HubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()

    def fail(self, route: str, mode: str, times: int = 1_000_000, after: int = 0) -> None:
        """The next ``times`` requests of ``route`` fail as ``mode``, once ``after`` of them have been let through."""
        assert mode in ("500", "404", "drop", "hang", "hang_after"), mode
        self.faults[route] = [mode, times, after]

    def heal(self) -> None:
        self.faults.clear()

    def before(self, route: str, action) -> None:
        """``action()`` runs once, just before the next request of ``route`` is answered (another client's commit
        landing between a client's last look and its request, say)."""
        self.hooks.setdefault(route, []).append(action)

    def routes(self) -> set[str]:
        return {route for _, route in self.log}

    def new_oid(self, *parts: str) -> str:
        self._counter += 1
        return hashlib.sha1("\0".join((str(self._counter), *parts)).encode()).hexdigest()

    def repo(self, kind: str, repo_id: str) -> Repo | None:
        return self.repos.get((kind, repo_id))

    def add_commit(self, repo: Repo, parent: Commit | None, title: str, files: dict[str, Blob]) -> Commit:
        """A new commit of ``repo`` (no ref moves to it); under the lock."""
        commit = Commit(self.new_oid(repo.repo_id, title), parent.oid if parent else None, title, files)
        repo.commits[commit.oid] = commit
        return commit

    def files(self, kind: str, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        """The files of a revision, as bytes (for the tests' own checks)."""
        commit = self.repo(kind, repo_id).resolve(rev)
        return {p: b.data for p, b in commit.files.items()}


class _Drop(Exception):
    """The request ends here and its connection is closed (no answer was sent, or it never will be)."""


class _Answered(Exception):
    """The request ends here with the answer sent (a fault's 404 or 500); its connection stays open, as the Hub's
    does. Closing it after an answer that did not say ``Connection: close`` raced the client, which may already be
    sending its next request on it: "Server disconnected without sending a response"."""


class _Handler(DiscussionRoutes, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # an answer's headers and body go out as two writes: with Nagle's algorithm the body waited for the client's
    # delayed ACK of the headers, some 40 ms a request on a kept-alive connection
    disable_nagle_algorithm = True
    server: HubStandIn

    def log_message(self, *args) -> None:  # quiet
        pass

    # -- plumbing -----------------------------------------------------------------------------------------------
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
        self.send_response(status)
        headers = {"Content-Type": "application/json", **(headers or {})}
        headers.setdefault("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if not head and self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc, headers: dict | None = None) -> None:
        self._send(status, json.dumps(doc).encode(), headers)

    def _error(self, status: int, code: str, message: str) -> None:
        self._json(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message})

    def _fault(self, route: str, before: bool) -> None:
        hooks = self.server.hooks.get(route) if before else None
        if hooks:
            hooks.pop(0)()  # outside the lock: it may talk to this server itself
        with self.server.lock:
            if before:
                self.server.log.append((self.command, route))
            fault = self.server.faults.get(route)
            if not fault or fault[1] <= 0 or (fault[0] == "hang_after") == before:
                return
            if fault[2] > 0:  # requests let through before the fault starts
                fault[2] -= 1
                return
            fault[1] -= 1
            mode = fault[0]
        if mode == "404":  # a Hub without this route, as an unknown route is answered
            self._error(404, "NotFound", "the stand-in Hub was told it has no such route")
            raise _Answered
        if mode == "500":
            self._error(500, "InternalError", "the stand-in Hub was told to fail")
            raise _Answered
        if mode == "drop":
            self.close_connection = True
            raise _Drop
        self.server.stopping.wait(600)  # hang / hang_after: never answer
        self.close_connection = True
        raise _Drop

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        body = self._body() if self.command in ("POST", "PUT") else b""
        try:
            if self.command == "POST" and path == "/api/repos/create":
                return self._create_repo(json.loads(body))
            if self.command == "POST" and path == "/api/validate-yaml":
                self._fault("validate-yaml", True)
                return self._json(200, {"errors": [], "warnings": []})
            if self.command == "PUT" and path.startswith("/lfs-upload/"):
                return self._lfs_put(path.rsplit("/", 1)[1], body)
            if self.command == "GET" and path == "/api/whoami-v2":
                return self._whoami()
            m = DISCUSSIONS_PATH.match(path)
            if m:
                return self._discussions(m.group(1), m.group(2), m.group(3), m.group(4), query, body)
            m = _LEADERBOARD.match(path)
            if m and self.command == "GET":
                self._fault("leaderboard", True)
                board = self.server.leaderboards.get(m.group(1))
                if board is None:
                    return self._error(404, "NotFound", f"{m.group(1)} has no leaderboard")
                return self._send(200, json.dumps(board, allow_nan=True).encode())
            m = _LFS_BATCH.match(path)
            if m and self.command == "POST":
                return self._lfs_batch(self._kind(m.group(1)), m.group(2), json.loads(body))
            m = _RESOLVE.match(path)
            if m and self.command in ("GET", "HEAD"):
                return self._resolve(self._kind(m.group(1)), m.group(2), unquote(m.group(3)), unquote(m.group(4)))
            m = _API.match(path)
            if m:
                return self._api(m.group(1), m.group(2), m.group(3), unquote(m.group(4) or ""),
                                 unquote(m.group(5) or ""),
                                 query, body)
            self.server.log.append((self.command, f"unknown {path}"))
            return self._error(404, "NotFound", f"the stand-in Hub has no route {self.command} {path}")
        except _Answered:
            pass
        except _Drop:
            self.close_connection = True

    @staticmethod
    def _kind(prefix: str | None) -> str:
        return {"datasets/": "datasets", "spaces/": "spaces"}.get(prefix or "", "models")

    # -- repositories -------------------------------------------------------------------------------------------
    def _create_repo(self, doc: dict) -> None:
        self._fault("create-repo", True)
        kind = (doc.get("type") or "model") + "s"
        user = self._writer()
        if user is None:
            return None
        namespace = doc.get("organization") or (user if self.server.tokens else None)  # no users: a bare name
        repo_id = f"{namespace}/{doc['name']}" if namespace else doc["name"]
        if not self._may_write(user, repo_id):
            return self._refuse_write(repo_id)
        if kind == "spaces" and doc.get("sdk") not in ("gradio", "docker", "static"):
            return self._error(400, "BadRequest", "a Space needs an sdk: gradio, docker or static")
        with self.server.lock:
            if (kind, repo_id) in self.server.repos:  # the Hub's 409 names the repository too
                return self._json(409, {"error": "You already created this repo",
                                        "url": f"{self.server.url}/{_PREFIX[kind]}{repo_id}"},
                                  {"X-Error-Message": "You already created this repo"})
            repo = Repo(kind, repo_id, doc.get("private") is True or doc.get("visibility") == "private",
                        sdk=doc.get("sdk") if kind == "spaces" else None)
            files = {".gitattributes": Blob(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", False)}
            if repo.sdk:  # the card the Hub writes for a new Space
                files["README.md"] = Blob(f"---\ntitle: {doc['name']}\nemoji: 🦀\ncolorFrom: blue\ncolorTo: gray\n"
                                          f"sdk: {repo.sdk}\npinned: false\n---\n".encode(), False)
            first = self.server.add_commit(repo, None, "initial commit", files)
            repo.branches["main"] = first.oid
            self.server.repos[(kind, repo_id)] = repo
        self._json(200, {"url": f"{self.server.url}/{_PREFIX[kind]}{repo_id}", "name": repo_id, "id": repo_id})

    def _api(self, kind, repo_id, action, rev, rest, query, body) -> None:
        repo = self.server.repo(kind, repo_id)
        if repo is None:
            self.server.log.append((self.command, action or "info"))
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        if action in (None, "revision") and self.command == "GET":
            return self._info(repo, rev or "main")
        if action == "refs" and self.command == "GET":
            self._fault("refs", True)
            refs = {"branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": o} for b,
                                 o in repo.branches.items()],
                    "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": o} for t, o in repo.tags.items()],
                    "converts": []}
            if query.get("include_prs", ["0"])[0] in ("1", "true"):
                refs["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": o}
                                        for n, o in sorted(repo.pr_heads.items())]
            return self._json(200, refs)
        commit = repo.resolve(rev)
        if commit is None:
            self.server.log.append((self.command, action))
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        if action == "preupload" and self.command == "POST":
            return self._preupload(commit, json.loads(body))
        if action == "commit" and self.command == "POST":
            return self._commit(repo, rev, commit, body, query.get("create_pr", ["0"])[0] in ("1", "true"))
        if action == "tag" and self.command == "POST":
            return self._tag(repo, commit, json.loads(body))
        if action == "commits" and self.command == "GET":  # list_repo_commits: the history, newest first
            self._fault("commits", True)
            history = []
            while commit is not None:
                history.append({"id": commit.oid, "title": commit.title, "message": "",
                                "date": "2026-12-01T00:00:00.000Z", "authors": [{"user": "anonymous"}]})
                commit = repo.commits.get(commit.parent) if commit.parent else None
            return self._json(200, history)
        if action == "tree" and self.command == "GET":
            self._fault("tree", True)
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return self._json(200, self._tree(commit, rest.strip("/"), recursive, "expand" in query))
        if action == "paths-info" and self.command == "POST":
            self._fault("paths-info", True)
            form = parse_qs(body.decode())
            paths = form.get("paths", [])
            if self.headers.get("Content-Type", "").startswith("application/json"):
                paths = json.loads(body).get("paths", [])
            entries = [e for p in paths for e in self._tree(commit, p.strip("/"), False, "expand" in form,
                                                            self_entry=True)]
            return self._json(200, entries)
        return self._error(404, "NotFound", f"the stand-in Hub has no route {self.command} {action}")

    def _info(self, repo: Repo, rev: str) -> None:
        self._fault("info", True)
        commit = repo.resolve(rev)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        self._json(200, {"id": repo.repo_id, "_id": repo.repo_id, "sha": commit.oid, "private": repo.private,
                         "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [],
                         "author": repo.repo_id.split("/")[0], "lastModified": "2026-12-01T00:00:00.000Z",
                         "createdAt": "2026-12-01T00:00:00.000Z", "cardData": {},
                         "siblings": [{"rfilename": p} for p in sorted(commit.files)],
                         **({"sdk": repo.sdk, "subdomain": repo.repo_id.replace("/", "-").lower()}
                            if repo.sdk else {})})

    def _entry(self, commit: Commit, path: str, expand: bool) -> dict:
        blob = commit.files[path]
        out = {"type": "file", "oid": blob.git_oid, "size": len(blob.data), "path": path}
        if blob.lfs:
            out["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
        if expand:
            out["lastCommit"] = {"id": commit.oid, "title": commit.title, "date": "2026-12-01T00:00:00.000Z"}
        return out

    def _tree(self, commit: Commit, path: str, recursive: bool, expand: bool, self_entry: bool = False) -> list[dict]:
        """Entries under ``path`` (or, with ``self_entry``, the entry of ``path`` itself: paths-info)."""
        if self_entry:
            if path in commit.files:
                return [self._entry(commit, path, expand)]
            prefix = path + "/"
            if any(p.startswith(prefix) for p in commit.files):
                return [{"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(), "size": 0, "path": path}]
            return []
        prefix = f"{path}/" if path else ""
        if path and not any(p.startswith(prefix) for p in commit.files):
            return []
        out, dirs = [], set()
        for p in sorted(commit.files):
            if not p.startswith(prefix):
                continue
            rest = p[len(prefix):].split("/")
            for k in range(1, len(rest)):
                d = prefix + "/".join(rest[:k])
                if (recursive or k == 1) and d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d})
            if recursive or len(rest) == 1:
                out.append(self._entry(commit, p, expand))
        return out

    # -- uploads ------------------------------------------------------------------------------------------------
    def _preupload(self, commit: Commit, doc: dict) -> None:
        self._fault("preupload", True)
        files = []
        for f in doc["files"]:
            lfs = f["path"].endswith(LFS_SUFFIXES)
            have = commit.files.get(f["path"])
            files.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": (have.sha256 if have.lfs else have.git_oid) if have is not None else None})
        self._json(200, {"files": files, "commitOid": commit.oid})

    def _lfs_batch(self, kind: str, repo_id: str, doc: dict) -> None:
        self._fault("lfs-batch", True)
        objects = []
        for o in doc.get("objects", []):
            entry = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.server.lfs:
                entry["actions"] = {"upload": {"href": f"{self.server.url}/lfs-upload/{o['oid']}", "expires_in": 3600}}
            objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                   {"Content-Type": "application/vnd.git-lfs+json"})

    def _lfs_put(self, oid: str, body: bytes) -> None:
        self._fault("lfs-upload", True)
        if hashlib.sha256(body).hexdigest() != oid:
            return self._error(400, "BadRequest", "the uploaded bytes do not hash to their oid")
        with self.server.lock:
            self.server.lfs[oid] = body
        self._fault("lfs-upload", False)
        self._send(200)

    def _commit(self, repo: Repo, rev: str, head: Commit, body: bytes, create_pr: bool) -> None:
        self._fault("commit", True)
        user = self._writer()
        if user is None:
            return None
        num = pr_number(rev)
        if create_pr or num is None:  # a pull request opens against a branch, a commit lands on one
            if rev not in repo.branches:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev} is not a branch")
            if not create_pr and not self._may_write(user, repo.repo_id):
                return self._refuse_write(repo.repo_id)
        elif repo.discussions[num].status == "merged":  # refs/pr/N: anyone may push to a pull request still open
            return self._error(400, "BadRequest", f"pull request #{num} is merged")
        items = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next((i["value"] for i in items if i["key"] == "header"), {})
        title, parent = header.get("summary", ""), header.get("parentCommit")
        if parent and create_pr:  # the pull request starts from the parent commit named
            head = next((c for o, c in repo.commits.items() if o.startswith(parent)), None)
            if head is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {parent}")
        elif parent and not head.oid.startswith(parent):
            return self._error(412, "PreconditionFailed", "parent commit is not the head")
        files = dict(head.files)
        for item in items:
            key, value = item["key"], item["value"]
            if key == "header":
                continue
            if key == "file":
                if value.get("encoding") != "base64":
                    return self._error(400, "BadRequest", "only base64 file content is supported")
                files[value["path"]] = Blob(base64.b64decode(value["content"]), False)
            elif key == "lfsFile":
                data = self.server.lfs.get(value["oid"])
                if data is None:
                    return self._error(422, "LfsObjectMissing", f"LFS object {value['oid']} was never uploaded")
                files[value["path"]] = Blob(data, True)
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    return self._error(404, "EntryNotFound", f"{value['path']} does not exist")
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: b for p, b in files.items() if not p.startswith(prefix)}
            else:
                return self._error(400, "BadRequest", f"unknown commit line {key!r}")
        pr_url = None
        with self.server.lock:
            commit = self.server.add_commit(repo, head, title, files)
            if create_pr:
                disc = self.open_pull_request(repo, title, header.get("description", ""), user, rev, head.oid,
                                              draft=False)
                num, pr_url = disc.num, self._discussion_url(repo, disc.num)
            if num is None:
                repo.branches[rev] = commit.oid
            else:
                repo.pr_heads[num] = commit.oid
                self.add_event(repo.discussions[num], "commit", user, {"subject": title, "oid": commit.oid})
        self._fault("commit", False)
        self._json(200, {"success": True, "commitOid": commit.oid, "pullRequestUrl": pr_url, "hookOutput": "",
                         "commitUrl": f"{self.server.url}/{_PREFIX[repo.kind]}{repo.repo_id}/commit/{commit.oid}"})

    def _tag(self, repo: Repo, commit: Commit, doc: dict) -> None:
        self._fault("tag", True)
        user = self._writer()
        if user is None:
            return None
        if not self._may_write(user, repo.repo_id):
            return self._refuse_write(repo.repo_id)
        with self.server.lock:
            if doc["tag"] in repo.tags or doc["tag"] in repo.branches:
                return self._error(409, "Conflict", f"tag {doc['tag']} already exists")
            repo.tags[doc["tag"]] = commit.oid
        self._json(200, {"name": doc["tag"]})

    # -- downloads ----------------------------------------------------------------------------------------------
    def _resolve(self, kind: str, repo_id: str, rev: str, path: str) -> None:
        self._fault("resolve", True)
        head = self.command == "HEAD"
        repo = self.server.repo(kind, repo_id)
        if repo is None:
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        commit = repo.resolve(rev)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        blob = commit.files.get(path)
        if blob is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist at {rev}")
        data, status = blob.data, 200
        headers = {"Content-Type": "application/octet-stream", "ETag": f'"{blob.etag}"', "X-Repo-Commit": commit.oid,
                   "Accept-Ranges": "bytes",
                   "Content-Disposition": f"inline; filename*=UTF-8''{quote(path.rsplit('/', 1)[-1])}"}
        if blob.lfs:
            headers.update({"X-Linked-Etag": f'"{blob.sha256}"', "X-Linked-Size": str(len(data))})
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m and data:
            start = int(m.group(1)) if m.group(1) else max(0, len(data) - int(m.group(2)))
            stop = int(m.group(2)) + 1 if m.group(1) and m.group(2) else len(data)
            if start >= len(data):
                return self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
            stop = min(stop, len(data))
            headers["Content-Range"] = f"bytes {start}-{stop - 1}/{len(data)}"
            data, status = data[start:stop], 206
        headers["Content-Length"] = str(len(data))
        self._send(status, data, headers, head=head)
