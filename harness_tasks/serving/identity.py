"""What a server says it is: the served model's id, root and context length (``GET /v1/models``) and its version
(``GET /version``), as it reports them.

These facts join the run key (``evaluation.run_key``: answers cached from one server are never served as another's)
and the results (``provenance.server``). Only what the server reported is recorded: a field it does not send stays
``None``, and nothing from g2m's own environment (its transformers or vllm, say) stands in for it. vLLM answers both
endpoints (``/version``: ``{"version": "0.32.0"}``; ``/v1/models``: ``id``, ``root``, ``max_model_len``); other
servers may answer neither.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from g2m_base.bounded_json import Rejected, loads
from harness_tasks.serving.endpoints import models_url

#: A models list or a version answer is a few hundred bytes; a body over this is not one.
MAX_FACTS_BYTES = 1 << 20
#: The fields of a ``/v1/models`` entry that identify what answers (``id``: the name it answers to; ``root``: the
#: checkpoint it loaded; ``max_model_len``: its context).
MODEL_FIELDS = ("id", "root", "max_model_len")


def _get(url: str, timeout: float) -> object | None:
    """The JSON at ``url``, or None when the server does not answer it with a small, well-formed document."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310  (the run's own server)
            raw = resp.read(MAX_FACTS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if len(raw) > MAX_FACTS_BYTES:
        return None
    try:
        return loads(raw, url)
    except Rejected:
        return None


def _scalar(value: object) -> str | int | None:
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def server_facts(base_url: str, served_name: str | None, timeout: float = 10.0) -> dict:
    """What the server at ``base_url`` reports about itself and the model ``served_name``.

    ``id``, ``root`` and ``max_model_len`` come from the ``/v1/models`` entry of that model (the only entry when the
    server lists one); ``version`` from ``/version``. Each is ``None`` when the server does not report it.
    """
    listed = _get(models_url(base_url), timeout)
    entries = [e for e in (listed.get("data") if isinstance(listed, dict) else None) or [] if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == served_name), entries[0] if len(entries) == 1 else {})
    version = _get(models_url(base_url)[: -len("/v1/models")] + "/version", timeout)
    facts = {k: _scalar(entry.get(k)) for k in MODEL_FIELDS}
    facts["version"] = _scalar(version.get("version")) if isinstance(version, dict) else None
    facts["reported_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return facts


def identity(facts: dict | None) -> dict | None:
    """The part of ``server_facts`` that names what answered (for the run key): everything but when it was asked."""
    if facts is None:
        return None
    return {k: facts.get(k) for k in (*MODEL_FIELDS, "version")}
