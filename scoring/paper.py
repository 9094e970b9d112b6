"""The authors' parser and scoring rules, reproduced exactly (quirks included) for the ``paper`` protocol.

Written from the rules stated in ``shared/reference/authors-code-facts.md``, not from their code. For an answer and N:

1. strip surrounding whitespace, delete every "```python" and then every "```", strip again;
2. find the *first* place where a list of lists begins: ``[``, whitespace, ``[``, the shortest run of any characters
   up to ``]``, then any number of (whitespace, ``,``, whitespace, ``[``, shortest run up to ``]``, whitespace), then
   ``]`` (the first match of that pattern, with the regular-expression engine's leftmost, lazy and greedy choices);
   read it as a Python literal and convert it to integers (floats truncated, negatives kept) the way
   ``numpy.array(value, dtype=int)`` does; keep it only if it is exactly N x N. Any failure goes on to step 3, and no
   later list of lists is ever tried;
3. only if the text holds ``ROW1=``: for i = 1..N the first ``ROW{i}=[...]`` whose inside holds only ASCII digits,
   commas, whitespace and minus signs, split on commas (empty pieces dropped); every piece must be an integer (else
   the step fails) and every row must have exactly N of them;
4. every maximal run of decimal digits (Unicode digits count; signs and decimal points are ignored), accepted only
   if there are exactly N*N of them, filled row-major;
5. otherwise a parse error.

Scoring: a parse error is exact 0 and 0 correct cells; a parsed N x N matrix is exact when every cell is right, and
its cell accuracy is right cells / N^2. Nothing is evaluated (the literal is read by a small reader of its own),
every step is linear in the text, and no text raises: where the authors' code would raise (an integer of more than
4,300 digits in step 4), the result is a parse error.
"""

from __future__ import annotations

import re
from itertools import chain, islice

import numpy as np

from scoring.literal import LiteralError, json_int_rows, read_literal, small_ints

MAX_INT_DIGITS = 4300  # CPython's int() refuses longer decimal strings; the authors' step 4 would raise
BUDGET_CAP = 2048

_WS = re.compile(r"\s*+")
_TERMINAL_REVERSED = re.compile(r"\]\s*+\]")  # read backwards: "]", whitespace, "]"
_STARTS = re.compile(r"\[(?=\s*+\[)")  # every "[" that opens a list of lists (zero width after it: overlapping)
_MORE = re.compile(r"\s*+,\s*+\[")  # what opens one more row after a row's "]"
_DIGITS = re.compile(r"\d++")


def max_gen_toks(grid_size: int) -> int:
    """The authors' answer budget: min(4N^2 + 20N + 50, 2048) tokens (cut from N = 20 on)."""
    return min(4 * grid_size * grid_size + 20 * grid_size + 50, BUDGET_CAP)


def clean(text: str) -> str:
    return text.strip().replace("```python", "").replace("```", "").strip()


def first_list_of_lists(text: str) -> tuple[int, int] | None:
    """The span of the first match of ``\\[\\s*\\[.*?\\](?:\\s*,\\s*\\[.*?\\]\\s*)*\\]`` (DOTALL), in one forward pass.

    Every match ends in a *terminal* ``]``: one followed by optional whitespace and a second ``]``. A row can end at
    a ``]`` when the rest succeeds from there, and the rest succeeds from a later row exactly when some terminal
    ``]`` lies after that row's opening: so the last terminal (``last``, found by one search of the reversed text)
    decides every "can the rest succeed" question in O(1), and the engine's choices follow in one scan: at the
    leftmost start the first row ends at the earliest ``]`` that allows it (lazy), the repetition takes one more row
    whenever a terminal lies beyond it (greedy), each row ending at the earliest ``]`` that allows it; after the
    first row the final ``]`` must follow at once, after a later row whitespace may come first. Only the first start
    can match (a later start's rows begin later, so it has no more ways to finish). Each ``]`` is looked at once:
    time is linear in the text, with no table per bracket.
    """
    first = _STARTS.search(text)
    if first is None:
        return None
    terminal = _TERMINAL_REVERSED.search(text[::-1])
    if terminal is None:
        return None
    last = len(text) - terminal.end()  # the last "]" followed by optional whitespace and another "]"
    q = text.find("]", _WS.match(text, first.end()).end() + 1)  # the first row's "]" (after the second "[")
    while 0 <= q <= last:  # no row can end after the last terminal
        m = _MORE.match(text, q + 1)
        if (m is not None and m.end() <= last) or text.startswith("]", q + 1):
            return first.start(), _rest(text, q, m, last, tight=True)
        q = text.find("]", q + 1)
    return None


def _rest(text: str, q: int, more: re.Match | None, last: int, tight: bool) -> int:
    """Where the match ends, given that the rest succeeds from the row that ends at ``q`` (``more``: the opening of a
    next row right after it, if any)."""
    while more is not None and more.end() <= last:  # greedy: one more row, ending at its earliest possible "]"
        q = text.find("]", more.end())
        while True:  # a "]" at or before ``last`` always succeeds here (``last`` itself does)
            more = _MORE.match(text, q + 1)
            if (more is not None and more.end() <= last) or text.startswith("]", _WS.match(text, q + 1).end()):
                break
            q = text.find("]", q + 1)
        tight = False
    if tight:
        return q + 2
    return _WS.match(text, q + 1).end() + 1


def _as_int_matrix(value: object, n: int) -> tuple[tuple[int, ...], ...] | None:
    """``numpy.array(value, dtype=int)`` if it is exactly n x n, else None (numpy would fail or the shape differs)."""
    if not isinstance(value, (list, tuple)) or len(value) != n:
        return None
    if (all(type(row) is list and len(row) == n for row in value)
            and set(map(type, chain.from_iterable(value))) <= {int}):  # plain ints (a JSON answer): only the range
        try:
            np.asarray(value, dtype=np.int64)  # numpy's own int64 range check, at C speed
        except OverflowError:
            return None
        return tuple(map(tuple, value))
    rows = []
    for row in value:
        if not isinstance(row, (list, tuple)) or len(row) != n:
            return None
        cells = []
        for v in row:
            if isinstance(v, bool) or isinstance(v, int):
                x = int(v)
            elif isinstance(v, float):
                if v != v or v in (float("inf"), float("-inf")):
                    return None
                x = int(v)  # truncates toward zero, as numpy does
            elif isinstance(v, (str, bytes)):
                try:
                    x = int(v)  # numpy converts text the way int() reads it: spaces, "1_0", any decimal digits
                except ValueError:
                    return None
            else:
                return None  # None, complex, nested sequences, other text: numpy raises
            if not -(2**63) <= x < 2**63:
                return None  # does not fit numpy's int64
            cells.append(x)
        rows.append(tuple(cells))
    return tuple(rows)


def _literal_step(text: str, n: int):
    # A whole text that is a plain JSON matrix of one row or more is its own first list of lists (the pattern's first
    # row ends at the first "]", each further row at the next, then the last "]"), known without scanning for it; and
    # G2M's parser has just decoded the same text when both protocols score an answer (``json_int_rows`` keeps it).
    rows = json_int_rows(text) if text[:1] == "[" and text[-1:] == "]" else None
    if rows:
        literal = text
    else:
        span = first_list_of_lists(text)
        if span is None:
            return None
        literal = text[span[0]:span[1]]
        rows = json_int_rows(literal)  # a plain JSON matrix: what read_literal gives, its values known to be ints
    if rows is not None and small_ints(literal, rows):  # ... and to fit int64, from their digits alone
        return tuple(map(tuple, rows)) if len(rows) == n and all(len(r) == n for r in rows) else None
    try:
        return _as_int_matrix(read_literal(literal), n)
    except LiteralError:
        return None


_ROW_LABEL = re.compile(r"ROW([0-9]++)=\[([0-9,\s\-]*+)\]")


def _row_labels_step(text: str, n: int):
    if "ROW1=" not in text:
        return None
    first: dict[str, str] = {}  # "ROW{i}=" -> the inside of its first [...] of digits, commas, spaces, minus signs
    for m in _ROW_LABEL.finditer(text):
        first.setdefault(m.group(1), m.group(2))
    rows = []
    for i in range(1, n + 1):
        inside = first.get(str(i))
        if inside is None:
            return None
        values = []
        for p in inside.split(","):
            s = p.strip()
            if not s:
                continue  # empty pieces are dropped
            if not re.fullmatch(r"-?[0-9]+", s) or len(s.lstrip("-")) > MAX_INT_DIGITS:
                return None  # not an integer (or one int() refuses): the whole step fails
            values.append(int(s))
        if len(values) != n:
            return None
        rows.append(tuple(values))
    return tuple(rows)


def parse_paper(text: object, grid_size: int) -> tuple[tuple[tuple[int, ...], ...] | None, str, str | None]:
    """(N x N matrix or None, the step that read it, why none did). Never raises on any text."""
    n = grid_size
    if not isinstance(text, str):
        return None, "none", "output is not text"
    text = clean(text)
    if (matrix := _literal_step(text, n)) is not None:
        return matrix, "literal", None
    if (matrix := _row_labels_step(text, n)) is not None:
        return matrix, "row_labels", None
    runs = [m.group() for m in islice(_DIGITS.finditer(text), n * n + 1)]  # one more than needed is enough to refuse
    if len(runs) != n * n:
        return None, "none", (f"more than {n * n:,} digit runs" if len(runs) > n * n
                              else f"{len(runs):,} digit runs, not {n * n:,}")
    if any(len(r) > MAX_INT_DIGITS for r in runs):
        return None, "none", "a digit run too long to be read as an integer"
    values = [int(r) for r in runs]
    return tuple(tuple(values[i * n:(i + 1) * n]) for i in range(n)), "digit_runs", None


STRATEGY_NAMES: tuple[str, ...] = ("literal", "row_labels", "digit_runs", "none")
