"""g2m build: the folder loads with datasets, is deterministic, resumes after a crash and never shows partial files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from dataset_builder.grids.configs import get_config
from dataset_builder.grids.generate import make_matrix
from dataset_builder.release.build import BuildParams, build
from dataset_builder.release.table import SCHEMA, features
from g2m_base.errors import BuildError
from tests.support.helpers import REPO, SMALL_CONFIGS, SMALL_SCALE, WAIT, ended, tree_digest, wait_for
from tests.support.lazy import lazy

datasets = lazy("datasets")  # imported by the first test that uses it, not when collected

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


def test_load_dataset_reads_every_config_with_the_release_schema(small_release):
    assert sorted(datasets.get_dataset_config_names(str(small_release))) == ["probe_n20_c3", "zero_shot"]
    zs = datasets.load_dataset(str(small_release), "zero_shot", split="test")
    assert zs.features == features()
    assert len(zs) == 45 * 2  # every (N, C) block keeps round(100 * 0.02) rows
    row = zs[0]
    assert row["id"] == "zs-n03-c3-0000" and row["image"].mode == "RGB" and row["image"].size == (512, 512)
    assert np.array_equal(np.asarray(row["matrix"]), make_matrix(row["seed"], 3, 3))
    probe = datasets.load_dataset(str(small_release), "probe_n20_c3")
    assert {k: len(v) for k, v in probe.items()} == {"train": 160, "validation": 40, "test": 200}
    assert len(set(probe["train"]["seed"]) & set(probe["test"]["seed"])) == 0


def test_streaming_gives_the_same_rows(small_release):
    eager = datasets.load_dataset(str(small_release), "probe_n20_c3", split="validation")
    stream = datasets.load_dataset(str(small_release), "probe_n20_c3", split="validation", streaming=True)
    for a, b in zip(eager, stream, strict=True):
        assert a["id"] == b["id"] and a["matrix"] == b["matrix"]
        assert b["image"].mode == "RGB" and np.array_equal(np.asarray(a["image"]), np.asarray(b["image"]))


def test_readme_front_matter_and_manifest_describe_the_build(small_release):
    readme = (small_release / "README.md").read_text()
    assert readme.startswith("---\n") and "config_name: zero_shot" in readme and "path: zero_shot/test-*" in readme
    assert "# Grid2Matrix (G2M)" in readme and "## This build" in readme
    manifest = json.loads((small_release / "manifest.json").read_text())
    assert manifest["params"]["scale"] == SMALL_SCALE
    listed = set(manifest["files"])
    on_disk = {k for k in tree_digest(small_release) if k != "manifest.json"}
    assert listed == on_disk
    assert manifest["configs"]["zero_shot"]["test"]["rows"] == 90


def test_output_is_byte_identical_whatever_the_worker_count(tmp_path, small_release):
    one = tmp_path / "one"
    build(one, SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=1, progress=False)
    assert tree_digest(one) == tree_digest(small_release)  # small_release was built with 2 workers


def _cli_build(out, *extra):
    return [sys.executable, "-m", "g2m_cli", "build", "--out", str(out), "--configs", SMALL_CONFIGS,
            "--scale", str(SMALL_SCALE), "--rows-per-shard", "60", "--quiet", *extra]


def _visible_parquet(root):
    """The shards a reader would see: hidden temp files (``.g2m-tmp-*``, being written) are not among them."""
    return sorted(p for p in root.rglob("*.parquet") if not p.name.startswith("."))


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_an_interrupted_build_resumes_to_the_same_bytes(tmp_path, small_release, how):
    out, marker = tmp_path / "crash", tmp_path / "two-shards-written"
    # the build waits after its second shard until the signal comes, so the signal always finds it unfinished,
    # however fast or loaded the machine; the test waits for the marker, not for a number of seconds
    # SIGINT is put back to Python's own handler: a shell that starts the test run in the background (`pytest &` in
    # a script) hands every child SIGINT ignored, and the build would then sleep through the signal like any program
    driver = ("import signal, sys, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "from pathlib import Path\nimport dataset_builder.release.build as b\nreal = "
              "b.write_shard\ncalls = [0]\ndef write_shard(task, out):\n    result = real(task, out)\n    calls[0] += "
              "1\n"
              f"    if calls[0] == 2:\n        Path({str(marker)!r}).touch()\n        time.sleep(3600)\n"
              "    return result\nb.write_shard = write_shard\nfrom g2m_cli.main import main\n"
              f"sys.exit(main({_cli_build(out, '--workers', '1')[3:]!r}))")
    proc = subprocess.Popen([sys.executable, "-c", driver], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        wait_for(marker.exists, "the build's second shard (its marker file)", proc=proc)
    finally:
        os.killpg(proc.pid, how if marker.exists() else signal.SIGKILL)
    _, err = ended(proc, "the interrupted build")
    if how == signal.SIGINT:
        assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err[-2000:])
    assert not (out / "manifest.json").exists(), "the build finished before it could be interrupted"
    for p in _visible_parquet(out):  # whatever is visible is complete and readable
        assert datasets.Dataset.from_parquet(str(p)).num_rows > 0
    resumed = subprocess.run(_cli_build(out, "--workers", "2"), cwd=REPO, capture_output=True, text=True, timeout=WAIT)
    assert resumed.returncode == 0, resumed.stderr
    assert tree_digest(out) == tree_digest(small_release)
    assert not [p for p in out.rglob("*") if ".g2m-tmp-" in p.name]


def test_a_rerun_reuses_finished_shards_and_rebuilds_a_corrupt_one(tmp_path, small_release):
    out = tmp_path / "rerun"
    build(out, SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=1, progress=False)
    victim = _visible_parquet(out)[0]
    victim.write_bytes(victim.read_bytes()[:100])  # truncated, as after a disk fault
    (out / "manifest.json").unlink()
    build(out, SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=1, progress=False)
    assert tree_digest(out) == tree_digest(small_release)


def test_building_more_configs_into_a_folder_extends_it(tmp_path):
    out = tmp_path / "extend"
    params = BuildParams(scale=0.01)
    build(out, "probe_n24_c3", params, workers=1, progress=False)
    build(out, "probe_n28_c3", params, workers=1, progress=False)
    assert sorted(datasets.get_dataset_config_names(str(out))) == ["probe_n24_c3", "probe_n28_c3"]
    with pytest.raises(BuildError, match="already holds a release built with --scale 0.01"):
        build(out, "probe_n28_c3", BuildParams(scale=0.02), workers=1, progress=False)


def test_shards_left_by_an_abandoned_build_with_other_parameters_are_removed(tmp_path):
    out = tmp_path / "stale"
    build(out, "probe_n24_c10", BuildParams(scale=0.01, rows_per_shard=20), workers=1, progress=False)
    (out / "manifest.json").unlink()  # as if that build had died before finishing
    build(out, "probe_n24_c10", BuildParams(scale=0.01), workers=1, progress=False)
    names = sorted(p.name for p in (out / "probe_n24_c10").iterdir())
    assert names == ["test-00000-of-00001.parquet", "train-00000-of-00001.parquet", "validation-00000-of-00001.parquet"]
    assert len(datasets.load_dataset(str(out), "probe_n24_c10", split="train")) == 80


def test_scale_keeps_at_least_one_row_per_block():
    tiny = get_config("zero_shot").scaled(0.0001)
    assert tiny.split("test").rows == 45


def test_the_spelled_out_schema_is_what_datasets_itself_writes():
    assert features().arrow_schema.equals(SCHEMA, check_metadata=True)
