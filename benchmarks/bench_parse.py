"""Parser + scoring throughput, and the worst case of every adversarial family, from one run on this machine.

    python benchmarks/bench_parse.py

Targets: >= 20,000 canonical 9x9 outputs/s; <= 2 ms for a 64x64 output; every adversarial input up to the
262,144-character cap under 50 ms (the parser is linear by construction: the cap/16k ratio should be about 16).
"""

from __future__ import annotations

import random
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the adversarial corpus is test data

import numpy as np  # noqa: E402
from adversarial_outputs import FAMILIES  # noqa: E402

from harness_tasks.answers.paper import parse_paper  # noqa: E402
from harness_tasks.answers.parsing import MAX_ANSWER_CHARS, format_answer, parse_matrix  # noqa: E402
from harness_tasks.answers.score import score_answer  # noqa: E402


def per_second(items) -> float:
    t = time.perf_counter()
    for text, target in items:
        score_answer(text, target)
    return len(items) / (time.perf_counter() - t)


def ms(text: str, n: int = 64, repeat: int = 3, parse=parse_matrix) -> float:
    """Best of ``repeat`` runs of ``parse``, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        parse(text, n)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    m9 = [rng.integers(0, 5, (9, 9)).tolist() for _ in range(2000)]
    styles = [
        lambda m: format_answer(m),
        lambda m: "```python\n" + format_answer(m) + "\n```",
        lambda m: "Here is the grid:\n" + "\n".join(" ".join(map(str, r)) for r in m),
        lambda m: "\n".join(f"Row {i + 1}: " + ", ".join(map(str, r)) for i, r in enumerate(m)),
        lambda m: str(np.array(m)),
    ]
    m64 = rng.integers(0, 10, (64, 64)).tolist()
    pr = random.Random(0)
    garbage = "".join(pr.choice(string.printable) for _ in range(2_000_000))

    print(f"N=9 canonical, parse+score : {per_second([(format_answer(m), m) for m in m9]):9,.0f} outputs/s  (target >= 20,000)")
    print(f"N=9 mixed formats          : {per_second([(styles[i % 5](m), m) for i, m in enumerate(m9)]):9,.0f} outputs/s")
    print(f"64x64 canonical            : {ms(format_answer(m64), repeat=20):9.2f} ms  (target <= 2)")
    print(f"64x64 as plain rows        : {ms(chr(10).join(' '.join(map(str, r)) for r in m64), repeat=20):9.2f} ms")
    print(f"2 MB printable garbage     : {ms(garbage):9.2f} ms  (over the cap: refused)")
    print(f"{MAX_ANSWER_CHARS:,} chars of garbage   : {ms(garbage[:MAX_ANSWER_CHARS]):9.2f} ms")
    sizes = (16_384, 65_536, MAX_ANSWER_CHARS)
    print(f"\nadversarial families, best of 3, ms   {'16k':>8} {'64k':>8} {'cap':>8}   cap/16k")
    worst = 0.0
    for name, make in FAMILIES.items():
        times = [ms(make(size)[:MAX_ANSWER_CHARS]) for size in sizes]
        worst = max(worst, times[-1])
        print(f"  {name:<32} {times[0]:8.2f} {times[1]:8.2f} {times[2]:8.2f}   {times[2] / max(times[0], 1e-3):6.1f}x")
    print(f"worst adversarial input at the cap: {worst:.1f} ms  (target < 50 ms; linear scaling gives ~16x cap/16k)")
    print(f"\nthe paper protocol's parser, same families, ms  {'16k':>8} {'64k':>8} {'cap':>8}   cap/16k")
    worst = 0.0
    for name, make in FAMILIES.items():
        times = [ms(make(size)[:MAX_ANSWER_CHARS], parse=parse_paper) for size in sizes]
        worst = max(worst, times[-1])
        print(f"  {name:<32} {times[0]:8.2f} {times[1]:8.2f} {times[2]:8.2f}   {times[2] / max(times[0], 1e-3):6.1f}x")
    print(f"worst at the cap, paper protocol: {worst:.1f} ms")


if __name__ == "__main__":
    main()
