"""Pages escaped by default, and the markdown beside them, for the report and the static leaderboard site.

Every HTML page is a Jinja2 template (``templates/*.html.j2`` of the room that writes it, extending ``page.html.j2``
here) rendered with autoescape on: a value is escaped as HTML (quotes too) unless the code marks it ``Markup``, which
only HTML we generated ourselves may be (a board row rendered by its own template). Before escaping, every value is
made safe to show (``untrusted.term``: control characters and lone surrogates written as escapes, long text cut).
Markdown cells are escaped by ``untrusted.md``.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from g2m_base.untrusted import md, term

TEMPLATES = Path(__file__).with_name("templates")
MAX_TEXT = 20_000  # characters of one value shown on a page


def _shown(value: object) -> object:
    """Jinja's ``finalize``: every value but our own ``Markup`` as ``untrusted.term`` shows it, escaped next."""
    return value if isinstance(value, Markup) else term(value, MAX_TEXT)


@cache
def environment(folder: Path) -> Environment:
    """The environment of one room's templates (``folder``), with this room's frame and macros beside them."""
    env = Environment(loader=FileSystemLoader([folder, TEMPLATES]), finalize=_shown, undefined=StrictUndefined,
                      autoescape=select_autoescape(default_for_string=True, default=True), keep_trailing_newline=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": True, "separators": (",", ":")}
    env.filters.update(fmt=fmt, fmt_ci=fmt_ci)
    return env


def render(folder: Path, template: str, **values) -> str:
    """``template`` of the room whose templates are in ``folder``, rendered with ``values``."""
    return environment(folder).get_template(template).render(**values)


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def fmt_ci(value: float, ci: tuple[float, float]) -> str:
    """``0.556 [0.412, 0.700]``; a number without an interval (one grid: ``stats.bootstrap_mean``) says so."""
    if not math.isnan(value) and any(math.isnan(x) for x in ci):
        return f"{fmt(value)} (one grid: no interval)"
    return f"{fmt(value)} [{fmt(ci[0])}, {fmt(ci[1])}]"


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table; every cell is escaped (``untrusted.md``), so pass plain text."""
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
