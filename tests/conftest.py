"""Shared fixtures: small releases built once per session with the real builder."""

from __future__ import annotations

import atexit
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

# pytest rewrites each test module's asserts when it imports it and keeps the result in __pycache__, unless bytecode
# is switched off (PYTHONDONTWRITEBYTECODE, which some machines set): then every run rewrites and compiles the whole
# suite again, about 8 s of the fast lane's collection. The tests' own modules are cached, whatever that setting says.
sys.dont_write_bytecode = False
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# datasets' Arrow cache of local builds goes to a throw-away folder, never the user's ~/.cache
os.environ["HF_DATASETS_CACHE"] = _HF_CACHE = tempfile.mkdtemp(prefix="g2m-tests-hf-")
atexit.register(shutil.rmtree, _HF_CACHE, ignore_errors=True)
# the Hub's model cache too: a test places a tiny model there under a Hub id (helpers.as_hub_model), and a model is
# then loaded by that id offline, as a maintainer's audit loads the weights a submission names
os.environ["HF_HUB_CACHE"] = os.path.join(_HF_CACHE, "hub")
# the leaderboard cache's signing key: one per test session, never the user's own (~/.cache/grid2matrix)
os.environ["G2M_CACHE_KEY_FILE"] = os.path.join(_HF_CACHE, "g2m-key", "leaderboard.key")


def _share_the_cores() -> None:
    """Under xdist, each worker (and each g2m process it starts: the variable is inherited) gets its share of the
    cores for torch's intra-op threads. By default every process takes one thread per core, so two workers on two
    cores run four busy threads, and a thread that waits for its partner at each op's barrier spins instead of
    sleeping: training a probe took twice the CPU time with two threads as with one on a 2-core machine whose other
    core was busy. An OMP_NUM_THREADS set by the caller is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if not workers:
        return
    threads = max(1, (os.cpu_count() or 1) // workers)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    if "torch" in sys.modules:  # already imported (a plugin): its pool has been sized, so size it again
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


_share_the_cores()

from dataset_builder.release.build import BuildParams, build  # noqa: E402
from tests.support import scheduling  # noqa: E402
from tests.support.helpers import SMALL_CONFIGS, SMALL_SCALE, TINY_SCALE  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def pytest_configure(config):
    """The fast lane (``-m "not slow"``) runs each property with fewer examples (``helpers.examples``)."""
    if "not slow" in (config.option.markexpr or ""):
        os.environ["G2M_FAST_LANE"] = "1"


#: A test file marked slow as a whole: a top-level ``pytestmark = pytest.mark.slow`` line (a comment may follow).
WHOLE_FILE_SLOW = re.compile(r"^pytestmark = pytest\.mark\.slow\s*(#.*)?$", re.MULTILINE)


def pytest_ignore_collect(collection_path, config):
    """The fast lane (``-m "not slow"``) does not even import a file whose every test is slow: it would deselect them
    all, after paying for the file's imports (torch, datasets, lm-eval: seconds per process, per xdist worker)."""
    if (config.option.markexpr or "").strip() != "not slow" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    try:
        return True if WHOLE_FILE_SLOW.search(collection_path.read_text()) else None
    except OSError:
        return None  # pytest's own collection reports what it cannot read


def pytest_collection_modifyitems(config, items):
    """A test that uses the ``browser`` fixture carries the ``browser`` marker (``-m "not browser"`` leaves it out).
    On an xdist worker the collection is put costliest unit first, the order the scheduler hands units out in
    (``tests/support/scheduling.py``)."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
    if hasattr(config, "workerinput"):
        items[:] = scheduling.cost_order(items)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with each docs page a unit of its own, costliest units first; other modes as xdist has
    them."""
    return scheduling.make_scheduler(config, log) if config.option.dist == "loadfile" else None


def _cannot(what: str, need: str, how: str) -> None:
    """Skip a test whose lane is not here, or fail it where ``need`` (an environment variable CI sets) says it must
    run."""
    if os.environ.get(need):
        pytest.fail(f"{what}, and {need} is set: {how}", pytrace=False)
    pytest.skip(what)


def pytest_runtest_setup(item):
    """``needs_root`` tests (tmpfs mounts) skip without root, or fail where ``G2M_REQUIRE_ROOT`` is set (CI)."""
    if item.get_closest_marker("needs_root") and os.geteuid() != 0:
        _cannot("tmpfs mounts need root", "G2M_REQUIRE_ROOT", "the full- and read-only-disk tests must run")


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium, or a skip (a failure where ``G2M_REQUIRE_BROWSER`` is set, as CI sets it)."""
    if not Path(CHROMIUM).exists():
        _cannot("chromium is not installed (CI installs it: apt-get install chromium)", "G2M_REQUIRE_BROWSER",
                "apt-get install chromium")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium):
    """A headless chromium driven by Playwright (it never downloads a browser), one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def shared(tmp_path_factory, name: str, make: Callable[[Path], Path]) -> Path:
    """What ``make(folder)`` builds in an empty ``folder`` and returns, built once for the whole test run: under xdist
    the first worker to ask builds it in the run's shared temporary folder while the others wait on a lock, then all
    read it (a session fixture is otherwise built once per worker: three times on three workers). What it builds is
    read only, as every session fixture's is. A build that fails leaves no record, so the next worker to ask builds it
    again and fails the same way."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return make(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent  # every worker's base folder is in it: one per test run
    record = root / f"{name}.built"  # the path ``make`` returned, written once it has returned
    with FileLock(str(root / f"{name}.lock")):
        if not record.is_file():
            folder = root / name
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            record.write_text(str(make(folder)))
        return Path(record.read_text())


@pytest.fixture(scope="session")
def small_release(tmp_path_factory) -> Path:
    def make(folder: Path) -> Path:
        build(folder / "g2m", SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=2,
              progress=False)
        return folder / "g2m"

    return shared(tmp_path_factory, "small_release", make)


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory) -> Path:
    """probe_n20_c3 with 24/6/30 rows: the sweeps' and the small probes' data (probing/, ``sweep_dir``). Read only."""
    def make(folder: Path) -> Path:
        build(folder / "g2m", "probe_n20_c3", BuildParams(scale=TINY_SCALE), workers=1, progress=False)
        return folder / "g2m"

    return shared(tmp_path_factory, "tiny_release", make)


@pytest.fixture(scope="session")
def random_run(small_release, tmp_path_factory) -> Path:
    """A real lm-eval run of g2m-random on every task of the small release (90 samples)."""
    from harness_tasks.evaluate import EvalSpec, run_eval

    return shared(tmp_path_factory, "random_run", lambda folder: Path(run_eval(EvalSpec(
        model="g2m-random", data=str(small_release), output=str(folder)))["output_dir"]))


# --- a tiny VLM, its sweep, its end-to-end run and their submission, built once per session (per xdist worker) ---

@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory) -> Path:
    """The docs' offline model (scripts/make_tiny_vlm.py) with 3 vision blocks and 3 decoder layers, images at 256 px.
    Read only: every test that sweeps or serves a tiny VLM shares it."""
    from probing.tiny import make_tiny_qwen3_vl

    return shared(tmp_path_factory, "tiny_vlm", lambda folder: make_tiny_qwen3_vl(folder / "tiny-vlm", depth=3,
                                                                                   layers=3, max_side=256))


@pytest.fixture(scope="session")
def sweep_dir(tiny_vlm, tiny_release, tmp_path_factory) -> Path:
    """The tiny VLM swept on probe_n20_c3 at 24/6/30 rows (every tower block, the projector, every LLM layer), at the
    authors' probe width: its heads must differ from point to point (a head swapped between two points is refuted),
    which 6 steps at ``TEST_HIDDEN`` do not give."""
    from probing.core.probe import TrainConfig
    from probing.sweep.run import SweepSpec, run_sweep

    def make(folder: Path) -> Path:
        run_sweep(SweepSpec(encoder=str(tiny_vlm), config="probe_n20_c3", data=str(tiny_release),
                            out=str(folder / "probes"), batch_size=4, chunk_rows=8,
                            train=TrainConfig(steps=6, eval_every=3, patience=2)), progress=False)
        return folder / "probes"

    return shared(tmp_path_factory, "sweep_dir", make)


@pytest.fixture(scope="session")
def vlm_run(tiny_vlm, small_release, tmp_path_factory) -> Path:
    """The same tiny VLM's end-to-end answers at N=20, C=3, served on the loopback interface (a real server). Read
    only, made once for the whole run."""
    from harness_tasks.evaluate import EvalSpec, run_eval
    from tests.support import vlm_server

    def make(folder: Path) -> Path:
        httpd = vlm_server.serve(vlm_server.TransformersVLM(tiny_vlm, str(tiny_vlm)))
        try:
            res = run_eval(EvalSpec(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", tasks=("g2m_n20_c3",),
                                    data=str(small_release), output=str(folder), gen_kwargs="max_gen_toks=8",
                                    progress=False))
        finally:
            httpd.shutdown()
        return Path(res["output_dir"])

    return shared(tmp_path_factory, "vlm_run", make)


@pytest.fixture(scope="session")
def run_submission(vlm_run, sweep_dir, tmp_path_factory) -> dict:
    """``write_submission(RUN, probes=DIR)`` as written: the run's own records (one task) and its probe sections."""
    from submission.submission import write_submission

    path = write_submission(vlm_run, tmp_path_factory.mktemp("sub") / "s.json.gz", allow_partial=True,
                            probes=sweep_dir, model_info={"id": "org/tiny-vlm"})
    return json.loads(gzip.decompress(path.read_bytes()))


@pytest.fixture(scope="session")
def submitted(run_submission) -> dict:
    """``run_submission`` completed: the run covers one task, so its records are replaced by every zero_shot id
    (validate needs all 4,500) while its metadata and probe sections stay as written."""
    from tests.support.helpers import submission_doc

    full = submission_doc()
    full["metadata"], full["probes"] = run_submission["metadata"], run_submission["probes"]
    return full


@pytest.fixture(scope="session")
def probed_doc(run_submission) -> dict:
    """The tiny VLM's submission as the board ranks it (on the release): at N=20, C=3 its run's own answers where the
    run has them and an empty answer for the rest, every other task answered right, its probe sections as written.
    At N=20, C=3 its end-to-end cell accuracy is the run's when the run's answers score 0 there (a random-weight
    model's do; test_site's report/board agreement test checks it)."""
    from tests.support.helpers import submission_doc

    ran = {r["id"]: r["output"] for r in run_submission["records"]}
    doc = submission_doc()
    for r in doc["records"]:
        if r["id"].startswith("zs-n20-c3-"):
            r["output"] = ran.get(r["id"], "")
    doc["metadata"]["model"]["id"] = run_submission["metadata"]["model"]["id"]
    doc["probes"] = run_submission["probes"]
    return doc
