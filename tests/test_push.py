"""g2m push: the commit operations huggingface_hub is asked to perform are exactly the built files."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from helpers import g2m
from huggingface_hub import CommitInfo, CommitOperationAdd, CommitOperationDelete, HfApi

from dataset_builder.push import push
from g2m_base.errors import BuildError

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


class RecordingHub(HfApi):
    """The real HfApi, with only its network calls replaced by a recorder (no Hub is reachable here)."""

    def __init__(self, remote_files=()):
        super().__init__(endpoint="http://127.0.0.1:9", token="hf_test")
        self.calls, self.remote_files = [], list(remote_files)

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def list_repo_files(self, repo_id, **kw):
        return self.remote_files

    def create_commit(self, repo_id, operations, *, commit_message, **kw):
        ops = list(operations)
        self.calls.append(("commit", commit_message, ops, kw))
        n = len([c for c in self.calls if c[0] == "commit"])
        return CommitInfo(commit_url=f"https://huggingface.co/datasets/{repo_id}/commit/{n:040x}",
                          commit_message=commit_message, commit_description="", oid=f"{n:040x}")

    def create_tag(self, repo_id, *, tag, revision=None, **kw):
        self.calls.append(("tag", tag, revision, kw))


def test_push_uploads_exactly_the_built_files_then_tags(small_release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(small_release, root)
    (root / "notes.txt").write_text("not part of the release")
    hub = RecordingHub(remote_files=["README.md", ".gitattributes", "zero_shot/test-00000-of-00009.parquet"])
    plan = push(root, "org/g2m", revision="v9.9.9", private=True, api=hub)

    manifest = json.loads((root / "manifest.json").read_text())
    commits = [c for c in hub.calls if c[0] == "commit"]
    adds = [op for c in commits for op in c[2] if isinstance(op, CommitOperationAdd)]
    uploaded = {}
    for op in adds:
        with op.as_file() as f:  # the bytes huggingface_hub would send
            uploaded[op.path_in_repo] = hashlib.sha256(f.read()).hexdigest()
    expected = {rel: f["sha256"] for rel, f in manifest["files"].items()}
    expected["manifest.json"] = hashlib.sha256((root / "manifest.json").read_bytes()).hexdigest()
    assert uploaded == expected  # every built file, byte for byte, and nothing else
    assert [c[1] for c in commits] == ["Add zero_shot", "Add probe_n20_c3", "Add dataset card and manifest"]
    assert {op.path_in_repo for op in commits[-1][2] if isinstance(op, CommitOperationAdd)} == {"README.md", "manifest.json"}
    deletes = [op.path_in_repo for c in commits for op in c[2] if isinstance(op, CommitOperationDelete)]
    assert deletes == ["zero_shot/test-00000-of-00009.parquet"]  # a stale shard would be read as data
    assert hub.calls[0] == ("create_repo", "org/g2m", {"repo_type": "dataset", "private": True, "exist_ok": True})
    assert hub.calls[-1][:3] == ("tag", "v9.9.9", plan.commit_oids[-1])
    assert all(c[3]["repo_type"] == "dataset" for c in commits)


def test_push_refuses_a_release_that_fails_verification(small_release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(small_release, root)
    shard = next(root.glob("zero_shot/*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"x")
    hub = RecordingHub()
    with pytest.raises(BuildError, match="fails verification"):
        push(root, "org/g2m", api=hub)
    assert hub.calls == []


@pytest.mark.parametrize("repo_id", ["g2m", "a/b/c", "../x", "org/"])
def test_bad_repo_ids_are_refused(small_release, repo_id):
    with pytest.raises(ValueError, match="ORG/NAME"):
        push(small_release, repo_id, dry_run=True)


def test_dry_run_lists_the_plan_and_contacts_nothing(small_release):
    res = g2m("push", str(small_release), "--repo-id", "org/g2m", "--revision", "v1.0.0", "--dry-run",
              env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert res.returncode == 0, res.stderr
    assert "dry run: push 12 files" in res.stdout and "then tag v1.0.0" in res.stdout
