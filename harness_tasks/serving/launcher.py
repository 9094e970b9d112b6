"""``g2m eval --serve MODEL``: one ``vllm serve`` child for the whole run, healthy before the first request, and
stopped however the run ends.

Why a server and not lm-eval's in-process ``vllm-vlm``: in lm-eval 0.4.13 its data parallelism declares Ray workers
without GPUs, builds a new engine for every chunk and shuts Ray down after, and requests are grouped by generation
settings, so G2M's 45 answer budgets mean 45 model loads per replica (lm-eval issues 2994, 1734, 2379). One server
holds the model once; tensor, pipeline and data parallelism (and several nodes, through vLLM's Ray backend) happen
inside it, and the client keeps many requests in flight.

The server is started with G2M's settings unless the user's ``--serve-args`` set them: a context long enough for the
largest answer (``--max-model-len``), one image per prompt, and ``--generation-config vllm`` (vLLM's neutral
defaults: otherwise a checkpoint's ``generation_config.json`` can add a repetition penalty to greedy decoding).
Its output goes to a log file, whose last lines are shown when it fails to start.

The server runs under a small supervisor (``supervisor.py``) tied to this process by a pipe: however ``g2m`` ends
(a clean finish, an error, Ctrl-C, SIGTERM, SIGHUP, or SIGKILL, which runs no clean-up here), the pipe closes and the
supervisor stops the server's whole process tree, engine workers and anything that left its process group included:
SIGTERM, then SIGKILL after ``STOP_GRACE_SECONDS``. Nothing started by ``--serve`` outlives the run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from g2m_base.errors import G2MError, UsageError
from g2m_base.untrusted import term
from harness_tasks.serving.wait_display import WaitDisplay

LOG_TAIL_LINES = 40
#: How long the server may take to stop after SIGTERM before it is killed (a cluster's SIGKILL usually follows its
#: SIGTERM by 30 s or more: the server is gone before that).
STOP_GRACE_SECONDS = 15.0


class ServeError(G2MError, RuntimeError):
    """The model server could not be started or did not become healthy."""


#: The environment variable that names the vLLM to start, as ``--vllm`` does (the flag wins).
VLLM_ENV = "G2M_VLLM"
#: Options of a server's command line that say where it listens, not what it answers: left out of the run key.
ADDRESS_OPTIONS = ("--host", "--port")


def without_address(args: list[str]) -> list[str]:
    """A server's command line without ``--host``/``--port`` (either spelling): where it listens, not what answers."""
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ADDRESS_OPTIONS:
            skip = True
        elif not a.startswith(tuple(o + "=" for o in ADDRESS_OPTIONS)):
            kept.append(a)
    return kept


def executable_stamp(path: str) -> dict | None:
    """The size and modification time of the file ``path`` names: an upgrade rewrites it. A run whose every answer
    is cached starts no server only when the executable carries the stamp the earlier run recorded."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def find_vllm(given: str | None = None) -> str:
    """The ``vllm`` executable ``--serve`` starts: ``given`` (``--vllm``), else ``$G2M_VLLM``, else ``vllm`` on PATH.

    vLLM usually lives in an environment of its own (it pins its own torch and transformers), so the executable can
    be named by path. Returns its absolute path; anything missing or not executable is a one-line ``UsageError``.
    """
    if given:
        name, where = given, "--vllm"
    elif os.environ.get(VLLM_ENV):
        name, where = os.environ[VLLM_ENV], VLLM_ENV
    else:
        name, where = "vllm", None
    hint = (f"name the vllm of the environment vLLM is installed in, e.g. --vllm /opt/vllm-env/bin/vllm (or "
            f"{VLLM_ENV}=PATH)")
    label = f"{where} {name!r}" if where else repr(name)
    if os.sep in name or (os.altsep and os.altsep in name):
        path = Path(name).expanduser()
        if not path.exists():
            raise UsageError(f"{label}: no such file; {hint}")
        if path.is_dir():
            raise UsageError(f"{label} is a folder, not an executable; {hint}")
        if not os.access(path, os.X_OK):
            raise UsageError(f"{label} is not executable (chmod +x it, or name the right file); {hint}")
        return str(path.absolute())
    found = shutil.which(name)
    if found is None:
        raise UsageError(f"{label} was not found on PATH: install vLLM (pip install 'grid2matrix[vllm]'), or {hint}, "
                         "or point --base-url at a server that is already running")
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _option(args: list[str], name: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` in a command line, or None."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


@dataclass(frozen=True)
class ServeSpec:
    """How to start the server. ``extra`` is the user's ``--serve-args``, passed through untouched."""

    model: str
    max_model_len: int
    extra: tuple[str, ...] = ()
    executable: str = "vllm"
    startup_timeout: float = 1800.0  # loading a 235B checkpoint from a network disk takes a while
    log_path: Path = field(default_factory=lambda: Path("vllm-serve.log"))

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise UsageError("--serve needs a model: a Hub id or a local checkpoint folder")
        if self.startup_timeout <= 0:
            raise UsageError(f"--serve-timeout must be positive, got {self.startup_timeout}")

    @classmethod
    def parse_extra(cls, text: str | None) -> tuple[str, ...]:
        try:
            return tuple(shlex.split(text or ""))
        except ValueError as e:
            raise UsageError(f"--serve-args {text!r} is not a valid command line: {e}") from None

    @property
    def served_name(self) -> str:
        """The model name the server answers to (``--served-model-name``, else the model itself)."""
        return _option(list(self.extra), "--served-model-name") or self.model

    @property
    def host(self) -> str:
        return _option(list(self.extra), "--host") or "127.0.0.1"

    def launch(self) -> dict:
        """What this server is started as, without where it listens: the executable, the model and every argument
        but ``--host``/``--port`` (a rerun gets a new port). Part of the run key."""
        return {"executable": self.executable, "model": self.model, "args": without_address(self.command(0)[3:])}

    def command(self, port: int) -> list[str]:
        extra = list(self.extra)
        cmd = [self.executable, "serve", self.model]
        if _option(extra, "--host") is None:
            cmd += ["--host", "127.0.0.1"]
        if _option(extra, "--port") is None:
            cmd += ["--port", str(port)]
        if _option(extra, "--max-model-len") is None:
            cmd += ["--max-model-len", str(self.max_model_len)]
        if _option(extra, "--limit-mm-per-prompt") is None:
            cmd += ["--limit-mm-per-prompt", '{"image": 1}']
        if _option(extra, "--generation-config") is None:
            cmd += ["--generation-config", "vllm"]
        return cmd + extra


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


class Server:
    """A running ``vllm serve`` (a context manager): ``url`` is its base URL once ``__enter__`` returns."""

    def __init__(self, spec: ServeSpec) -> None:
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        given = _option(list(spec.extra), "--port")
        self.port = int(given) if given and given.isdigit() else free_port()
        connect = "127.0.0.1" if spec.host in ("0.0.0.0", "::") else spec.host
        self.url = f"http://{connect}:{self.port}/v1"

    def __enter__(self) -> Server:
        cmd = self.spec.command(self.port)
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        print(f"g2m: starting {term(shlex.join(cmd), 1000)}\n     log: {self.spec.log_path}", file=sys.stderr)
        if shutil.which(cmd[0]) is None:
            raise ServeError(f"{self.spec.executable!r} was not found: install vLLM (pip install 'grid2matrix[vllm]') "
                             "or point --base-url at a server that is already running")
        supervised = [sys.executable, "-m", "harness_tasks.serving.supervisor", "--grace", str(STOP_GRACE_SECONDS),
                      "--", *cmd]
        with open(self.spec.log_path, "ab") as log:
            self.proc = subprocess.Popen(supervised, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _wait_healthy(self) -> None:
        display = WaitDisplay(self.spec.log_path)  # the time waited and the log's last line, refreshed
        start = time.monotonic()
        deadline = start + self.spec.startup_timeout
        health = self.url[: -len("/v1")] + "/health"
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                display.close()
                self._show_log()
                raise ServeError(f"vllm serve exited with code {code} before it was ready; its log is "
                                 f"{self.spec.log_path} (last lines above)")
            try:
                with urllib.request.urlopen(health, timeout=5) as resp:  # noqa: S310  (our own loopback URL)
                    if resp.status == 200:
                        display.close()
                        print(f"g2m: server ready at {self.url} after {time.monotonic() - start:.0f} s",
                              file=sys.stderr)
                        return
            except (urllib.error.URLError, OSError):
                pass
            display.update(time.monotonic() - start)
            time.sleep(1.0)
        display.close()
        self._show_log()
        raise ServeError(f"vllm serve was not healthy after {self.spec.startup_timeout:.0f} s (raise --serve-timeout "
                         f"for a large checkpoint); its log is {self.spec.log_path}")

    def _show_log(self) -> None:
        try:
            with open(self.spec.log_path, encoding="utf-8", errors="replace") as f:
                tail = deque(f, maxlen=LOG_TAIL_LINES)
        except OSError:
            return
        print(f"g2m: the last {len(tail)} lines of {self.spec.log_path}:", file=sys.stderr)
        for line in tail:
            print("  | " + term(line.rstrip("\n"), 500), file=sys.stderr)

    def stop(self) -> None:
        """Close the supervisor's pipe: it stops the server's whole tree (SIGTERM, SIGKILL after the grace period)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=STOP_GRACE_SECONDS + 10)
        except subprocess.TimeoutExpired:  # a supervisor that cannot stop: take its group down with it
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
