"""Read a Python literal the way ``ast.literal_eval`` reads it, without evaluating or even compiling anything.

Only what a list of lists can hold is read: lists, tuples (and grouping parentheses), integers in every Python
spelling (``12``, ``1_000``, ``0x1f``, ``0o7``, ``0b1``), floats (``1.``, ``.5``, ``2e3``), imaginary numbers, one
unary sign before a number, strings and bytes, ``True``, ``False`` and ``None``; comments and line continuations
between tokens, as Python's tokenizer allows inside brackets. Strings are read as Python reads them: every prefix
(``u``, ``r``, ``b``, ``rb``, ``br``, any case), single, double and triple quotes, adjacent strings joined, and every
escape (``\\n`` and the other single letters, octal ``\\7``..``\\777``, ``\\xhh``, and in text ``\\uXXXX``,
``\\UXXXXXXXX``, ``\\N{NAME}``; an unknown escape keeps its backslash; a malformed one refuses the literal), with the
newlines in the source read as ``\\n``, as the tokenizer does. Anything else (names, calls, operators, dicts, sets,
f-strings, a leading zero like ``07``, non-ASCII spaces, a NUL or a lone surrogate anywhere, which Python's compiler
refuses) is a ``LiteralError``, as ``literal_eval`` would raise. Nesting deeper than ``MAX_DEPTH`` is refused
(``literal_eval`` hits its recursion limit on deep input; a matrix needs depth 2). One pass over the text, read a
token at a time: time is linear in its length, and a text refused early (too deep, an unexpected token) is not read
further.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

MAX_DEPTH = 100

_DEC = r"[0-9](?:_?[0-9])*"


# Where a string may end or an escape begins: each string body is scanned with these and str.startswith, so its cost
# is linear and its memory constant (a regular expression that repeats a group keeps a backtracking entry per round).
_STOP_SINGLE = {q: re.compile(rf"[{q}\\\n]") for q in "'\""}
_STOP_TRIPLE = {q: re.compile(rf"[{q}\\]") for q in "'\""}
_TOKEN = re.compile(
    r"(?P<skip>(?:[ \t\f\r\n]++|#[^\r\n]*+|\\(?:\r\n?|\n))++)"
    rf"|(?P<float>(?:{_DEC}\.(?:{_DEC})?|\.{_DEC})(?:[eE][+-]?{_DEC})?[jJ]?+|{_DEC}[eE][+-]?{_DEC}[jJ]?+|{_DEC}[jJ])"
    r"|(?P<int>0[xX](?:_?[0-9a-fA-F])++|0[oO](?:_?[0-7])++|0[bB](?:_?[01])++|[1-9](?:_?[0-9])*+|0++(?:_?0)*+)"
    r"""|(?P<str>(?:[bB][rR]?|[rR][bB]|[uUrR])?(?:'''|\"\"\"|['"]))"""  # its opening: _string_end finds its end
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*+)"
    r"|(?P<punct>[\[\](),+-])"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "\n": ""}
_ESCAPE_TEXT = re.compile(r"\\(?:(?P<oct>[0-7]{1,3})|x(?P<x>[0-9a-fA-F]{2})|u(?P<u>[0-9a-fA-F]{4})"
                          r"|U(?P<U>[0-9a-fA-F]{8})|N(?P<N>\{[^}]*+\})|(?P<other>[\s\S]))")  # a short one: other
# bytes know no \u, \U, \N (and a scan for the "}" of each "\N{" would make b'\N{\N{...' quadratic)
_ESCAPE_BYTES = re.compile(r"\\(?:(?P<oct>[0-7]{1,3})|x(?P<x>[0-9a-fA-F]{2})|(?P<other>[\s\S]))")
_REFUSED = re.compile(r"[\x00\ud800-\udfff]")  # a NUL or a lone surrogate: Python's compiler refuses the source
_NAMES = {"True": True, "False": False, "None": None}


class LiteralError(ValueError):
    """The text is not a Python literal this reader accepts."""


_END = ("end", "")


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """The tokens of ``text``, one at a time: a reader that fails early (too deep, an unexpected token) never pays
    for the rest of the text."""
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise LiteralError(f"unexpected character at {pos}")
        kind, end = m.lastgroup, m.end()
        if kind in ("int", "float", "name") and end < len(text) and (text[end].isalnum() or text[end] in "_."):
            raise LiteralError(f"malformed number or name at {pos}")  # 07, 1abc, 1_, 1..2
        if kind == "str":
            end = _string_end(text, end, m.group().lstrip("bBrRuU"))
        if kind != "skip":
            yield kind, text[pos:end]
        pos = end


def _string_end(text: str, pos: int, quote: str) -> int:
    """Where the string that ``quote`` opens just before ``pos`` ends (after its closing quote), as Python's
    tokenizer reads it: a backslash takes the next character whatever it is, a newline ends a one-quote string
    unterminated, and a triple-quoted one ends at the first three quotes."""
    stop = (_STOP_TRIPLE if len(quote) == 3 else _STOP_SINGLE)[quote[0]].search
    while (m := stop(text, pos)) is not None:
        c, pos = m.group(), m.end()
        if c == "\\":
            pos += 1  # the escaped character, a newline included
        elif c == "\n":
            break
        elif len(quote) == 1:
            return pos
        elif text.startswith(quote, pos - 1):
            return pos + 2
    raise LiteralError("unterminated string")


def _number(kind: str, token: str):
    t = token.replace("_", "")
    if kind == "int":
        if t[:2].lower() in ("0x", "0o", "0b"):
            return int(t, {"x": 16, "o": 8, "b": 2}[t[1].lower()])
        if len(t) > 4300:
            raise LiteralError("an integer of more than 4,300 digits")  # literal_eval raises too
        return int(t)
    if t[-1] in "jJ":
        return complex(0, float(t[:-1]))
    return float(t)


def _escape(m: re.Match, text: bool) -> str:
    """One backslash escape, as Python's string (``text``) or bytes reader decodes it."""
    kind = m.lastgroup
    if kind == "oct":
        value = int(m.group("oct"), 8)
        return chr(value if text else value & 0xFF)  # bytes keep the low byte of \400..\777
    if kind == "x":
        return chr(int(m.group("x"), 16))
    if kind == "other":
        other = m.group("other")
        if other == "x":
            raise LiteralError("truncated \\x escape")
        if text and other in "uUN":
            raise LiteralError(f"truncated or malformed \\{other} escape")
        return _ESCAPES.get(other, "\\" + other)  # an unknown escape keeps its backslash
    if kind == "N":
        try:
            char = unicodedata.lookup(m.group("N")[1:-1]) if len(m.group("N")) > 2 else ""
        except KeyError:
            char = ""
        if len(char) != 1:  # unknown, empty, or a named sequence of several characters
            raise LiteralError("unknown or malformed \\N{...} escape")
        return char
    value = int(m.group(kind), 16)
    if value > 0x10FFFF:
        raise LiteralError("\\U escape beyond U+10FFFF")
    return chr(value)


def _string(token: str) -> str | bytes:
    quote = min(i for i in (token.find("'"), token.find('"')) if i >= 0)
    prefix = token[:quote].lower()
    width = 3 if token[quote:quote + 3] in ("'''", '"""') else 1
    body = token[quote + width:-width]
    if "b" in prefix and not body.isascii():
        raise LiteralError("bytes can only hold ASCII characters")  # a SyntaxError in Python
    if "r" not in prefix:
        text = "b" not in prefix
        body = (_ESCAPE_TEXT if text else _ESCAPE_BYTES).sub(lambda m: _escape(m, text), body)
    return body.encode("latin-1") if "b" in prefix else body


#: What a JSON list of lists of integers is written with: brackets, digits, minus signs, commas and JSON's blanks.
_PLAIN = re.compile(r"[\[\]0-9, \t\n\r-]*+")


@lru_cache(maxsize=1)
def json_int_rows(text: str) -> list | None:
    """``text`` read as JSON when it is a list of lists of plain integers (empty rows allowed), else None.

    Checked at C speed, without looking at each value: every JSON token other than an integer (a float, a string,
    ``true``, ``null``, an object) holds a character outside ``_PLAIN``, so text of those characters alone decodes to
    lists and ints only; and one ``[`` per row plus the outer one leaves no list deeper than a row.

    The last text's rows are kept: the report and a submission's check score each answer under both protocols in
    turn, and both parsers read a plain JSON answer here, so it is decoded once (decoding is most of what reading a
    64 x 64 answer costs). The rows are shared between callers, who read them and never change them."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if (type(value) is list and all(type(r) is list for r in value) and _PLAIN.fullmatch(text)
            and text.count("[") == len(value) + 1):
        return value
    return None


def small_ints(text: str, rows: list) -> bool:
    """Every integer of ``rows``, read by ``json_int_rows`` from ``text``, is under 10**18 in magnitude (so fits
    int64 and scan's MAX_ABS), seen from a count of digits: JSON writes no leading zeros, so such an integer needs 19
    digits, 18 more than the one every integer has; fewer spare digits than that in all leaves no room for one."""
    # the plain text's other characters: ASCII (``_PLAIN``), so its bytes, with every non-digit deleted in one pass
    digits = len(text.encode("ascii").translate(None, b"[], \t\n\r-"))
    return digits - sum(map(len, rows)) < 18


def read_literal(text: str) -> object:
    """The literal ``text`` spells (lists, tuples, numbers, strings, booleans, None)."""
    if _REFUSED.search(text):
        raise LiteralError("a NUL or a lone surrogate, which Python's compiler refuses in source text")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # as Python's tokenizer reads source
    if text.lstrip(" \t\r\n")[:2] == "[[":
        # JSON's grammar for a list of lists of integers is a subset of Python's literal grammar with the same values
        # (its blanks, signs, digits; no leading zeros), so this is what the full reader would give
        fast = json_int_rows(text)
        if fast is not None:
            return fast
    return _Reader(text).literal()


_COMMA = ("punct", ",")


class _Reader:
    """A recursive-descent reader over the token stream, one token of look-ahead (``peek``, ``take``)."""

    def __init__(self, text: str) -> None:
        self._stream = _tokens(text)
        self._ahead: tuple[str, str] | None = None

    def peek(self) -> tuple[str, str]:
        if self._ahead is None:
            self._ahead = next(self._stream, _END)
        return self._ahead

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self._ahead = None
        return token

    def literal(self) -> object:
        """The whole text: one value, or a bare tuple (``[1], [2]``: Python's source reads top-level commas so)."""
        result = self.value(0)
        if self.peek() == _COMMA:
            self.take()
            result = tuple(self.items(_END, 1, [result])[0])
        if self.peek() != _END:
            raise LiteralError("extra text after the literal")
        return result

    def items(self, close: tuple[str, str], depth: int, items: list) -> tuple[list, bool]:
        """The values of a sequence up to ``close`` (taken, unless it is the end of the text), each at ``depth``,
        appended to ``items``; and whether a comma came last."""
        trailing_comma = False
        while self.peek() != close:
            items.append(self.value(depth))
            trailing_comma = self.peek() == _COMMA
            if trailing_comma:
                self.take()
            elif self.peek() != close:
                raise LiteralError("extra text after the literal" if close == _END else f"expected ',' or {close[1]!r}")
        if close != _END:
            self.take()
        return items, trailing_comma

    def value(self, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise LiteralError("nested too deeply")
        kind, tok = self.take()
        if kind == "end":
            raise LiteralError("unexpected end")
        if kind in ("int", "float"):
            return _number(kind, tok)
        if kind == "str":
            return self.strings(tok)
        if kind == "name":
            if tok not in _NAMES:
                raise LiteralError(f"name {tok!r}")
            return _NAMES[tok]
        if tok in "+-":
            return self.signed(tok)
        if tok in "[(":
            items, trailing_comma = self.items(("punct", "]" if tok == "[" else ")"), depth + 1, [])
            if tok == "[":
                return items
            if len(items) == 1 and not trailing_comma:
                return items[0]  # grouping parentheses
            return tuple(items)
        raise LiteralError(f"unexpected {tok!r}")

    def strings(self, first: str) -> str | bytes:
        """Adjacent strings are one string, as in Python source."""
        parts = [_string(first)]
        while self.peek()[0] == "str":
            parts.append(_string(self.take()[1]))
        if len({type(p) for p in parts}) > 1:
            raise LiteralError("bytes and text side by side")  # a SyntaxError in Python
        return parts[0][:0].join(parts)

    def signed(self, sign: str) -> int | float | complex:
        """literal_eval takes one sign before a number (grouping parentheses around it allowed)."""
        opened = 0
        while self.peek() == ("punct", "("):
            opened += 1
            self.take()
        if self.peek()[0] not in ("int", "float"):
            raise LiteralError("a sign before something that is not a number")
        number = _number(*self.take())
        for _ in range(opened):
            if self.take() != ("punct", ")"):
                raise LiteralError("unbalanced parentheses after a sign")
        return -number if sign == "-" else +number
