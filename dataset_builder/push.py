"""``g2m push``: publish a verified release folder to the Hugging Face Hub and tag it.

Only files listed in ``manifest.json`` (plus the manifest itself) are uploaded, after their hashes are checked, so a
stray file in the folder can never reach the Hub. Each config is one commit and the README + manifest come last, so
a reader of ``main`` never sees a README that names files that are not there yet; a push that dies half-way is simply
run again (the Hub deduplicates content already uploaded). Parquet files on the Hub that this release does not have
are deleted in the final commit, because ``load_dataset`` would otherwise read them as data. The tag is created last
and is never moved: a release revision is immutable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from dataset_builder.provenance import load_manifest, manifest_configs
from dataset_builder.spec import MANIFEST_NAME, README_NAME
from dataset_builder.verify import check_files
from g2m_base.errors import BuildError, UsageError


@dataclass
class PushPlan:
    repo_id: str
    revision: str | None
    commits: list[tuple[str, list[str]]]  # (message, paths in repo) in order
    total_bytes: int
    deleted: list[str] = field(default_factory=list)
    commit_oids: list[str] = field(default_factory=list)

    def describe(self) -> str:
        files = sum(len(p) for _, p in self.commits)
        lines = [f"push {files} files ({self.total_bytes / 1e6:.1f} MB) to datasets/{self.repo_id} in {len(self.commits)} commits"]
        lines += [f"  commit {i + 1}: {msg} ({len(paths)} file{'s' * (len(paths) != 1)})"
                  for i, (msg, paths) in enumerate(self.commits)]
        if self.deleted:
            lines.append(f"  delete stale remote files: {', '.join(self.deleted)}")
        lines.append(f"  then tag {self.revision}" if self.revision else "  no tag (pass --revision to tag the release)")
        return "\n".join(lines)


def _check_repo_id(repo_id: str) -> None:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts) or any(p in (".", "..") for p in parts):
        raise UsageError(f"--repo-id must look like ORG/NAME, got {repo_id!r}")


def plan_push(root: str | os.PathLike, repo_id: str, revision: str | None = None) -> PushPlan:
    root = Path(root)
    _check_repo_id(repo_id)
    manifest = load_manifest(root)
    if manifest is None:
        raise BuildError(f"{root / MANIFEST_NAME} is missing: build the release first (g2m build)")
    problems = check_files(root, manifest, allow_extra=True)  # unlisted files are never uploaded
    if problems:
        raise BuildError(f"refusing to push a release that fails verification: {problems[0]}")
    commits = []
    for config in manifest_configs(manifest):
        splits = manifest["configs"][config]
        paths = [rel for split in splits.values() for rel in split["files"]]
        commits.append((f"Add {config}", paths))
    commits.append(("Add dataset card and manifest", [README_NAME, MANIFEST_NAME]))
    total = sum((root / p).stat().st_size for _, paths in commits for p in paths)
    return PushPlan(repo_id, revision, commits, total)


def push(
    root: str | os.PathLike,
    repo_id: str,
    revision: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    api: HfApi | None = None,
) -> PushPlan:
    """Upload the release; ``api`` defaults to ``HfApi()``, which finds the token the standard way."""
    root = Path(root)
    plan = plan_push(root, repo_id, revision)
    if dry_run:
        return plan
    api = api or HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    try:
        remote = set(api.list_repo_files(repo_id, repo_type="dataset"))
    except RepositoryNotFoundError:
        remote = set()
    ours = {p for _, paths in plan.commits for p in paths}
    plan.deleted = sorted(p for p in remote if p.endswith(".parquet") and "/" in p and p not in ours)
    for i, (message, paths) in enumerate(plan.commits):
        ops: list = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(root / p)) for p in paths]
        if i == len(plan.commits) - 1:
            ops += [CommitOperationDelete(path_in_repo=p) for p in plan.deleted]
        info = api.create_commit(repo_id, operations=ops, commit_message=message, repo_type="dataset")
        plan.commit_oids.append(info.oid)
    if revision:
        try:
            api.create_tag(repo_id, tag=revision, revision=plan.commit_oids[-1], repo_type="dataset",
                           tag_message=f"G2M release {revision}")
        except HfHubHTTPError as e:
            raise BuildError(f"could not create tag {revision!r} on {repo_id} (tags are never moved; pick a new one): {e}") from None
    return plan
