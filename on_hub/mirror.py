"""The submissions repository's main branch, mirrored into a local folder the board is built from, and the audit
records this machine wrote sent back beside the submissions (so the board can be rebuilt anywhere that holds the
board's key).

The mirror reads main at one revision (its files and their content ids), downloads only what the local copy lacks or
holds differently, each file into a temporary name first and then renamed (a crash never leaves half a submission
that a later build would score), and removes local submissions that main no longer has. Audit records are never
removed here: one that is not on main yet is this machine's work, and is uploaded, not lost.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from audit.records import MAX_RECORD_BYTES, verified
from dataset_builder.grids.spec import HUB_TIMEOUT
from g2m_base.bounded_json import MAX_FILE_BYTES
from on_hub import fetch
from on_hub.layout import AUDITS_DIR, SUBMISSIONS_DIR


@dataclass
class Mirrored:
    revision: str
    downloaded: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # too large to be what the path says

    def said(self) -> str:
        extra = f", {len(self.skipped)} skipped ({'; '.join(self.skipped[:3])})" if self.skipped else ""
        return (f"mirrored main at {self.revision[:12]}: {len(self.downloaded)} files downloaded, "
                f"{len(self.removed)} removed{extra}")


def content_id(path: Path, lfs: bool) -> str:
    """The id the Hub gives a file's content: sha256 for an LFS file, git's blob sha1 otherwise."""
    data = path.read_bytes()
    if lfs:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main_files(api, repo_id: str, revision: str) -> dict[str, tuple[int, str, bool]]:
    """path -> (size, content id, lfs) of the submissions and audit records at ``revision``."""
    out = {}
    for f in api.list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True):
        if not hasattr(f, "blob_id"):
            continue
        folder, _, name = f.path.rpartition("/")
        if (folder == SUBMISSIONS_DIR and name.endswith((".json", ".json.gz"))) or (
                folder == AUDITS_DIR and name.endswith(".json")):
            out[f.path] = (f.size, f.lfs.sha256 if f.lfs else f.blob_id, bool(f.lfs))
    return out


def mirror(api, repo_id: str, root: Path, timeout: float = HUB_TIMEOUT) -> Mirrored:
    """Bring ``root/submissions`` and ``root/audits`` to main (see the module's docstring); each download's waits
    bounded by ``timeout`` (``fetch``)."""
    revision = api.repo_info(repo_id, repo_type="dataset").sha
    remote = main_files(api, repo_id, revision)
    done = Mirrored(revision)
    for path, (size, cid, lfs) in sorted(remote.items()):
        cap = MAX_FILE_BYTES if path.startswith(f"{SUBMISSIONS_DIR}/") else MAX_RECORD_BYTES
        local = root / path
        if size > cap:
            done.skipped.append(f"{path}: {size:,} bytes, over {cap:,}")
            continue
        if (local.is_file() and not local.is_symlink() and local.stat().st_size == size
                and content_id(local, lfs) == cid):  # the size first: a file of another size is never hashed
            continue
        if path.startswith(f"{AUDITS_DIR}/") and local.is_file():
            continue  # this machine's record differs: it is sent up (upload_audits), never overwritten
        local.parent.mkdir(parents=True, exist_ok=True)
        fetch.download(api, repo_id, path, revision, local, timeout, cap)
        done.downloaded.append(path)
    folder = root / SUBMISSIONS_DIR
    for local in sorted(folder.iterdir()) if folder.is_dir() else ():
        if f"{SUBMISSIONS_DIR}/{local.name}" not in remote and local.name.endswith((".json", ".json.gz")):
            local.unlink()
            done.removed.append(f"{SUBMISSIONS_DIR}/{local.name}")
    (root / SUBMISSIONS_DIR).mkdir(parents=True, exist_ok=True)
    (root / AUDITS_DIR).mkdir(parents=True, exist_ok=True)
    return done


def pending_audits(api, repo_id: str, audits: Path, board_key: bytes) -> list[Path]:
    """This machine's audit records that main lacks or holds differently, and that verify under the board's key
    (a record that does not is never sent: it would be ignored on any board)."""
    if not audits.is_dir():
        return []
    revision = api.repo_info(repo_id, repo_type="dataset").sha
    remote = main_files(api, repo_id, revision)
    out = []
    for path in sorted(audits.glob("*.json")):
        there = remote.get(f"{AUDITS_DIR}/{path.name}")
        differs = there is None or path.stat().st_size != there[0] or content_id(path, there[2]) != there[1]
        if differs and verified(path, board_key) is not None:
            out.append(path)
    return out


def upload_audits(api, repo_id: str, records: list[Path]) -> str | None:
    """The records, in one commit to ``audits/`` on main; the commit's id (None when there was nothing to send)."""
    from huggingface_hub import CommitOperationAdd

    if not records:
        return None
    ops = [CommitOperationAdd(path_in_repo=f"{AUDITS_DIR}/{p.name}", path_or_fileobj=str(p)) for p in records]
    info = api.create_commit(repo_id, operations=ops, repo_type="dataset",
                             commit_message=f"Audit records: {len(records)} (g2m leaderboard cycle)")
    return info.oid
