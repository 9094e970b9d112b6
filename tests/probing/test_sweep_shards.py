"""A sweep's feature shards under damage, full disks and killed writers, on real shards of a real tiny VLM: a shard
that is not exactly what this store wrote for its point and chunk is extracted again (or refused in one line), never
trained on; a full disk is a one-line error, not SIGBUS; a killed writer's temporary files are removed by the rerun,
which gives the undamaged sweep's results."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from probing.core.probe import TrainConfig
from probing.sweep.run import SweepSpec, run_sweep
from tests.support.disks import one_line_error as _one_line_error
from tests.support.disks import remount, tmpfs
from tests.support.helpers import REPO, TEST_HIDDEN, ended, g2m, wait_for

pytestmark = pytest.mark.slow  # builds a model, extracts features, trains probes

FAST = TrainConfig(steps=6, eval_every=3, patience=2, hidden=TEST_HIDDEN)
FLAGS = ["--config", "probe_n20_c3", "--points", "tower,projector", "--batch-size", "4", "--chunk-rows", "8",
         "--steps", "6", "--eval-every", "3", "--patience", "2", "--hidden", str(TEST_HIDDEN), "--quiet"]


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> Path:
    from probing.tiny import make_tiny_qwen3_vl

    return make_tiny_qwen3_vl(tmp_path_factory.mktemp("vlm") / "tiny-vlm", depth=3, layers=2, max_side=256)


def _spec(model, release, out: Path) -> SweepSpec:
    return SweepSpec(encoder=str(model), config="probe_n20_c3", data=str(release), out=str(out),
                     points=("tower", "projector"), batch_size=4, chunk_rows=8, train=FAST)


@pytest.fixture(scope="module")
def clean(tiny_vlm, tiny_release, tmp_path_factory) -> Path:
    """An undamaged sweep: the out folder every case starts from, and whose results every case must give."""
    out = tmp_path_factory.mktemp("clean") / "out"
    run_sweep(_spec(tiny_vlm, tiny_release, out), progress=False)
    return out


def _points(out: Path) -> list[dict]:
    return json.loads(next(out.rglob("sweep.json")).read_text())["points"]


def _shard(out: Path, point: str, chunk: int = 0) -> Path:
    return next(out.glob(f"cache/*/{point}/train/{chunk:05d}.npy"))


def _damage(kind: str, shard: Path, other: Path) -> None:
    arr = np.load(shard)
    if kind == "half its rows":
        np.save(shard, arr[: len(arr) // 2])
    elif kind == "another point's shard":
        shutil.copyfile(other, shard)
    elif kind == "another point's shard and record":
        shutil.copyfile(other, shard)
        shutil.copyfile(other.with_suffix(".json"), shard.with_suffix(".json"))
    elif kind == "truncated":
        shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    elif kind == "random bytes":
        shard.write_bytes(np.random.default_rng(0).bytes(shard.stat().st_size))
    elif kind == "a NaN":
        arr[1, 2, 3, 4] = np.nan
        np.save(shard, arr)
    elif kind == "another shape":
        np.save(shard, arr[:, :-1])
    elif kind == "no record":
        shard.with_suffix(".json").unlink()


DAMAGE = ["half its rows", "another point's shard", "another point's shard and record", "truncated", "random bytes",
          "a NaN", "another shape", "no record"]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_shard_is_extracted_again_and_the_probe_is_the_undamaged_one(kind, clean, tiny_vlm, tiny_release,
                                                                               tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    shard = _shard(out, "tower.001")
    _damage(kind, shard, _shard(out, "tower.002"))
    next(out.rglob("points/tower.001/result.json")).unlink()  # so the point is trained again, from its shards
    run_sweep(_spec(tiny_vlm, tiny_release, out), progress=False)
    assert f"feature shard {shard}" in capsys.readouterr().err  # said, and made again
    assert _points(out) == _points(clean)
    assert np.array_equal(np.load(shard), np.load(_shard(clean, "tower.001")))


def test_a_folder_where_a_shard_should_be_is_refused_in_one_line(clean, tiny_vlm, tiny_release, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    shard = _shard(out, "projector", 1)
    shard.unlink()
    shard.mkdir()
    next(out.rglob("points/projector/result.json")).unlink()
    res = g2m("probe", "sweep", "--encoder", str(tiny_vlm), "--data", str(tiny_release), "--out", str(out), *FLAGS)
    assert res.returncode == 1 and f"feature shard {shard} is not a regular file" in _one_line_error(res)


def _driver(model: Path, data: Path, out: Path, marker: Path) -> list[str]:
    """``g2m probe sweep`` in a child that writes ``marker`` and waits inside its third batch (mid-chunk, with its
    temporary shards open), for the test to signal it there."""
    code = ("import sys, time\nfrom pathlib import Path\nfrom probing.sweep.taps import Taps\nreal = Taps.run\n"
            "calls = [0]\ndef run(self, images, prompts=None):\n    calls[0] += 1\n    if calls[0] == 3:\n"
            f"        Path({str(marker)!r}).touch()\n        time.sleep(3600)\n    return real(self, images, prompts)\n"
            "Taps.run = run\nfrom g2m_cli.main import main\n"
            f"sys.exit(main(['probe', 'sweep', '--encoder', {str(model)!r}, '--data', {str(data)!r}, '--out', "
            f"{str(out)!r}, *{FLAGS!r}]))")
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_sweep_killed_mid_chunk_leaves_nothing_the_rerun_keeps_and_resumes_to_the_same_results(
        sig, clean, tiny_vlm, tiny_release, tmp_path):
    out, marker = tmp_path / "out", tmp_path / "in-the-third-batch"
    child = subprocess.Popen(_driver(tiny_vlm, tiny_release, out, marker), cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        wait_for(marker.exists, "the sweep's third batch (its marker file)", proc=child)
    except AssertionError:
        child.kill()
        raise
    partials = list(out.rglob("*.partial"))
    points = [p for p in next(clean.glob("cache/*/")).iterdir() if p.is_dir()]
    assert len(partials) == len(points) >= 4  # the second chunk's shard of each point, open when the signal came
    child.send_signal(sig)
    ended(child, "the signalled sweep")
    left = list(out.rglob("*.partial"))
    assert left == (partials if sig == signal.SIGKILL else [])  # SIGTERM cleans up; SIGKILL cannot
    run_sweep(_spec(tiny_vlm, tiny_release, out), progress=False)  # the rerun (the full-disk test's is a command)
    assert not list(out.rglob("*.partial")) and _points(out) == _points(clean)


def test_only_the_temporary_files_of_dead_writers_on_this_host_are_removed(clean, tmp_path):
    from probing.sweep.store import HOST, Store

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = next(clean.glob("cache/*/"))
    where = folder / "tower.001" / "train"
    names = {"dead": f".00001.npy.{HOST}.{dead.stdout.strip()}.partial",
             "dead, before hosts were named": f".00001.npy.{dead.stdout.strip()}.partial",
             "dead record": f".00001.json.{HOST}.{dead.stdout.strip()}.partial",
             "alive": f".00002.npy.{HOST}.{sleeper.pid}.partial",
             "another host's": f".00002.npy.elsewhere.{dead.stdout.strip()}.partial"}
    try:
        for name in names.values():
            (where / name).write_bytes(b"x")
        Store(folder, {"train": 24, "validation": 6, "test": 30}, 8)
        assert sorted(p.name for p in where.glob(".*.partial")) == sorted([names["alive"], names["another host's"]])
    finally:
        sleeper.kill()
        sleeper.wait()
        for p in where.glob(".*.partial"):
            p.unlink()


@pytest.mark.needs_root
def test_a_full_disk_during_extraction_is_one_line_and_a_rerun_with_space_resumes(clean, tiny_vlm, tiny_release,
                                                                                  tmp_path):
    need = sum(p.stat().st_size for p in clean.rglob("cache/**/*.npy"))
    with tmpfs(f"{need // 3 // 4096 * 4096}") as disk:
        args = ["probe", "sweep", "--encoder", str(tiny_vlm), "--data", str(tiny_release), "--out",
                str(tmp_path / "out"), "--cache-dir", str(disk / "cache"), *FLAGS]
        res = g2m(*args)
        line = _one_line_error(res)
        assert res.returncode == 1 and f"{disk}/cache/" in line and "No space left on device" in line, res.stderr
        assert not list(disk.rglob("*.partial")) and not list((tmp_path / "out").rglob("sweep.json"))
        remount(disk, f"size={need * 3}")
        res = g2m(*args)
        assert res.returncode == 0, res.stderr
        assert _points(tmp_path / "out") == _points(clean)
