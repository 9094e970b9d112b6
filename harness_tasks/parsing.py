"""Read an N x N integer matrix out of a model's free-form answer, and say how.

``parse_matrix(text, grid_size)`` drops reasoning blocks and code fences, then tries an ordered list of named
strategies; the first that finds a matrix wins:

1. ``list_literal``: a list-of-lists literal in Python, tuple or numpy print syntax (``[[1, 2], [3, 4]]``,
   ``((1, 2), (3, 4))``, ``array([[1, 2], [3, 4]])``, ``[[1 2]\\n [3 4]]``). When several appear, an N x N one is
   preferred, then the last one.
2. ``rows``: row by row, when at least two lines hold only integers and separators: plain, comma, markdown table,
   numpy bracketed and LaTeX ``&``/``\\\\`` rows. Labels such as ``Row 3:`` are not cells.
3. ``integers``: every integer in reading order, filled row-major into N rows of N; a partial fill is kept and
   flagged as a shape mismatch. Row labels and size mentions such as ``9x9`` are skipped.

When none applies the result is a parse failure with a reason. A failure is its own outcome, never a guess and never
a random answer. Nothing is ever evaluated: a valid JSON answer is read with ``json.loads`` (a fast path that gives
exactly what strategy 1 would), everything else by linear-time regular expressions, so megabytes of hostile text,
deep brackets or thousand-digit integers cost milliseconds and never raise (``benchmarks/bench_parse.py``).

``format_answer`` writes the canonical answer the prompt asks for; it is the inverse of ``parse_matrix`` (it parses back
to itself with ``list_literal``, held by a round-trip test), so the two live together here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dataset_builder.spec import check_grid_size

Matrix = tuple[tuple[int, ...], ...]
Rows = list[list[int]]

#: Integers beyond 18 digits are clamped to +-10**18: they are wrong cells either way, and converting a
#: million-digit string is quadratic (CPython refuses more than 4,300 digits).
MAX_ABS = 10**18
#: Longer answers (reasoning removed) are parse failures. The largest canonical answer, 64x64, is ~12,300 characters
#: and the generation budget allows ~4x that; the cap bounds the work hostile text can cause (see bench_parse.py).
MAX_ANSWER_CHARS = 262_144

_INT = r"-?\d+"
_SEP = r"(?:\s*,\s*|\s+)"
_BODY = rf"\s*(?:{_INT}(?:{_SEP}{_INT})*)?(?:\s*,)?\s*"
_ROW = rf"(?:\[{_BODY}\]|\({_BODY}\))"
_ROWS = rf"{_ROW}(?:(?:\s*,\s*|\s*){_ROW})*(?:\s*,)?\s*"
_LITERAL = re.compile(rf"\[\s*{_ROWS}\]|\(\s*{_ROWS}\)")
_ROW_RE = re.compile(_ROW)
_INT_RE = re.compile(_INT)

# Runs of spaces and tabs are folded to one space first, so every " ?" below is bounded and no pattern can backtrack
# quadratically on hostile whitespace.
_LABEL = r"(?:(?:row|line|r) ?#? ?\d+ ?[:=.)\-]?|\d+ ?[:)]|\d+\.(?= ))"
_LINE_START = rf"^(?: ?\|? ?{_LABEL} ?\|?)?"
_SEPS = r"[,;|&\[\]() \t$\\]"
_ENV = r"\\(?:begin|end)\{[a-zA-Z*]+\}"
_DATA_LINE = re.compile(
    rf"{_LINE_START}(?:{_SEPS}*{_ENV})?{_SEPS}*(?:{_INT}{_SEPS}+)*{_INT}{_SEPS}*(?:{_ENV}{_SEPS}*)?$", re.M | re.I
)
_LABEL_AT_START = re.compile(_LINE_START, re.I)
#: Lines that may sit between rows without ending the block: table rules and LaTeX scaffolding.
_FILLER = re.compile(rf" ?(?:\|? ?:?-{{3,}}[-|: ]*|(?:{_ENV}|\\hline|\$\$|\\\[|\\\]) ?)")
_RULE = re.compile(r" ?\|? ?:?-{3,}[-|: ]*")
#: In the integers strategy, what must not be read as cells: row labels and size mentions like 9x9.
_TOKEN = re.compile(
    rf"(?P<skip>(?:row|line) ?#? ?\d+|\d+ ?[x×] ?\d+|^ ?\d+ ?[:)]|^ ?\d+\.(?= )|-?\d+\.\d+)|(?P<int>{_INT})",
    re.M | re.I,
)
_FENCE = re.compile(r"```[\w+.-]*")
_BLANKS = re.compile(r"[ \t]+")


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
    return "[" + ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in matrix) + "]"


def _to_int(token: str) -> int:
    if len(token) - (token[0] == "-") > 18:
        return -MAX_ABS if token[0] == "-" else MAX_ABS
    return int(token)


def _ints(text: str, start: int = 0, end: int | None = None) -> list[int]:
    return [_to_int(t) for t in _INT_RE.findall(text, start, len(text) if end is None else end)]


def _is_square(rows: Rows, n: int) -> bool:
    return len(rows) == n and all(len(r) == n for r in rows)


def _json_rows(text: str) -> Rows | None:
    """Fast path: the whole answer is a JSON list of lists of integers (the canonical form)."""
    s = text.strip()
    if not (s.startswith("[") and s.endswith("]")) or len(s) > 1_000_000:
        return None
    try:
        value = json.loads(s)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list) and value and all(
        isinstance(r, list) and all(type(v) is int and -MAX_ABS <= v <= MAX_ABS for v in r) for r in value
    ):
        return value
    return None


def _from_literal(text: str, n: int) -> Rows | None:
    last, last_square = None, None
    for m in _LITERAL.finditer(text):
        last = m
        if m.group().count("[") + m.group().count("(") - 1 == n:  # an N x N literal has N inner openers
            candidate = [_ints(r.group()) for r in _ROW_RE.finditer(text, m.start() + 1, m.end() - 1)]
            if _is_square(candidate, n):
                last_square = candidate
    if last_square is not None:
        return last_square
    if last is None:
        return None
    return [_ints(r.group()) for r in _ROW_RE.finditer(text, last.start() + 1, last.end() - 1)]


def _joined(text: str, end: int, start: int) -> bool:
    """Two data lines are one block when only filler lines (table rules, LaTeX scaffolding) stand between them."""
    if start - end == 1:
        return True
    return all(_FILLER.fullmatch(line) for line in text[end + 1 : start - 1].split("\n"))


def _from_rows(text: str, n: int) -> Rows | None:
    lines = [m for m in _DATA_LINE.finditer(text)]
    if len(lines) < 2:
        return None
    blocks: list[list[re.Match]] = []
    for m in lines:
        nxt = text.find("\n", m.end() + 1)
        if m.end() < len(text) and _RULE.fullmatch(text, m.end() + 1, len(text) if nxt == -1 else nxt):
            continue  # a markdown header of column numbers sits right above its |---| rule: it is not a row
        if blocks and _joined(text, blocks[-1][-1].end(), m.start()):
            blocks[-1].append(m)
        else:
            blocks.append([m])

    def rows_of(block: list[re.Match], limit: int) -> Rows:
        return [_ints(_LABEL_AT_START.sub("", m.group(), count=1)) for m in block[:limit]]

    for block in reversed(blocks):  # prefer the last block that is exactly N x N
        if len(block) == n and _is_square(rows := rows_of(block, n), n):
            return rows
    longest = max((len(b) for b in blocks), default=0)
    if longest < 2:
        return None
    # rows past N do not count; reading one more is enough to report the surplus
    return rows_of(next(b for b in reversed(blocks) if len(b) == longest), n + 1)


def _from_integers(text: str, n: int) -> Rows | None:
    values: list[int] = []
    for m in _TOKEN.finditer(text):
        if m.lastgroup == "int":
            values.append(_to_int(m.group()))
            if len(values) > n * n:
                break
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
    text = _BLANKS.sub(" ", text)
    truncated = truncated or text.count("[") > text.count("]")
    return text, truncated, None


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
