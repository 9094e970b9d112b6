"""Read an N x N integer matrix out of a model's free-form answer, and say how.

``parse_matrix(text, grid_size)`` drops reasoning blocks and code fences, then tries an ordered list of named
strategies; the first that finds a matrix wins:

1. ``list_literal``: a list-of-lists literal in Python, tuple or numpy print syntax (``[[1, 2], [3, 4]]``,
   ``((1, 2), (3, 4))``, ``array([[1, 2], [3, 4]])``, ``[[1 2]\\n [3 4]]``). When several appear, the last N x N one
   is preferred, then the last one.
2. ``rows``: row by row, when at least two lines hold only integers and separators: plain, comma, markdown table,
   numpy bracketed and LaTeX ``&``/``\\\\`` rows. Labels such as ``Row 3:`` are not cells.
3. ``integers``: every integer in reading order, filled row-major into N rows of N; a partial fill is kept and
   flagged as a shape mismatch. Row labels and size mentions such as ``9x9`` are skipped.

When none applies the result is a parse failure with a reason. A failure is its own outcome, never a guess and never
a random answer. Nothing is ever evaluated: a valid JSON answer is read with ``json.loads`` (a fast path that gives
exactly what strategy 1 would); everything else goes through the scanners of ``scoring.scan``, linear in the
input by construction. Answers over 262,144 characters (reasoning excluded) are refused, so any text costs at most
tens of milliseconds and never raises (``benchmarks/bench_parse.py`` prints the worst adversarial families).

``format_answer`` writes the canonical answer the prompt asks for; it is the inverse of ``parse_matrix`` (it parses back
to itself with ``list_literal``, held by a round-trip test), so the two live together here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

from dataset_builder.grids.spec import check_grid_size
from scoring import scan
from scoring.literal import json_int_rows, small_ints
from scoring.scan import MAX_ABS, ints

Matrix = tuple[tuple[int, ...], ...]
Rows = list[list[int]]

#: Longer answers (reasoning removed) are parse failures. The largest canonical answer, 64x64, is ~12,300 characters
#: and the generation budget allows ~4x that; the cap bounds the work hostile text can cause (see bench_parse.py).
MAX_ANSWER_CHARS = 262_144

_FENCE = re.compile(r"```[\w+.-]*+")
_BLANKS = re.compile(r"[ \t]{2,}+|\t")  # runs of blanks fold to one space
_BLANK_LINES = re.compile(r"\n ?\n(?: ?\n)++")  # three or more line breaks with only blanks between

__all__ = ["MAX_ABS", "MAX_ANSWER_CHARS", "STRATEGIES", "STRATEGY_NAMES", "Matrix", "ParseResult", "format_answer",
           "looks_truncated", "parse_matrix"]


@dataclass(frozen=True)
class ParseResult:
    matrix: Matrix | None
    strategy: str  # the winning strategy's name, or "none"
    truncated: bool = False  # the output stops inside an open structure (bracket, fence, reasoning block)
    shape_mismatch: bool = False  # a matrix was read, but it is not N x N
    reason: str | None = None  # why parsing failed

    @property
    def failed(self) -> bool:
        return self.matrix is None


def format_answer(matrix: Sequence[Sequence[int]]) -> str:
    """The canonical answer: a Python list of lists, e.g. ``[[0, 1], [2, 0]]`` (what the prompt asks for)."""
    return "[" + ", ".join("[" + ", ".join(map(str, map(int, row))) + "]" for row in matrix) + "]"


def _is_square(rows: Rows, n: int) -> bool:
    return len(rows) == n and all(len(r) == n for r in rows)


def _json_rows(text: str) -> Rows | None:
    """Fast path: the whole answer is a JSON list of lists of integers (the canonical form)."""
    s = text.strip()
    if not (s.startswith("[") and s.endswith("]")) or len(s) > MAX_ANSWER_CHARS:
        return None  # longer answers are refused by the same cap as every other path
    value = json_int_rows(s)
    if not value:
        return None
    if small_ints(s, value):
        return value  # every cell under 10**18 = MAX_ABS in magnitude, seen from the digits alone
    # every cell within the bounds, checked by C loops
    cells = list(chain.from_iterable(value))
    if cells and not (-MAX_ABS <= min(cells) and max(cells) <= MAX_ABS):
        return None
    return value


def _from_literal(text: str, n: int) -> Rows | None:
    """The last N x N list-of-lists literal, else the last literal of any shape."""
    m = scan.last_match(scan.square_literal(n), text) or scan.last_match(scan.LITERAL, text)
    if m is None:
        return None
    return [ints(r.group()) for r in scan.ROW.finditer(text, m.start() + 1, m.end() - 1)]


def _from_rows(text: str, n: int) -> Rows | None:
    """Row by row: the last block of N lines of N integers, else the longest block of such lines."""
    return scan.rows_block(text, n)


def _from_integers(text: str, n: int) -> Rows | None:
    """Every integer in reading order, filled row-major; row labels and size mentions are skipped."""
    values = scan.cells_in_order(text, n * n + 1)
    if not values:
        return None
    rows = [values[i : i + n] for i in range(0, min(len(values), n * n), n)]
    if len(values) > n * n:
        rows.append(values[n * n :])  # marks the surplus, so the shape is reported as not N x N
    return rows


#: The cascade, in order: (name, strategy). Each strategy returns rows of ints, or None to pass.
STRATEGIES: tuple[tuple[str, Callable[[str, int], Rows | None]], ...] = (
    ("list_literal", _from_literal),
    ("rows", _from_rows),
    ("integers", _from_integers),
)
#: Every value ``ParseResult.strategy`` can take, "none" being a parse failure.
STRATEGY_NAMES: tuple[str, ...] = (*(name for name, _ in STRATEGIES), "none")


def _clean(text: str) -> tuple[str | None, bool, str | None]:
    """Drop reasoning and code fences. Returns (answer text or None, truncated, failure reason)."""
    close = text.rfind("</think>")
    if close != -1:
        text = text[close + len("</think>") :]
    if "<think>" in text:
        return None, True, "reasoning block never closed"
    if len(text) > MAX_ANSWER_CHARS:
        return None, False, f"answer is {len(text):,} characters long, over the {MAX_ANSWER_CHARS:,} an answer may have"
    truncated = False
    if "```" in text:
        truncated = len(_FENCE.findall(text)) % 2 == 1
        text = _FENCE.sub("\n", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _BLANK_LINES.sub("\n\n", _BLANKS.sub(" ", scan.ascii_digits(text)))
    truncated = truncated or text.count("[") > text.count("]")
    return text, truncated, None


def looks_truncated(text: str) -> bool:
    """The answer stops inside an open structure: a reasoning block, a code fence or a bracket (what ``truncated``
    reports when the backend does not say why generation stopped)."""
    answer = text[text.rfind("</think>") + len("</think>"):] if "</think>" in text else text
    return ("<think>" in answer or ("```" in answer and len(_FENCE.findall(answer)) % 2 == 1)
            or answer.count("[") > answer.count("]"))


def parse_matrix(text: object, grid_size: int) -> ParseResult:
    """Parse a model answer for an N x N grid; never raises on any text."""
    check_grid_size(grid_size)
    if not isinstance(text, str):
        return ParseResult(None, "none", reason="output is not text")
    if not text.strip():
        return ParseResult(None, "none", reason="empty output")
    if "<think>" not in text and "</think>" not in text and (rows := _json_rows(text)) is not None:
        # fast path: the whole answer is a JSON list of lists, the one literal strategy 1 would find
        return ParseResult(tuple(map(tuple, rows)), "list_literal", False, not _is_square(rows, grid_size))
    cleaned, truncated, reason = _clean(text)
    if cleaned is None:
        return ParseResult(None, "none", truncated=truncated, reason=reason)
    for name, strategy in STRATEGIES:
        rows = strategy(cleaned, grid_size)
        if rows:
            return ParseResult(tuple(map(tuple, rows)), name, truncated, not _is_square(rows, grid_size))
    return ParseResult(None, "none", truncated, reason="no integers in the output")
