"""CPU seconds of ``g2m report`` and of each of its figures, and the figures' writer against matplotlib's plain way of
writing the same figures; ratios from one run.

    python benchmarks/bench_figures.py          # ~2 minutes on 2 cores: a small release and a g2m-random run first

A small release (``zero_shot`` and ``probe_n20_c3`` at scale 0.02: 90 zero_shot rows, every grid size and palette) is
built and the built-in ``g2m-random`` baseline evaluated on it (not counted). Then, each in a child process:

  report    - ``g2m report RUN`` as a user runs it (start-up and imports included): its CPU seconds;
  figures   - the same report built in-process with each figure function timed as the report calls it (the first
              figure drawn pays for importing matplotlib); then each figure drawn again from the same numbers and
              written both ways, in turns, the least CPU seconds of ``--repeat`` turns kept:
                now    - ``layout.write``: the layout solved once, then PNG + SVG (the heatmap grid has a fixed
                         layout: nothing to solve);
                plain  - ``savefig`` PNG then SVG as matplotlib does it by itself: each save lays the figure out
                         again, with an extra draw.

CPU seconds (user + system) stay close to what an idle machine would take however busy the machine is; the ratio of
the two ways, taken in turns in one process, is the number to read.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import time
from pathlib import Path

from child_cpu import child, scratch  # benchmarks/child_cpu.py: the script's own folder is on sys.path

#: report function -> its draw function
FIGURES = {"accuracy_vs_n": "draw_accuracy_vs_n", "heatmap_grid": "draw_heatmap_grid", "confusion": "draw_confusion",
           "alignment": "draw_alignment"}


def plain_write(fig, path: Path) -> None:
    """What ``layout.write`` replaces: two saves, each laying the figure out again."""
    from g2m_base import plotting
    from leaderboard.reports import figures, layout

    fig.savefig(path, dpi=layout.DPI)
    fig.savefig(path.with_suffix(".svg"), metadata=plotting.SVG_METADATA)
    figures._plt().close(fig)


def measure(run: str, out: Path, repeat: int) -> dict:
    """In this process: the report with its figures timed, then each figure written both ways in turns."""
    from leaderboard.reports import figures, report

    in_report: dict[str, float] = {}
    calls: dict[str, dict] = {}
    for name in FIGURES:
        fn = getattr(figures, name)

        def timed(*a, _fn=fn, _name=name, **kw):
            calls[_name] = dict(inspect.signature(_fn).bind(*a, **kw).arguments)
            t = time.process_time()
            try:
                return _fn(*a, **kw)
            finally:
                in_report[_name] = time.process_time() - t

        setattr(figures, name, timed)
    t = time.process_time()
    report.build_report(run, out / "report")
    total = time.process_time() - t
    ways = {"now": figures.write, "plain": plain_write}
    best = {name: dict.fromkeys(ways, float("inf")) for name in FIGURES}
    for _ in range(repeat):
        for name, draw in FIGURES.items():
            kw = {k: v for k, v in calls[name].items() if k != "path"}
            for way, write in ways.items():
                t = time.process_time()
                write(getattr(figures, draw)(**kw), out / f"{way}-{name}.png")
                best[name][way] = min(best[name][way], time.process_time() - t)
    return {"build_report": total, "in_report": in_report, "best": best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", help="a folder for the build and the run, kept (reused when it holds them)")
    ap.add_argument("--repeat", type=int, default=3, help="turns of drawing every figure both ways (default 3)")
    ap.add_argument("--child", nargs=2, metavar=("RUN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]), args.repeat)))
        return
    tmp, env = scratch(args.keep, "figures")
    try:
        run = tmp / "runs" / "g2m-random"
        if not run.is_dir():
            child(["-m", "g2m_cli", "build", "--out", str(tmp / "data"), "--configs", "zero_shot,probe_n20_c3",
                   "--scale", "0.02", "--rows-per-shard", "60", "--quiet"], env)
            child(["-m", "g2m_cli", "eval", "--model", "g2m-random", "--data", str(tmp / "data"), "--output",
                   str(tmp / "runs")], env)
        shutil.rmtree(tmp / "out", ignore_errors=True)
        report, _ = child(["-m", "g2m_cli", "report", str(run), "--out", str(tmp / "out" / "cli")], env)
        _, out = child([__file__, "--child", str(run), str(tmp / "out"), "--repeat", str(args.repeat)], env)
        m = json.loads(out.strip().splitlines()[-1])
        print(f"g2m report (child process, all included): {report:6.2f} CPU-s")
        print(f"build_report in-process:                  {m['build_report']:6.2f} CPU-s, of which figures "
              f"{sum(m['in_report'].values()):.2f}")
        print(f"{'figure':<16}{'in report':>11}{'now':>8}{'plain':>8}{'plain/now':>11}   (CPU-s; now/plain: least "
              f"of {args.repeat})")
        for name in FIGURES:
            b = m["best"][name]
            print(f"{name:<16}{m['in_report'][name]:>11.2f}{b['now']:>8.2f}{b['plain']:>8.2f}"
                  f"{b['plain'] / b['now']:>10.2f}x")
        now, plain = (sum(m["best"][n][w] for n in FIGURES) for w in ("now", "plain"))
        print(f"{'all four':<16}{sum(m['in_report'].values()):>11.2f}{now:>8.2f}{plain:>8.2f}{plain / now:>10.2f}x")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
