"""The flags every ``g2m`` command spells the same way: ``--data``, ``--out``, ``--quiet`` and ``--timeout``; and the
one check of a bounded number (``check_int``, ``check_number``) every option and setting uses, with one form of
refusal.

Each flag is added by one function with one help text, so ``g2m build``, ``eval``, ``probe`` and the rest read alike.
Earlier spellings stay as hidden aliases (``g2m eval --output``, ``--no-progress``), so nothing a user typed breaks.
"""

from __future__ import annotations

import argparse
import math

from g2m_base.errors import UsageError

DATA_HELP = "a local build (g2m build --out DIR) instead of the Hub release at its pinned revision"


def add_data(parser: argparse.ArgumentParser, help: str = DATA_HELP) -> None:
    parser.add_argument("--data", default=None, metavar="DIR", help=help)


def add_out(parser: argparse.ArgumentParser, help: str, default: str | None = None, required: bool = False,
            aliases: tuple[str, ...] = ()) -> None:
    parser.add_argument("--out", default=default, required=required, help=help)
    for alias in aliases:
        parser.add_argument(alias, dest="out", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _seconds(text: str) -> float:
    """A number; its range is checked where it is used (``errors.check_timeout``), for library callers too."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds, got {text!r}") from None


def add_timeout(parser: argparse.ArgumentParser, default: float) -> None:
    """``--timeout``: how long a command that talks to the Hub waits for a connection and for each answer."""
    parser.add_argument("--timeout", type=_seconds, default=default,
                        help=f"seconds to wait for a connection and for each answer of the Hub (default {default:g})")


def add_quiet(parser: argparse.ArgumentParser, aliases: tuple[str, ...] = ()) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    for alias in aliases:
        parser.add_argument(alias, dest="quiet", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _shown(value: object, limit: int = 40) -> str:
    """``value`` as a refusal shows it: its repr, at most ``limit`` characters (a hostile config's value may be
    huge)."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's digit limit
        text = "an integer of thousands of digits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _end(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def check_int(name: str, value: object, low: int, high: int | None = None, error: type[Exception] = UsageError) -> int:
    """``value`` when it is an integer (a bool is not) from ``low`` to ``high`` (no upper end when None); else
    ``error`` in the one form every option check uses: ``NAME must be an integer from LOW to HIGH, got VALUE`` (or
    ``... of at least LOW, ...``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"of at least {low:,}" if high is None else f"from {low:,} to {high:,}"
        raise error(f"{name} must be an integer {bounds}, got {_shown(value)}")
    return value


def check_number(name: str, value: object, low: float, high: float, low_open: bool = False, high_open: bool = False,
                 error: type[Exception] = UsageError) -> float:
    """``value`` when it is a finite number (a bool is not) in the interval from ``low`` to ``high`` (each end open
    or closed); else ``error``: ``NAME must be a finite number in (LOW, HIGH], got VALUE``."""
    ok = (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
          and (low < value if low_open else low <= value) and (value < high if high_open else value <= high))
    if not ok:  # NaN fails every comparison, so it is refused by this form of the test
        raise error(f"{name} must be a finite number in {'(' if low_open else '['}{_end(low)}, {_end(high)}"
                    f"{')' if high_open else ']'}, got {_shown(value)}")
    return value


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with each option's default, said once: not when the help text already says it, and not for an
    option whose default is nothing (None, False, an empty string)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, "", argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def check_repo_id(flag: str, repo_id: str) -> str:
    """A Hub repository named ORG/NAME, as ``flag`` takes it (a push's, a sync's, a Space's)."""
    parts = repo_id.split("/") if isinstance(repo_id, str) else []
    if len(parts) != 2 or not all(parts) or any(p in (".", "..") for p in parts):
        raise UsageError(f"{flag} must look like ORG/NAME, got {repo_id!r}")
    return repo_id
