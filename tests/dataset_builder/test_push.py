"""g2m push, proven end to end through the real huggingface_hub and datasets clients against a loopback stand-in for
the Hub (tests/support/hub_server.py): what is stored, what reads back by Hub id, a second release, and every way the
Hub can fail. Each push is a real ``g2m push`` in its own process, with HF_ENDPOINT set before huggingface_hub is
imported."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from dataset_builder.grids.configs import CONFIG_NAMES
from dataset_builder.grids.spec import EVAL_YAML_NAME, HUB_REPO_ID
from dataset_builder.release.build import BuildParams, build
from dataset_builder.release.provenance import describe_build, release_differences
from dataset_builder.release.push import push
from g2m_base.errors import BuildError
from tests.support.helpers import REPO, g2m
from tests.support.hub_reader import main as read_dataset
from tests.support.hub_server import HubStandIn

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

REPO_ID = "org/g2m"
#: The routes a push and a read-back use; the stand-in logs every request by route.
PUSH_ROUTES = {"create-repo", "tree", "preupload", "lfs-batch", "lfs-upload", "validate-yaml", "commit", "tag"}
READ_ROUTES = {"info", "tree", "resolve"}


@pytest.fixture(scope="module")
def second_release(tmp_path_factory):
    """Another build: other scale and shard size, zero_shot only, so its shards have other names and the first
    release's probe shards are stale on main after it is pushed."""
    out = tmp_path_factory.mktemp("second") / "g2m"
    build(out, "zero_shot", BuildParams(scale=0.03, rows_per_shard=40), workers=2, progress=False)
    return out


def _env(hub_url: str, tmp_path, **extra) -> dict:
    return {"HF_ENDPOINT": hub_url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0",
            "HF_TOKEN": "hf_test", "HF_HOME": str(tmp_path / "hf-home"), **extra}


def _push(root, hub_url, tmp_path, *args, timeout=300, **env):
    t = time.monotonic()
    res = g2m("push", str(root), "--repo-id", REPO_ID, "--workers", "2", *args, env=_env(hub_url, tmp_path, **env),
              timeout=timeout)
    return res, time.monotonic() - t


def _read_hub(hub: HubStandIn, revision: str, tmp_path) -> dict:
    env = {**os.environ, **_env(hub.url, tmp_path, HF_DATASETS_CACHE=str(tmp_path / f"ds-{revision}")),
           "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, str(REPO / "tests" / "support" / "hub_reader.py"), REPO_ID, revision],
                         env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def _local_files(root) -> dict[str, bytes]:
    manifest = json.loads((root / "manifest.json").read_text())
    return {rel: (root / rel).read_bytes() for rel in [*manifest["files"], "manifest.json"]}


def _stored(hub: HubStandIn, rev: str) -> dict[str, bytes]:
    return {p: b for p, b in hub.files("datasets", REPO_ID, rev).items() if p != ".gitattributes"}


def _one_line_error(res) -> str:
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("g2m: error: "), res.stderr[-3000:]
    return lines[0]


def test_a_push_reads_back_by_hub_id_and_a_second_release_keeps_the_first_tag(small_release, second_release, tmp_path):
    with HubStandIn() as hub:
        res, _ = _push(small_release, hub.url, tmp_path, "--revision", "v1")
        assert res.returncode == 0, res.stderr[-3000:]
        assert "build: a local build, not the release: scale 0.02" in res.stdout
        assert _stored(hub, "v1") == _local_files(small_release)  # byte for byte, eval.yaml included, nothing else
        repo = hub.repo("datasets", REPO_ID)
        assert repo.tags == {"v1": repo.branches["main"]}
        assert EVAL_YAML_NAME in _stored(hub, "v1")
        assert PUSH_ROUTES <= hub.routes(), hub.routes()

        res, _ = _push(second_release, hub.url, tmp_path, "--revision", "v2")
        assert res.returncode == 0, res.stderr[-3000:]
        assert "delete stale remote files: probe_n20_c3/" in res.stdout
        main = _stored(hub, "main")
        assert main == _stored(hub, "v2") == _local_files(second_release)  # no parquet the new release lacks
        assert _stored(hub, "v1") == _local_files(small_release)

        hub.log.clear()
        first, second = _read_hub(hub, "v1", tmp_path), _read_hub(hub, "v2", tmp_path)
        assert READ_ROUTES <= hub.routes(), hub.routes()
    assert first == read_dataset(str(small_release), None)  # every row, PNG bytes included, loaded and streamed
    assert first["configs"] == ["zero_shot", "probe_n20_c3"]
    assert second == read_dataset(str(second_release), None) and second["configs"] == ["zero_shot"]
    for split in (*first["splits"].values(), *second["splits"].values()):
        assert split["rows"] == split["streamed_rows"] > 0 and split["sha256"] == split["streamed_sha256"]
    assert first["splits"]["zero_shot/test"] != second["splits"]["zero_shot/test"]


#: (route, fault, how many requests fail, how many pass first, what the line says, the most seconds it may take).
FAULTS = [
    ("commit", "500", 1_000_000, 0, "answered HTTP 500", 60),
    ("lfs-upload", "drop", 1_000_000, 0, "connection", 90),  # every attempt: huggingface_hub retries 5 times
    ("create-repo", "hang", 1, 0, "no answer from", 30),  # accepts and never answers
    ("commit", "hang_after", 1, 2, "no answer from", 30),  # takes the final commit and never replies
    ("preupload", "drop", 1_000_000, 0, "connection", 90),
]


@pytest.mark.parametrize(("route", "mode", "times", "after", "says", "limit"), FAULTS,
                         ids=[f"{f[0]}-{f[1]}" for f in FAULTS])
def test_a_hub_failing_mid_push_is_one_line_nothing_tagged_and_a_rerun_completes(
        small_release, tmp_path, route, mode, times, after, says, limit):
    with HubStandIn() as hub:
        hub.fail(route, mode, times, after)
        res, took = _push(small_release, hub.url, tmp_path, "--revision", "v1", "--timeout", "3", timeout=limit + 60)
        line = _one_line_error(res)
        assert res.returncode == 1 and says in line and "nothing was tagged" in line, line
        assert took < limit, f"{took:.0f} s"
        repo = hub.repo("datasets", REPO_ID)
        assert repo is None or repo.tags == {}
        hub.heal()
        res, _ = _push(small_release, hub.url, tmp_path, "--revision", "v1", "--timeout", "3")
        assert res.returncode == 0, res.stderr[-3000:]
        repo = hub.repo("datasets", REPO_ID)
        assert repo.tags == {"v1": repo.branches["main"]}
        assert _stored(hub, "v1") == _local_files(small_release)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("env", "says"), [
    ({"HF_HUB_OFFLINE": "1"}, "offline mode is on (HF_HUB_OFFLINE=1)"),
    ({}, "could not connect to http://127.0.0.1:"),
    ({"HF_TOKEN": ""}, "could not connect to http://127.0.0.1:"),
], ids=["offline", "refused", "refused-no-token"])
def test_no_hub_is_one_line(small_release, tmp_path, env, says):
    res, took = _push(small_release, f"http://127.0.0.1:{_closed_port()}", tmp_path, "--revision", "v1", **env)
    line = _one_line_error(res)
    assert res.returncode == 1 and says in line and "nothing was tagged" in line, line


def test_an_existing_tag_is_never_moved(small_release, tmp_path):
    with HubStandIn() as hub:
        assert _push(small_release, hub.url, tmp_path, "--revision", "v1")[0].returncode == 0
        res, _ = _push(small_release, hub.url, tmp_path, "--revision", "v1")
        assert "tag 'v1' already exists" in _one_line_error(res)


def test_only_the_release_may_go_to_the_release_repository(small_release, tmp_path):
    for dry in ([], ["--dry-run"]):
        res = g2m("push", str(small_release), "--repo-id", HUB_REPO_ID, "--revision", "v1.0.0", *dry,
                  env={"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"})
        line = _one_line_error(res)
        assert res.returncode == 2 and "a local build, not the release (scale 0.02" in line
        assert f"only the release may be pushed to {HUB_REPO_ID}" in line


def test_only_the_release_parameters_and_configs_make_the_release():
    release = BuildParams().to_json()
    assert release_differences(release, list(CONFIG_NAMES)) == []
    assert describe_build(release, list(CONFIG_NAMES)).startswith("the release (grid2matrix/g2m v1.0.0")
    small = {**release, "render": {**release["render"], "resolution": 256}}
    assert release_differences(small, list(CONFIG_NAMES)) == ["resolution 256 px (the release: 512 px)"]
    assert release_differences(release, ["zero_shot"]) == ["1 of the release's 17 configs (zero_shot)"]


def test_dry_run_verifies_names_the_build_and_contacts_nothing(small_release):
    res = g2m("push", str(small_release), "--repo-id", REPO_ID, "--revision", "v1.0.0", "--dry-run",
              env={"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"})
    assert res.returncode == 0, res.stderr
    assert "dry run (verified, nothing contacted): push 13 files" in res.stdout and "then tag v1.0.0" in res.stdout
    assert "build: a local build, not the release: scale 0.02 (the release: 1.0)" in res.stdout
    assert "Add dataset card, eval.yaml and manifest (3 files)" in res.stdout


def test_dry_run_refuses_a_swapped_shard_that_the_hashes_miss(small_release, tmp_path):
    """Two shards of one config exchanged, the manifest re-hashed to match: every hash checks out, only the full
    verify (each row against its seed) sees it."""
    root = tmp_path / "rel"
    shutil.copytree(small_release, root)
    a, b = (root / "probe_n20_c3" / f"test-0000{k}-of-00004.parquet" for k in (0, 1))
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    manifest = json.loads((root / "manifest.json").read_text())
    for p in (a, b):
        rel = p.relative_to(root).as_posix()
        manifest["files"][rel].update(sha256=hashlib.sha256(p.read_bytes()).hexdigest(), size=p.stat().st_size)
    (root / "manifest.json").write_text(json.dumps(manifest))
    res = g2m("push", str(root), "--repo-id", REPO_ID, "--dry-run")
    assert res.returncode == 2 and "fails verification" in _one_line_error(res)
    assert g2m("verify", str(root)).returncode == 1


def test_push_refuses_a_release_that_fails_verification(small_release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(small_release, root)
    shard = next(root.glob("zero_shot/*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"x")
    with pytest.raises(BuildError, match="fails verification"):
        push(root, REPO_ID, api=object())  # refused before any client is made or used


@pytest.mark.parametrize("repo_id", ["g2m", "a/b/c", "../x", "org/"])
def test_bad_repo_ids_are_refused(small_release, repo_id):
    with pytest.raises(ValueError, match="ORG/NAME"):
        push(small_release, repo_id, dry_run=True)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "x"])
def test_bad_timeouts_are_refused(small_release, value):
    res = g2m("push", str(small_release), "--repo-id", REPO_ID, "--timeout", value, "--dry-run")
    assert res.returncode == 2 and "--timeout" in res.stderr
