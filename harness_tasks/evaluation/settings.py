"""What a ``g2m eval`` run is, settled once before anything runs.

``EvalSpec`` is what the user asked for, validated on construction. ``resolve`` turns it into a ``Target``: the
backend, the user's model arguments (parsed once, ``ModelArgs``), the server's chat endpoint and the one model it
serves (looked up once), and the run's display name. ``harness_tasks.evaluate`` then hands the target to exactly one
harness driver (``with_lm_eval``, ``with_lmms_eval``, ``with_inspect``), each of which turns it into its harness's
own arguments, runs, and writes the run folder. Also here: the package versions of g2m's own environment (the
client's; a server's are what it reports, ``serving.identity``). The identity of a run's answers and the name of its
folder are in ``run_key``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dataset_builder import __version__
from dataset_builder.release.provenance import library_versions
from g2m_base.errors import UsageError
from g2m_base.flags import check_int
from harness_tasks.serving.endpoints import chat_url, served_model
from harness_tasks.serving.launcher import find_vllm
from harness_tasks.serving.link import ServerLink
from scoring.catalog import all_tasks, tags
from scoring.runs.model_args import NAME_KEYS, ModelArgs, model_name
from scoring.score import PROTOCOLS

BASELINES = ("g2m-oracle", "g2m-random")
CHAT = "g2m-chat"
HARNESSES = ("lm-eval", "lmms-eval", "inspect")
#: The package extra (or setup) each harness needs.
HARNESS_EXTRAS = {"lm-eval": "harness", "lmms-eval": "lmms-eval", "inspect": "inspect"}
#: The subpackage whose ``driver`` runs each harness.
DRIVERS = {"lm-eval": "with_lm_eval", "lmms-eval": "with_lmms_eval", "inspect": "with_inspect"}
_VERSIONED = ("lm_eval", "datasets", "transformers", "torch", "vllm", "numpy", "pillow", "huggingface_hub", "aiohttp")


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
    vllm: str | None = None  # the vllm executable --serve starts (default: $G2M_VLLM, else vllm on PATH)
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
            if value is not None:
                check_int(name, value, low)
        if self.base_url:
            chat_url(self.base_url)  # a malformed URL fails here, before any data or model is loaded
        if self.data is not None and not Path(self.data).is_dir():
            raise UsageError(f"--data {self.data!r} is not a folder; build one with: g2m build --out DIR --configs "
                             f"zero_shot")
        if self.vllm and not self.serve:
            raise UsageError("--vllm names the vLLM that --serve starts: give --serve MODEL too")
        if self.serve:
            find_vllm(self.vllm)  # a vllm that is not there fails here, in one line, before any data is read

    @property
    def display_name(self) -> str:
        return self.serve or model_name(self.model, self.model_args)


@dataclass(frozen=True)
class Target:
    """The model a run talks to, resolved once: through a server (``url`` and the ``served_name`` it serves) or the
    harness's own ``backend``. ``args`` are the user's model arguments; ``served`` records how a ``--serve`` server was
    asked for, ``link`` reaches the server and holds what it reports (``serving.link``)."""

    backend: str
    args: ModelArgs
    display: str
    url: str | None = None  # the chat-completions endpoint
    served_name: str | None = None
    served: dict | None = None
    link: ServerLink | None = None

    @property
    def v1(self) -> str | None:
        """The server's ``.../v1`` base, as OpenAI clients take it."""
        return self.url[: -len("/chat/completions")] if self.url else None


def resolve(spec: EvalSpec, url: str | None = None, served_name: str | None = None,
            served: dict | None = None) -> Target:
    """The target of ``spec``; with a server, the model it serves is looked up here, once (``model=`` wins)."""
    args = ModelArgs.parse(spec.model_args)
    if url is None:
        return Target(spec.model, args, spec.serve or args.name(spec.model, ("model_version", *NAME_KEYS)))
    name = args.get("model") or served_name or served_model(url)
    return Target(spec.model, args, spec.serve or name, url, name, served)


def versions() -> dict:
    """The versions of g2m's own environment (the client): never a server's."""
    return {"grid2matrix": __version__, **library_versions(_VERSIONED)}
