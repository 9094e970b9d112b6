"""A plain, line-by-line reading of the parser's ``rows`` strategy, written from its definition.

The shipped scanner (``scoring.scan.rows_block``) classifies all lines at once with numpy for speed; this is the
slow and obvious version it must agree with on any text (``tests/scoring/test_parsing.py`` compares them on generated
inputs).
"""

from __future__ import annotations

import re

_INT = r"-?\d+"
_SEP = r"(?:[,;|&\[\]() \t$]|\\(?!(?:begin|end)\{))"
_ENV = r"(?i:\\(?:begin|end)\{[a-zA-Z*]+\})"
ROW_LINE = re.compile(rf"{_SEP}*(?:{_ENV}{_SEP}*)?{_INT}(?:{_SEP}+{_INT})*{_SEP}*(?:{_ENV}{_SEP}*)?")
LABEL = re.compile(r" ?\|? ?(?:(?:[Rr](?:[Oo][Ww])?|[Ll][Ii][Nn][Ee]) ?#? ?\d+ ?[:=.)\-]?|\d+(?: ?[:)]|\.(?= ))) ?\|?")
RULE = re.compile(r" ?\|? ?:?-{3,}[-|: ]*")
FILLER = re.compile(rf" ?\|? ?:?-{{3,}}[-|: ]*| ?(?:{_ENV}|\\hline|\$\$|\\\[|\\\]) ?")


def _strip_label(line: str) -> str:
    m = LABEL.match(line)
    return line[m.end():] if m else line


def rows_block(text: str, n: int) -> list[list[int]] | None:
    lines = text.split("\n")
    kinds = []
    for k, line in enumerate(lines):
        body = _strip_label(line)
        if ROW_LINE.fullmatch(body) and not (k + 1 < len(lines) and RULE.fullmatch(lines[k + 1])):
            kinds.append(("row", [int(t) for t in re.findall(_INT, body)]))
        elif FILLER.fullmatch(line):
            kinds.append(("filler", None))
        else:
            kinds.append(("other", None))
    if sum(kind == "row" for kind, _ in kinds) < 2:
        return None
    blocks: list[list[list[int]]] = []
    joined = False
    for kind, values in kinds:
        if kind == "row":
            if joined:
                blocks[-1].append(values)
            else:
                blocks.append([values])
            joined = True
        elif kind == "other":
            joined = False
    for block in reversed(blocks):
        if len(block) == n and all(len(r) == n for r in block):
            return block
    longest = max(len(b) for b in blocks)
    if longest < 2:
        return None
    return next(b for b in reversed(blocks) if len(b) == longest)[: n + 1]
