"""Shared fixtures: small releases built once per session with the real builder."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# datasets' Arrow cache of local builds goes to a throw-away folder, never the user's ~/.cache
os.environ["HF_DATASETS_CACHE"] = _HF_CACHE = tempfile.mkdtemp(prefix="g2m-tests-hf-")
atexit.register(shutil.rmtree, _HF_CACHE, ignore_errors=True)
# the leaderboard cache's signing key: one per test session, never the user's own (~/.cache/grid2matrix)
os.environ["G2M_CACHE_KEY_FILE"] = os.path.join(_HF_CACHE, "g2m-key", "leaderboard.key")

from dataset_builder.build import BuildParams, build  # noqa: E402

#: Small but complete: every zero_shot (N, C) block, and one probing config with all three splits.
SMALL_CONFIGS = "zero_shot,probe_n20_c3"
SMALL_SCALE = 0.02


def pytest_configure(config):
    """The fast lane (``-m "not slow"``) runs each property with fewer examples (``helpers.examples``)."""
    if "not slow" in (config.option.markexpr or ""):
        os.environ["G2M_FAST_LANE"] = "1"


@pytest.fixture(scope="session")
def small_release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "g2m"
    build(out, SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=2, progress=False)
    return out


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory) -> Path:
    """probe_n20_c3 with 24/6/30 rows: the sweeps' data (test_sweep, test_sweep_shards)."""
    out = tmp_path_factory.mktemp("sweep_release") / "g2m"
    build(out, "probe_n20_c3", BuildParams(scale=0.003), workers=1, progress=False)
    return out


@pytest.fixture(scope="session")
def random_run(small_release, tmp_path_factory) -> Path:
    """A real lm-eval run of g2m-random on every task of the small release (90 samples)."""
    from harness_tasks.evaluate import EvalSpec, run_eval

    res = run_eval(EvalSpec(model="g2m-random", data=str(small_release), output=str(tmp_path_factory.mktemp("runs"))))
    return Path(res["output_dir"])
