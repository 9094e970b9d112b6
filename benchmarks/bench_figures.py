"""CPU seconds of ``g2m report`` and of each of its figures, drawing the canvas and writing its PNG and its SVG
apart; from one run.

    python benchmarks/bench_figures.py          # ~2 minutes on 2 cores: a small release and a g2m-random run first

A small release (``zero_shot`` and ``probe_n20_c3`` at scale 0.02: 90 zero_shot rows, every grid size and palette) is
built and the built-in ``g2m-random`` baseline evaluated on it (not counted). Then, each in a child process:

  report    - ``g2m report RUN`` as a user runs it (start-up and imports included): its CPU seconds;
  figures   - the same report built in-process with each figure function timed as the report calls it; then each
              figure drawn again from the same numbers, in turns, the least CPU seconds of ``--repeat`` turns kept:
                draw   - the figure's canvas (every shape placed, every text measured that needs it);
                png    - ``raster.png``: drawn by Pillow at twice the size, reduced, deflated;
                svg    - ``vector.svg``: the template rendered.

CPU seconds (user + system) stay close to what an idle machine would take however busy the machine is; the shares of
the three parts, taken in turns in one process, are the numbers to read. (The same figures drawn by matplotlib cost
about 1.75 CPU-s of a 4,500-row report, 0.33 of it its import: ``docs/maintainers/performance.md``.)
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


def measure(run: str, out: Path, repeat: int) -> dict:
    """In this process: the report with its figures timed, then each figure drawn and written in turns."""
    from drawing import raster, vector
    from report import figures, report

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
    parts = {"draw": lambda draw, kw: draw(**kw), "png": lambda fig, _: raster.png(fig),
             "svg": lambda fig, _: vector.svg(fig)}
    best = {name: dict.fromkeys(parts, float("inf")) for name in FIGURES}
    for _ in range(repeat):
        for name, draw in FIGURES.items():
            kw = {k: v for k, v in calls[name].items() if k not in ("path", "svg")}
            fig = None
            for part, do in parts.items():
                t = time.process_time()
                result = do(getattr(figures, draw) if part == "draw" else fig, kw)
                best[name][part] = min(best[name][part], time.process_time() - t)
                fig = result if part == "draw" else fig
    return {"build_report": total, "in_report": in_report, "best": best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", help="a folder for the build and the run, kept (reused when it holds them)")
    ap.add_argument("--repeat", type=int, default=3, help="turns of drawing every figure (default 3)")
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
        print(f"{'figure':<16}{'in report':>11}{'draw':>8}{'png':>8}{'svg':>8}   (CPU-s; draw/png/svg: least "
              f"of {args.repeat})")
        for name in FIGURES:
            b = m["best"][name]
            print(f"{name:<16}{m['in_report'][name]:>11.3f}{b['draw']:>8.3f}{b['png']:>8.3f}{b['svg']:>8.3f}")
        sums = {p: sum(m["best"][n][p] for n in FIGURES) for p in ("draw", "png", "svg")}
        print(f"{'all four':<16}{sum(m['in_report'].values()):>11.3f}{sums['draw']:>8.3f}{sums['png']:>8.3f}"
              f"{sums['svg']:>8.3f}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
