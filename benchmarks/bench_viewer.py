"""The sample viewer of a full 4,500-sample run in Chromium: time to open and draw the first sample, and time to move
to the next sample, against the targets (2 s and 100 ms), one run.

    python benchmarks/bench_viewer.py [--keep DIR]     # ~2-3 minutes on 2 cores: a full zero_shot build and a run first

A full ``zero_shot`` release is built and ``g2m-random`` evaluated on it (a realistic spread of wrong answers: every
sample has cells to draw in both panes), then ``g2m report`` writes the viewer (not counted). Headless Chromium
(Debian's, driven by Playwright) opens ``viewer/index.html`` from disk: "open" is from navigation to the page's
``data-ready`` mark (the first sample drawn), "next" the mean over 40 presses of ``j`` of the time until the next
sample is drawn (its chunk loaded when it is the first of a chunk), and the slowest of them. Wall times of a browser
on a 2-core machine: run it on an idle one.
"""

from __future__ import annotations

import argparse
import shutil
import time

from child_cpu import child, scratch  # benchmarks/child_cpu.py: the script's own folder is on sys.path

OPEN_S, NEXT_S = 2.0, 0.1
PRESSES = 40


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", help="a folder for the build, the run and the report, kept (reused when it holds them)")
    args = ap.parse_args()
    tmp, env = scratch(args.keep, "viewer")
    try:
        run = tmp / "runs" / "g2m-random"
        if not run.is_dir():
            child(["-m", "g2m_cli", "build", "--out", str(tmp / "data"), "--configs", "zero_shot", "--quiet"], env)
            child(["-m", "g2m_cli", "eval", "--model", "g2m-random", "--data", str(tmp / "data"), "--out",
                   str(tmp / "runs"), "--quiet"], env)
        cpu, _ = child(["-m", "g2m_cli", "report", str(run), "--out", str(tmp / "report")], env)
        page_path = tmp / "report" / "viewer" / "index.html"
        size = sum(p.stat().st_size for p in page_path.parent.rglob("*") if p.is_file())
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium") or "chromium")
            page = browser.new_page()
            t = time.perf_counter()
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            opened = time.perf_counter() - t
            steps = []
            drawn = "document.querySelector('#detail').dataset.drawn"
            for _ in range(PRESSES):
                before = page.evaluate(drawn)
                t = time.perf_counter()
                page.keyboard.press("j")
                page.wait_for_function(f"{drawn} && {drawn} !== {before!r}")
                steps.append(time.perf_counter() - t)
            browser.close()
        mean, worst = sum(steps) / len(steps), max(steps)
        print(f"viewer of {run.name}'s 4,500 samples: {size / 2**20:.1f} MiB on disk, written by g2m report "
              f"({cpu:.2f} CPU-s for the whole report)")
        print(f"open and draw the first sample: {opened:.2f} s = {opened / OPEN_S:.2f}x the {OPEN_S:g} s target: "
              f"{'met' if opened <= OPEN_S else 'MISSED'}")
        print(f"next sample (mean of {PRESSES}): {mean * 1000:.0f} ms = {mean / NEXT_S:.2f}x the "
              f"{NEXT_S * 1000:.0f} ms target: {'met' if mean <= NEXT_S else 'MISSED'}; slowest {worst * 1000:.0f} ms")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
