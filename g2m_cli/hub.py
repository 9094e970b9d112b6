"""``g2m leaderboard sync``, ``publish`` and ``cycle``: thin parsing over ``on_hub``."""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset_builder.grids.spec import HUB_TIMEOUT, SUBMISSIONS_REPO_ID
from g2m_base.flags import HelpFormatter, add_timeout, check_repo_id
from g2m_base.untrusted import term
from g2m_cli import audit as audit_cli


def _sync(args: argparse.Namespace) -> int:
    from on_hub.sync import sync

    answers = sync(check_repo_id("--repo", args.repo), merge=args.merge, timeout=args.timeout)
    for a in answers:
        print(a.said())
    if not answers:
        print(f"no open pull requests on {term(args.repo)}")
    return 0


def _publish(args: argparse.Namespace) -> int:
    from on_hub.publish import publish

    print(publish(args.site, check_repo_id("--space", args.space), timeout=args.timeout, private=args.private).said())
    return 0


def _cycle(args: argparse.Namespace) -> int:
    from on_hub.cycle import CycleOptions, cycle

    given = args.serve or args.base_url or args.model
    opts = CycleOptions(repo_id=check_repo_id("--repo", args.repo), work=Path(args.work),
                        space=check_repo_id("--space", args.space) if args.space else None, merge=args.merge,
                        access=audit_cli.access_of(args) if given else None, data=args.data, k=args.k,
                        probes=audit_cli.probes_of(args) if given else None, timeout=args.timeout,
                        progress=not args.quiet)
    return cycle(opts)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", default=SUBMISSIONS_REPO_ID, metavar="ORG/NAME",
                   help="the submissions dataset whose pull requests are answered")
    add_timeout(p, HUB_TIMEOUT)


def register(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser("sync", formatter_class=HelpFormatter,
                        help="answer the submissions repository's open pull requests (maintainers)",
                        description="For each open pull request: check what it changes, download its one submission "
                                    "at the pull request's revision, validate it as g2m validate does, and post the "
                                    "verdict as a comment (once per revision); --merge merges the accepted ones. "
                                    "Needs a token of the board's account (HF_TOKEN or `hf auth login`).")
    _common(p)
    p.add_argument("--merge", action="store_true", help="merge the pull requests that are accepted")
    p.set_defaults(func=_sync, extra="report")

    p = lsub.add_parser("publish", formatter_class=HelpFormatter,
                        help="upload a built site to a static Hub Space in one commit (maintainers)",
                        description="Upload every file of the site (not its build cache) to the Space in one commit, "
                                    "removing the files the new build no longer has; the Space is created (static) "
                                    "when missing.")
    p.add_argument("site", help="the site folder g2m leaderboard build wrote")
    p.add_argument("--space", required=True, metavar="ORG/NAME", help="the Space to publish to")
    p.add_argument("--private", action="store_true", help="create the Space as private when it is created")
    add_timeout(p, HUB_TIMEOUT)
    p.set_defaults(func=_publish, extra="report")

    p = lsub.add_parser("cycle", formatter_class=HelpFormatter,
                        help="sync, audit what this machine can, build and publish: one command for a schedule",
                        description="The board's loop for cron, a CI schedule or a Hub Job: sync the pull requests, "
                                    "send up audit records, mirror main into WORK/repo, audit (with --serve, "
                                    "--base-url or --model) or list the audit queue, build WORK/site and publish it. "
                                    "Two at once on one WORK are refused; one that died is resumed by running it "
                                    f"again. {audit_cli.WHO}.")
    _common(p)
    p.add_argument("--work", required=True, help="the folder the cycle keeps its mirror, audits and site in")
    p.add_argument("--space", default=None, metavar="ORG/NAME", help="publish the site to this Space")
    p.add_argument("--merge", action="store_true", help="merge the pull requests that are accepted")
    audit_cli.add_access(p)
    p.set_defaults(func=_cycle, extra="report")
