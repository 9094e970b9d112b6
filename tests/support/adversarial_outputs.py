"""Families of hostile model outputs that a backtracking parser would choke on, at any length.

Shared by ``benchmarks/bench_parse.py`` (worst time per family at 16k, 64k and the cap) and the parser's
input-size scaling test. Each family maps a length L to a text of about L characters built to make a naive pattern
re-read what it has passed: long rule-like lines that end in a character no rule may hold, runs of separators,
deep brackets, long digit runs, and alternations of each.
"""

from __future__ import annotations

from collections.abc import Callable


def _rep(unit: str, length: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (length - len(head) - len(tail)) // len(unit)) + tail


FAMILIES: dict[str, Callable[[int], str]] = {
    # a data line, a long table rule that ends in a non-rule character, more data
    "rule line, bad end": lambda n: _rep("-", n, "1 2 3\n", "x\n4 5 6"),
    "rule cells, bad end": lambda n: _rep("|:--", n, "1 2 3\n", "x\n4 5 6"),
    "rule line then close": lambda n: _rep("-", n, "1 2 3\n4 5 6\n", "]]"),
    "latex filler": lambda n: _rep("\\hline ", n, "1 & 2 \\\\\n", "x\n3 & 4 \\\\"),
    "latex environments": lambda n: _rep("\\begin{bmatrix}", n, "1 & 2\n", "x"),
    "separator run": lambda n: _rep(", ", n, "[1", "x"),
    "pipe run": lambda n: _rep("|", n, "", "x"),
    "backslash run": lambda n: _rep("\\", n, "1 ", "x"),
    "newlines in a literal": lambda n: _rep("\n", n, "[[", "1 2"),
    "fences in a literal": lambda n: _rep("```", n, "[[", "\nx\n1 2 3"),
    "deep brackets": lambda n: _rep("[", n // 2) + "1" + _rep("]", n // 2 - 1),
    "deep parentheses": lambda n: _rep("(", n // 2, "", "1,2") + _rep(")", n // 2),
    "unclosed rows": lambda n: _rep("[1, 2], ", n, "[", "x"),
    "empty rows": lambda n: _rep("[],", n, "[", "x"),
    "digit run": lambda n: _rep("1", n),
    "digit run, then a size": lambda n: _rep("9", n, "", "x9"),
    "label digits": lambda n: _rep("1", n, "row ", " x"),
    "numbers and minus signs": lambda n: _rep("1 -", n),
    "many short lines": lambda n: _rep("1 2\n\n", n),
    "many literals": lambda n: _rep("[[1]]", n),
    "markdown cells": lambda n: _rep("| 1 ", n, "", "| x"),
    "reasoning tags": lambda n: _rep("<think>a</think>", n, "", "[[1"),
}
