"""The board's one secret key: it signs the build cache's entries (``leaderboard.cache``) and, under a key derived for
the purpose, the audit records (``audit.records``), so that neither can be edited or forged by whoever can write the
site folder. Made on first use, never stored in the site."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from g2m_base.errors import UsageError
from g2m_base.files import TEMP_MARK

KEY_ENV = "G2M_CACHE_KEY_FILE"
KEY_BYTES = 32


def key_file() -> Path:
    """Where the signing key lives: ``$G2M_CACHE_KEY_FILE``, else the user's cache folder (never the site)."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grid2matrix" / "leaderboard.key"


def _read_key(path: Path) -> bytes:
    """The key in ``path`` (64 hex digits), refused in one line when others may read it or it is not one."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000) == 0o100000 or st.st_size > 4 * KEY_BYTES:
            raise UsageError(f"the leaderboard cache key {path} is not a key file; remove it to make a new one")
        if st.st_mode & 0o077:
            raise UsageError(f"the leaderboard cache key {path} may be read by others (mode {st.st_mode & 0o777:o}): "
                             f"chmod 600 it, or remove it to make a new one")
        text = os.read(fd, 4 * KEY_BYTES).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise UsageError(f"the leaderboard cache key {path} is not {KEY_BYTES * 2} hex digits; remove it to make a new "
                         f"one")
    return key


def signing_key(path: Path | None = None) -> bytes:
    """The cache's secret key, made on first use (mode 0600, in a folder of mode 0700). Two builds that make it at
    once agree: the key is written whole to a private temporary file and linked into place, which only one can do."""
    path = path or key_file()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise UsageError(f"cannot read the leaderboard cache key {path}: {e.strerror or e}") from None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f"{TEMP_MARK}{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (secrets.token_hex(KEY_BYTES) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another build made it first: use theirs
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except OSError as e:
        raise UsageError(f"cannot make the leaderboard cache key {path}: {e.strerror or e}; name a writable file "
                         f"with {KEY_ENV}") from None


def sign(key: bytes, entry: dict) -> str:
    """The HMAC-SHA256 of everything in an entry but its signature: its format, key, source and body."""
    unsigned = {k: v for k, v in entry.items() if k != "hmac"}
    return hmac.new(key, json.dumps(unsigned, sort_keys=True).encode(), hashlib.sha256).hexdigest()
