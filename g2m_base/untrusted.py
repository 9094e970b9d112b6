"""Text that came from outside (a submission, a run's samples, a file name) is data: never markup, never terminal
control, never code.

One place decides how such text is shown in each medium and what is refused outright:

- ``term``: for a terminal, every control, format (bidi overrides), separator and surrogate character is written as an
  escape, so a model id can neither forge a line nor recolour the screen;
- ``md``: for markdown, HTML is escaped (a renderer that passes HTML through shows it as text) and markdown
  punctuation is backslash-escaped, so no link, image or table cell can be injected;
- ``check_value``: the rule for model ids and metadata, shared by ``g2m validate`` and ``g2m leaderboard build``:
  strings without lone surrogates or control characters, bounded length, depth and size;
- ``strict_json``: JSON out without NaN or Infinity (they are not JSON; they become null).
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata

from g2m_base.errors import UsageError

#: Metadata may nest this deep (metadata.generation.max_gen_toks.<task> is 3), hold this many values in all, and
#: strings this long.
MAX_DEPTH = 6
MAX_VALUES = 2_000
MAX_STRING = 2_000

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def term(text: object, limit: int = 300) -> str:
    """``text`` as it may be printed to a terminal: unsafe characters escaped, at most ``limit`` characters kept."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit] + "..."
    if s.isascii() and not _ASCII_CONTROL.search(s):
        return s
    return "".join(_escape(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES else c for c in s)


def md(text: object, limit: int = 300) -> str:
    """``text`` as literal markdown: escaped for a terminal first, then HTML-escaped, then markdown-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(term(text, limit), quote=False))


def unsafe_character(s: str) -> str | None:
    """A description of the first character that may not appear in an id or metadata, or None."""
    if s.isascii():
        m = _ASCII_CONTROL.search(s)
        return None if m is None else f"control character {_escape(m.group())}"
    for c in s:
        cat = unicodedata.category(c)
        if cat == "Cs":
            return f"lone surrogate {_escape(c)}"
        if cat in ("Cc", "Cf", "Zl", "Zp"):
            return f"control character {_escape(c)}"
    return None


def check_value(value: object, where: str = "metadata") -> None:
    """Refuse, in one line, metadata that is not plain data: over-deep, over-large, non-finite or unsafe text.

    Walks iteratively (no recursion, whatever the depth) and stops at the first problem.
    """
    stack = [(value, where, 1)]
    seen = 0
    while stack:
        v, path, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise UsageError(f"{where} holds more than {MAX_VALUES:,} values")
        if depth > MAX_DEPTH:
            raise UsageError(f"{term(path, 80)} is nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            for k, item in v.items():
                _check_string(k, f"a key in {path}")
                stack.append((item, f"{path}.{k}", depth + 1))
        elif isinstance(v, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(v))
        elif isinstance(v, str):
            _check_string(v, path)
        elif isinstance(v, float) and not math.isfinite(v):
            raise UsageError(f"{term(path, 80)} is {v}, which is not JSON")
        elif v is not None and not isinstance(v, (bool, int, float)):
            raise UsageError(f"{term(path, 80)} is a {type(v).__name__}, not JSON data")


def _check_string(s: str, path: str) -> None:
    if len(s) > MAX_STRING:
        raise UsageError(f"{term(path, 80)} is {len(s):,} characters long, over {MAX_STRING:,}")
    problem = unsafe_character(s)
    if problem:
        raise UsageError(f"{term(path, 80)} holds a {problem}")


def finite(value: object) -> object:
    """``value`` with every NaN or infinite float replaced by None (recursively)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def strict_json(value: object, **kwargs) -> str:
    """JSON text that any strict parser accepts: non-finite numbers become null."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)


#: Letters of other scripts drawn like Latin ones (Unicode's confusables for lower-case Latin, the common part):
#: Cyrillic, Greek and Armenian look-alikes, and dashes that read as a hyphen.
_CONFUSABLE = str.maketrans({
    **dict.fromkeys("аɑα", "a"), "Ь": "b", "с": "c", "ϲ": "c", "ԁ": "d", **dict.fromkeys("еєε", "e"), "ɡ": "g",
    "һ": "h", **dict.fromkeys("іιӏ", "i"), "ј": "j", "κ": "k", **dict.fromkeys("оοօσ", "o"), **dict.fromkeys("рρ", "p"),
    "ԛ": "q", "ѕ": "s", "τ": "t", **dict.fromkeys("υս", "u"), "ν": "v", **dict.fromkeys("ԝω", "w"),
    **dict.fromkeys("хχ", "x"), **dict.fromkeys("уγ", "y"), **dict.fromkeys("‐‑‒–—―−﹣", "-"),
})


def skeleton(name: str) -> str:
    """What ``name`` looks like, for comparing names a reader could not tell apart: compatibility forms folded
    (full-width letters, ligatures), case folded, invisible characters dropped, look-alike letters of other scripts
    and dashes mapped to their Latin or ASCII twin, blanks at the ends stripped."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    visible = "".join(ch for ch in folded if unicodedata.category(ch) not in ("Cf", "Mn", "Cc"))
    return unicodedata.normalize("NFKC", visible.translate(_CONFUSABLE)).casefold().strip()
