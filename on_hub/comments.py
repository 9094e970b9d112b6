"""The comment the board posts on a pull request, and how a later sync knows it answered already.

The verdict is ``g2m validate``'s own lines (``submission.said``) in a code fence, so nothing a submitter wrote (a
file name, a model id, a title with markup) is ever rendered as Markdown or HTML: the fence is longer than any run of
backticks inside it, as CommonMark allows. The last line is a marker, an HTML comment naming the revision checked and
the verdict; a sync believes only markers in comments written by its own account (a submitter who pastes one into
their own comment changes nothing), and answers a pull request again only when its head has moved.
"""

from __future__ import annotations

import re

VERDICTS = ("accepted", "rejected")
_MARKER = re.compile(r"<!-- g2m-board revision=([0-9a-f]{40}) verdict=(accepted|rejected) -->\s*\Z")


def marker(revision: str, verdict: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", revision) or verdict not in VERDICTS:
        raise ValueError(f"a marker names a 40-hex revision and one of {VERDICTS}, not {revision!r}, {verdict!r}")
    return f"<!-- g2m-board revision={revision} verdict={verdict} -->"


def fenced(lines: list[str]) -> str:
    """The lines in a fence no line can close."""
    text = "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def comment(revision: str, verdict: str, lines: list[str], merged_on_accept: bool,
            next_step: str | None = None) -> str:
    """The whole comment: a heading, the verdict's lines as ``g2m validate`` prints them, what happens next
    (``next_step`` where the usual words would be wrong), the marker."""
    short = revision[:12]
    if verdict == "accepted":
        head = f"**G2M board: ACCEPTED** (checked at {short})"
        then = ("It will be merged and shown on the board as self-reported until the maintainers replay a sample of "
                "it from the named weights (g2m audit)." if merged_on_accept else
                "A maintainer merges it; the board then shows it as self-reported until a sample of it is replayed "
                "from the named weights (g2m audit).")
    else:
        head = f"**G2M board: REJECTED** (checked at {short})"
        then = ("Nothing was merged. Fix it and push a new commit to this pull request: it is checked again. "
                "`g2m validate FILE` says the same on your machine.")
    return f"{head}\n\n{fenced(lines)}\n\n{then if next_step is None else next_step}\n\n{marker(revision, verdict)}"


def answered(comments: list[tuple[str, str]], me: str) -> tuple[str, str] | None:
    """``(revision, verdict)`` of the last marked comment ``me`` wrote, from ``(author, text)`` in order; None when
    there is none."""
    found = None
    for author, text in comments:
        m = _MARKER.search(text or "") if author == me else None
        if m:
            found = (m.group(1), m.group(2))
    return found
