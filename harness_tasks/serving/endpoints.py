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


def served_models(base_url: str, headers: dict | None = None, timeout: float = 10) -> list[str]:
    """The model ids a server lists at ``/v1/models``."""
    import requests

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
