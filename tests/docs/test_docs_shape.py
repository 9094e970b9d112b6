"""The docs' shape: pages a researcher reads in one sitting (fast, no marker).

For every page of ``README.md`` and ``docs/**/*.md``:

- it starts with an H1: its first non-blank line, after any HTML comment, is ``# Title``;
- no prose paragraph is over ``MAX_PARAGRAPH`` words. A paragraph is a run of non-blank lines that is not inside a
  fenced code block and is not a table row, a heading, an HTML comment or an image; each list item (with its
  continuation lines) is counted on its own;
- the user docs (``README.md`` and the top level of ``docs/``; not ``docs/maintainers/``, which is the maintainers'
  detail) stay short: under ``USER_WORDS`` words counted outside fenced code blocks (prose, tables and list items:
  what a reader reads), and under ``USER_WORDS_WITH_CODE`` words with the code blocks too (what a reader scrolls
  past). A word is what ``str.split`` splits, as ``wc -w`` counts; HTML comments (the docs-test marks) are not words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("**/*.md"))]
USER_PAGES = [p for p in PAGES if p.parent in (REPO, DOCS)]
MAX_PARAGRAPH = 150
USER_WORDS = 10_000
USER_WORDS_WITH_CODE = 13_000

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def _rel(page: Path) -> str:
    return str(page.relative_to(REPO))


def split_page(text: str) -> tuple[list[str], list[str]]:
    """(the lines outside fenced code blocks, the lines inside them), HTML comments removed from the former."""
    prose, code, fence = [], [], None
    for line in COMMENT.sub(lambda m: "\n" * m[0].count("\n"), text).splitlines():
        m = FENCE.match(line)
        if fence is None and m:
            fence = m[1]
            code.append("")  # the fence line itself: no words
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and line.strip().strip(fence[0]) == "":
                fence = None
                code.append("")
            else:
                code.append(line)
            continue
        prose.append(line)
    return prose, code


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(first line, 1-based; words) of every prose paragraph and list item of a page."""
    out: list[tuple[int, int]] = []
    start, words, fence = None, 0, None
    lines = COMMENT.sub(lambda m: "\n" * m[0].count("\n"), text).splitlines()

    def close():
        nonlocal start, words
        if start is not None:
            out.append((start, words))
        start, words = None, 0

    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        if m:
            close()
            fence = m[1]
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "|", "![")):
            close()
            continue
        if LIST_ITEM.match(line):
            close()
        if start is None:
            start = i
        words += len(stripped.split())
    close()
    return out


def words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_the_page_starts_with_an_h1(page):
    text = COMMENT.sub("", page.read_text(encoding="utf-8"))
    first = next((line for line in text.splitlines() if line.strip()), "")
    assert first.startswith("# "), f"{_rel(page)}: the first line is {first[:60]!r}, not an H1 '# Title'"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_no_paragraph_is_over_the_limit(page):
    long = [(line, n) for line, n in paragraphs(page.read_text(encoding="utf-8")) if n > MAX_PARAGRAPH]
    assert not long, "; ".join(f"{_rel(page)}:{line}: a paragraph of {n} words (at most {MAX_PARAGRAPH})"
                               for line, n in long)


def test_the_user_docs_are_short():
    counts = {_rel(p): split_page(p.read_text(encoding="utf-8")) for p in USER_PAGES}
    prose = {name: words(parts[0]) for name, parts in counts.items()}
    total = sum(prose.values())
    with_code = total + sum(words(parts[1]) for parts in counts.values())
    table = ", ".join(f"{name} {n}" for name, n in sorted(prose.items(), key=lambda kv: -kv[1]))
    assert total < USER_WORDS, f"the user docs hold {total} words outside code blocks (under {USER_WORDS}): {table}"
    assert with_code < USER_WORDS_WITH_CODE, (f"the user docs hold {with_code} words with their code blocks "
                                              f"(under {USER_WORDS_WITH_CODE})")


def test_the_counters_read_markdown_as_a_reader_does():
    page = ("<!-- a mark -->\n# Title\n\none two\nthree\n\n- a b\n  c\n- d\n\n| x | y |\n\n<!-- docs-test: run -->\n"
            "```bash\necho one two three\n```\n\n## Part\n\nfour\n")
    assert paragraphs(page) == [(4, 3), (7, 4), (9, 2), (20, 1)]
    prose, code = split_page(page)
    assert words(code) == 4 and words(prose) == 2 + 3 + 4 + 2 + 5 + 2 + 1
    assert [line for line, n in paragraphs("```\n" + "w " * 200 + "\n```\n")] == []
