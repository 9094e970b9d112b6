"""Which of a submission's recorded settings change what its model saw or wrote, and how the replay honours each.

A replay that disagrees with a submission says the outputs are not the named model's only when it ran as the
submission did. So before anything runs, every setting the submission records is put into one of three kinds
(``plan``), each named in the audit record:

- **carried**: put into the replay as the submission ran it (its model arguments, when the replay runs the same
  backend; ``--no-chat-template``; the harness; its ``vllm serve`` arguments when the replay serves the model too;
  its revision and dtype as ``vllm serve`` flags);
- **unmet**: the replay cannot run it as the submission did (another backend, a server that takes no backend
  arguments, a value the maintainer set otherwise, a system instruction ``g2m eval`` never sends, a harness it
  does not run, another task version): the row stays *self-reported*, with the setting named, whatever the sample
  showed;
- **unconfirmed**: a running server (``--base-url``) may or may not hold it (its dtype, its own processor sizes):
  a sample that agrees still reproduces the row (the named weights wrote those answers), but one that disagrees
  refutes nothing; the row stays self-reported.

docs/maintainers/audit.md lists the settings and what happens to each.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace

from audit.replay import Access
from harness_tasks import CHAT, NAME_KEYS, TRANSPORT_ARGS, ModelArgs
from scoring.catalog import TASK_VERSION
from submission.run_metadata import LOCAL_FOLDER, PRIVATE_URL

#: Model arguments that say where or how the model runs, not what it computes: never carried, never held against
#: a replay (the checkpoint itself is the maintainer's ``{model}``, checked by id).
PLACEMENT_ARGS = frozenset({*NAME_KEYS, *TRANSPORT_ARGS, "device", "device_map", "batch_size", "max_batch_size",
                            "parallelize", "max_memory_per_gpu", "max_cpu_memory", "offload_folder",
                            "trust_remote_code", "num_concurrent"})
#: ``vllm serve`` flags that say where or how fast the model runs, not what it answers.
PLACEMENT_FLAGS = frozenset({"--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "-pp",
                             "--data-parallel-size", "-dp", "--gpu-memory-utilization", "--max-num-seqs",
                             "--max-num-batched-tokens", "--swap-space", "--cpu-offload-gb",
                             "--distributed-executor-backend", "--disable-log-requests", "--disable-log-stats",
                             "--uvicorn-log-level", "--api-key", "--served-model-name", "--enable-prefix-caching",
                             "--no-enable-prefix-caching", "--nnodes", "--node-rank", "--headless",
                             "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-size-local",
                             "--download-dir"})
#: The harnesses ``g2m eval`` runs: a submission made with another (VLMEvalKit) built its requests its own way.
REPLAYED_HARNESSES = ("lm-eval", "lmms-eval", "inspect")
_HIDDEN = (LOCAL_FOLDER, PRIVATE_URL)


@dataclass(frozen=True)
class Plan:
    """How one submission is replayed: the access with its settings carried in, and what could not be."""

    access: Access
    chat_template: bool = True
    harness: str = "lm-eval"
    carried: tuple[str, ...] = ()
    unmet: tuple[str, ...] = ()
    unconfirmed: tuple[str, ...] = ()

    def shown(self) -> dict:
        return {"carried": list(self.carried), "unmet": list(self.unmet), "unconfirmed": list(self.unconfirmed)}


def _flags(words: list[str]) -> dict[str, str | None]:
    """``--flag value`` / ``--flag=value`` / a bare ``--flag`` of a command line, by flag (the first of each)."""
    out: dict[str, str | None] = {}
    for i, w in enumerate(words):
        if not w.startswith("-"):
            continue
        name, eq, value = w.partition("=")
        if not eq:
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else None
        out.setdefault(name, value)
    return out


def _words(args: list[str]) -> list[tuple[str, list[str]]]:
    """A command line cut into (flag, the words that are it and its value)."""
    out: list[tuple[str, list[str]]] = []
    for w in args:
        if w.startswith("-") or not out:
            out.append((w.partition("=")[0], [w]))
        else:
            out[-1][1].append(w)
    return out


@dataclass
class _Found:
    """What ``plan`` finds, setting by setting."""

    carried: list[str] = field(default_factory=list)
    unmet: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)
    serve_flags: list[str] = field(default_factory=list)  # what a --serve replay passes on to vllm serve


def plan(meta: dict, access: Access) -> Plan:
    """The replay of the submission ``meta`` through ``access`` (``{model}`` already filled in)."""
    model, gen = meta.get("model") or {}, meta.get("generation") or {}
    found = _Found()
    args = _model_args(model, access, found)
    _server_args(gen, access, found)
    have = _flags(shlex.split(access.serve_args or ""))
    extra = [(f, ws) for f, ws in _words(found.serve_flags) if f not in have]
    serve_args = access.serve_args
    if access.serve and extra:
        found.carried += [f"{' '.join(ws)} (vllm serve)" for _, ws in extra]
        serve_args = " ".join([*(shlex.quote(w) for _, ws in extra for w in ws), access.serve_args]).strip()
    chat = gen.get("chat_template") is not False
    if not chat:
        found.carried.append("no chat template (--no-chat-template)")
    harness = _harness(gen, access, found)
    if gen.get("system_instruction_sha"):
        found.unmet.append(f"a system instruction (sha256 {str(gen['system_instruction_sha'])[:12]}), which g2m eval "
                           "never sends")
    version = gen.get("task_version")
    if version is not None and version != TASK_VERSION:
        found.unmet.append(f"task version {version}, where this g2m runs {TASK_VERSION} (its prompt or budgets may "
                           "differ)")
    return Plan(replace(access, model_args=str(args), serve_args=serve_args), chat, harness, tuple(found.carried),
                tuple(found.unmet), tuple(found.unconfirmed))


def _model_args(model: dict, access: Access, found: _Found) -> ModelArgs:
    """The replay's model arguments: the maintainer's, with each of the submission's that changes the answers carried
    in where the replay runs the same backend; elsewhere named (or, for ``--serve``, its dtype and revision passed
    as vllm serve flags)."""
    backend, theirs = access.model or CHAT, model.get("backend")
    args = ModelArgs.parse(access.model_args)
    have = _flags(shlex.split(access.serve_args or ""))
    mine = {k: v for k, v in ModelArgs.parse(model.get("model_args")).as_dict().items() if k not in PLACEMENT_ARGS}
    for k, v in mine.items():
        piece = f"{k}={v}"
        if backend == theirs:
            given = args.get(k)
            if given is None and v in _HIDDEN:
                found.unmet.append(f"{k} (a model argument) was {v} on the submitter's machine, which the replay "
                                   "cannot reach")
            elif given is None:
                args = ModelArgs((*args.pieces, piece))
                found.carried.append(f"{piece} (a model argument)")
            elif given != v:
                found.unmet.append(f"the submission ran {piece}; the replay was given {k}={given}")
        elif access.serve and k in ("dtype", "revision"):
            if have.get(f"--{k}", v) != v:
                found.unmet.append(f"the submission ran {piece}; the replay's server was given --{k} "
                                   f"{have[f'--{k}']}")
            found.serve_flags += [f"--{k}", v]  # the same setting, as vllm serve spells it
        elif access.base_url:
            found.unconfirmed.append(f"{piece} (a model argument of {theirs}: a running server's own setting is not "
                                     "known)")
        else:
            found.unmet.append(f"{piece} is a model argument of {theirs}, which the replay through "
                               f"{'vllm serve' if access.serve else backend} cannot take")
    return args


def _server_args(gen: dict, access: Access, found: _Found) -> None:
    """The submission's ``vllm serve`` arguments that change the answers: passed on by a replay that serves the model
    too, unless the maintainer set them otherwise; named elsewhere."""
    have = _flags(shlex.split(access.serve_args or ""))
    for flag, words in _words([str(a) for a in gen.get("serve_args") or []]):
        if flag in PLACEMENT_FLAGS:
            continue
        shown = " ".join(words)
        if access.serve and flag in have and _flags(words)[flag] != have[flag]:
            found.unmet.append(f"the submission's server ran {shown}; the replay's was given {flag} {have[flag]}")
        elif access.serve and any(w in _HIDDEN for w in words):
            found.unmet.append(f"the submission's server ran {shown}, a path the replay cannot reach")
        elif access.serve:
            found.serve_flags += words
        elif access.base_url:
            found.unconfirmed.append(f"the submission's server ran {shown}: a running server's own setting is not "
                                     "known")
        else:
            found.unmet.append(f"the submission's server ran {shown}, which a replay in-process cannot take")


def _harness(gen: dict, access: Access, found: _Found) -> str:
    """The harness the replay runs: the submission's where ``g2m eval`` runs it through the access given."""
    harness = gen.get("harness") or "lm-eval"
    if harness not in REPLAYED_HARNESSES:
        found.unmet.append(f"the outputs were made with {harness}, which builds its own requests; g2m eval does not "
                           "run it")
        return "lm-eval"
    if harness != "lm-eval" and not (access.serve or access.base_url):
        found.unmet.append(f"the outputs were made with {harness}; a replay in-process runs lm-eval")
        return "lm-eval"
    if harness != "lm-eval":
        found.carried.append(f"the {harness} harness")
    return harness
