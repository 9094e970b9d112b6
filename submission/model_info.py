"""What a leaderboard row says about the model beside its scores: parameter count, open weights or API, release date
and a link. ``g2m submit`` asks for them (flags, or a prompt at a terminal); ``validate`` checks each one, since
they come from the submitter: a link must be http(s), a date ISO, a parameter count a number with a unit.
"""

from __future__ import annotations

import re
import sys
from datetime import date

from g2m_base.errors import UsageError
from g2m_base.untrusted import skeleton, term

FIELDS = ("params", "open_weights", "release_date", "url")
_PARAMS = re.compile(r"[0-9][0-9.]{0,6}[KMBT](-A[0-9][0-9.]{0,6}[KMBT])?")  # fullmatch: "$" would allow a final newline
_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&'()*+,;=:@/?#-]*)?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}(-[0-9]{2})?")


def is_link(url: object) -> bool:
    """An http(s) link of at most 300 characters, of plain URL characters (no markup, no blanks, no other scheme)."""
    return isinstance(url, str) and len(url) <= 300 and _URL.fullmatch(url) is not None


def id_problem(model_id: object) -> str | None:
    """Why ``model_id`` is not a model id as the Hub spells one, or None. Only such ids are shown: NAME or ORG/NAME,
    ASCII letters, digits, '-', '_' and '.' (no '--' or '..', no '-' or '.' at either end, at most 96 characters a
    part), so no letter of another script that looks like a Latin one, no blank and no local path can pass as a
    baseline's name or another model's."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if not isinstance(model_id, str) or not model_id:
        return "not a string"
    if not model_id.isascii():
        return "it holds characters other than ASCII letters, digits, '-', '_', '.' and one '/'"
    try:
        validate_repo_id(model_id)
    except HFValidationError:
        if model_id.startswith(("/", ".", "~")) or model_id.count("/") > 1:
            return "it is a path, not NAME or ORG/NAME"
        return ("NAME or ORG/NAME of ASCII letters, digits, '-', '_' and '.', not starting or ending with '-' or "
                "'.', without '--' or '..', at most 96 characters a part")
    return None


def baseline_look_alike(name: str) -> str | None:
    """Why ``name`` may not name a submission's model: it is, or a reader could not tell it from, a built-in
    baseline. The one rule ``g2m submit``, ``g2m validate`` and the board refuse a baseline's name by, in these
    words."""
    from harness_tasks import BASELINES

    baseline = {skeleton(b): b for b in BASELINES}.get(skeleton(name))
    if baseline is None:
        return None
    return (f"the model id {ascii(name.strip())} is, or looks like, the built-in baseline {baseline}; baselines are "
            "computed here, never taken from a submission")


def identity_problem(model: dict) -> str | None:
    """Why ``metadata.model`` may not stand for a submitted model (its id is a baseline's name, in any spelling a
    reader could not tell apart), or None."""
    named = model.get("id")
    return baseline_look_alike(named) if isinstance(named, str) else None


def check(info: dict) -> dict:
    """The model-info fields of ``metadata.model``, checked; raises ValueError with the reason. Absent is fine."""
    out = {}
    model_id = info.get("id")
    if model_id is not None:
        problem = id_problem(model_id)
        if problem:
            raise ValueError(f"model.id {term(str(model_id), 80)!r} is not a Hub model id: {problem}")
        out["id"] = model_id
    params = info.get("params")
    if params is not None:
        if not isinstance(params, str) or not _PARAMS.fullmatch(params):
            raise ValueError("model.params must look like 8B, 0.5B or 235B-A22B")
        out["params"] = params
    weights = info.get("open_weights")
    if weights is not None:
        if not isinstance(weights, bool):
            raise ValueError("model.open_weights must be true (open weights) or false (API only)")
        out["open_weights"] = weights
    released = info.get("release_date")
    if released is not None:
        if not isinstance(released, str) or not _DATE.fullmatch(released):
            raise ValueError("model.release_date must be YYYY-MM-DD or YYYY-MM")
        try:
            date.fromisoformat(released if len(released) == 10 else released + "-01")
        except ValueError:
            raise ValueError(f"model.release_date {released!r} is not a date") from None
        out["release_date"] = released
    url = info.get("url")
    if url is not None:
        if not is_link(url):
            raise ValueError("model.url must be an http(s) link of at most 300 characters")
        out["url"] = url
    return out


def ask(given: dict, interactive: bool | None = None) -> dict:
    """The fields given as flags, and at a terminal, a prompt for each one left out (Enter skips it)."""
    info = {k: v for k, v in given.items() if v is not None}
    if interactive is None:
        interactive = sys.stdin.isatty()
    prompts = {"params": "Parameter count (e.g. 8B, 235B-A22B)", "open_weights": "Open weights? [y/n]",
               "release_date": "Release date (YYYY-MM-DD)", "url": "Model link (https://...)"}
    for key in FIELDS:
        if key in info or not interactive:
            continue
        answer = input(f"{prompts[key]}, or Enter to leave it out: ").strip()
        if answer:
            info[key] = answer.lower().startswith("y") if key == "open_weights" else answer
    try:
        return check(info)
    except ValueError as e:
        raise UsageError(str(e)) from None
