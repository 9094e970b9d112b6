"""The docs run: every command block of README.md and docs/**/*.md meant to run offline is run here, as written.

A fenced shell block is marked by an HTML comment on the line before it (invisible on GitHub and in the docs site):

- ``<!-- docs-test: run -->``: runs offline; executed with bash (``set -euo pipefail``) from a scratch copy of the
  repository, one copy and one bash session per page, the page's blocks in order, as a reader pastes them into one
  shell (a later block may use what an earlier one built, or stop the server it started with ``kill %1``);
- ``<!-- docs-test: output -->`` on the (text) block right after a run block: the output that block prints. Its
  non-blank lines must appear in the real output (stdout and stderr together), in that order, blanks collapsed;
  ``[...]`` inside a line matches any text (a time, a path with a date), and a line that is only ``[...]`` marks
  lines left out. ``<!-- docs-test: output tolerance=0.005 -->`` compares the decimal numbers of those lines (a
  probe's accuracy, which differs in its last digit between machines) within that absolute tolerance, and all the
  rest of each line exactly; integers (counts, steps) are always compared exactly. A page that uses it says so in
  its text;
- ``<!-- docs-test: tour -->``: commands the tour (docs/tour.md) runs, shown again on a reference page: every line of
  it must be a line of a run block of the tour, and an output block after it lines of a tour output block, so the
  command is run once, by the tour's test, and the two pages cannot drift apart;
- ``<!-- docs-test: gpu -->``, ``hub`` or ``network``: needs a GPU, the Hugging Face Hub or the network: checked for
  syntax (``bash -n``). With ``dry-run`` after the kind, every ``g2m eval``, ``g2m probe sweep`` and ``g2m push`` in
  it also runs with ``--dry-run`` added (they plan without a model, data or network).

The scratch copy holds the repository's files (tracked and untracked, not ignored ones) and a ``.venv`` link to this
repository's venv, and runs with that copy first on ``PYTHONPATH`` and a ``PATH`` without the venv, so a block works
only if it works without an activated venv. The one line not run is ``bash scripts/setup.sh``: it would reinstall the
package into the shared venv from the scratch copy; the test checks instead that ``.venv/bin/g2m`` is there.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
SHELL_LANGS = {"bash", "sh", "shell", "console"}
KINDS = {"run", "output", "tour", "gpu", "hub", "network"}
TOUR = "docs/tour.md"
MARK = re.compile(r"^<!--\s*docs-test:\s*(?P<kind>[a-z]+)(?P<flags>(?:\s+[a-z-]+(?:=[0-9.]+)?)*)\s*-->\s*$")
#: A decimal number in an output line: what ``tolerance=`` compares as a number (integers stay exact text).
DECIMAL = re.compile(r"-?\d+\.\d+")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
SETUP = "bash scripts/setup.sh"
#: Commands that can plan without a model, data or network when given --dry-run.
DRY_RUNNABLE = re.compile(r"(\.venv/bin/g2m|\bg2m|-m g2m_cli)\s+(eval|probe sweep|push)\b")
PAGE_TIMEOUT = 1200
#: A port a page's server listens on: pages run side by side (one per xdist worker), and two that start a server on
#: the same port would take each other's requests or fail to bind, so a page holds its ports while it runs.
PORT = re.compile(r"--port\s+(\d+)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    kind: str | None
    flags: tuple[str, ...]
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a markdown page, with the docs-test mark on the line before it (if any)."""
    out, lines = [], path.read_text(encoding="utf-8").splitlines()
    i, name = 0, str(path.relative_to(REPO))
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m["fence"], i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        mark = MARK.match(lines[start - 1]) if start > 0 else None
        out.append(Block(name, start + 1, m["lang"].lower(), mark["kind"] if mark else None,
                         tuple(mark["flags"].split()) if mark else (), "\n".join(lines[start + 1:j]) + "\n"))
        i = j + 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def logical_lines(text: str) -> list[str]:
    """Shell lines with their backslash continuations joined, comments and blanks dropped."""
    out, cur = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        if cur.strip() and not cur.lstrip().startswith("#"):
            out.append(cur.strip())
        cur = ""
    return out


# ---------------------------------------------------------------------------------------------------- fast checks


def test_pages_are_found():
    assert {"README.md", "docs/evaluating.md", "docs/probing.md"} <= {b.page for b in ALL}


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in SHELL_LANGS], ids=lambda b: b.where)
def test_every_shell_block_is_marked(block):
    assert block.kind in {"run", "tour", "gpu", "hub", "network"}, (
        f"{block.where}: mark this {block.lang} block with <!-- docs-test: run --> (runs offline) or tour, gpu, hub, "
        f"network")


@pytest.mark.parametrize("block", [b for b in ALL if b.kind], ids=lambda b: b.where)
def test_marks_are_known_and_outputs_follow_a_run(block):
    assert block.kind in KINDS, f"{block.where}: unknown mark {block.kind}"
    for flag in block.flags:
        assert flag == "dry-run" or (block.kind == "output" and re.fullmatch(r"tolerance=\d*\.?\d+", flag)), (
            f"{block.where}: unknown flag {flag!r} (dry-run on a command block, tolerance=X on an output block)")
    if block.kind == "output":
        page = [b for b in ALL if b.page == block.page]
        before = page[page.index(block) - 1]
        assert before.kind in ("run", "tour") and before.lang in SHELL_LANGS, (
            f"{block.where}: an output block follows a run block")
    if "dry-run" in block.flags:
        assert any(DRY_RUNNABLE.search(c) for c in logical_lines(block.text)), f"{block.where}: nothing to dry-run"


TOUR_BLOCKS = [b for b in ALL if b.kind == "tour"]


def _tour_lines(kind: str) -> set[str]:
    return {" ".join(line.split()) for b in ALL if b.page == TOUR and b.kind == kind
            for line in (logical_lines(b.text) if kind == "run" else b.text.splitlines()) if line.strip()}


@pytest.mark.parametrize("block", TOUR_BLOCKS, ids=lambda b: b.where)
def test_a_block_marked_tour_is_what_the_tour_runs_and_prints(block):
    """Its commands are run by the tour's docs test (and nowhere else): each must be a command of the tour, as
    written there; the output shown after it must be output the tour shows."""
    ran = _tour_lines("run")
    for line in logical_lines(block.text):
        assert " ".join(line.split()) in ran, f"{block.where}: {line!r} is not a command of {TOUR}"
    page = [b for b in ALL if b.page == block.page]
    after = page[page.index(block) + 1] if page.index(block) + 1 < len(page) else None
    if after is not None and after.kind == "output":
        printed = _tour_lines("output")
        for line in filter(str.strip, after.text.splitlines()):
            assert " ".join(line.split()) in printed, f"{after.where}: {line!r} is not output {TOUR} shows"


def test_the_tour_mark_checks_against_the_tour():
    assert TOUR_BLOCKS, "no page shows a tour command: the mark and its test would check nothing"
    assert ".venv/bin/g2m probe --encoder demo-encoder --config probe_n20_c3 --data tour-data --steps 50 " \
        "--eval-every 25 --quiet" in _tour_lines("run")
    assert ".venv/bin/g2m probe --encoder demo-encoder --data elsewhere" not in _tour_lines("run")


BARE = re.compile(r"^(g2m|g2m-lm-eval|python|pip|pytest|lm_eval|inspect|mkdocs)\b")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_commands_work_without_an_activated_venv(page):
    """A bare ``g2m``/``python`` needs an activated venv: write ``.venv/bin/g2m``, or activate it visibly first."""
    activated = False
    for block in (b for b in blocks(page) if b.lang in SHELL_LANGS):
        for line in logical_lines(block.text):
            if re.search(r"(^|\s)(\.|source)\s+\S*bin/activate\b", line):
                activated = True
            for command in re.split(r"&&|\|\||;|\|", line):
                command = re.sub(r"^(\s*[A-Z_]+=\S*\s+)*", "", command).strip()  # FOO=bar cmd
                assert activated or not BARE.match(command), f"{block.where}: {command!r} needs an activated venv"


def test_bash_n_accepts_every_shell_block(tmp_path):
    for block in (b for b in ALL if b.lang in SHELL_LANGS):
        r = subprocess.run(["bash", "-n"], input=block.text, text=True, capture_output=True)
        assert r.returncode == 0, f"{block.where}: {r.stderr}"


def test_dry_run_goes_after_the_command_not_after_a_comment():
    block = Block("p.md", 1, "bash", "gpu", ("dry-run",), ".venv/bin/g2m eval --serve M \\\n  --tasks g2m   # a note\n"
                  ".venv/bin/g2m report runs/M\n")
    assert " ".join(script_of(block).split()) == ".venv/bin/g2m eval --dry-run --serve M --tasks g2m # a note"


def test_the_expected_output_matcher():
    out = "g2m: building\nrow  1   2\ncosts: 14 passes, extraction 20.0 s\nresults: a/b.json\n"
    assert shown_output_missing("row 1 2\n[...]\ncosts: 14 passes, extraction [...]\nresults: a/b.json", out) is None
    assert shown_output_missing("results: a/b.json\nrow 1 2", out) == "row 1 2"  # order matters
    assert shown_output_missing("costs: 15 passes[...]", out) == "costs: 15 passes[...]"


SWEEP_PRINTED = "demo on p: 6 points, chance 0.333\n  tower     0.786 0.785\n  deepstack 0.514\nbest tower.001 0.786\n"


@pytest.mark.parametrize(("shown", "tolerance", "matches"), [
    ("  deepstack 0.514", 0.0, True),
    ("  deepstack 0.513", 0.0, False),  # exact by default: another machine's last digit fails
    ("  deepstack 0.513", 0.005, True),  # within the page's stated tolerance
    ("  deepstack 0.509", 0.005, True),
    ("  deepstack 0.508", 0.005, False),  # a real change (another probe setting) still fails
    ("  deepstack 0.600", 0.005, False),
    ("  projector 0.514", 0.005, False),  # the words around the numbers stay exact
    ("  tower 0.786 0.789", 0.005, True),
    ("  tower 0.786 0.795", 0.005, False),  # every number of the line is compared
    ("  tower 0.786", 0.005, False),  # so is how many there are
    ("demo on p: 7 points, chance 0.333", 0.005, False),  # integers are counts: exact
    ("best tower.001 0.784", 0.005, True),  # a point's name is not a number
    ("best tower.002 0.786", 0.005, False),
    ("demo on p: [...] chance 0.330", 0.005, True),
])
def test_the_matcher_compares_decimals_within_the_stated_tolerance(shown, tolerance, matches):
    missing = shown_output_missing(shown, SWEEP_PRINTED, tolerance)
    assert (missing is None) is matches, missing


def test_a_tolerance_is_read_from_the_output_mark_and_shown_on_the_page():
    for block in (b for b in ALL if tolerance_of(b)):
        page = (REPO / block.page).read_text(encoding="utf-8")
        assert block.kind == "output" and f"±{tolerance_of(block):g}" in page, (
            f"{block.where}: a page that compares numbers within a tolerance states it in its text (±X)")
    assert tolerance_of(Block("p.md", 1, "text", "output", ("tolerance=0.005",), "")) == 0.005
    assert tolerance_of(Block("p.md", 1, "text", "output", (), "")) == 0.0


# ---------------------------------------------------------------------------------------------------- running


def tolerance_of(block: Block) -> float:
    """The ``tolerance=X`` of an output mark: how far a printed decimal may be from the shown one (0: exact)."""
    return next((float(f.split("=", 1)[1]) for f in block.flags if f.startswith("tolerance=")), 0.0)


def _line_matcher(want: str, tolerance: float):
    """A test of one printed line against one shown line: ``[...]`` is any text; with a tolerance, each decimal
    number is any decimal within it of the shown one, and the text between numbers stays exact."""
    if not tolerance:
        pattern = re.compile("^" + ".*".join(re.escape(p) for p in want.split("[...]")) + "$")
        return lambda line: pattern.match(line) is not None
    pieces, shown = [], []
    for part in want.split("[...]"):
        at = 0
        for m in DECIMAL.finditer(part):
            pieces.append(re.escape(part[at:m.start()]) + r"(-?\d+\.\d+)")
            shown.append(float(m[0]))
            at = m.end()
        pieces.append(re.escape(part[at:]))
        pieces.append(".*")
    pattern = re.compile("^" + "".join(pieces[:-1]) + "$")

    def matches(line: str) -> bool:
        m = pattern.match(line)
        return m is not None and all(abs(float(got) - want) <= tolerance + 1e-12
                                     for got, want in zip(m.groups(), shown, strict=True))
    return matches


def shown_output_missing(shown: str, output: str, tolerance: float = 0.0) -> str | None:
    """The first line of ``shown`` not found (in order) in ``output``, or None when all are there."""
    def norm(s: str) -> str:
        return " ".join(s.split())

    have = [norm(x) for x in re.split(r"[\r\n]", output) if x.strip()]
    k = 0
    for want in (norm(x) for x in shown.splitlines() if x.strip()):
        if want == "[...]":
            continue
        matches = _line_matcher(want, tolerance)
        while k < len(have) and not matches(have[k]):
            k += 1
        if k == len(have):
            return want
        k += 1
    return None


def scratch_copy(dest: Path) -> Path:
    """The repository's files (tracked and untracked, not ignored) under ``dest``, with ``.venv`` linked."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes())
            (dest / rel).chmod(src.stat().st_mode)
    (dest / ".venv").symlink_to((REPO / ".venv").resolve())
    return dest


def environment(scratch: Path) -> dict[str, str]:
    venv_bin = str((REPO / ".venv").resolve() / "bin")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != Path(venv_bin)]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    (scratch / ".home").mkdir(exist_ok=True)
    return {**env, "PATH": os.pathsep.join(path), "PYTHONPATH": str(scratch), "HOME": str(scratch / ".home"),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PWD": str(scratch)}


def script_of(block: Block) -> str:
    if block.kind == "run":
        return block.text.replace(SETUP, "test -x .venv/bin/g2m")
    # --dry-run right after the command's name: the line may end in a comment
    lines = [DRY_RUNNABLE.sub(lambda m: m[0] + " --dry-run", c, count=1) for c in logical_lines(block.text)
             if DRY_RUNNABLE.search(c)]
    return "\n".join(lines) + "\n"


BEGIN = "@@docs-test block {} begins@@"


def run_page_blocks(page: str, scratch: Path) -> None:
    """Run a page's blocks in order in one bash session (as a reader pastes them into one shell), then check outputs.

    One session, so a server started in the background by one block is there for the next, and ``kill %1`` stops it.
    """
    page_blocks = [b for b in ALL if b.page == page]
    chosen = [i for i, b in enumerate(page_blocks) if b.kind == "run" or "dry-run" in b.flags]
    script = "set -euo pipefail\n" + "".join(f"echo '{BEGIN.format(i)}'\n{script_of(page_blocks[i])}" for i in chosen)
    with ports_held(PORT.findall(script)):
        output, returncode = _run_script(script, scratch)
    parts = re.split(r"^@@docs-test block (\d+) begins@@$", output, flags=re.M)
    printed = {int(parts[k]): parts[k + 1] for k in range(1, len(parts), 2)}
    if returncode != 0:
        last = page_blocks[max(printed)] if printed else page_blocks[chosen[0]]
        pytest.fail(f"{last.where} failed (exit {returncode}, {PAGE_TIMEOUT} s allowed):\n{last.text}\n"
                    f"{printed.get(max(printed, default=-1), output)[-6000:]}")
    for i in chosen:
        shown = page_blocks[i + 1] if i + 1 < len(page_blocks) else None
        if page_blocks[i].kind == "run" and shown is not None and shown.kind == "output":
            missing = shown_output_missing(shown.text, printed[i], tolerance_of(shown))
            assert missing is None, (f"{shown.where}: {missing!r} is not in what {page_blocks[i].where} printed:\n"
                                     f"{printed[i][-6000:]}")


def _run_script(script: str, scratch: Path) -> tuple[str, int]:
    """(what the script printed, its exit status); whatever it left running is killed with it."""
    proc = subprocess.Popen(["bash", "-c", script], cwd=scratch, env=environment(scratch), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=PAGE_TIMEOUT)
    except subprocess.TimeoutExpired:
        output = ""
    finally:
        try:  # whatever a block left running in the background (a server)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return output, proc.returncode


@contextlib.contextmanager
def ports_held(ports, timeout: float = PAGE_TIMEOUT):
    """Hold a lock per port (a file in the temp folder, shared by every xdist worker) while the body runs; a page
    waits for another page that holds one of its ports. The kernel drops a lock when its holder dies."""
    with contextlib.ExitStack() as stack:
        for port in sorted(set(ports), key=int):  # always in one order: two pages never wait on each other
            fh = stack.enter_context(open(Path(tempfile.gettempdir()) / f"g2m-docs-port-{port}.lock", "w"))
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"port {port} was held by another docs page for over {timeout:.0f} s")
                    time.sleep(0.2)
        yield


def test_pages_that_serve_on_one_port_take_turns():
    serving = next(b for b in ALL if b.page == "docs/reports.md" and "--port" in b.text)
    assert PORT.findall(script_of(serving)) == ["8000"]
    lock = Path(tempfile.gettempdir()) / "g2m-docs-port-8000.lock"
    take = "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'w'), fcntl.LOCK_EX | fcntl.LOCK_NB)"
    with ports_held(["8000"]):
        other = subprocess.run([sys.executable, "-c", take, str(lock)], capture_output=True, text=True, timeout=60)
        assert other.returncode != 0 and "BlockingIOError" in other.stderr  # held: another page would wait
    with ports_held(["8000"], timeout=5):
        pass  # released: taken again at once


RUN_PAGES = sorted({b.page for b in ALL if b.kind == "run" or "dry-run" in b.flags})


@pytest.mark.slow
@pytest.mark.docs  # runs a page's commands in a scratch copy of the repository (minutes)
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_page_runs_as_written(page, tmp_path):
    run_page_blocks(page, scratch_copy(tmp_path / "repo"))


def test_a_failing_block_and_a_wrong_output_fail_the_page(tmp_path, monkeypatch):
    """The runner itself: a block that fails, and output that differs from the shown one, are both reported."""
    fake = [Block("page.md", 1, "bash", "run", (), "echo one; echo 'two  2'\n"),
            Block("page.md", 5, "text", "output", (), "one\ntwo 2\n"),
            Block("page.md", 9, "bash", "run", (), "echo three\n"),
            Block("page.md", 12, "text", "output", (), "four\n")]
    monkeypatch.setattr(sys.modules[__name__], "ALL", fake)
    (tmp_path / ".venv").mkdir()
    with pytest.raises(AssertionError, match="'four' is not in what page.md:9 printed"):
        run_page_blocks("page.md", tmp_path)
    fake[2] = Block("page.md", 9, "bash", "run", (), "false\n")
    with pytest.raises(pytest.fail.Exception, match=r"page.md:9 failed \(exit 1"):
        run_page_blocks("page.md", tmp_path)
