"""CPU seconds of the scoring commands on a full 4,500-row run, and their ratios to the targets, from one run.

    python benchmarks/bench_scoring.py          # ~3-5 minutes on 2 cores: a full zero_shot build and an oracle run
                                                  first

A full ``zero_shot`` release is built and the built-in ``g2m-oracle`` baseline evaluated on it (not counted); then
each command runs as a user runs it, ``python -m g2m_cli ...`` in a child process (start-up and imports included),
and its CPU seconds (user + system of the child) are measured, which stay closer to what an idle machine would take
than wall times do on a shared machine; each command runs ``--repeat`` times (default 3), in turns, and the least is
kept, since a busy neighbour only ever adds to them:

  report    - ``g2m report RUN``: every output re-scored (both protocols), tables, figures, pages;
  submit    - ``g2m submit RUN``: the run read and checked against the release, the file written;
  validate  - ``g2m validate FILE``: the file checked and every output re-scored;
  lb first  - ``g2m leaderboard build`` of a folder holding that submission (renamed: a baseline's name is refused),
              into a new site folder: scored, its page and figures drawn, the index written. The reference models come
              from this machine's store of them (primed by a build of an empty folder first, not counted), as on any
              machine that built a site before.

Targets: report at most 3 s of CPU, submit at most 3 s, the leaderboard's first build
of a submission at most 2x validate. The numbers themselves are pinned by tests/test_scoring_golden.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil

from child_cpu import child, scratch  # benchmarks/child_cpu.py: the script's own folder is on sys.path

MAX_REPORT_S, MAX_SUBMIT_S, MAX_BUILD_RATIO = 3.0, 3.0, 2.0


def g2m(*args: str, env: dict) -> float:
    """CPU seconds of ``g2m ARGS`` in a child process."""
    return child(["-m", "g2m_cli", *args], env)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", help="a folder for the build and the run, kept (reused when it holds them)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each command, in turns; the least CPU seconds of each is kept (default 3)")
    args = ap.parse_args()
    tmp, env = scratch(args.keep, "scoring")
    env["G2M_CACHE_KEY_FILE"] = str(tmp / "key" / "leaderboard.key")  # a key of its own, never the user's
    try:
        run = tmp / "runs" / "g2m-oracle"
        if not run.is_dir():
            g2m("build", "--out", str(tmp / "data"), "--configs", "zero_shot", "--quiet", env=env)
            g2m("eval", "--model", "g2m-oracle", "--data", str(tmp / "data"), "--out", str(tmp / "runs"), "--quiet",
                env=env)
        sub = tmp / "submission.json.gz"
        subs, empty = tmp / "subs", tmp / "empty"

        def first_build() -> float:
            shutil.rmtree(tmp / "site", ignore_errors=True)
            return g2m("leaderboard", "build", str(subs), "--out", str(tmp / "site"), "--quiet", env=env)

        best: dict[str, float] = {}
        for turn in range(max(1, args.repeat)):  # a noisy neighbour only ever adds CPU seconds: the least is kept
            cpu = {"report": g2m("report", str(run), "--out", str(tmp / "report"), env=env),
                   "submit": g2m("submit", str(run), "--no-input", "--out", str(sub), "--model-id", "org/bench-oracle",
                                  env=env),
                   "validate": g2m("validate", str(sub), env=env)}
            if turn == 0:
                doc = json.loads(gzip.decompress(sub.read_bytes()))
                doc["metadata"]["model"]["id"] = "bench-oracle"
                for d in (subs, empty, tmp / "site0"):
                    shutil.rmtree(d, ignore_errors=True)
                subs.mkdir()
                empty.mkdir()
                (subs / "bench-oracle.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode("ascii"), mtime=0))
                g2m("leaderboard", "build", str(empty), "--out", str(tmp / "site0"), "--quiet", env=env)  # the store
            cpu["first"] = first_build()
            best = {k: min(v, best.get(k, v)) for k, v in cpu.items()}
        report, submit, validate, first = best["report"], best["submit"], best["validate"], best["first"]

        def line(name: str, cpu: float, target: str, met: bool) -> None:
            print(f"{name:<26}: {cpu:6.2f} CPU-s   {target}: {'met' if met else 'MISSED'}")

        print(f"full zero_shot run of g2m-oracle ({len(doc['records']):,} outputs), CPU seconds of each command "
              f"(the least of {max(1, args.repeat)} runs):")
        line("g2m report", report, f"= {report / MAX_REPORT_S:.2f}x the {MAX_REPORT_S:.0f} s target",
             report <= MAX_REPORT_S)
        line("g2m submit", submit, f"= {submit / MAX_SUBMIT_S:.2f}x the {MAX_SUBMIT_S:.0f} s target",
             submit <= MAX_SUBMIT_S)
        line("g2m validate", validate, "(the unit of the next line)", True)
        line("leaderboard first build", first, f"= {first / validate:.2f}x validate; target <= {MAX_BUILD_RATIO:.0f}x",
             first <= MAX_BUILD_RATIO * validate)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
