"""The one family of user-facing errors.

``g2m`` prints any ``G2MError`` as one line and exits non-zero; every other exception is a bug and keeps its
traceback. Errors about bad values also subclass ``ValueError`` (and missing files ``FileNotFoundError``), so library
callers can catch them the usual way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


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


# -- the Hub's failures ----------------------------------------------------------------------------------------------
# ``huggingface_hub``'s HTTP client waits forever by default; a command that pushes a release, syncs the board's pull
# requests or publishes its site must instead give up after ``timeout`` seconds without a connection or an answer,
# and say in one line what failed (``hub_failure``): offline mode, a refused or dropped connection, an HTTP error, no
# answer. Any other exception stays a bug.

class HubError(BuildError):
    """The Hub (or what stands at HF_ENDPOINT) could not be reached or refused a request: not the user's input."""

    exit_code = 1


def check_timeout(timeout: float) -> float:
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout < float("inf"):
        raise UsageError(f"--timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


@contextlib.contextmanager
def hub_timeouts(timeout: float) -> Iterator[None]:
    """Every request huggingface_hub makes in this block gives up after ``timeout`` seconds without a connection or
    without an answer (its own default client has no timeout at all)."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    def factory():
        client = default_client_factory()  # the library's own client, event hooks (offline mode) included
        client.timeout = httpx2.Timeout(timeout)
        return client

    set_client_factory(factory)
    try:
        yield
    finally:
        set_client_factory(default_client_factory)


@contextlib.contextmanager
def quiet_hub() -> Iterator[None]:
    """No progress bars in a log (they would bury the one line that says what failed), no "Retrying in 1s"
    warnings (the outcome is said in one line), and no warning of the library's own on stderr, whatever ``HF_HUB_*``
    says: bars switched off are switched back on only when this block switched them off (turning them on while
    ``HF_HUB_DISABLE_PROGRESS_BARS=1`` is set warns "Cannot enable progress bars")."""
    import warnings

    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars, logging

    switched = not sys.stderr.isatty() and not are_progress_bars_disabled()
    if switched:
        disable_progress_bars()
    verbosity = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"huggingface_hub(\.|$)")
            yield
    finally:
        if switched:
            enable_progress_bars()
        logging.set_verbosity(verbosity)


def hub_failure(error: BaseException, endpoint: str, timeout: float, offline_hint: str = "unset it") -> str | None:
    """One line for the first failure in ``error``'s chain that is the Hub's, not a bug; None when there is none."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OfflineModeIsEnabled):
            return f"offline mode is on (HF_HUB_OFFLINE=1); {offline_hint}"
        if isinstance(seen, HfHubHTTPError):
            status = seen.response.status_code if seen.response is not None else "?"
            text = str(seen).splitlines()[0] if str(seen) else type(seen).__name__
            return f"{endpoint} answered HTTP {status}: {text[:300]}"
        if isinstance(seen, httpx2.TimeoutException):
            return f"no answer from {endpoint} within {timeout:g} s (--timeout)"
        if isinstance(seen, httpx2.ConnectError):
            return f"could not connect to {endpoint} ({str(seen)[:200] or 'connection refused'})"
        if isinstance(seen, (httpx2.TransportError, ConnectionError)):
            return f"the connection to {endpoint} was dropped ({type(seen).__name__}: {str(seen)[:200]})"
        seen = seen.__cause__ or seen.__context__
    return None


@contextlib.contextmanager
def hub_session(api, timeout: float, failed: Callable[[str], str], offline_hint: str = "unset it") -> Iterator[None]:
    """The block's calls to the Hub with ``timeout`` on each and no progress bars or retry warnings
    (``hub_timeouts``, ``quiet_hub``); a failure of the Hub becomes ``HubError(failed(why))``, one line (``failed``
    is called then, so it can name the stage the block had reached). Our own errors pass through as they are, and any
    other exception stays a bug."""
    try:
        with quiet_hub(), hub_timeouts(timeout):
            yield
    except G2MError:
        raise
    except Exception as e:
        why = hub_failure(e, getattr(api, "endpoint", "the Hub"), timeout, offline_hint)
        if why is None:
            raise
        raise HubError(failed(why)) from None
