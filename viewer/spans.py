"""Where in an answer's raw text the parser read its matrix: the part the sample viewer highlights.

``parsed_span`` finds the last run of integer tokens that spells the matrix in reading order (after a reasoning
block, as the parser reads), widened to the brackets around it; never a guess: None when no run spells it exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np

from scoring.score import as_grid

_TOKEN = re.compile(r"-?\d+")
_DIGIT = re.compile(r"\d")


def _digits(matrix: Sequence[Sequence[int]]) -> np.ndarray | None:
    """``matrix`` as an (R, C) array when its rows are equally long and every value is a digit 0..9 (every palette's
    answer read right, and most read wrong), else None."""
    try:
        a = np.asarray(matrix, dtype=np.int64)  # an int64 array (a target) as it is
    except (ValueError, TypeError, OverflowError):  # ragged rows, or a value past int64
        return None
    return a if a.ndim == 2 and a.size and 0 <= a.min() and a.max() <= 9 else None


def _digits_literal(a: np.ndarray) -> str:
    """``parsing.format_answer`` of a matrix of digits, laid out as bytes by numpy: row k is ``[d, d, ..., d], ``,
    3C + 2 characters, the last row without its ``, ``."""
    r, c = a.shape
    row = np.full((r, 3 * c + 2), ord(" "), dtype=np.uint8)
    row[:, 0] = ord("[")
    row[:, 1:3 * c:3] = a + ord("0")
    row[:, 2:3 * c:3] = ord(",")
    row[:, 3 * c - 1] = ord("]")
    row[:, 3 * c] = ord(",")
    return "[" + row.tobytes()[:-2].decode("ascii") + "]"


def _canonical(digits: np.ndarray | None, grid: list[list[int]] | None) -> str:
    """The answer as the prompt asks for it (``parsing.format_answer``): most answers are exactly this, and finding it
    is one search, where reading every integer of a 64 x 64 answer is 4,096 tokens. Written by numpy for digits
    (a 64 x 64 answer in 10 us, where a Python join per row took 350 us, most of the viewer's time on a 4,500-sample
    run), else by JSON's encoder, whose default separators give the very same characters."""
    return _digits_literal(digits) if digits is not None else json.dumps(grid)


#: Row labels at a line's start ("Row 3:", "| R3 |", "3.", "3)") are not cells; the parser skips them too.
_LABEL = re.compile(r"^[ \t]*+\|?+[ \t]*+(?:(?:row|r|line)[ \t]*+#?+[ \t]*+(\d++)|(\d++)(?=[ \t]*+[:)]|\.[ \t]))",
                    re.I | re.M)
_INNER = " \t\r\n,"  # what may stand between a cell and the bracket that encloses it


def _widen(text: str, start: int, end: int, lo: int) -> tuple[int, int]:
    """Widen to the outer brackets that directly enclose the span, as many opening as closing ones."""
    opens, closes = [], []
    i = start - 1
    while i >= lo and text[i] in _INNER + "[":
        if text[i] == "[":
            opens.append(i)
        i -= 1
    i = end
    while i < len(text) and text[i] in _INNER + "]":
        if text[i] == "]":
            closes.append(i)
        i += 1
    depth = min(len(opens), len(closes))
    return (opens[depth - 1], closes[depth - 1] + 1) if depth else (start, end)


def parsed_span(text: str, matrix: Sequence[Sequence[int]] | None) -> tuple[int, int] | None:
    """(start, end) in ``text`` of the last run of integer tokens that spells ``matrix`` row-major, widened to the
    brackets around it; after the last ``</think>`` when there is one, as the parser reads. None when no run spells
    it exactly: a highlight is never a guess.

    Linear in the text: each token becomes one character (one per distinct value), so finding the run is a substring
    search, done by ``str.find`` on the reversed strings (its two-way search has no quadratic worst case)."""
    if matrix is None or not isinstance(text, str):
        return None
    digits = _digits(matrix)
    grid = as_grid(matrix) if digits is None else None
    if grid is not None and not any(grid):
        return None
    lo = text.rfind("</think>")
    lo = 0 if lo == -1 else lo + len("</think>")
    body = text[lo:]
    canonical = _canonical(digits, grid)
    at = body.rfind(canonical)
    if at != -1 and not _DIGIT.search(body, at + len(canonical)):  # the canonical literal, and no run after it
        first = at + len(canonical) - len(canonical.lstrip("["))
        start, end = _widen(body, first, at + len(canonical.rstrip("]")), 0)
        return lo + start, lo + end
    cells = digits.ravel().tolist() if digits is not None else [v for row in grid for v in row]
    labels = {m.start(1) if m.group(1) is not None else m.start(2) for m in _LABEL.finditer(body)}
    tokens = [m for m in _TOKEN.finditer(body) if m.start() not in labels]
    code: dict[int, str] = {}
    hay = "".join(code.setdefault(int(m.group()), chr(len(code))) for m in tokens)
    if any(v not in code for v in cells):
        return None
    needle = "".join(code[v] for v in cells)
    back = hay[::-1].find(needle[::-1])
    if back == -1:
        return None
    first = len(hay) - back - len(needle)
    start, end = _widen(body, tokens[first].start(), tokens[first + len(needle) - 1].end(), 0)
    return lo + start, lo + end
