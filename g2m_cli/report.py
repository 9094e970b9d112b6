"""``g2m report``: thin parsing over ``report.report``."""

from __future__ import annotations

import argparse
import sys

from dataset_builder.grids.spec import DEFAULT_RESOLUTION, PATCH_SIZES
from g2m_base.flags import add_out
from g2m_base.untrusted import term


def _report(args: argparse.Namespace) -> int:
    from report.report import ReportOptions, build_report

    opts = ReportOptions(patches=tuple(args.patches), input_size=args.input_size, overlay_patch=args.overlay_patch,
                         allow_partial=args.allow_partial, compare_other_models=args.compare_other_models)
    rep = build_report(args.run_dir, args.out, args.probes, opts, run=args.run)
    o = rep.overall
    partial = f"PARTIAL run ({len(rep.partial)} task(s) incomplete): " if rep.partial else ""
    print(f"{partial}{term(rep.model)}: exact match {o.exact_match:.3f}, cell accuracy {o.cell_accuracy:.3f}, "
          f"parse failed {o.parse_failed:.3f}, truncated {o.truncated:.3f}, request failed "
          f"{o.request_failed:.3f} ({o.unanswered:,} without an answer) over {o.n:,} samples\nreport: "
          f"{term(str(rep.output_dir))}/index.html\n{term(rep.run_read, 1000)}")
    cut = rep.cut_by_spreadsheet
    if cut:
        print(f"warning: {len(cut):,} predictions cut by the .xlsx format at {cut[0]['chars']:,} characters, not "
              f"scored: {', '.join(term(c['id']) for c in cut[:20])}{' ...' if len(cut) > 20 else ''}; use the .tsv "
              "(PRED_FORMAT=tsv)", file=sys.stderr)
    return 0


#: The model facts a board row shows, the words for each and the flags that set them (a missing one shows as -).
def add_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", default=None, metavar="DATE", help="which run of the folder to read: the date of its "
                   "results_<DATE>.json (or that file); default the newest, and the command says when there are others")



def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="tables and figures from a run of the G2M tasks (any harness)",
                       description="Re-score every logged output of one run (both protocols) into tables with 95% "
                                   "intervals, figures and an HTML page; with --probes, the Digital Agnosia gap.")
    p.add_argument("run_dir",
                   help="the run folder of one model (g2m-runs/<model>, from lm-eval, lmms-eval or inspect), "
                                   "or a VLMEvalKit prediction file (<model>_Grid2Matrix.tsv/.xlsx) or its outputs "
                                   "folder")
    add_out(p, "report folder (default: RUN_DIR/report)", default=None)
    p.add_argument("--probes", default=None, help="folder of g2m probe results to draw against the end-to-end scores")
    p.add_argument("--compare-other-models", action="store_true",
                   help="compare with probes of another model than the run's (refused otherwise); both are named")
    p.add_argument("--patches", type=float, nargs="+", default=list(PATCH_SIZES),
                   help="patch sizes for the alignment analysis")
    p.add_argument("--input-size", type=float, default=float(DEFAULT_RESOLUTION),
                   help="image side the model sees, in px (after its resizing)")
    p.add_argument("--overlay-patch", type=float, default=None, help="draw this patch grid on the heatmaps")
    p.add_argument("--allow-partial", action="store_true", help="report a run whose samples files do not match what "
                                                                "it recorded; every table and figure says PARTIAL")
    add_run(p)
    p.set_defaults(func=_report, extra="report")
