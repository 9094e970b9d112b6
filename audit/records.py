"""Audit records: what an audit (``g2m audit``) drew, replayed and decided, signed with the board's key, one JSON file
per submission in the audits folder (``<content sha256>.json``: its outputs and every claim of its metadata,
``submission.claims_sha256``); and the tier a board row gets from them.

A record vouches for exactly what it replayed: the outputs under the claims they were sent with (the model, its
revision and size, every setting the replay ran under). The same outputs sent again claiming another revision or
size are another submission, with no record until it is audited itself; two records never share a file. The board
believes a record only when its signature verifies under its own key (``audit.key``'s key file, under
a purpose of its own): a record edited by hand, written without the key, made for another submission, or of an
older format is ignored, and the row stays self-reported. A record is read with a size cap and only its known
fields.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

from audit import key
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.files import atomic_write_text
from g2m_base.untrusted import strict_json

FORMAT = "g2m-audit/2"  # /1 was filed by outputs alone: one record covered any claims sent with them
FIELDS = ("format", "submission", "sample", "replay", "items", "verdict", "hmac")
#: Fields a record holds only when there was something of the kind: the probe sections replayed.
OPTIONAL = ("probes",)
VERDICTS = ("reproduced", "self-reported", "refuted")
#: Whether a row's outputs are known to come from the model it names (the board, its pages and tables, and every Hub
#: entry say it in these words): *reproduced* (computed here, or a keyed sample of its answers replayed by the
#: maintainers from the named weights agreed: ``g2m audit``), *self-reported* (re-scored, but not replayed yet or not
#: replayable), *refuted* (the replay disagreed: shown with its numbers and the reason, never ranked).
TIERS = {
    "reproduced": "computed by this board from the seeds, or a sample of its answers, drawn with a key only the board "
                  "holds, was replayed by the maintainers from the named weights and agreed",
    "self-reported": "re-scored here from the submitted outputs, but not replayed from the model's weights (not yet, "
                     "or it cannot be: an API model), so which model wrote them is the submitter's word",
    "refuted": "the maintainers' replay of a sample of its answers from the named weights disagreed with them: shown "
               "with its numbers and the reason, never ranked",
}
MAX_RECORD_BYTES = 4 << 20  # 1,000 items with their replayed answers' hashes: ~200 KB
_PURPOSE = b"g2m-audit-record/1\0"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def record_key(board_key: bytes) -> bytes:
    return hmac.new(board_key, _PURPOSE, hashlib.sha256).digest()


def sign(board_key: bytes, record: dict) -> str:
    """The record's HMAC-SHA256, as a cache entry's is made (``key.sign``), under the key of this purpose."""
    return key.sign(record_key(board_key), record)


def record_path(folder: Path, content_sha256: str) -> Path:
    return Path(folder) / f"{content_sha256}.json"


def write(folder: Path, board_key: bytes, record: dict) -> Path:
    """The record, signed, written whole or not at all."""
    record = {**record, "format": FORMAT}
    if record["verdict"]["tier"] not in VERDICTS:
        raise ValueError(f"an audit decides one of {', '.join(VERDICTS)}, not {record['verdict']['tier']!r}")
    record["hmac"] = sign(board_key, record)
    path = record_path(folder, record["submission"]["content_sha256"])
    Path(folder).mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, strict_json({k: record[k] for k in (*FIELDS, *OPTIONAL) if k in record}, indent=1) + "\n")
    return path


def verified(path: Path, board_key: bytes) -> dict | None:
    """The record in ``path`` when it is one and its signature verifies under ``board_key``; else None."""
    try:
        record = read_json(path, MAX_RECORD_BYTES, "audit record")
    except (Rejected, OSError, ValueError):
        return None
    if not isinstance(record, dict) or not set(FIELDS) <= set(record) <= {*FIELDS, *OPTIONAL} \
            or record.get("format") != FORMAT:
        return None
    if not isinstance(record["hmac"], str) or not hmac.compare_digest(record["hmac"], sign(board_key, record)):
        return None
    sub = record.get("submission")
    if not isinstance(sub, dict) or not all(_SHA256.fullmatch(str(sub.get(k))) for k in ("outputs_sha256",
                                                                                        "content_sha256")):
        return None
    if path.name != f"{sub['content_sha256']}.json":
        return None  # a record is filed under the submission it audited: a copy under another name is not believed
    found = record.get("verdict")
    if not isinstance(found, dict) or found.get("tier") not in VERDICTS or not isinstance(found.get("reason"), str):
        return None
    return record


def read_folder(folder: Path | None, board_key: bytes) -> tuple[dict[str, dict], list[str]]:
    """(content sha256 -> verified record, the names of the files that were not believed)."""
    if folder is None or not Path(folder).is_dir():
        return {}, []
    good, ignored = {}, []
    for path in sorted(Path(folder).glob("*.json")):
        record = verified(path, board_key)
        if record is None:
            ignored.append(path.name)
        else:
            good[record["submission"]["content_sha256"]] = record
    return good, ignored


#: Where ``g2m leaderboard build`` looks for audit records by default: this folder inside the submissions folder.
AUDITS_DIR = "audits"
NOT_AUDITED = "not replayed by the maintainers yet"


def tier_of(records: dict[str, dict], content_sha256: str, model: str) -> dict:
    """A submission's tier from the verified record of exactly this submission (its outputs and claims):
    ``{"tier", "why", "audited"}`` (the record's verdict and reason, and when the audit finished); self-reported when
    there is none (the same outputs audited under other claims are not this submission), or it names another
    model."""
    rec = records.get(content_sha256)
    if rec is None or rec["submission"].get("model") != model:
        return {"tier": "self-reported", "why": NOT_AUDITED, "audited": None}
    found = rec.get("verdict") or {}
    return {"tier": found.get("tier"), "why": found.get("reason"), "audited": (rec.get("replay") or {}).get("finished")}


def unaudited(rows: list[dict]) -> list[str]:
    """The files of the shown open-weight submissions that no audit has replayed yet: the audit queue."""
    return [r["file"] for r in rows if r["kind"] == "submission" and r["tier"]["why"] == NOT_AUDITED
            and r["meta"]["model"].get("open_weights") is True]


def well_formed_tier(value: object, tiers: tuple[str, ...]) -> bool:
    return (isinstance(value, dict) and set(value) == {"tier", "why", "audited"} and value["tier"] in tiers
            and isinstance(value["why"], str) and (value["audited"] is None or isinstance(value["audited"], str)))
