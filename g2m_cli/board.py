"""``g2m leaderboard build`` and the board's other commands (``g2m audit``, ``g2m leaderboard audit``, ``sync``,
``publish``, ``cycle``, registered from ``g2m_cli.audit`` and ``g2m_cli.hub``): thin parsing over ``leaderboard``."""

from __future__ import annotations

import argparse
import sys

from g2m_base.flags import add_out, add_quiet
from g2m_base.untrusted import term
from g2m_cli import audit as audit_cli
from g2m_cli import hub as hub_cli


def _build(args: argparse.Namespace) -> int:
    from leaderboard.build import build_site

    res = build_site(args.submissions, args.out, progress=not args.quiet, hub=args.hub, hub_endpoint=args.hub_endpoint,
                     audits=args.audits)
    print(f"built {term(str(res.output_dir))}/index.html: {res.submissions} accepted submissions, "
          f"{len(res.rejected)} rejected, {res.rows} rows with the baselines; {res.scored} files scored, "
          f"{res.cached} rows from the cache")
    if res.hub is not None:
        print(f"the Hub's leaderboard: {term(res.hub.note, 1000)}")
    for r in res.rejected:
        print(f"rejected {term(r['file'])}: {term(r['reason'], 1000)}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="build the static leaderboard site")
    lsub = p.add_subparsers(dest="leaderboard_command", required=True, metavar="COMMAND")
    b = lsub.add_parser("build", help="validate and re-score every submission, then write the site",
                        description="Validate and re-score every submission in the folder, give each row its tier "
                                    "from the audit records, and write the static site, CSV and markdown; a rebuild "
                                    "into the same folder scores only new or changed files.")
    b.add_argument("submissions", help="folder of submission files (.json, .json.gz)")
    add_out(b, "site folder (rebuilding into the same folder scores only new or changed files: see .g2m-cache)",
            required=True)
    add_quiet(b)
    b.add_argument("--hub", action="store_true", help="also list, apart and unranked, what the Hub's leaderboard of "
                   "the release reports (at HF_ENDPOINT), marking the models re-scored here; skipped with a note "
                   "offline")
    b.add_argument("--hub-endpoint", default=None, metavar="URL",
                   help="read the Hub's leaderboard there (implies --hub)")
    b.add_argument("--audits", default=None, help="the folder of audit records (g2m audit; default: "
                                                  "SUBMISSIONS/audits); each row's tier comes from them")
    b.set_defaults(func=_build, extra="report")
    audit_cli.register(sub, lsub)
    hub_cli.register(lsub)
