"""OpenAI-compatible server addresses: any spelling of a base URL to its chat-completions and models endpoints, and
the models a server lists. No harness import: ``EvalSpec`` checks a URL before anything is loaded."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from g2m_base.errors import UsageError


def chat_url(base_url: str) -> str:
    """``http://host:8000``, ``.../v1`` or ``.../v1/chat/completions``: the chat-completions endpoint."""
    parts = urlsplit(str(base_url).strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"base URL {base_url!r} is not an http(s) URL, e.g. http://localhost:8000/v1")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path if path.endswith("/v1") else path + "/v1") + "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def models_url(base_url: str) -> str:
    return chat_url(base_url)[: -len("/chat/completions")] + "/models"


def check_listening(base_url: str, timeout: float = 5) -> None:
    """Something accepts connections at the URL's host and port; otherwise one line saying nothing listens there (the
    fix is to start the server, or to correct ``--base-url``), before any request is sent or retried."""
    import socket

    parts = urlsplit(chat_url(base_url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as e:
        why = "connection refused" if isinstance(e, ConnectionRefusedError) else (
            f"no answer within {timeout:g} s" if isinstance(e, TimeoutError) else (e.strerror or type(e).__name__))
        raise UsageError(f"nothing listens at {parts.hostname}:{port} ({why}): start the server first (e.g. vllm "
                         f"serve MODEL --port {port}), or check --base-url") from None


def served_models(base_url: str, headers: dict | None = None, timeout: float = 10) -> list[str]:
    """The model ids a server lists at ``/v1/models``."""
    import requests

    check_listening(base_url, timeout)
    try:
        resp = requests.get(models_url(base_url), headers=headers or {}, timeout=timeout)
        resp.raise_for_status()
        return [str(m["id"]) for m in resp.json()["data"]]
    except (requests.RequestException, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"could not list the models served at {models_url(base_url)} ({type(e).__name__}: {e}); "
                         "name one with --model-args model=NAME") from None


def served_model(base_url: str, headers: dict | None = None) -> str:
    """The one model a server serves; a server with none or several needs ``model=NAME``, which the error says."""
    names = served_models(base_url, headers)
    if len(names) != 1:
        raise UsageError(f"{models_url(base_url)} serves {len(names)} models ({', '.join(names) or 'none'}); "
                         "name one with --model-args model=NAME")
    return names[0]
