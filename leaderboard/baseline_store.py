"""The built-in baselines' rows and pages, kept once per machine beside the cache's signing key, so that a site built
into a new folder does not compute them again.

The two reference rows (``rows.BASELINES``) are the same for every site of one scorer version: each is every zero-shot
row of the release regenerated, answered by the oracle or the random model, and scored under both protocols (about
30 s on one core), then drawn on its page. A site folder's own cache (``cache.Cache``) keeps them for rebuilds into
that folder; this store keeps a copy of those signed entries and their page files in
``<folder of the signing key>/baselines/<entry key>/`` (``~/.cache/grid2matrix/baselines`` by default), and
``restore`` copies them into a new site folder before the folder's cache is asked.

Nothing here is trusted: an entry is copied into a site folder only once its signature verifies under the key and
every file it lists has the recorded sha256 in the store, and is then used only if the folder's cache accepts it, which
checks the same again there, and that its rows pass the site's checks. A store that
was tampered with, is out of date or cannot be written only costs the computation it would have saved.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from pathlib import Path

from g2m_base.bounded_json import Rejected, read_json
from g2m_base.files import TEMP_MARK
from leaderboard.cache import CACHE_DIR, MAX_ENTRY_BYTES, Cache, file_digest, key_file

STORE_DIR = "baselines"
ENTRY_NAME = "entry.json"
#: A page file an entry may list: the model page and its figures, nothing above ``models/``.
_PAGE_FILE = re.compile(r"models/[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)?")


def _folder(cache: Cache, source: str) -> Path:
    return key_file().parent / STORE_DIR / cache.key(source)


def _listed_files(entry_path: Path) -> list[str] | None:
    """The page files a stored entry lists, when each is a plain path under ``models/``; else None."""
    try:
        entry = read_json(entry_path, MAX_ENTRY_BYTES, "stored baseline entry")
        files = entry["body"]["files"]
    except (Rejected, KeyError, TypeError):
        return None
    if not isinstance(files, dict) or not all(isinstance(f, str) and _PAGE_FILE.fullmatch(f) for f in files):
        return None
    return list(files)


def restore(cache: Cache, source: str) -> bool:
    """Copy the stored entry of ``source`` and its page files into the site folder, only once its signature verifies
    and every file it lists has the sha256 it records, there in the store (the folder's cache then checks them again as
    it checks its own); False when there is none to copy, or it does not verify: nothing is copied then."""
    folder = _folder(cache, source)
    payload = cache.verified(folder / ENTRY_NAME, source) or {}
    files = list(payload.get("files") or ())
    if not files or not all(_PAGE_FILE.fullmatch(rel) for rel in files):
        return False
    if any(file_digest(folder / rel, 1 << 40) != sha for rel, sha in payload["files"].items()):
        return False
    try:
        for rel in files:
            (cache.out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, cache.out / rel)
        cache.dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / ENTRY_NAME, cache.dir / f"{cache.key(source)}.json")
    except OSError:
        return False
    return True


def save(cache: Cache, source: str) -> None:
    """Keep the site folder's entry of ``source`` and its page files in the store: written whole in a private
    folder, then renamed into place (two builds saving at once: the first one's copy stays)."""
    entry_path = cache.out / CACHE_DIR / f"{cache.key(source)}.json"
    files = _listed_files(entry_path) if entry_path.is_file() else None
    if not files:
        return
    folder = _folder(cache, source)
    tmp = folder.with_name(f"{TEMP_MARK}{folder.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        for rel in files:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cache.out / rel, tmp / rel)
        shutil.copyfile(entry_path, tmp / ENTRY_NAME)
        if folder.exists():
            shutil.rmtree(folder)  # an entry the folder's cache refused: replaced by the one just made
        os.rename(tmp, folder)
    except OSError:
        pass  # a store that cannot be written only costs the time it would have saved
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
