"""A model name (``g2m probe --encoder``, ``g2m probe sweep --encoder``, ``g2m eval --model-args pretrained=``)
checked before anything loads it, so that a mistyped one fails at once, in one line.

transformers reads any name that is not a folder as a Hub id and asks the Hub for it; huggingface_hub retries a
failed connection five times with a backoff (1 + 2 + 4 + 8 + 8 s), and the error it ends with is several lines. So:

- an existing folder is a local model: nothing else is asked;
- a name that is neither a folder nor a Hub model id (``ORG/NAME``, huggingface_hub's ``validate_repo_id`` rules)
  is refused at once: ``no folder demo-encodr here, and it is not a Hub model id (ORG/NAME)``;
- with ``HF_HUB_OFFLINE=1`` a Hub id is looked up in the local cache only (no network at all): one that is not
  there is refused at once;
- otherwise the Hub is asked once (``model_info``, one request, ``HUB_TIMEOUT`` seconds, no retries): an unknown
  model, an unknown revision or an unreachable Hub (its host named) is one line, before transformers' own retries.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from urllib.parse import urlsplit

from g2m_base.errors import HubError, UsageError
from g2m_base.installs import one_line

#: Seconds to wait for the Hub's answer about a model (one request, never retried).
HUB_TIMEOUT = 10.0
_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set, as huggingface_hub reads it."""
    from huggingface_hub import constants

    env = (os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or "").upper()
    return bool(constants.HF_HUB_OFFLINE) or env in _TRUE


def _cached(name: str, revision: str | None) -> bool:
    """``name``'s config.json is in the local Hugging Face cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json", revision=revision), str)
    except (ValueError, OSError):
        return False


def _is_hub_id(name: str) -> bool:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def check_model_name(name: str, revision: str | None = None) -> str:
    """``"folder"`` for a local model folder, ``"hub"`` for a Hub model that can be loaded; anything else raises
    ``UsageError`` (a name that cannot be a model) or ``HubError`` (the Hub cannot say), one line each."""
    name = str(name)
    path = Path(name).expanduser()
    if path.is_dir():
        return "folder"
    if path.exists():
        raise UsageError(f"{name} is a file, not a folder: a local model is a folder holding config.json")
    return _check_hub(name, revision, hub_offline())


@functools.lru_cache(maxsize=32)
def _check_hub(name: str, revision: str | None, offline: bool) -> str:
    looks_local = name.startswith(("/", "./", "../", "~", ".\\")) or "\\" in name
    hub_id = not looks_local and _is_hub_id(name) and (name.count("/") == 1 or _cached(name, revision))
    if not hub_id:
        why = " (it does not exist)" if looks_local else ", and it is not a Hub model id (ORG/NAME)"
        raise UsageError(f"no folder {name} here{why}")
    at = f"@{revision}" if revision else ""
    if offline:
        if _cached(name, revision):
            return "hub"
        raise UsageError(f"{name}{at} is not a folder here and the Hub is offline (HF_HUB_OFFLINE=1): not in the "
                         "local cache")
    return _ask_hub(name, revision, at)


def _ask_hub(name: str, revision: str | None, at: str) -> str:
    import httpx2
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    from g2m_base.errors import quiet_hub

    host = urlsplit(constants.ENDPOINT).netloc or constants.ENDPOINT
    try:
        with quiet_hub():
            HfApi(endpoint=constants.ENDPOINT).model_info(name, revision=revision, timeout=HUB_TIMEOUT)
    except GatedRepoError:
        return "hub"  # there, behind an agreement: transformers says what to do with a token
    except RepositoryNotFoundError:
        raise UsageError(f"no folder {name} here, and no model {name} on the Hub ({host}; a private or gated one "
                         "needs `hf auth login`)") from None
    except RevisionNotFoundError:
        raise UsageError(f"the Hub model {name} has no revision {revision!r}") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else "?"
        raise HubError(f"{host} answered HTTP {status} when asked about the model {name}{at}") from None
    except httpx2.TimeoutException:
        raise HubError(f"{name}{at} is not a folder here and the Hub at {host} did not answer within "
                       f"{HUB_TIMEOUT:g} s: {_offline_hint(name, revision)}") from None
    except (httpx2.TransportError, OSError) as e:
        why = one_line(e)[:160] or type(e).__name__
        raise HubError(f"{name}{at} is not a folder here and the Hub at {host} cannot be reached ({why}): "
                       f"{_offline_hint(name, revision)}") from None
    return "hub"


def _offline_hint(name: str, revision: str | None) -> str:
    if _cached(name, revision):
        return "a copy is in the local cache: set HF_HUB_OFFLINE=1 to load it"
    return "check the network (or HF_ENDPOINT), or give a local folder"
