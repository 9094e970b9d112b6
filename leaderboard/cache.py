"""The leaderboard's build cache: what each submission file gave, so that a rebuild scores only new or changed files.

One small JSON entry per file, ``OUT/.g2m-cache/<key>.json``. The key is the sha256 of the submission file's own
sha256, the scorer's version and the release's content hash; the scorer's version is the task version, the
protocols and how each is scored, the metrics, the output cap and this site's own format, so a change to any of them
gives every file a new key and everything is scored again. An entry holds either the reason the file was rejected,
or what its validation gave (model id, content hash, metadata, warnings, data) and, once the row was rendered, its
summaries and the sha256 of every file its page wrote (model page, figures, raw-output copy).

An entry is trusted for nothing: it is used only if it reads (the bounded, strict JSON reader), is this format,
carries its own key, its signature verifies, its metadata passes a submission's checks again, its numbers and paths
have the shapes the index writes, and every file it lists is on disk with the recorded hash. Anything else and it is
ignored: the file is scored again and the entry rewritten. Entries that no build used are removed.

**Signed, not checksummed.** The cache sits in the site folder, which is published: a plain hash of an entry is one
anyone can recompute after editing a score. Each entry carries an HMAC-SHA256 of its whole content under a secret key
that never enters the site: ``${XDG_CACHE_HOME:-~/.cache}/grid2matrix/leaderboard.key`` (or the file named by
``G2M_CACHE_KEY_FILE``), made on first use with mode 0600. Without the key nobody can write an entry that verifies;
a new key (another machine, a removed key file) only means every file is scored again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

from audit.key import KEY_ENV, key_file, sign, signing_key  # noqa: F401  (the board's one key signs the entries)
from dataset_builder import __version__
from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from dataset_builder.grids.spec import RELEASE_CONTENT_SHA256
from g2m_base.bounded_json import MAX_FILE_BYTES, Rejected, read_json
from g2m_base.errors import UsageError
from g2m_base.files import TEMP_MARK, atomic_write_text
from g2m_base.untrusted import strict_json
from scoring.catalog import TASK_VERSION
from scoring.rescoring.rescore import SCORE_KEYS
from scoring.score import METRICS, PROTOCOLS

CACHE_DIR = ".g2m-cache"
ENTRY_FORMAT = "g2m-leaderboard-cache/2"  # /1 carried a plain sha256 anyone could recompute: never read
#: The environment variable naming the key file (tests, or a key kept elsewhere); by default under the user's cache.
#: Bump when a page, a figure or a summary changes: cached pages would otherwise be served as they were.
#: 2: the Digital Agnosia gap (a row's gap, sweep maps on its page); 3: each page states its tier; 4: its tier comes
#: from the audit record of its outputs, and refuted rows have a board of their own; 5: a submission's page links the
#: sample viewer of its outputs.
SITE_FORMAT = 5
MAX_ENTRY_BYTES = 4 << 20  # an entry is ~20 KB
#: How each row's outputs are scored: (name of the scores, protocol) for ``records`` and for ``paper_records``.
SCORINGS = ((("g2m", "g2m"), ("paper_rule_on_g2m", "paper")), (("paper", "paper"),))
#: The fields of a summary (``rescore.summarise``): the count, rates in [0, 1], and their intervals (``*_ci``).
_SUMMARY = SCORE_KEYS


def scorer_version() -> dict:
    """Everything that can move a score or a page: part of every key."""
    from submission.submission import MAX_OUTPUT_CHARS

    return {"task_version": TASK_VERSION, "protocols": list(PROTOCOLS), "scorings": SCORINGS, "metrics": list(METRICS),
            "max_output_chars": MAX_OUTPUT_CHARS, "site_format": SITE_FORMAT, "grid2matrix": __version__}


def file_digest(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The sha256 of a regular file of at most ``max_bytes``, else None: a submission that is a link, a FIFO or too
    large is never cached (validation rejects it, every time, with its own reason)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > max_bytes:
            return None
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


class Cache:
    """The entries of one site folder. ``get`` and ``put`` take a source: ``file:<sha256>`` or ``baseline:<name>``."""

    def __init__(self, out: Path, row_check: Callable[[dict, dict, set[str]], bool]) -> None:
        self.out, self.dir = out, out / CACHE_DIR
        self.row_check = row_check  # the site's own check of a cached row (its paths, names and metadata)
        self.used: set[str] = set()
        self.files: set[str] = set()  # the site files of the entries this build used or wrote (relative paths)
        self.scorer = scorer_version()
        where = key_file()
        if where.resolve().is_relative_to(out.resolve()):
            raise UsageError(f"the leaderboard cache key {where} lies inside the site folder {out}, which is "
                             f"published; keep it elsewhere ({KEY_ENV})")
        self._secret = signing_key(where)

    def key(self, source: str) -> str:
        return hashlib.sha256(json.dumps({"source": source, "scorer": self.scorer, "release": RELEASE_CONTENT_SHA256},
                                         sort_keys=True).encode()).hexdigest()

    def verified(self, path: Path, source: str) -> dict | None:
        """The payload of the entry file ``path`` for ``source`` when its signature verifies under the key and it is
        of the site's shape, else None. Its files are not looked at here (``get``, ``baseline_store.restore``)."""
        key = self.key(source)
        if not path.exists():
            return None
        try:
            entry = read_json(path, MAX_ENTRY_BYTES, "leaderboard cache entry")
        except Rejected:
            return None
        if not isinstance(entry, dict) or set(entry) != {"format", "key", "source", "body", "hmac"}:
            return None
        body = entry["body"]
        if (not isinstance(entry["hmac"], str)
            or not hmac.compare_digest(entry["hmac"].encode(), sign(self._secret, entry).encode())
                or entry["format"] != ENTRY_FORMAT or entry["key"] != key or entry["source"] != source
                or not isinstance(body, dict)):
            return None
        return _payload(body, self.row_check)

    def get(self, source: str) -> dict | None:
        """The entry's payload if it can be used as it is, else None (and the entry is as good as absent)."""
        key = self.key(source)
        payload = self.verified(self.dir / f"{key}.json", source)
        if payload is None:
            return None
        for rel, sha in (payload.get("files") or {}).items():
            if file_digest(self.out / rel, 1 << 40) != sha:
                return None  # a page file went missing or changed: render it again
        self.used.add(key)
        self.files.update(payload.get("files") or ())
        return payload

    def put(self, source: str, payload: dict, files: list[str] = ()) -> None:
        """Write an entry: ``payload`` is ``{"rejected": reason}``, or ``{"accepted": ..., "row": ...}`` (the row None
        until it is rendered); ``files`` (relative to the site folder) are hashed now and checked on every use."""
        body = {**payload, "files": {rel: file_digest(self.out / rel, 1 << 40) for rel in files}}
        body = json.loads(strict_json(body))  # non-finite numbers become null, as the reader will see them
        key = self.key(source)
        self.dir.mkdir(parents=True, exist_ok=True)
        entry = {"format": ENTRY_FORMAT, "key": key, "source": source, "body": body}
        atomic_write_text(self.dir / f"{key}.json", json.dumps({**entry, "hmac": sign(self._secret, entry)},
                                                               sort_keys=True))
        self.used.add(key)
        self.files.update(files)

    def prune(self) -> int:
        """Remove the entries this build did not use (files no longer in the folder, older scorer versions)."""
        removed = 0
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                if p.name.startswith(TEMP_MARK) or (p.suffix == ".json" and p.stem not in self.used):
                    os.unlink(p)
                    removed += 1
        return removed


def _payload(body: dict, row_check: Callable[[dict, dict, set[str]], bool]) -> dict | None:
    """The entry's body with its row's numbers back in the form the index uses, or None if any part is malformed."""
    files = body.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    if "rejected" in body:
        return body if set(body) == {"rejected", "files"} and isinstance(body["rejected"], str) and not files else None
    accepted = body.get("accepted")
    if not isinstance(accepted, dict) or set(body) != {"accepted", "row", "files"}:
        return None
    row = body["row"]
    if row is not None:
        try:
            row = {**row, "views": {view: _numbers(v) for view, v in row["views"].items()}}
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
    elif files:
        return None
    if not row_check(accepted, row, set(files)):
        return None
    return {"accepted": accepted, "row": row, "files": files}


def _numbers(view: dict) -> dict:
    """One view's summaries as JSON gave them back: missing numbers (null) are NaN again, N keys integers."""
    if set(view) != {"overall", "paper", "paper_mark", "by_n"} or view["paper_mark"] not in ("", "*"):
        raise ValueError("a view has other fields")
    by_n = view["by_n"]
    if set(by_n) != {str(n) for n in ZERO_SHOT_SIZES}:
        raise ValueError("a view has other grid sizes")
    return {"overall": _summary(view["overall"]), "paper": None if view["paper"] is None else _summary(view["paper"]),
            "paper_mark": view["paper_mark"], "by_n": {n: _summary(by_n[str(n)]) for n in ZERO_SHOT_SIZES}}


def _summary(s: dict) -> dict:
    if set(s) != set(_SUMMARY) or type(s["n"]) is not int or s["n"] < 0:
        raise ValueError("a summary has other fields")
    out: dict = {"n": s["n"]}
    for k in _SUMMARY[1:]:
        if k.endswith("_ci"):
            if not isinstance(s[k], list) or len(s[k]) != 2:
                raise ValueError("an interval is not two numbers")
            out[k] = (_number(s[k][0]), _number(s[k][1]))
        else:
            out[k] = _number(s[k])
    return out


def _number(v: object) -> float:
    if v is None:
        return math.nan
    if type(v) not in (int, float) or not 0 <= v <= 1:
        raise ValueError("a rate outside [0, 1]")
    return float(v)
