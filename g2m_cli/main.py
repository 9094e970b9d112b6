"""Parse arguments, run one command, and turn user-facing errors into one line.

Only ``G2MError`` (bad input, a missing file, a refused submission) is printed as ``g2m: error: ...``; any other
exception is a bug and keeps its traceback. A missing optional dependency names the extra of the command that needs
it; a full disk or a read-only folder is one line naming the path. Ctrl-C, SIGTERM and SIGHUP stop the command the
same way (what was received is saved, a server started for the run is stopped), say that nothing half-written was
left behind (every writer is atomic or resumable), and exit with 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
from collections.abc import Sequence

from dataset_builder import __version__
from g2m_base.errors import G2MError
from g2m_base.installs import install_hint
from g2m_base.untrusted import term
from g2m_cli import board, evaluate, probe, release, report, submit

#: Our own top-level packages: an ImportError naming one of them is a bug, not a missing dependency.
OWN_PACKAGES = frozenset({"g2m_base", "dataset_builder", "drawing", "scoring", "harness_tasks", "probing", "viewer",
                          "submission", "report", "audit", "leaderboard", "on_hub", "g2m_cli"})
#: OSErrors that are the machine's state, not a bug: shown as one line naming the path.
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})
COMMANDS = (release, evaluate, probe, report, submit, board)  # the order of `g2m --help`


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="g2m", description="Grid2Matrix: build, evaluate, probe and rank.")
    parser.add_argument("--version", action="version", version=f"grid2matrix {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return parser


def _missing(error: ModuleNotFoundError, extra: str | None) -> int:
    package = (error.name or "").split(".")[0]  # `import lm_eval.api` failing names lm_eval.api; lm_eval is missing
    # the install that brings this module; the command's extra only when the module cannot be told
    where = (install_hint(package, extra) if package else f"pip install 'grid2matrix[{extra}]'" if extra
             else "pip install grid2matrix")
    print(f"g2m: error: this command needs {package!r}, which is not installed; install it with: {where}",
          file=sys.stderr)
    return 2


def _check_paths(args: argparse.Namespace) -> None:
    """An empty output path would mean "here" to the file system (a build into the current folder): refuse it."""
    from g2m_base.errors import UsageError

    for name in ("out", "output", "data", "run_dir", "submissions"):
        value = getattr(args, name, None)
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"--{name.replace('_', '-')} is empty; give a path")


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's KeyboardInterrupt, so the same clean-up runs:
    answers received are saved, a ``--serve`` server is stopped, nothing half-written is left."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum: int, frame) -> None:
    raise Stopped(signum)


def _deepest(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser: ``g2m eval``'s for ``g2m eval ...``, ``leaderboard build``'s for that one."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            return parser
        parser = subs[0].choices[name]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; one the command does not know is refused by that command's parser (its usage, not the
    top-level one), with the closest flag it has when there is one (``--taks``: did you mean ``--tasks``?)."""
    import difflib

    parser = make_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        own = _deepest(parser, args)
        flags = [o for a in own._actions for o in a.option_strings if o.startswith("--")]
        near = [m for x in extra if x.startswith("--")
                for m in difflib.get_close_matches(x.partition("=")[0], flags, n=1, cutoff=0.7)]
        # the hint first, in one line: argparse's own error would print the whole usage above it
        hint = f"did you mean {', '.join(dict.fromkeys(near))}? " if near else ""
        print(f"{own.prog}: error: {hint}unrecognized arguments: {' '.join(extra)} (all the options: "
              f"{own.prog} --help)", file=sys.stderr)
        raise SystemExit(2)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    for signum in (signal.SIGTERM, signal.SIGHUP):  # a scheduler's pre-emption, a closed terminal
        with contextlib.suppress(ValueError, OSError):  # not the main thread (a library caller): leave theirs
            signal.signal(signum, _stop)
    try:
        _check_paths(args)
        return int(args.func(args) or 0)
    except G2MError as e:
        print(f"g2m: error: {term(e, 2000)}", file=sys.stderr)  # messages may quote untrusted text
        return e.exit_code
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in OWN_PACKAGES:
            raise
        return _missing(e, getattr(args, "extra", None))
    except BrokenPipeError:  # `g2m ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        if e.errno not in ENVIRONMENT_ERRNOS:
            raise
        where = f"{e.filename}: " if e.filename else ""  # a full disk or a read-only mount: not a bug
        print(f"g2m: error: {term(where, 500)}{e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
        print(f"g2m: interrupted ({signal.Signals(signum).name}); what was finished is saved and nothing half-written "
              f"was "
              "left behind. Run the same command again to resume.", file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main())
