"""Small helpers shared by tests (not fixtures): run the CLI, digest a folder, write submissions."""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Our packages, lowest first as the wheel lists them: pyproject.toml is their one home.
PACKAGES = tuple(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
    "packages"])

#: The session releases (tests/conftest.py): ``small_release`` is every zero_shot (N, C) block and one probing config
#: with all three splits at SMALL_SCALE; ``tiny_release`` is probe_n20_c3 alone at TINY_SCALE (24/6/30 rows).
SMALL_CONFIGS = "zero_shot,probe_n20_c3"
SMALL_SCALE = 0.02
TINY_SCALE = 0.003
#: The conv probe's hidden width where tests train probes (``TrainConfig.hidden``, ``--hidden``): an eighth of the
#: authors' 512, and about a tenth of the training's CPU time; the docs pages train at the default.
TEST_HIDDEN = 64

#: Metadata of a well-formed submission (what ``g2m submit`` writes for a run on the release).
SUBMISSION_META = {
    "model": {"id": "Test-VLM", "revision": "abc123", "backend": "vllm-vlm", "model_args": "pretrained=x"},
    "versions": {"grid2matrix": "0.1.0", "lm_eval": "0.4.13"},
    "dataset": {"source": "grid2matrix/g2m", "revision": "v1.0.0", "manifest_sha256": None,
                "content_sha256": "d0b5662c139bb806c7ea010a5e094ddd95e38f205a128bbe62204dfd0b1f81bd"},
    "generation": {"task_version": 1.0}, "date": "2026-11-29T00:00:00+00:00"}


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every visible file below ``root`` (the lock file is ignored: it is empty and hidden)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.startswith(".g2m-build.lock"):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def g2m(*args: str, check: bool = False, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run the ``g2m`` command the way a user would (``python -m`` keeps it in this venv)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **kw.pop("env", {})}
    kw.setdefault("stdin", subprocess.DEVNULL)  # never a terminal: nothing prompts
    return subprocess.run([sys.executable, "-m", "g2m_cli", *args], capture_output=True, text=True,
                          check=check, timeout=timeout, env=env, cwd=kw.pop("cwd", REPO), **kw)


def g2m_here(*args: str) -> subprocess.CompletedProcess:
    """``g2m``'s own ``main`` in this process, for commands that load nothing heavy (dry runs, argument errors): the
    same parser, messages and exit codes as the command, without a second of interpreter start-up per case. The
    signal handlers ``main`` installs are put back."""
    from g2m_cli.main import main

    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse's own errors
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    return subprocess.CompletedProcess(["g2m", *args], code, out.getvalue(), err.getvalue())


@functools.cache
def _right_answers() -> dict[str, str]:
    """Every zero_shot id's correct answer, as ``g2m-oracle`` writes it: made once per process, for every
    ``submission_doc`` (a site test builds a dozen)."""
    from scoring.parsing import format_answer
    from scoring.rescoring.rescore import truth_matrix, zero_shot_truth

    return {i: format_answer(truth_matrix(t)) for i, t in zero_shot_truth().items()}


def submission_doc(output=None, **changes) -> dict:
    """A submission of every zero_shot id; ``output(truth)`` gives each answer (default: the correct one)."""
    from scoring.rescoring.rescore import zero_shot_truth

    if output is None:
        records = [{"id": i, "output": answer} for i, answer in _right_answers().items()]
    else:
        records = [{"id": i, "output": output(t)} for i, t in zero_shot_truth().items()]
    doc = {"format": "g2m-submission/1", "metadata": json.loads(json.dumps(SUBMISSION_META)), "records": records}
    doc.update(changes)
    return doc


def cheap_doc(model_id: str, answer: str = "[[0]]") -> dict:
    """A submission of every zero_shot id under ``model_id``, each answered ``answer``: valid, and quick to score."""
    doc = submission_doc(output=lambda t: answer)
    doc["metadata"]["model"]["id"] = model_id
    return doc


def write_file(folder: Path, doc: dict | bytes, name: str = "sub.json") -> Path:
    """Write ``doc`` (JSON, or raw bytes) to ``folder/name``, gzip'd when the name ends in .gz."""
    path = folder / name
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    # level 1: the reader takes any level, and gzip's default 9 spent seconds per 4,500-answer file on nothing tested
    path.write_bytes(gzip.compress(raw, compresslevel=1, mtime=0) if name.endswith(".gz") else raw)
    return path


def examples(n: int) -> int:
    """Hypothesis examples for a property: ``n`` in the full suite, a tenth (at least 25) in the fast lane
    (``pytest -m "not slow"``, which conftest marks with G2M_FAST_LANE), so the fast lane stays fast on 2 cores."""
    return max(25, n // 10) if os.environ.get("G2M_FAST_LANE") else n


def linear_time_failure(run, make, small: int = 16_384, factor: int = 4) -> str | None:
    """Why ``run(make(n))`` does not look linear in ``n`` (None when it does): four times the input may cost about
    four times the time; a pattern that backtracks costs sixteen. Each size is timed 7 times, alternately, by CPU time
    (wall time also counts other processes' turns on a shared machine), and the best of each is compared with room
    for noise: under 10x plus 5 ms."""
    texts = (make(small), make(small * factor))
    best = [float("inf"), float("inf")]
    for _ in range(7):
        for i, text in enumerate(texts):
            start = time.thread_time()
            run(text)
            best[i] = min(best[i], time.thread_time() - start)
    if best[1] < 10 * best[0] + 0.005:
        return None
    return f"{small // 1024}k took {best[0] * 1e3:.2f} ms, {small * factor // 1024}k {best[1] * 1e3:.2f} ms"


#: How long a test waits for something it can see (a marker file, a line on a pipe, a process's end) before it
#: fails. Generous on purpose: a loaded 2-vCPU machine can take minutes to start a child that imports torch and
#: datasets, and the wait ends as soon as the event happens, so an idle machine pays nothing for it.
WAIT = 600.0


def wait_for(happened, what: str, timeout: float = WAIT, proc: subprocess.Popen | None = None,
             poll: float = 0.05) -> None:
    """Return once ``happened()`` is true; fail naming ``what`` was waited for when ``timeout`` passes first, or
    at once when ``proc`` (the child that should make it happen) has ended without it."""
    deadline = time.monotonic() + timeout
    while not happened():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the child ended (exit {proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(poll)


def ended(proc: subprocess.Popen, what: str, timeout: float = WAIT) -> tuple[str, str]:
    """``proc.communicate()`` with a deadline that names what should have ended; the child is killed if it passes."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"waited {timeout:.0f} s for {what} to end") from None
    return out or "", err or ""


def full_scale_probes(doc: dict) -> dict:
    """``doc`` with each probe section made a section on the full config (scale 1, every test row): each read-out
    predicts the seeds' truth but for every k-th cell (k = 3, 4, ... by read-out), so the read-outs differ and stay
    well above chance. The tiny sweep's sections are on a 0.003-scale build, which the board shows apart, unranked;
    this is what a real sweep on the release's probing config submits."""
    from submission import probe_section

    doc = json.loads(json.dumps(doc))
    for sec in doc.get("probes", []):
        count = probe_section.expected_rows(sec["config"], 1.0)
        truth = probe_section.test_truth(sec["config"], count)
        for k, ro in enumerate(sec["readouts"]):
            pred = truth.copy()
            pred.reshape(-1)[:: 3 + k] = (pred.reshape(-1)[:: 3 + k] + 1) % sec["num_colors"]
            ro["cells"] = probe_section.encode(pred, truth, sec["num_colors"])
        sec["data"]["build_params"]["scale"] = 1.0
        sec["rows"]["count"] = count
    return doc


def partial_run(run: Path, folder: Path, drop: str = "g2m_n64_c10") -> Path:
    """A copy of the run folder ``run`` without the samples file of task ``drop``: a run that did not finish (the
    results file records samples its files do not hold), for what a partial submission says."""
    import shutil

    copy = folder / run.name
    shutil.copytree(run, copy)
    for f in copy.glob(f"samples_{drop}_*.jsonl"):
        f.unlink()
    return copy


def as_hub_model(folder: Path, repo_id: str, cache: Path, revision: str = "0" * 40) -> str:
    """``folder`` placed in the Hub cache ``cache`` (``HF_HUB_CACHE``) as the snapshot of ``repo_id`` at ``revision``
    that ``main`` points to: ``from_pretrained(repo_id)`` then loads it offline, as it loads a model downloaded
    before, so a test can name weights by their Hub id the way a submission must. Returns ``repo_id``."""
    import shutil

    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    shutil.copytree(folder, repo / "snapshots" / revision, dirs_exist_ok=True)
    return repo_id
