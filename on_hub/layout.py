"""The submissions repository's layout, and what a pull request on it may change.

A pull request adds exactly one file, ``submissions/<ORG>--<NAME>.json.gz`` (``<ORG>--<NAME>--<LABEL>.json.gz`` for
another submission of one model; ``<NAME>.json.gz`` for a Hub id without an organisation), named after the Hub id of
the model whose outputs it holds; a Hub id never holds ``--``, so the name splits one way only. Nothing else may
change: no file outside ``submissions/``, no accepted file changed or removed. These checks read only the two trees'
paths and sizes, so a refused pull request is answered before a byte of it is downloaded, and ``refusal`` is a pure
function of them (table-tested).
"""

from __future__ import annotations

import re

from g2m_base.bounded_json import MAX_FILE_BYTES

SUBMISSIONS_DIR = "submissions"
#: The audit records (``g2m audit``), one per audited submission's outputs, beside the submissions.
AUDITS_DIR = "audits"
SUFFIX = ".json.gz"
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9._]|-(?!-))*"  # a Hub id's part: no "--", as huggingface_hub's validator demands
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9._]|-(?!-)){0,63}"
_NAME = re.compile(rf"({_PART})(?:--({_PART})(?:--({_LABEL}))?)?{re.escape(SUFFIX)}")
RULE = (f"a pull request adds one file, {SUBMISSIONS_DIR}/<ORG>--<NAME>{SUFFIX} named after the model's Hub id "
        f"ORG/NAME (<ORG>--<NAME>--<LABEL>{SUFFIX} for another submission of the same model), and changes nothing "
        "else")


def submission_path(model_id: str, label: str | None = None) -> str:
    """Where the submission of ``model_id`` goes in the repository."""
    if "/" not in model_id:
        return f"{SUBMISSIONS_DIR}/{model_id}{SUFFIX}"
    org, _, name = model_id.partition("/")
    return f"{SUBMISSIONS_DIR}/{org}--{name}{f'--{label}' if label else ''}{SUFFIX}"


def model_of(path: str) -> str | None:
    """The model id a submission's path names, or None when the path is not a submission's name."""
    folder, _, file = path.rpartition("/")
    m = _NAME.fullmatch(file) if folder == SUBMISSIONS_DIR else None
    if m is None or len(file) > 200 or ".." in file or any(
            (part or "").endswith((".json", ".gz")) for part in m.groups()):  # one reading of the name only
        return None
    return f"{m.group(1)}/{m.group(2)}" if m.group(2) else m.group(1)


def refusal(base: dict[str, str], head: dict[str, str], sizes: dict[str, int],
            on_main: set[str]) -> tuple[str | None, str | None]:
    """``(the one added submission's path, None)`` when the change from ``base`` to ``head`` (each: path -> content
    id, the pull request's merge base and head) is one a submission may be, else ``(None, why not)``. ``sizes``:
    the head's file sizes; ``on_main``: main's paths now (a file added there since the pull request began is an
    accepted file too)."""
    removed = sorted(set(base) - set(head))
    changed = sorted(p for p in set(base) & set(head) if base[p] != head[p])
    added = sorted(set(head) - set(base))
    if removed:
        return None, f"it removes {_paths(removed)}: {RULE}"
    if changed:
        accepted = [p for p in changed if p.startswith(f"{SUBMISSIONS_DIR}/")]
        if accepted:
            return None, (f"it changes {_paths(accepted)}, a submission already on the board: accepted files are "
                          f"never changed; send a new file instead ({RULE})")
        return None, f"it changes {_paths(changed)}, outside {SUBMISSIONS_DIR}/: {RULE}"
    if not added:
        return None, f"it changes no file: {RULE}"
    outside = [p for p in added if not p.startswith(f"{SUBMISSIONS_DIR}/") or p.count("/") != 1]
    if outside:
        return None, f"it adds {_paths(outside)}, outside {SUBMISSIONS_DIR}/: {RULE}"
    if len(added) > 1:
        return None, f"it adds {len(added)} files ({_paths(added)}): {RULE}"
    path = added[0]
    if model_of(path) is None:
        return None, f"{_paths([path])} is not named as a submission: {RULE}"
    if path in on_main:
        return None, (f"{_paths([path])} is on the board by now (another pull request added it): accepted files are "
                      "never changed; send it under another name")
    twin = next((p for p in on_main if p.lower() == path.lower()), None)
    if twin is not None:
        return None, f"{_paths([path])} differs only in case from {_paths([twin])}, a submission already on the board"
    if sizes.get(path, 0) > MAX_FILE_BYTES:
        return None, f"{_paths([path])} is {sizes[path] / 2**20:.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit"
    return path, None


def diff_change(diff: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(base, head)`` for ``refusal`` from a pull request's git diff (the Hub's ``get_discussion_details``), for a
    Hub that cannot list a pull request's history: each file the diff names, as removed (``deleted file mode``), added
    (``new file mode``) or changed. A header line is never a content line (those start with ``+``, ``-`` or a space);
    a path is read only when the header repeats it exactly (``diff --git a/P b/P``)."""
    base: dict[str, str] = {}
    head: dict[str, str] = {}
    path = None
    for line in diff.splitlines():
        if line.startswith("diff --git a/"):
            both = line[len("diff --git a/"):]
            half = (len(both) - 3) // 2
            path = both[:half] if both == f"{both[:half]} b/{both[:half]}" else f"(an unreadable header: {both[:80]})"
            base[path], head[path] = "before", "after"
        elif path is not None and line.startswith("new file mode"):
            base.pop(path, None)
        elif path is not None and line.startswith("deleted file mode"):
            head.pop(path, None)
    return base, head


def _paths(paths: list[str], most: int = 5) -> str:
    shown = ", ".join(ascii(p)[1:-1][:200] for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
