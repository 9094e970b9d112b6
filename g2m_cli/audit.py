"""``g2m audit SUBMISSION`` and ``g2m leaderboard audit SUBMISSIONS``: thin parsing over ``audit``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audit.sample import DEFAULT_K, MAX_K
from g2m_base.flags import HelpFormatter, add_data, add_quiet, check_int
from g2m_base.untrusted import term

WHO = ("replay it the way the submission was made, with the weights it names: one of --serve, --base-url or --model "
       "(as g2m eval takes them); {model} and {revision} in them are the submission's own")


def access_of(args: argparse.Namespace):
    from audit.replay import Access

    return Access(model=args.model, model_args=args.model_args, serve=args.serve, serve_args=args.serve_args,
                  base_url=args.base_url, vllm=args.vllm, device=args.device, batch_size=args.batch_size,
                  concurrency=args.concurrency)


def probes_of(args: argparse.Namespace):
    from audit.probe_replay import ProbeAccess

    return ProbeAccess(args.probe_checkpoint, args.probe_data)


def _audit(args: argparse.Namespace) -> int:
    from audit.audit import audit, said
    from audit.records import AUDITS_DIR

    check_int("--k", args.k, 1, MAX_K)
    access = access_of(args)  # a missing way to reach the model fails here, before anything is read
    audits = Path(args.audits) if args.audits else Path(args.file).parent / AUDITS_DIR
    print(said(audit(args.file, access, audits, args.data, args.k, progress=not args.quiet, probes=probes_of(args))))
    return 0


def _audit_all(args: argparse.Namespace) -> int:
    from audit.audit import audit_all

    check_int("--k", args.k, 1, MAX_K)
    failed = 0
    for name, done, why in audit_all(args.submissions, access_of(args), args.audits, args.data, args.k, args.again,
                                     progress=not args.quiet, probes=probes_of(args)):
        if done is not None:
            print(f"{term(name)}: {done.tier}: {term(done.reason, 500)}")
        else:
            failed += why.startswith("not audited")
            print(f"{term(name)}: {term(why, 500)}", file=sys.stderr)
    return 1 if failed else 0


def add_access(p: argparse.ArgumentParser) -> None:
    p.add_argument("--serve", default=None, metavar="MODEL", help="start `vllm serve MODEL` for the replay, e.g. "
                                                                  "'{model}'")
    p.add_argument("--serve-args", default="", help="passed to vllm serve untouched (parallelism, memory, ...)")
    p.add_argument("--vllm", default=None, metavar="EXECUTABLE", help="the vllm that --serve starts")
    p.add_argument("--base-url", default=None, help="a running OpenAI-compatible server serving the model")
    p.add_argument("--model", default=None, help="an lm-eval backend, e.g. hf-multimodal")
    p.add_argument("--model-args", default="", help="its arguments, e.g. 'pretrained={model},revision={revision}'")
    p.add_argument("--device", default=None, help="e.g. cuda:0 or cpu (hf-multimodal)")
    p.add_argument("--batch-size", default="1", help="rows per forward pass of an in-process backend")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight to a server")
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"items to replay (at most {MAX_K})")
    add_data(p, "the data the submission's outputs were produced on (default: the Hub release at its pinned "
                "revision)")
    p.add_argument("--probe-checkpoint", default=None, metavar="MODEL",
                   help="the checkpoint whose features replay the probe sections (default: the one --model-args' "
                        "pretrained= or --serve loads; a --base-url server cannot give features)")
    p.add_argument("--probe-data", default=None, metavar="DIR",
                   help="the build holding the probing configs the probes were made on (default: --data)")
    add_quiet(p)


def register(sub: argparse._SubParsersAction, leaderboard: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="replay a keyed sample of a submission from the weights it names (maintainers)",
                       formatter_class=HelpFormatter,
                       description="Draw K of the submission's items with the board's key, replay them with its "
                                   f"settings and compare the answers; writes a signed audit record. {WHO}.")
    p.add_argument("file", help="the submission file")
    p.add_argument("--audits", default=None, help="where to write the record (default: audits/ beside the file, "
                                                  "where g2m leaderboard build reads them)")
    add_access(p)
    p.set_defaults(func=_audit, extra="harness")

    p = leaderboard.add_parser("audit", help="audit every submission of the folder that has no record yet",
                               formatter_class=HelpFormatter,
                               description="g2m audit for each submission without a verified record, one model at a "
                                           f"time; run it again to resume. {WHO}.")
    p.add_argument("submissions", help="the folder of submission files")
    p.add_argument("--audits", default=None, help="the records' folder (default: SUBMISSIONS/audits)")
    p.add_argument("--again", action="store_true", help="audit submissions that have a record too")
    add_access(p)
    p.set_defaults(func=_audit_all, extra="harness")
