"""What a ``g2m eval`` run is: its validated settings (``EvalSpec``), its name, the identity of its answers (the
resume key), and the model arguments it hands a backend. Shared by ``evaluate`` and each harness's runner."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from dataset_builder import __version__
from dataset_builder.provenance import library_versions
from g2m_base.errors import UsageError
from harness_tasks.answers.catalog import TASK_DIR, TASK_VERSION, DataSource, all_tasks, tags, write_folder
from harness_tasks.answers.score import PROTOCOLS
from harness_tasks.serving.endpoints import chat_url, served_models

BASELINES = ("g2m-oracle", "g2m-random")
CHAT = "g2m-chat"
HARNESSES = ("lm-eval", "lmms-eval", "inspect")
#: The package extra (or setup) each harness needs.
HARNESS_EXTRAS = {"lm-eval": "harness", "lmms-eval": "lmms-eval", "inspect": "inspect"}
RUNNERS = {"lmms-eval": "lmms_run", "inspect": "inspect_run"}
_VERSIONED = ("lm_eval", "datasets", "transformers", "torch", "vllm", "numpy", "pillow", "huggingface_hub", "aiohttp")
#: Model arguments that say how to reach a server, not what answers: left out of the run's identity, so a resumed
#: ``--serve`` run (a new port each time) finds its answers.
TRANSPORT_ARGS = frozenset({"base_url", "num_concurrent", "timeout", "max_retries", "verify_certificate",
                            "ca_cert_path", "auth_token", "header"})
_ARG = re.compile(r"(?:^|,)\s*([A-Za-z_]+)\s*=")


@dataclass(frozen=True)
class EvalSpec:
    """One evaluation run. Validated on construction, so a typo fails before any model is loaded."""

    model: str = CHAT  # an lm-eval backend; g2m-chat with base_url or serve
    model_args: str = ""
    tasks: tuple[str, ...] = ("g2m",)
    data: str | None = None  # a local build; None reads the Hub release at the pinned revision
    output: str = "g2m-runs"
    limit: int | None = None
    batch_size: str = "1"
    device: str | None = None
    apply_chat_template: bool = True
    gen_kwargs: str | None = None
    resume: bool = True
    resume_chunk: int = 256  # answers per commit: a crash loses at most this many
    base_url: str | None = None  # a running OpenAI-compatible server
    serve: str | None = None  # a checkpoint to serve with ``vllm serve`` for this run
    serve_args: str = ""  # passed to ``vllm serve`` untouched (parallelism, memory, ...)
    serve_timeout: float = 1800.0
    concurrency: int = 32  # requests in flight to a server
    reasoning_budget: int = 0  # tokens added to every answer budget, for reasoning models
    progress: bool = True
    harness: str = "lm-eval"  # lm-eval, lmms-eval or inspect
    request_timeout: float | None = None  # seconds per request to a server (default: fits the largest answer)

    def __post_init__(self) -> None:
        known = {t for p in PROTOCOLS for t, _, _ in all_tasks(p)} | set(tags())
        unknown = [t for t in self.tasks if t not in known]
        if unknown or not self.tasks:
            raise UsageError(f"unknown G2M task(s) {', '.join(unknown) or '(none given)'}; "
                             f"tags: {', '.join(tags())}; tasks look like g2m_n09_c3 or g2m_paper_n09_c3")
        if self.harness not in HARNESSES:
            raise UsageError(f"--harness must be one of {', '.join(HARNESSES)}, got {self.harness!r}")
        served = bool(self.serve or self.base_url)
        if self.harness != "lm-eval" and not served and self.model in (CHAT, *BASELINES):
            raise UsageError(f"--harness {self.harness} needs --base-url, --serve, or --model with one of its own "
                             f"backends ({'e.g. qwen2_5_vl' if self.harness == 'lmms-eval' else 'e.g. vllm/MODEL'}); "
                             f"{self.model} runs in lm-eval only")
        if self.request_timeout is not None and not self.request_timeout > 0:
            raise UsageError(f"--request-timeout must be positive, got {self.request_timeout}")
        if self.serve and self.base_url:
            raise UsageError("--serve starts a server and --base-url uses one that is already running: give one")
        if (self.serve or self.base_url) and self.model != CHAT:
            raise UsageError(f"--serve and --base-url use the {CHAT} backend; drop --model {self.model}")
        for name, value, low in (("resume_chunk", self.resume_chunk, 1), ("--concurrency", self.concurrency, 1),
                                 ("--reasoning-budget", self.reasoning_budget, 0), ("--limit", self.limit, 1)):
            if value is not None and (not isinstance(value, int) or value < low):
                raise UsageError(f"{name} must be an integer of at least {low}, got {value!r}")
        if self.base_url:
            chat_url(self.base_url)  # a malformed URL fails here, before any data or model is loaded
        if self.data is not None and not Path(self.data).is_dir():
            raise UsageError(f"--data {self.data!r} is not a folder; build one with: g2m build --out DIR --configs zero_shot")

    @property
    def display_name(self) -> str:
        return self.serve or model_name(self.model, self.model_args)


def model_name(backend: str, model_args: str | dict | None) -> str:
    """What a run is called: the checkpoint in ``model_args`` (pretrained=, model=, path=), else the backend."""
    if isinstance(model_args, dict):
        model_args = ",".join(f"{k}={v}" for k, v in model_args.items())
    m = re.search(r"(?:^|,)(?:pretrained|model|path)=([^,]+)", model_args or "")
    return m.group(1) if m else backend


def _arg_keys(model_args: str) -> set[str]:
    return {m.group(1) for m in _ARG.finditer(model_args)}


def join_args(model_args: str, extra: list[str]) -> str:
    return ",".join([a for a in [model_args.strip(",")] if a] + extra)


def run_key(spec: EvalSpec, model_args: str) -> str:
    """Identity of the answers: the request cache of one run is never reused by another model or setting."""
    args = ",".join(p for p in model_args.split(",") if p.split("=", 1)[0].strip() not in TRANSPORT_ARGS)
    raw = json.dumps([spec.model, args, spec.gen_kwargs, spec.apply_chat_template, TASK_VERSION, spec.reasoning_budget])
    return hashlib.sha256(raw.encode()).hexdigest()[:12]


def chat_model_args(spec: EvalSpec, url: str, model: str | None) -> str:
    """``model_args`` for g2m-chat: the user's, plus the server, the model it serves and the concurrency."""
    keys = _arg_keys(spec.model_args)
    extra = [] if "base_url" in keys else [f"base_url={url}"]
    if "model" not in keys:
        if model is None:
            names = served_models(url)
            if len(names) != 1:
                raise UsageError(f"{url} serves {len(names)} models ({', '.join(names) or 'none'}); "
                                 "name one with --model-args model=NAME")
            model = names[0]
        extra.append(f"model={model}")
    if "num_concurrent" not in keys:
        extra.append(f"num_concurrent={spec.concurrency}")
    if spec.request_timeout and "timeout" not in keys:
        extra.append(f"timeout={spec.request_timeout:g}")
    return join_args(spec.model_args, extra)


def versions() -> dict:
    return {"grid2matrix": __version__, **library_versions(_VERSIONED)}


def task_folder(source: str, revision: str | None, root: Path) -> Path:
    """The installed task folder for the release; for any other data, a folder written for it under ``root``."""
    default = DataSource()
    if (source, revision) == (default.path, default.revision):
        return TASK_DIR
    data_source = DataSource.local(source) if revision is None else DataSource(source, revision)
    return write_folder(root, data_source)


