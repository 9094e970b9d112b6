"""What the Hub's own leaderboard for the release reports, listed on the static board apart and unranked.

The Hub gathers the ``.eval_results`` files of model repositories into a leaderboard of the benchmark they name
(``g2m submit --eval-results`` writes one). ``g2m leaderboard build --hub`` reads it through ``huggingface_hub``'s
``HfApi.get_dataset_leaderboard`` (``HF_ENDPOINT`` or ``--hub-endpoint``) so that the two can be compared: each entry
is shown as the Hub reported it, never re-scored and never ranked with the board's rows, and marked where this board
re-scored the same model's raw outputs itself (with the re-scored number beside it).

Everything the Hub answers is untrusted: text is shown through the autoescaping templates (and ``term`` on a
terminal), a link only when it is http(s), and a value only when it is a finite number in [0, 1] (G2M's cell
accuracy); any other entry is listed as refused, with the reason. Offline (``HF_HUB_OFFLINE``), or when the Hub cannot
be read, the section says so and the build goes on: the Hub is never needed to build the board.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from dataset_builder.grids.spec import HUB_REPO_ID
from g2m_base.untrusted import term

#: Entries listed at most (the Hub's answer is read whole by its client; the page stays readable).
MAX_ENTRIES = 1_000
#: Seconds to wait for the Hub's answer: a Hub that does not answer never holds the build.
TIMEOUT_S = 30.0
_WEB_LINK = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&'()*+,;=:@/?#-]*)?")


@dataclass
class HubBoard:
    """What the section shows: where it was read and a note (or why it was skipped), the entries (each: model, value
    as reported, verified, source, file, notes, and ``rescored``: this board's row of the same model, or None), and
    the entries refused (model, reason)."""

    endpoint: str
    note: str
    rows: list[dict] = field(default_factory=list)
    refused: list[list[str]] = field(default_factory=list)

    @property
    def read(self) -> bool:
        return not self.note.startswith("skipped")


def _text(value: object, limit: int = 200) -> str:
    return term(value, limit) if isinstance(value, str) else ""


def _value(value: object) -> tuple[float | None, str | None]:
    """The reported value, or the reason it is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"value {term(repr(value), 40)} is not a number"
    if not math.isfinite(value):
        return None, f"value {value!r} is not finite"
    if not 0 <= value <= 1:
        return None, f"value {value!r} is outside [0, 1] (G2M's cell accuracy is a fraction)"
    return float(value), None


def _entry(e, ours: dict[str, dict]) -> tuple[dict | None, list[str] | None]:
    model = getattr(e, "model_id", None)
    if not isinstance(model, str) or not model.strip():
        return None, ["(no model id)", "the entry names no model"]
    value, why = _value(getattr(e, "value", None))
    if why:
        return None, [_text(model), why]
    source = getattr(e, "source", None)
    source = source if isinstance(source, dict) else {}
    url = source.get("url")
    row = ours.get(model.strip().casefold())
    return {"model": _text(model), "value": value, "verified": getattr(e, "verified", None) is True,
            "source": _text(source.get("name"), 100), "url": url if isinstance(url, str) and len(url) <= 300
            and _WEB_LINK.fullmatch(url) else None, "file": _text(getattr(e, "filename", None), 120),
            "notes": _text(getattr(e, "notes", None), 300),
            "rescored": None if row is None else {
                "page": row["page"], "data": row.get("data"),
                "cell_accuracy": row["views"]["all"]["overall"]["cell_accuracy"]}}, None


def read_hub_board(rows: list[dict], endpoint: str | None = None, repo_id: str = HUB_REPO_ID,
                   timeout: float = TIMEOUT_S) -> HubBoard:
    """The Hub's leaderboard of ``repo_id``, each entry checked and matched against the board's ``rows`` (by model
    id, case aside); a Hub that cannot be read gives a board whose note says why, never an error."""
    from huggingface_hub import HfApi, constants

    where = (endpoint or constants.ENDPOINT).rstrip("/")
    if constants.HF_HUB_OFFLINE:
        return HubBoard(where, "skipped: offline (HF_HUB_OFFLINE is set); build with --hub online to compare")
    try:
        entries = HfApi(endpoint=where).get_dataset_leaderboard(repo_id, base_model_only=False, token=False,
                                                                timeout=timeout)
    except Exception as e:  # noqa: BLE001 - any failure of the Hub (or of its answer) is a note, never the build's end
        return HubBoard(where, f"skipped: the Hub's leaderboard of {repo_id} could not be read "
                               f"({type(e).__name__}: {term(str(e).splitlines()[0] if str(e) else '', 200)})")
    ours = {r["name"].strip().casefold(): r for r in rows if r.get("kind") == "submission"}
    board = HubBoard(where, "")
    for e in list(entries)[:MAX_ENTRIES]:
        shown, refused = _entry(e, ours)
        if shown:
            board.rows.append(shown)
        else:
            board.refused.append(refused)
    more = f" (the first {MAX_ENTRIES:,} of {len(entries):,})" if len(entries) > MAX_ENTRIES else ""
    board.note = (f"{len(board.rows):,} entries of the Hub's leaderboard of {repo_id} at {where}{more}, "
                  f"{sum(r['rescored'] is not None for r in board.rows):,} of them re-scored here, "
                  f"{len(board.refused):,} refused")
    return board
