"""The flags every ``g2m`` command spells the same way: ``--data``, ``--out`` and ``--quiet``.

Each is added by one function with one help text, so ``g2m build``, ``eval``, ``probe`` and the rest read alike.
Earlier spellings stay as hidden aliases (``g2m eval --output``, ``--no-progress``), so nothing a user typed breaks.
"""

from __future__ import annotations

import argparse

DATA_HELP = "a local build (g2m build --out DIR) instead of the Hub release at its pinned revision"


def add_data(parser: argparse.ArgumentParser, help: str = DATA_HELP) -> None:
    parser.add_argument("--data", default=None, metavar="DIR", help=help)


def add_out(parser: argparse.ArgumentParser, help: str, default: str | None = None, required: bool = False,
            aliases: tuple[str, ...] = ()) -> None:
    parser.add_argument("--out", default=default, required=required, help=help)
    for alias in aliases:
        parser.add_argument(alias, dest="out", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_quiet(parser: argparse.ArgumentParser, aliases: tuple[str, ...] = ()) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    for alias in aliases:
        parser.add_argument(alias, dest="quiet", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
