"""``g2m push``: publish a verified release folder to the Hugging Face Hub and tag it.

The folder must pass the full ``g2m verify`` first (every row held to its seed), in the dry run too, and only the
files listed in ``manifest.json`` (plus the manifest itself) are uploaded. The push says which build it is: the
release, or a local build and how it differs from it; only the release may go to the release's repository
(``spec.HUB_REPO_ID``). Each config is one commit and the README, eval.yaml and manifest come last, so a reader of
``main`` never sees a README that names files that are not there yet; a push that dies half-way is simply run again
(files already on the Hub are not sent again). Parquet files on the Hub that this release does not have are deleted
in the final commit, because ``load_dataset`` would otherwise read them as data. The tag is created last and is never
moved: a release revision is immutable, and a push that fails leaves nothing tagged.

``huggingface_hub``'s HTTP client waits forever by default; here every request has connect and read timeouts
(``--timeout``), and every way the Hub can fail (offline mode, a refused or dropped connection, an HTTP error, no
answer) ends the command with one line that says what failed and that nothing was tagged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dataset_builder.grids.spec import HUB_REPO_ID, HUB_TIMEOUT, MANIFEST_NAME
from dataset_builder.release.provenance import describe_build, load_manifest, manifest_configs, release_differences
from g2m_base.errors import BuildError, HubError, UsageError, check_timeout, hub_session
from g2m_base.flags import check_repo_id

__all__ = ["HubError", "PushPlan", "check_timeout", "plan_push", "push"]


@dataclass
class PushPlan:
    repo_id: str
    revision: str | None
    commits: list[tuple[str, list[str]]]  # (message, paths in repo) in order
    total_bytes: int
    build: str = ""  # describe_build: the release, or a local build and how it differs
    deleted: list[str] = field(default_factory=list)
    commit_oids: list[str] = field(default_factory=list)

    def describe(self) -> str:
        files = sum(len(p) for _, p in self.commits)
        lines = [f"push {files} files ({self.total_bytes / 1e6:.1f} MB) to datasets/{self.repo_id} in "
                 f"{len(self.commits)} commits",
                 f"  build: {self.build}"]
        lines += [f"  commit {i + 1}: {msg} ({len(paths)} file{'s' * (len(paths) != 1)})"
                  for i, (msg, paths) in enumerate(self.commits)]
        if self.deleted:
            lines.append(f"  delete stale remote files: {', '.join(self.deleted)}")
        lines.append(f"  then tag {self.revision}" if self.revision
                     else "  no tag (pass --revision to tag the release)")
        return "\n".join(lines)


def plan_push(root: str | os.PathLike, repo_id: str, revision: str | None = None,
              workers: int | None = None) -> PushPlan:
    """What would be uploaded, after the full verify; refuses a folder that fails it, and anything but the release
    for the release's repository."""
    from dataset_builder.release.verify import verify

    root = Path(root)
    check_repo_id("--repo-id", repo_id)
    manifest = load_manifest(root)
    if manifest is None:
        raise BuildError(f"{root / MANIFEST_NAME} is missing: build the release first (g2m build)")
    configs = manifest_configs(manifest)
    differences = release_differences(manifest.get("params") or {}, configs)
    if repo_id.lower() == HUB_REPO_ID.lower() and differences:
        raise UsageError(f"{root} is a local build, not the release ({'; '.join(differences)}): only the release may "
                         f"be pushed to {HUB_REPO_ID}; push it to a repository of your own")
    report = verify(root, workers=workers, progress=False)
    if not report.ok:
        raise BuildError(f"refusing to push a release that fails verification (g2m verify {root}): "
                         f"{report.problems[0]}")
    commits = []
    shards = set()
    for config in configs:
        paths = [rel for split in manifest["configs"][config].values() for rel in split["files"]]
        shards |= set(paths)
        commits.append((f"Add {config}", paths))
    metadata = sorted(set(manifest["files"]) - shards)  # README.md and eval.yaml (verify allowed nothing else)
    commits.append(("Add dataset card, eval.yaml and manifest", [*metadata, MANIFEST_NAME]))
    total = sum((root / p).stat().st_size for _, paths in commits for p in paths)
    return PushPlan(repo_id, revision, commits, total, describe_build(manifest.get("params") or {}, configs))


def push(
    root: str | os.PathLike,
    repo_id: str,
    revision: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    api=None,
    timeout: float = HUB_TIMEOUT,
    workers: int | None = None,
) -> PushPlan:
    """Upload the release; ``api`` defaults to ``HfApi()``, which finds the token and endpoint the standard way."""
    timeout = check_timeout(timeout)
    plan = plan_push(root, repo_id, revision, workers)
    if dry_run:
        return plan
    from huggingface_hub import HfApi

    api = api or HfApi()
    stage = "creating the repository"

    def failed(why: str) -> str:
        return (f"push to {repo_id} failed while {stage}: {why}; nothing was tagged, run the same command again to "
                "finish (what was uploaded is not sent again)")

    with hub_session(api, timeout, failed, "unset it to push"):
        _prepare(plan, api, private)
        for k, (message, _) in enumerate(plan.commits):
            stage = f"commit {k + 1} of {len(plan.commits)} ({message})"
            plan.commit_oids.append(_commit(Path(root), plan, k, api))
        if revision:
            stage = f"tagging {revision}"
            _tag(plan, api)
    return plan


def _prepare(plan: PushPlan, api, private: bool) -> None:
    """Create the repository if needed and find the stale parquet files the final commit deletes."""
    from huggingface_hub.errors import RepositoryNotFoundError

    api.create_repo(plan.repo_id, repo_type="dataset", private=private, exist_ok=True)
    try:
        remote = set(api.list_repo_files(plan.repo_id, repo_type="dataset"))
    except RepositoryNotFoundError:
        remote = set()
    ours = {p for _, paths in plan.commits for p in paths}
    plan.deleted = sorted(p for p in remote if p.endswith(".parquet") and "/" in p and p not in ours)


def _commit(root: Path, plan: PushPlan, k: int, api) -> str:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    message, paths = plan.commits[k]
    ops: list = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(root / p)) for p in paths]
    if k == len(plan.commits) - 1:
        ops += [CommitOperationDelete(path_in_repo=p) for p in plan.deleted]
    return api.create_commit(plan.repo_id, operations=ops, commit_message=message, repo_type="dataset").oid


def _tag(plan: PushPlan, api) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_tag(plan.repo_id, tag=plan.revision, revision=plan.commit_oids[-1], repo_type="dataset",
                       tag_message=f"G2M release {plan.revision}")
    except HfHubHTTPError as e:
        if e.response is not None and e.response.status_code == 409:
            raise BuildError(f"tag {plan.revision!r} already exists on {plan.repo_id}: tags are never moved; pick a "
                             "new one") from None
        raise
