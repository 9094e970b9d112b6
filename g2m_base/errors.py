"""The one family of user-facing errors.

``g2m`` prints any ``G2MError`` as one line and exits non-zero; every other exception is a bug and keeps its
traceback. Errors about bad values also subclass ``ValueError`` (and missing files ``FileNotFoundError``), so library
callers can catch them the usual way.
"""

from __future__ import annotations


class G2MError(Exception):
    """A problem the user can fix (bad input, a missing file, a refused submission); shown in one line."""

    exit_code = 2


class UsageError(G2MError, ValueError):
    """A bad argument or configuration value."""


class DataNotFound(G2MError, FileNotFoundError):
    """A data folder or file that was named does not exist."""


class BuildError(G2MError, RuntimeError):
    """A problem with an output folder or its contents."""


class StorageError(G2MError, OSError):
    """The machine's storage failed under a command (a full disk, a read-only mount, a damaged file): neither a bug nor
    bad input, so it exits 1, as ``g2m`` does on such an ``OSError`` raised anywhere else."""

    exit_code = 1


class MissingDependency(G2MError, ImportError):
    """An optional dependency is not installed. The message is one line and ends with an install that brings it:
    ``hint`` as given, else the one ``g2m_base.installs`` knows for ``module``, else the package ``extra``."""

    def __init__(self, what: str, extra: str | None = None, *, module: str | None = None,
                 hint: str | None = None) -> None:
        from g2m_base.installs import PROJECT, install_hint, one_line

        if hint is None:
            hint = (install_hint(module) if module
                    else f"pip install '{PROJECT}[{extra}]'" if extra else f"pip install {PROJECT}")
        self.extra, self.module, self.hint = extra, module, hint
        super().__init__(f"{one_line(what)}; install it with: {hint}")


class HarnessError(G2MError, RuntimeError):
    """A harness ran but did not evaluate what was asked (no task found, no results, a crash)."""
