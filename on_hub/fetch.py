"""One file of a Hub revision, downloaded within the command's ``--timeout``.

``hf_hub_download`` cannot be bounded by the caller: it asks for the file's metadata with its own 10 s timeout, and
when that gets no answer asks again with 60 s, retried five times with back-off (about six minutes against a Hub
that accepts a connection and never answers), and reads the file with ``HF_HUB_DOWNLOAD_TIMEOUT``. The board reads
a few small files (submissions of at most 64 MiB, audit records) at revisions it names by commit, so it needs no
cache, no metadata call and no retry: one streamed GET of the file's ``resolve`` URL through huggingface_hub's own
client (its headers, token, offline mode and errors), every wait bounded by ``timeout`` (``errors.hub_timeouts``),
written whole or not at all. A failure is the Hub's and ends the command in one line (``errors.hub_session``); the
next run tries again.
"""

from __future__ import annotations

from pathlib import Path

from g2m_base.files import atomic_open

_CHUNK = 1 << 20


def download(api, repo_id: str, path: str, revision: str, dest: Path, timeout: float,
             max_bytes: int | None = None) -> Path:
    """``path`` of the dataset repository ``repo_id`` at ``revision`` into ``dest``. ``max_bytes``: stop after one
    byte more than that (the reader that checks the file refuses it, in its own words, without it all on disk)."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    url = hf_hub_url(repo_id, path, repo_type="dataset", revision=revision, endpoint=api.endpoint)
    headers = build_hf_headers(token=api.token, library_name="grid2matrix")
    with get_session().stream("GET", url, headers=headers, timeout=timeout, follow_redirects=True) as response:
        hf_raise_for_status(response)
        with atomic_open(dest, "wb") as out:
            written = 0
            for chunk in response.iter_bytes(_CHUNK):
                out.write(chunk)
                written += len(chunk)
                if max_bytes is not None and written > max_bytes:
                    break
    return dest
