"""The answers a run has received, kept in SQLite so that a rerun of the same command sends only what is missing.

Written by the thread that receives the answers, in plain ``sqlite3`` transactions: a commit either lands whole or
not at all, so the file is consistent whatever happens (a kill, a full disk), and a failed write raises here, in the
run's own thread, as one ``CacheError`` naming the file and the cause. (``sqlitedict``, used before, writes from a
thread of its own: when that thread died on a full disk the run waited for it forever.) Values are JSON, never
pickle: a cache file copied from elsewhere is data, not code.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from g2m_base.errors import StorageError
from scoring.replies import GenText

#: A table of its own: a file written by the previous (sqlitedict) cache keeps its table, which is simply not read.
TABLE = "g2m_answers"
_FIELDS = ("finish_reason", "reasoning", "error", "oversized", "reasoning_chars")


class CacheError(StorageError):
    """The answer cache cannot be opened or written (a full disk, a read-only folder, a damaged file)."""


def _encode(answer: object) -> str:
    return json.dumps({"text": str(answer), **{k: getattr(answer, k, None) for k in _FIELDS}}, ensure_ascii=False)


def _decode(raw: str) -> GenText | None:
    try:
        d = json.loads(raw)
        return GenText(d["text"], *(d.get(k) for k in _FIELDS))
    except (ValueError, KeyError, TypeError):
        return None  # a damaged entry is asked again, never trusted


class AnswerCache:
    """``key -> answer``; ``put`` buffers, ``commit`` writes the buffer in one transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.pending: dict[str, str] = {}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as e:
            raise CacheError(f"cannot use the answer cache {self.path}: {e}") from None

    def get(self, key: str) -> GenText | None:
        if key in self.pending:
            return _decode(self.pending[key])
        try:
            row = self.db.execute(f"SELECT value FROM {TABLE} WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as e:
            raise CacheError(f"cannot read the answer cache {self.path}: {e}") from None
        return _decode(row[0]) if row else None

    def put(self, key: str, answer: object) -> None:
        self.pending[key] = _encode(answer)

    def commit(self) -> None:
        """Write what ``put`` buffered, all or nothing; on failure the buffer is kept for a later try."""
        if not self.pending:
            return
        try:
            with self.db:  # BEGIN ... COMMIT, or ROLLBACK on any error
                self.db.execute("BEGIN")
                self.db.executemany(f"INSERT OR REPLACE INTO {TABLE} (key, value) VALUES (?, ?)",
                                    list(self.pending.items()))
        except sqlite3.Error as e:
            raise CacheError(f"could not save {len(self.pending)} answer(s) to {self.path}: {e}; the answers saved "
                             "before are intact, and a rerun resumes from them") from None
        self.pending.clear()

    def close(self) -> None:
        self.db.close()
