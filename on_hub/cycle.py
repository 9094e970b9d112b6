"""``g2m leaderboard cycle``: the board's whole loop for a scheduled job (cron, a CI schedule, a Hub Job).

1. sync: answer the open pull requests (merge the accepted ones with ``merge``);
2. send up this machine's audit records that main lacks (a run that died after an audit and before its upload);
3. mirror main's submissions and audit records into ``WORK/repo``;
4. audit, where this machine was given a way to replay (``access``), each open-weight submission without a record,
   and send the records up; otherwise list them (the audit queue) for a machine that can;
5. build the site into ``WORK/site`` (its cache scores only new files) and publish it to the Space.

Two cycles on one work folder never overlap: the second is refused at once by a lock the kernel drops however the
first one ends. Every step is safe to repeat, so a cycle that died anywhere is resumed by running it again: answered
pull requests are not answered twice, downloaded files are not fetched again, audits resume from their answer cache,
built rows come from the cache, and an unchanged site is not committed again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dataset_builder.grids.spec import HUB_TIMEOUT
from g2m_base.errors import check_timeout, hub_session
from g2m_base.files import folder_lock
from g2m_base.untrusted import term
from on_hub import mirror, publish, sync
from on_hub.layout import AUDITS_DIR, SUBMISSIONS_DIR

LOCK = "cycle.lock"


@dataclass(frozen=True)
class CycleOptions:
    repo_id: str
    work: Path
    space: str | None = None  # None: build only
    merge: bool = False
    access: object | None = None  # audit.replay.Access: audits run here when given
    data: str | None = None
    k: int | None = None
    probes: object | None = None
    timeout: float = HUB_TIMEOUT
    progress: bool = True


def cycle(opts: CycleOptions, api=None, say: Callable[[str], None] = print) -> int:
    """Run the loop (see the module's docstring); the exit status: 0 when every step finished, 1 when an audit
    could not be made (the rest was still done)."""
    from huggingface_hub import HfApi

    timeout = check_timeout(opts.timeout)
    api = api or HfApi()
    busy = "another g2m leaderboard cycle is running on {root}; this one did nothing (its lock goes when it ends)"
    with folder_lock(opts.work, LOCK, busy):
        for answer in sync.sync(opts.repo_id, opts.merge, api, timeout):
            say(f"sync {answer.said()}")
        repo = opts.work / "repo"
        status = 0
        _hub(lambda: _send_audits(api, opts.repo_id, repo / AUDITS_DIR, say), "sending audit records", api, timeout)
        got = _hub(lambda: mirror.mirror(api, opts.repo_id, repo, timeout), "mirroring main", api, timeout)
        say(got.said())
        if opts.access is not None:
            status = _audit(opts, repo, say)
            _hub(lambda: _send_audits(api, opts.repo_id, repo / AUDITS_DIR, say), "sending audit records", api,
                 timeout)
        built = _build(opts, repo, say)
        queue = built.unaudited if opts.access is None else []
        for name in queue:
            say(f"audit queue: {term(name)} (open weights, not replayed yet)")
        if queue:
            say(f"audit them where the models run: g2m leaderboard audit {term(str(repo / SUBMISSIONS_DIR))} --audits "
                f"{term(str(repo / AUDITS_DIR))} --serve '{{model}}' (the next cycle sends the records), or give "
                "this cycle --serve, --base-url or --model")
        if opts.space:
            say(publish.publish(opts.work / "site", opts.space, api, timeout).said())
    return status


def _hub(step, stage: str, api, timeout: float):
    with hub_session(api, timeout, lambda why: f"the cycle failed while {stage}: {why}; run it again to resume",
                     "unset it to run the board"):
        return step()


def _send_audits(api, repo_id: str, audits: Path, say) -> None:
    from audit.key import signing_key

    records = mirror.pending_audits(api, repo_id, audits, signing_key())
    oid = mirror.upload_audits(api, repo_id, records)
    if oid:
        say(f"sent {len(records)} audit record(s) to {repo_id} in commit {oid[:12]}")


def _audit(opts: CycleOptions, repo: Path, say) -> int:
    from audit.audit import audit_all
    from audit.sample import DEFAULT_K

    failed = 0
    for name, done, why in audit_all(repo / SUBMISSIONS_DIR, opts.access, repo / AUDITS_DIR, opts.data,
                                     opts.k or DEFAULT_K, progress=opts.progress, probes=opts.probes):
        if done is not None:
            say(f"audit {term(name)}: {done.tier}: {term(done.reason, 500)}")
        elif why.startswith("not audited"):
            failed += 1
            print(f"audit {term(name)}: {term(why, 500)}", file=sys.stderr)
    return 1 if failed else 0


def _build(opts: CycleOptions, repo: Path, say):
    from leaderboard.build import build_site

    res = build_site(repo / SUBMISSIONS_DIR, opts.work / "site", progress=opts.progress, audits=repo / AUDITS_DIR)
    say(f"built {term(str(res.output_dir))}/index.html: {res.submissions} accepted submissions, "
        f"{len(res.rejected)} rejected, {res.scored} files scored, {res.cached} rows from the cache")
    return res
