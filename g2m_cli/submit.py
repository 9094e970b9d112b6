"""``g2m submit``, ``g2m eval-results`` and ``g2m validate``: thin parsing over ``submission`` and
``on_hub.eval_results``."""

from __future__ import annotations

import argparse
import sys

from g2m_base.errors import UsageError
from g2m_base.flags import add_out
from g2m_base.untrusted import term
from g2m_cli.report import add_run
from on_hub import eval_results as hub_results

INFO_FLAGS = {"params": ("the parameter count", "--params 8B"),
              "open_weights": ("open weights or API", "--open-weights or --api"),
              "release_date": ("the release date", "--release-date YYYY-MM-DD"),
              "url": ("a link to the model", "--model-url URL")}


def _submit(args: argparse.Namespace) -> int:
    from dataset_builder.grids.spec import SUBMISSIONS_URL
    from on_hub import layout
    from submission import model_info
    from submission.submission import submit_run

    if args.eval_results and args.allow_partial:
        raise UsageError("--eval-results reports to the Hub, which takes only a complete run of the release; a run "
                         "that needs --allow-partial cannot")
    given = {"params": args.params, "open_weights": args.open_weights, "release_date": args.release_date,
             "url": args.model_url, "id": args.model_id}
    info = model_info.ask(given, interactive=None if not args.no_input else False)
    done = submit_run(args.run_dir, args.out, allow_partial=args.allow_partial, model_info=info, run_name=args.run,
                      probes=args.probes)
    left_out = [k for k in INFO_FLAGS if k not in info]
    if left_out:
        print(f"warning: the submission does not say {', '.join(INFO_FLAGS[k][0] for k in left_out)}: the board shows "
              f"- there; set {'; '.join(INFO_FLAGS[k][1] for k in left_out)}", file=sys.stderr)
    if done.partial:  # it will not validate: no advice to send it
        shown = "; ".join(term(m, 200) for m in done.missing[:8])
        more = f"; and {len(done.missing) - 8} more" if len(done.missing) > 8 else ""
        print(f"PARTIAL submission written to {term(done.path)}: not for the leaderboard (g2m validate refuses it "
              f"until every task is complete). Missing: {shown}{more}\n{term(done.run, 1000)}")
        return 0
    where = layout.submission_path(done.model) if layout.model_of(layout.submission_path(done.model)) \
        else layout.submission_path("ORG/NAME")
    print(f"wrote {term(done.path)}; check it with: g2m validate {term(done.path)}\n"
          f"then send it as a pull request adding it as {term(where)} in {SUBMISSIONS_URL} (the board answers there "
          f"with the same verdict)\n{term(done.run, 1000)}")
    if args.eval_results:  # the Hub's results file: only for a complete run of the release (one line otherwise)
        print(hub_results.said(hub_results.write_eval_results(done.path, source_url=args.source_url)))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from g2m_base.files import atomic_write_text, output_file
    from g2m_base.untrusted import strict_json
    from submission import said
    from submission.submission import validate

    out = output_file(args.out, inputs=(args.file,)) if args.out is not None else None  # before hours of re-scoring
    v = validate(args.file)
    if not v.ok:
        print(said.rejected(v.reason), file=sys.stderr)
        return 1
    for w in v.warnings:
        print(said.warning(w), file=sys.stderr)
    print("\n".join(said.accepted(v, args.file)))
    if out is not None:
        atomic_write_text(out, strict_json({"sha256": v.sha256, "data": v.data, "metadata": v.metadata,
                                                       "scores": v.scores, "warnings": v.warnings}, indent=1) + "\n")
    return 0


def _eval_results(args: argparse.Namespace) -> int:
    from pathlib import Path

    from audit.key import signing_key
    from audit.records import AUDITS_DIR, read_folder, tier_of

    folder = Path(args.audits) if args.audits else Path(args.submission).parent / AUDITS_DIR
    records, _ = read_folder(folder, signing_key()) if folder.is_dir() else ({}, [])

    def tier(v) -> dict:
        return tier_of(records, v.content_sha256, v.metadata["model"]["id"])

    print(hub_results.said(hub_results.write_eval_results(args.submission, args.out, args.source_url, tier)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("submit", help="write a leaderboard submission file from a run (any harness)",
                       description="Write one file with the run's metadata and every zero_shot output, checked "
                                   "against the release; send it as a pull request (the board re-scores it).")
    p.add_argument("run_dir", help="the run folder of one model, or a VLMEvalKit prediction file (.tsv: an .xlsx "
                                   "cuts long answers) or its outputs folder")
    add_out(p, "file to write (.json or .json.gz; default RUN_DIR/submission.json.gz)", default=None)
    p.add_argument("--allow-partial", action="store_true",
                   help="write it even if ids are missing (it will not validate)")
    add_run(p)
    p.add_argument("--model-id", default=None, help="the model's id on the Hub, ORG/NAME (default: the name the run "
                                                    "gives it; a local folder must be named this way)")
    p.add_argument("--params", default=None, help="parameter count, e.g. 8B or 235B-A22B (asked at a terminal)")
    weights = p.add_mutually_exclusive_group()
    weights.add_argument("--open-weights", dest="open_weights", action="store_true", default=None,
                         help="the weights are public")
    weights.add_argument("--api", dest="open_weights", action="store_false", help="the model is only served by an API")
    p.add_argument("--release-date", default=None, help="the model's release date, YYYY-MM-DD")
    p.add_argument("--model-url", default=None, help="a link to the model (its Hub page, paper or API docs)")
    p.add_argument("--no-input", action="store_true", help="never prompt for what the flags leave out")
    p.add_argument("--eval-results", action="store_true", help="also write .eval_results/grid2matrix.yaml for the "
                                                               "model's Hub repository (a complete run of the release)")
    p.add_argument("--source-url", default=None, help="with --eval-results: link to the raw outputs")
    p.add_argument("--probes", default=None, help="folder of g2m probe / g2m probe sweep results of the same model, "
                                                  "added with their test-split predictions so they can be re-scored")
    p.set_defaults(func=_submit, extra="report")
    _register_eval_results(sub)

    p = sub.add_parser("validate", help="check a submission file and re-score every output",
                       description="Check a submission file the way the board does (size caps, plain JSON, every id "
                                   "once, its probe sections' identity) and re-score every output; numbers in the "
                                   "file are never read.")
    p.add_argument("file", help="the submission file (.json or .json.gz)")
    add_out(p, "write the re-scored results as JSON", default=None)
    p.set_defaults(func=_validate, extra="report")


def _register_eval_results(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval-results", help="write a model's .eval_results file for the Hub from a submission file",
                       description="Write .eval_results/grid2matrix.yaml for a model's Hub repository from a complete "
                                   "submission of the release: every value re-scored here; nothing unchecked from "
                                   "the file; reproduced only with a signed audit record.")
    p.add_argument("submission", help="a submission file of a complete run of the release (g2m submit)")
    p.add_argument("--out", default=None,
                   help=f"file to write (default: {hub_results.EVAL_RESULTS_PATH} beside the submission)")
    p.add_argument("--source-url", default=None, help="link to the raw outputs (default: where the submission is "
                                                      "sent, under submissions/ of the submissions repository)")
    p.add_argument("--audits", default=None, help="the folder of audit records (default: audits/ beside the "
                                                  "submission): a value is written as reproduced only when a verified "
                                                  "record of these outputs says so")
    p.set_defaults(func=_eval_results, extra="report")
