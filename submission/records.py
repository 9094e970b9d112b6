"""A submission's records, checked and scored one at a time as the reader hands them over: each an id of the
release, its raw output and, when the run logged it, why generation stopped."""

from __future__ import annotations

import hashlib
import json

from g2m_base.bounded_json import Rejected
from g2m_base.untrusted import term
from scoring.parsing import MAX_ANSWER_CHARS
from scoring.rescoring.rescore import score_outputs, truth_matrix, zero_shot_truth
from scoring.score import FINISH_REASONS, REQUEST_FAILED
from submission.coverage import LOCAL, RELEASE, scaled_count

MAX_OUTPUT_CHARS = MAX_ANSWER_CHARS  # longer outputs could never parse anyway
#: A record's optional ``finish_reason``: a failed request has no record at all.
RECORD_FINISH_REASONS = FINISH_REASONS - {REQUEST_FAILED}


def record(sample_id: str, sample) -> dict:
    """One submitted record: the id, the model's text, and the finish reason its run logged (when it logged one)."""
    rec = {"id": sample_id, "output": sample.output}
    if sample.finish_reason in RECORD_FINISH_REASONS:
        rec["finish_reason"] = sample.finish_reason
    return rec



class Records:
    """Checks and scores records one at a time, as the reader hands them over, under each protocol asked for."""

    def __init__(self, key: str, scorings: tuple[tuple[str, str], ...]) -> None:
        self.key, self.scorings = key, scorings  # (name of the scores, protocol)
        self.truth = zero_shot_truth()
        self.seen: set[str] = set()
        self.scored: dict[str, list] = {name: [] for name, _ in scorings}
        self.extra_fields: set[str] = set()
        self.with_extra = 0
        self.digests: dict[str, bytes] = {}  # id -> sha256 of (id, output): the outputs, whatever the file's layout
        self.texts: dict[str, tuple[str, str | None]] = {}  # id -> (output, finish reason): what a viewer shows

    def __call__(self, k: int, rec: object) -> None:
        truth, what = self.truth, f"{self.key} {k}"
        if k >= 2 * len(truth):
            raise Rejected(f"over {2 * len(truth):,} {self.key}; the release has {len(truth):,} ids")
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or not isinstance(rec.get("output"), str):
            raise Rejected(f"{what} must be an object with a string id and a string output")
        rid = rec["id"]
        if rid not in truth:
            raise Rejected(f"{what}: unknown id {term(rid, 80)!r}")
        if rid in self.seen:
            raise Rejected(f"{what}: id {rid} appears more than once")
        if len(rec["output"]) > MAX_OUTPUT_CHARS:
            raise Rejected(f"{what} ({rid}): output of {len(rec['output']):,} characters, over {MAX_OUTPUT_CHARS:,}")
        self.seen.add(rid)
        self.digests[rid] = hashlib.sha256(json.dumps([rid, rec["output"]]).encode()).digest()
        finish = rec.get("finish_reason")
        if finish is not None and (not isinstance(finish, str) or finish not in RECORD_FINISH_REASONS):
            raise Rejected(f"{what} ({rid}): finish_reason {term(str(finish), 40)!r} is not one of "
                           f"{', '.join(sorted(RECORD_FINISH_REASONS))}")
        extra = set(rec) - {"id", "output", "finish_reason"}
        if extra:
            self.with_extra += 1
            self.extra_fields |= {term(x, 40) for x in extra}
        self.texts[rid] = (rec["output"], finish)
        t = truth[rid]
        target = truth_matrix(t)
        scores = score_outputs(rid, rec["output"], target, t.num_colors, finish, tuple(p for _, p in self.scorings))
        for (name, _), scored in zip(self.scorings, scores, strict=True):
            self.scored[name].append(scored)

    def digest(self) -> bytes:
        """One hash of every (id, output), in id order: two files with the same outputs have the same one, however
        they are laid out, ordered, compressed or decorated."""
        return hashlib.sha256(b"".join(self.digests[i] for i in sorted(self.digests))).digest()

    def check_complete(self, data: str = RELEASE) -> int | None:
        """Every id of the release; on a local build, or the first k of every (N, C) (returns k)."""
        missing = [i for i in self.truth if i not in self.seen]
        if missing and data == LOCAL and (k := scaled_count(self.seen)):
            return k
        if missing:
            raise Rejected(f"{self.key}: {len(missing):,} of {len(self.truth):,} ids are missing (first: {missing[0]})")
