"""What a submission says about the run behind it (``metadata``), from the run's results file: the model and its
arguments (secrets redacted), the data it read, the generation settings, and the versions of what answered.

Versions are claimed only for what they describe. An in-process run's answers came from g2m's own environment, so
its libraries (``g2m.versions``, lm-eval's ``transformers_version``) are the engine's. A served run's answers came
from a server: the client's libraries are kept apart (``versions.client``), the engine's are null, and what the
server reported about itself (``g2m.provenance.server``: version, served model id and root, context length) is
recorded as the server's (``server``), each fact null where the server did not report it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from dataset_builder import __version__
from harness_tasks import ModelArgs

_SECRET = re.compile(r"(?i)(api[_-]?key|token|secret|password)(=|\s+)[^,\s]*")


def redact(text: str) -> str:
    """``text`` with the value of every secret-looking setting replaced: ``api_key=...`` in model arguments and
    ``--api-key ...`` in a server's command line alike."""
    return _SECRET.sub(r"\1\2<redacted>", text)
def seen_settings(results: dict) -> dict:
    """The run's settings beyond its model arguments and budgets that change what the model saw or wrote, so that an
    audit can replay them (``audit.honour``): whether a chat template was applied (None where the run
    does not say), the sha256 of a system instruction (lm-eval's ``--system_instruction``), the harness that made
    the requests, and the ``vllm serve`` arguments of a ``--serve`` run (host and port left out, secrets redacted)."""
    g2m = results.get("g2m") if isinstance(results.get("g2m"), dict) else {}
    chosen = g2m.get("settings") if isinstance(g2m.get("settings"), dict) else None
    if chosen is not None:
        applied = chosen.get("chat_template") is not False
    else:  # a run g2m did not make: lm-eval records the template it applied, and nothing when it applied none
        applied = True if isinstance(results.get("chat_template"), str) else None
    serve_args = chosen.get("serve_args") if chosen else None
    harness = g2m.get("harness") or ("lm-eval" if results.get("lm_eval_version") else None)
    return {"chat_template": applied, "system_instruction_sha": results.get("system_instruction_sha") or None,
            "harness": harness if isinstance(harness, str) else None,
            "serve_args": redact_args(serve_args) if isinstance(serve_args, list) else []}


def redact_args(args: list) -> list[str]:
    """A command line (a list of words) with the value of every secret-looking flag replaced, in either spelling
    (``--api-key=K`` and ``--api-key K``)."""
    out: list[str] = []
    for a in map(str, args):
        secret_before = bool(out) and _SECRET.fullmatch(out[-1].lstrip("-") + "=") is not None
        out.append("<redacted>" if secret_before and not a.startswith("-") else redact(a))
    return out


#: What a submission records of what a server reported about itself (``g2m.provenance.server``), and when.
SERVER_FACTS = ("version", "id", "root", "max_model_len", "reported_at")


def _version(results: dict, name: str) -> str | None:
    return (results.get("g2m", {}).get("versions") or {}).get(name)


def _served(results: dict) -> bool:
    """The run's answers came from a server (``--serve``, ``--base-url`` or any API backend): the versions of g2m's
    own environment are the client's, not those of what answered."""
    g2m = results.get("g2m") or {}
    provenance = g2m.get("provenance") if isinstance(g2m.get("provenance"), dict) else {}
    args = ModelArgs.parse((results.get("config") or {}).get("model_args"))
    return isinstance(provenance.get("server"), dict) or bool(g2m.get("served_by")) or bool(args.get("base_url"))


def server_facts(results: dict) -> dict | None:
    """What the server said about itself (``g2m.provenance.server``: its version, the served model's id, root and
    context length, when it was asked), as the server's; None for an in-process run. A served run that recorded
    nothing the server reported gives ``reported: false`` and every fact null: no version is claimed for it."""
    if not _served(results):
        return None
    provenance = (results.get("g2m") or {}).get("provenance")
    server = provenance.get("server") if isinstance(provenance, dict) else None
    server = server if isinstance(server, dict) else {}
    facts = {k: server.get(k) if isinstance(server.get(k), (str, int, float)) and not isinstance(server.get(k), bool)
             else None for k in SERVER_FACTS}
    return {"reported": any(facts[k] is not None for k in SERVER_FACTS[:-1]), **facts}


def metadata_from_run(results: dict, model: str) -> dict:
    """A submission's metadata from the run's results file. Versions are what the run recorded of what made the
    answers: for an in-process run, g2m's own environment (``g2m.versions``, lm-eval's ``transformers_version``);
    for a served run, only what the server reported (``server``), g2m's environment kept apart as the client's."""
    cfg = results.get("config", {})
    parsed = ModelArgs.parse(cfg.get("model_args"))
    args = redact(str(parsed))
    data = results.get("g2m", {}).get("data", {})
    configs = results.get("configs", {})
    budgets = {t: c.get("generation_kwargs", {}).get("max_gen_toks") for t, c in sorted(configs.items())}
    date = results.get("date")
    harness = results.get("g2m", {}).get("harness")
    extra = {"vlmevalkit": _version(results, "vlmevalkit")} if harness == "vlmevalkit" else {}
    server = server_facts(results)
    engine = {"transformers": results.get("transformers_version") or _version(results, "transformers"),
              "vllm": _version(results, "vllm"), "torch": _version(results, "torch")}
    versions = {"grid2matrix": _version(results, "grid2matrix"), "lm_eval": results.get("lm_eval_version"),
                "submitted_with": __version__, **extra}
    if server is None:
        versions.update(engine)
    else:  # the client's libraries did not answer: never shown as the engine's
        versions.update({k: None for k in engine}, client={k: v for k, v in engine.items() if v is not None})
    return {
        "model": {"id": model, "revision": parsed.get("revision") or None, "backend": cfg.get("model"),
                  "model_args": args},
        "versions": versions,
        "server": server,
        "dataset": {"source": data.get("source"), "revision": data.get("revision"),
                    "manifest_sha256": data.get("manifest_sha256"), "content_sha256": data.get("content_sha256")},
        "generation": {"task_version": results.get("g2m", {}).get("task_version"), "gen_kwargs": cfg.get("gen_kwargs"),
                       "chat_template_sha": results.get("chat_template_sha"), "max_gen_toks": budgets,
                       **seen_settings(results)},
        "date": datetime.fromtimestamp(float(date), UTC).isoformat() if isinstance(date, (int, float)) else date,
    }


#: What a public page shows instead of a path or address on the submitter's machine or network.
LOCAL_BUILD, PRIVATE_URL, LOCAL_FOLDER = "a local build", "(a private address)", "(a local folder)"


def _private_host(host: str) -> bool:
    """Loopback, private, link-local or unqualified (``gpu-node-3``, ``localhost``): an address only the submitter
    can reach, which says nothing to a reader and something about the submitter's network."""
    import ipaddress

    host = host.strip("[]").lower()
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host or host.endswith((".local", ".internal", ".lan", ".localdomain"))
    return ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_unspecified


def _local_path(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("/", "~", "./", "../", "file:"))


def public_value(value: object) -> object:
    """A path on the submitter's machine, or a URL of a private host, reduced to what it is."""
    from urllib.parse import urlsplit

    if _local_path(value):
        return LOCAL_FOLDER
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        try:
            host = urlsplit(value).hostname or ""
        except ValueError:
            return PRIVATE_URL
        return PRIVATE_URL if _private_host(host) else value
    return value


def public(meta: dict) -> dict:
    """``meta`` as a public page may show it: the data's local path becomes "a local build" (its content and manifest
    hashes say which), and every model argument or server fact that is a local path or a private address is
    reduced to what it is. Nothing else changes; the model's id is its name, as submitted."""
    import copy

    out = copy.deepcopy(meta)
    dataset = out.get("dataset")
    if isinstance(dataset, dict) and _local_path(dataset.get("source")):
        dataset["source"] = LOCAL_BUILD
    model = out.get("model")
    if isinstance(model, dict) and isinstance(model.get("model_args"), str):
        pieces = ModelArgs.parse(model["model_args"]).pieces
        model["model_args"] = ",".join(f"{k}={public_value(v)}" if sep else piece
                                       for piece in pieces for k, sep, v in [piece.partition("=")])
    generation = out.get("generation")
    if isinstance(generation, dict) and isinstance(generation.get("serve_args"), list):
        generation["serve_args"] = [public_value(a) for a in generation["serve_args"]]
    server = out.get("server")
    if isinstance(server, dict):
        for k in ("root", "id"):
            server[k] = public_value(server.get(k))
    return out
