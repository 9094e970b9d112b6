"""A stand-in for the Hugging Face Hub on 127.0.0.1, for tests only: NOT the Hub, and no part of grid2matrix.

It answers the routes that the real ``huggingface_hub`` client (and ``datasets`` on top of it) calls to push a
release and read it back by its Hub id, with the headers the client expects, and keeps repositories as real commits
(each one a full tree of files, LFS objects stored by their sha256), branches and tags:

- ``POST /api/repos/create``; ``GET /api/{type}s/{repo}[/revision/{rev}]`` (repository info);
- ``POST /api/{type}s/{repo}/preupload/{rev}``; ``POST /{prefix}{repo}.git/info/lfs/objects/batch`` and the ``PUT``
  of each object to the upload link it hands out; ``POST /api/validate-yaml``;
- ``POST /api/{type}s/{repo}/commit/{rev}`` (ndjson: header, file, lfsFile, deletedFile, deletedFolder);
- ``POST /api/{type}s/{repo}/tag/{rev}``; ``GET /api/{type}s/{repo}/refs``;
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]``; ``POST /api/{type}s/{repo}/paths-info/{rev}``;
- ``HEAD``/``GET /{prefix}{repo}/resolve/{rev}/{path}`` (ETag, X-Repo-Commit, Content-Length, X-Linked-Etag and
  X-Linked-Size for LFS files, byte ranges);
- ``GET /api/datasets/{repo}/leaderboard`` (``HfApi.get_dataset_leaderboard``): the list a test put in
  ``server.leaderboards[repo]``, as the Hub's JSON (``rank``, ``modelId``, ``value``, ``filename``, ``verified``,
  ``source``, ``author``, ``notes``), or 404 for a dataset without one.

Faults for the failure tests: ``server.fail(route, mode, times, after)`` makes the next ``times`` requests of a route
answer HTTP 500 (``"500"``), close the connection without an answer (``"drop"``), never answer (``"hang"``), or do their
work and then never answer (``"hang_after"``: a commit that is made but whose answer never comes). Every request is
logged in ``server.log`` as (method, route), so a test can say which routes the client used.
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

LFS_SUFFIXES = (".parquet", ".png", ".bin", ".safetensors")
_API = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+?)"
                  r"(?:/(preupload|commit|tag|tree|paths-info|revision|refs)"
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
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        oid = self.branches.get(rev) or self.tags.get(rev) or (rev if rev in self.commits else None)
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
        self.leaderboards: dict[str, list] = {}  # dataset id -> the entries its leaderboard route answers
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self._counter = 0
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

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
        assert mode in ("500", "drop", "hang", "hang_after"), mode
        self.faults[route] = [mode, times, after]

    def heal(self) -> None:
        self.faults.clear()

    def routes(self) -> set[str]:
        return {route for _, route in self.log}

    def new_oid(self, *parts: str) -> str:
        self._counter += 1
        return hashlib.sha1("\0".join((str(self._counter), *parts)).encode()).hexdigest()

    def repo(self, kind: str, repo_id: str) -> Repo | None:
        return self.repos.get((kind, repo_id))

    def files(self, kind: str, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        """The files of a revision, as bytes (for the tests' own checks)."""
        commit = self.repo(kind, repo_id).resolve(rev)
        return {p: b.data for p, b in commit.files.items()}


class _Drop(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
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
        if mode == "500":
            self._error(500, "InternalError", "the stand-in Hub was told to fail")
            raise _Drop
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
        except _Drop:
            self.close_connection = True

    @staticmethod
    def _kind(prefix: str | None) -> str:
        return {"datasets/": "datasets", "spaces/": "spaces"}.get(prefix or "", "models")

    # -- repositories -------------------------------------------------------------------------------------------
    def _create_repo(self, doc: dict) -> None:
        self._fault("create-repo", True)
        kind = (doc.get("type") or "model") + "s"
        repo_id = f"{doc['organization']}/{doc['name']}" if doc.get("organization") else doc["name"]
        with self.server.lock:
            if (kind, repo_id) in self.server.repos:  # the Hub's 409 names the repository too
                return self._json(409, {"error": "You already created this repo",
                                        "url": f"{self.server.url}/{_PREFIX[kind]}{repo_id}"},
                                  {"X-Error-Message": "You already created this repo"})
            repo = Repo(kind, repo_id, bool(doc.get("private")))
            first = Commit(self.server.new_oid(repo_id), None, "initial commit",
                           {".gitattributes": Blob(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", False)})
            repo.commits[first.oid] = first
            repo.branches["main"] = first.oid
            self.server.repos[(kind, repo_id)] = repo
        self._json(200, {"url": f"{self.server.url}/{_PREFIX[kind]}{repo_id}", "name": repo_id})

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
            return self._json(200, refs)
        commit = repo.resolve(rev)
        if commit is None:
            self.server.log.append((self.command, action))
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        if action == "preupload" and self.command == "POST":
            return self._preupload(commit, json.loads(body))
        if action == "commit" and self.command == "POST":
            return self._commit(repo, rev, commit, body)
        if action == "tag" and self.command == "POST":
            return self._tag(repo, commit, json.loads(body))
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
                         "siblings": [{"rfilename": p} for p in sorted(commit.files)]})

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

    def _commit(self, repo: Repo, rev: str, head: Commit, body: bytes) -> None:
        self._fault("commit", True)
        files = dict(head.files)
        title = ""
        for line in body.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                title = value.get("summary", "")
                parent = value.get("parentCommit")
                if parent and parent != head.oid:
                    return self._error(412, "PreconditionFailed", "parent commit is not the head")
            elif key == "file":
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
        with self.server.lock:
            commit = Commit(self.server.new_oid(repo.repo_id, title), head.oid, title, files)
            repo.commits[commit.oid] = commit
            repo.branches[rev if rev in repo.branches else "main"] = commit.oid
        self._fault("commit", False)
        self._json(200, {"success": True, "commitOid": commit.oid, "pullRequestUrl": None,
                         "commitUrl": f"{self.server.url}/{_PREFIX[repo.kind]}{repo.repo_id}/commit/{commit.oid}"})

    def _tag(self, repo: Repo, commit: Commit, doc: dict) -> None:
        self._fault("tag", True)
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
