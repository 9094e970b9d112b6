"""Parser + metrics throughput, from one run on this machine.

    python benchmarks/bench_parse.py

Targets (issue: harness tasks): >= 20,000 outputs/s at N=9, <= 2 ms for a 64x64 output, <= 50 ms for 2 MB of garbage.
"""

from __future__ import annotations

import random
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from harness_tasks.metrics import cell_accuracy, cell_mask, exact_match  # noqa: E402
from harness_tasks.parsing import (  # noqa: E402
    MAX_ANSWER_CHARS,
    format_answer,  # noqa: E402
    parse_matrix,
)


def score(text: str, target) -> float:
    r = parse_matrix(text, len(target))
    cell_mask(r.matrix, target)
    return exact_match(r.matrix, target) + cell_accuracy(r.matrix, target)


def per_second(items, target_of) -> float:
    t = time.perf_counter()
    for text, target in items:
        score(text, target_of(target))
    return len(items) / (time.perf_counter() - t)


def ms(text: str, n: int, repeat: int = 20) -> float:
    t = time.perf_counter()
    for _ in range(repeat):
        parse_matrix(text, n)
    return (time.perf_counter() - t) / repeat * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    m9 = [rng.integers(0, 5, (9, 9)).tolist() for _ in range(2000)]
    canonical = [(format_answer(m), m) for m in m9]
    styles = [
        lambda m: format_answer(m),
        lambda m: "```python\n" + format_answer(m) + "\n```",
        lambda m: "Here is the grid:\n" + "\n".join(" ".join(map(str, r)) for r in m),
        lambda m: "\n".join(f"Row {i + 1}: " + ", ".join(map(str, r)) for i, r in enumerate(m)),
        lambda m: str(np.array(m)),
    ]
    mixed = [(styles[i % len(styles)](m), m) for i, m in enumerate(m9)]
    m64 = rng.integers(0, 10, (64, 64)).tolist()
    pr = random.Random(0)
    garbage_2mb = "".join(pr.choice(string.printable) for _ in range(2_000_000))
    garbage_cap = garbage_2mb[:MAX_ANSWER_CHARS]
    worst_cap = "1 2\n\n" * (MAX_ANSWER_CHARS // 5)

    print(f"N=9 canonical, parse+score : {per_second(canonical, lambda t: t):9,.0f} outputs/s  (target >= 20,000)")
    print(f"N=9 mixed formats          : {per_second(mixed, lambda t: t):9,.0f} outputs/s")
    print(f"64x64 canonical            : {ms(format_answer(m64), 64):9.2f} ms  (target <= 2)")
    print(f"64x64 as plain rows        : {ms(chr(10).join(' '.join(map(str, r)) for r in m64), 64):9.2f} ms")
    print(f"2 MB printable garbage     : {ms(garbage_2mb, 64, 5):9.2f} ms  (target <= 50; over the cap, rejected)")
    print(f"{MAX_ANSWER_CHARS:,} chars of garbage   : {ms(garbage_cap, 64, 5):9.2f} ms  (at the cap, fully parsed)")
    print(f"worst case found, at cap   : {ms(worst_cap, 64, 3):9.2f} ms  (50,000 one-line blocks)")


if __name__ == "__main__":
    main()
