"""``g2m leaderboard publish SITE --space ORG/NAME``: the built site, as one commit of a static Hub Space.

One commit holds every file of the site (its hidden build cache left out; its README.md, written by the build, has
the front matter that makes the Space static), and deletes the Space's files the new build no longer has; a commit
is all or nothing, so the Space shows either the previous build or this one, never half of each. Failures of the Hub
end the command in one line, as ``g2m push``'s do, with timeouts on every request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dataset_builder.grids.spec import HUB_TIMEOUT, README_NAME
from g2m_base.errors import UsageError, check_timeout, hub_session

#: Kept on the Space whatever the build holds: the Hub needs them.
KEPT = (".gitattributes",)


@dataclass
class Published:
    space: str
    commit: str | None  # None: the Space held this build already
    files: int
    deleted: list[str]

    def said(self) -> str:
        if self.commit is None:
            return f"{self.space} shows this build already ({self.files} files): nothing to commit"
        gone = f", {len(self.deleted)} removed" if self.deleted else ""
        return f"published {self.files} files to spaces/{self.space} in commit {self.commit[:12]}{gone}"


def site_files(site: Path) -> dict[str, Path]:
    """The site's files by their path in the Space: every regular file, hidden ones (the build cache, the lock) left
    out; a link is refused, since it could point anywhere on this machine."""
    if not (site / "index.html").is_file() or not (site / README_NAME).is_file():
        raise UsageError(f"{site} is not a built site (no index.html and {README_NAME}): run g2m leaderboard build "
                         "first")
    out: dict[str, Path] = {}
    for root, dirs, files in os.walk(site):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(site).as_posix()
            if name.startswith("."):
                continue
            if path.is_symlink() or not path.is_file():
                raise UsageError(f"{path} is a link or not a regular file: a site to publish holds plain files only")
            out[rel] = path
    return out


def publish(site: str | os.PathLike, space: str, api=None, timeout: float = HUB_TIMEOUT,
            private: bool = False) -> Published:
    """Upload the site to the static Space ``space`` (created when missing) in one commit."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    site, timeout = Path(site), check_timeout(timeout)
    files = site_files(site)
    api = api or HfApi()
    stage = f"creating the Space {space}"

    def failed(why: str) -> str:
        return (f"publishing {site} to spaces/{space} failed while {stage}: {why}; the Space still shows its previous "
                "build (a commit is all or nothing): run the same command again")

    with hub_session(api, timeout, failed, "unset it to publish"):
        api.create_repo(space, repo_type="space", space_sdk="static", private=private, exist_ok=True)
        stage = "listing the Space's files"
        remote = set(api.list_repo_files(space, repo_type="space"))
        before = api.repo_info(space, repo_type="space").sha
        ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(p)) for rel, p in files.items()]
        deleted = sorted(remote - set(files) - set(KEPT))
        ops += [CommitOperationDelete(path_in_repo=p) for p in deleted]
        stage = f"committing {len(files)} files"
        info = api.create_commit(space, operations=ops, repo_type="space",
                                 commit_message=f"Publish the G2M leaderboard ({len(files)} files)")
    return Published(space, info.oid if info.oid != before else None, len(files), deleted)
