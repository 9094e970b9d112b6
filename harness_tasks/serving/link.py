"""The server a run talks to, and what it says it is.

A run reaches a server one of two ways. ``--base-url``: it is already running, and what it reports (``identity``:
the served model's id, root and context length, its version) is asked once, before the run. ``--serve``: g2m starts
``vllm serve``, but only when a request needs it: a rerun whose every answer is in the cache starts nothing (a
235B checkpoint takes minutes to load, for no request). Until it starts, the facts the run key uses are those the
same launch (executable, model, arguments) reported to the folder's earlier run, provided the executable file is the
one that run started (same size and modification time: an upgrade of vLLM rewrites it); otherwise the server is
started and asked at once. Once it starts, it is asked, and a server that reports something else (an upgraded vLLM,
another checkpoint behind the same path) gets a key of its own.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit, urlunsplit

from harness_tasks.serving.endpoints import check_listening
from harness_tasks.serving.identity import identity, server_facts
from harness_tasks.serving.launcher import Server, executable_stamp


class ServerLink:
    """``url``: the chat-completions endpoint; ``served_name``: the model it serves. ``server`` is the ``--serve``
    server to start on ``connect()`` (None for a running one), ``launch`` what it is started as, ``facts`` what the
    server reported (for a ``--serve`` server not started yet: what the same launch reported before, or None)."""

    def __init__(self, url: str, served_name: str, server: Server | None = None, launch: dict | None = None,
                 facts: dict | None = None) -> None:
        self.url, self.served_name, self.server, self.launch = url, served_name, server, launch
        self.facts = facts
        self.started = False
        self.asked = False  # facts come from this server, now (not from an earlier run)

    @classmethod
    def running(cls, url: str, served_name: str) -> ServerLink:
        """A server that is already running (``--base-url``): asked what it is at once."""
        check_listening(url)  # nothing there: one line now, not failed requests after their retries
        link = cls(url, served_name)
        link.connect()
        return link

    @property
    def ready(self) -> bool:
        """The server is running and has been asked what it is."""
        return self.asked

    def connect(self) -> dict:
        """Start the server if it is ours and not started, ask it what it is; returns its facts."""
        if self.server is not None and not self.started:
            self.server.__enter__()
            self.started = True
        if not self.asked:
            self.facts = server_facts(self.url, self.served_name)
            self.asked = True
        return self.facts

    def identity(self) -> dict | None:
        return identity(self.facts)

    def provenance(self) -> dict:
        """What ``provenance.server`` records: what the server reported (never a version nobody reported), how it
        was reached, and, for ``--serve``, what it was started as and whether this run started it at all."""
        parts = urlsplit(self.url)
        url = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))  # never a password in a results file
        out = {**(self.facts or {}), "url": url, "served_name": self.served_name}
        if self.server is not None:
            out["launch"] = self.launch
            out["executable_stamp"] = executable_stamp(self.launch["executable"])
            out["started"] = self.started
            if not self.asked:
                out["note"] = ("not started: every answer was in the cache; the facts above are what the same launch "
                               "reported to an earlier run")
        return out

    def close(self) -> None:
        if self.started:
            self.server.stop()

    def skipped(self, key: str) -> None:
        """Say that a ``--serve`` server was not started because the cache held every answer."""
        if self.server is not None and not self.started:
            print(f"g2m: every answer is in the cache (run key {key}): vllm serve was not started", file=sys.stderr)
