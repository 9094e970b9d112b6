"""The parser's scanners, each linear in its input by construction.

Python's regular-expression engine backtracks, so a pattern with two ways to read the same characters can take
quadratic (or worse) time on hostile text. Here:

- every repetition in a pattern is possessive (``*+``, ``++``, ``?+``) or atomic, and no two neighbouring pieces can
  read the same character, so a failed attempt never re-reads what it has passed. Where a repetition is possessive,
  giving characters back could never have led to a match (what follows cannot start with them), so each pattern
  matches exactly the language of its plain form;
- patterns that scan line by line start with a literal newline (the text gets one in front), so the engine jumps from
  line to line instead of trying every position;
- the row scanner classifies every line at once with numpy (which characters a line holds, how many integers),
  so thousands of short lines cost no Python-level loop; only the rows finally returned are read one by one;
- the last match of a pattern is taken with ``deque(finditer, maxlen=1)``, which consumes the matches in C.

``benchmarks/bench_parse.py`` prints the worst time of every adversarial family (``adversarial.py``) at 16k, 64k
and the 262,144-character cap; ``tests/scoring/test_parsing.py`` checks that time grows linearly with the input.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from functools import cache, lru_cache

import numpy as np

Rows = list[list[int]]

#: Integers beyond 18 digits are clamped to +-10**18: they are wrong cells either way, and converting a
#: million-digit string is quadratic (CPython refuses more than 4,300 digits).
MAX_ABS = 10**18

# ---------------------------------------------------------------- list literals: [[1, 2], [3, 4]], ((1, 2), ...)
_INT = r"-?+\d++"
_WS = r"\s*+"
_SEP = rf"(?:{_WS},{_WS}|\s++)"
_TAIL = rf"{_WS}(?:,{_WS})?+"  # optional trailing comma


def _row(body: str) -> str:
    return rf"(?:\[{body}\]|\({body}\))"


def _literal(row: str, more_rows: str) -> str:
    rows = rf"{row}(?:{_TAIL}{row}){more_rows}{_TAIL}"
    return rf"\[{_WS}{rows}\]|\({_WS}{rows}\)"


_ANY_ROW = _row(rf"{_WS}(?:{_INT}(?:{_SEP}{_INT})*+)?+{_TAIL}")
LITERAL = re.compile(_literal(_ANY_ROW, "*+"))
ROW = re.compile(_ANY_ROW)
INT = re.compile(_INT)


@lru_cache(maxsize=128)
def square_literal(n: int) -> re.Pattern:
    """A literal of exactly ``n`` rows of exactly ``n`` integers."""
    row = _row(rf"{_WS}{_INT}(?:{_SEP}{_INT}){{{n - 1}}}+{_TAIL}")
    return re.compile(_literal(row, f"{{{n - 1}}}+"))


def last_match(pattern: re.Pattern, text: str) -> re.Match | None:
    """The last of ``pattern``'s non-overlapping matches, found without a Python-level loop over the others."""
    found = deque(pattern.finditer(text), maxlen=1)
    return found[0] if found else None


def to_int(token: str) -> int:
    if len(token) - (token[0] == "-") > 18:
        return -MAX_ABS if token[0] == "-" else MAX_ABS
    return int(token)


def ints(text: str, start: int = 0, end: int | None = None) -> list[int]:
    tokens = INT.findall(text, start, len(text) if end is None else end)
    if not tokens or max(map(len, tokens)) <= 18:  # no token long enough to be clamped: int() on all at C speed
        return list(map(int, tokens))
    return [to_int(t) for t in tokens]


# ---------------------------------------------------------------- text clean-up
#: The zero of every run of ten decimal digits that ``\\d`` and ``int`` accept (Unicode 16; those the running Python's
#: Unicode does not know are dropped below; ``tests/scoring/test_parsing.py`` checks the table against ``unicodedata``).
_DIGIT_ZEROS = (
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20,
    0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x10D40, 0x11066, 0x110F0, 0x11136, 0x111D0,
    0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x116D0, 0x116DA, 0x11730, 0x118E0, 0x11950, 0x11BF0, 0x11C50,
    0x11D50, 0x11DA0, 0x11F50, 0x16130, 0x16A60, 0x16AC0, 0x16B50, 0x16D70, 0x1CCF0, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E5F1, 0x1E950, 0x1FBF0,
)


@cache
def decimal_digits() -> dict[int, int]:
    """Every non-ASCII decimal digit this Python knows -> its ASCII digit."""
    table = {}
    for zero in _DIGIT_ZEROS:
        run = [chr(zero + k) for k in range(10)]
        if all(c.isdecimal() and unicodedata.decimal(c) == k for k, c in enumerate(run)):
            table.update({ord(c): ord("0") + k for k, c in enumerate(run)})
    return table


def ascii_digits(text: str) -> str:
    """The same text with every decimal digit written in ASCII (the numbers it spells do not change)."""
    return text if text.isascii() else text.translate(decimal_digits())


# ---------------------------------------------------------------- rows: one matrix row per line
_LABEL = r"(?:[Rr](?:[Oo][Ww])?+|[Ll][Ii][Nn][Ee]) ?#? ?\d++ ?[:=.)\-]?|\d++(?: ?[:)]|\.(?= ))"
#: A row label at the start of a line ("Row 3:", "| Row 3 |", "3.", "3)", "R3=") is not a cell.
LABELS = re.compile(rf"\n ?\|? ?(?:{_LABEL}) ?\|?")
_ENV = re.compile(r"\\(?:begin|end)\{[a-zA-Z*]++\}", re.I)
_ENV_MARK = "\x05"  # a LaTeX \begin{..}/\end{..} counts as one separator
_RULE_TEXT = r" ?\|? ?:?---[-|: ]*+"  # a markdown table rule: |---|:--:|
_RULE_LINES = re.compile(rf"\n{_RULE_TEXT}(?=\n)")
_FILLER_LINES = re.compile(rf"\n ?(?:{_ENV_MARK}|\\hline|\$\$|\\\[|\\\]) ?(?=\n)")
_MARKS = str.maketrans({c: "\x7f" for c in "\x00\x01\x02\x03\x04\x05"})  # control characters we use as marks
#: Character classes of the row scanner, by code point (anything past ASCII is OTHER).
OTHER, DIGIT, SEP, MINUS, NEWLINE, ENV = range(6)
_CLASS = np.full(129, OTHER, dtype=np.uint8)
_CLASS[[ord(c) for c in "0123456789"]] = DIGIT
_CLASS[[ord(c) for c in ",;|&[]() \t$\\"]] = SEP
_CLASS[ord(_ENV_MARK)] = ENV
_CLASS[ord("-")] = MINUS
_CLASS[ord("\n")] = NEWLINE


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _marked_lines(text: str, pattern: re.Pattern, mark: str) -> np.ndarray:
    """Per line: True where the whole line matches ``pattern`` (``text`` starts with a newline)."""
    codes = _codes(pattern.sub("\n" + mark, text + "\n"))
    nl = np.flatnonzero(codes == 10)  # nl[k] opens line k; the appended newline closes the last one
    return (np.diff(nl) == 2) & (codes[nl[:-1] + 1] == ord(mark))


def _data_lines(body: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per line of the label-free ``body``: is it a row of integers and separators, and does it hold exactly n?

    A row is what ``SEP* (ENV SEP*)? INT (SEP+ INT)* SEP* (ENV SEP*)?`` matches: separators, integers
    (``-?\\d+``), at least one integer and nothing else, with at most one LaTeX environment before the first integer
    and one after the last. Digit runs are whole integers, so two integers always have a separator between them; a
    minus sign must follow a separator or the line start, and precede a digit.
    """
    cls = _CLASS[np.minimum(_codes("\n" + body + "\n"), 128)]
    line = np.cumsum(cls == NEWLINE) - 1  # the leading newline opens line 0; each newline opens the next line
    lines = int(line[-1])
    digit = cls == DIGIT
    starts = digit[1:] & ~digit[:-1]  # digit runs, by the position of their first digit (minus one)
    minus = cls[1:-1] == MINUS
    fine_minus = digit[2:] & ((cls[:-2] == SEP) | (cls[:-2] == NEWLINE) | (cls[:-2] == ENV))
    bad = np.concatenate(([False], (cls[1:-1] == OTHER) | (minus & ~fine_minus), [False]))
    env = np.flatnonzero(cls == ENV)
    if len(env):  # environments only at the edges of a row, at most one on each side
        seen = np.cumsum(digit)
        opens = np.flatnonzero(cls == NEWLINE)  # opens[k] opens line k
        before = seen[env] - seen[opens[line[env]]]
        after = seen[opens[line[env] + 1]] - seen[env]
        lead, trail = before == 0, after == 0
        bad[env[~lead & ~trail]] = True
        extra = (np.bincount(line[env[lead]], minlength=lines + 1) > 1) | (
            np.bincount(line[env[trail]], minlength=lines + 1) > 1)
    else:
        extra = np.zeros(lines + 1, dtype=bool)
    nbad = np.bincount(line[bad], minlength=lines + 1)
    nints = np.bincount(line[1:][starts], minlength=lines + 1)
    data = ((nbad == 0) & ~extra & (nints > 0))[:lines]
    return data, data & (nints[:lines] == n)


def rows_block(text: str, n: int) -> Rows | None:
    """The last block of exactly n rows of n integers, else the first n + 1 rows of the last longest block.

    A block is a run of row lines with only filler lines (table rules, LaTeX scaffolding) between them; a row right
    above a ``|---|`` rule is a table header, not a row. Returns None when no block has two rows (one, for n = 1).
    """
    text = _ENV.sub(_ENV_MARK, ascii_digits(text).translate(_MARKS))
    framed = "\n" + text
    body = LABELS.sub("\n", framed)[1:]
    rule = _marked_lines(framed, _RULE_LINES, "\x03")
    filler = rule | _marked_lines(framed, _FILLER_LINES, "\x02")
    data, square = _data_lines(body, n)
    header = data & np.concatenate((rule[1:], [False]))
    data &= ~header
    rows_at = np.flatnonzero(data)
    if len(rows_at) < 2:
        return None
    breaks = np.cumsum(~data & ~filler)
    new_block = np.concatenate(([True], breaks[rows_at[1:]] != breaks[rows_at[:-1]]))
    block = np.cumsum(new_block) - 1
    sizes = np.bincount(block)
    squares = np.bincount(block, weights=square[rows_at])
    lines = body.split("\n")

    def read(b: int, limit: int) -> Rows:
        return [ints(lines[k]) for k in rows_at[block == b][:limit]]

    exact = np.flatnonzero((sizes == n) & (squares == n))
    if len(exact):
        return read(int(exact[-1]), n)
    if sizes.max() < 2:
        return None
    # rows past N do not count; reading one more is enough to report the surplus
    return read(int(np.flatnonzero(sizes == sizes.max())[-1]), n + 1)


# ---------------------------------------------------------------- integers in reading order
#: One token of the integers strategy: a digit run is a cell when the token is nothing but that run (with the minus
#: sign in front of it, if any); the other tokens are what must not be read as cells: row labels ("row 3", "line 2",
#: "3:" / "3)" / "3." at a line start; the text gets a newline in front), size mentions ("9x9") and decimals. Every
#: token starts with one character of a small class, so the engine skips all other text at C speed; a lookbehind
#: then tells the alternatives apart by that character.
TOKEN = re.compile(
    r"[\d\nRrLl](?:"
    r"(?<=\d)(?:(?<!-\d)\d*+ ?[xX\u00d7] ?\d++|\d*+(?:\.\d++)?+)"  # -9x9 is -9 and 9, 9x9 is a size
    r"|(?<=\n) ?\d++(?: ?[:)]|\.(?= ))"
    r"|(?<=[Rr])[Oo][Ww] ?#? ?\d++"
    r"|(?<=[Ll])[Ii][Nn][Ee] ?#? ?\d++)"
)


def cells_in_order(text: str, limit: int) -> list[int]:
    """Up to ``limit`` integers of ``text`` in reading order, skipping labels, size mentions and decimals."""
    values: list[int] = []
    for m in TOKEN.finditer("\n" + text):
        token = m.group()
        if token.isdigit():
            start = m.start() - 1  # in ``text``
            values.append(to_int("-" + token if start > 0 and text[start - 1] == "-" else token))
            if len(values) >= limit:
                break
    return values
