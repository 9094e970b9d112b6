"""A submission's probe results replayed: each sweep section's headline read-outs, for a keyed sample of its test
rows, from the checkpoint the submission names.

A probe section carries, per headline read-out, the predicted cell of every test row and the trained head that made
them (``submission.probe_heads``). Predictions alone prove nothing: a block of the truth scores 1.0 and re-scores
as 1.0. The replay extracts the read-out's features for K rows drawn with the board's key (the submitter cannot know
which), applies the submitted head, and holds the result against the submitted predictions, grid by grid: the same
grid, or one whose cells differ on at most ``CELL_SLACK`` of them (a near-tie of the head's logits can fall the
other way on another GPU or dtype), agrees; anything else differs, and the sample decides as for answers
(``verdict.decide``). What it cannot prove: that the head was trained as the recipe says (a head fitted on the test
labels would replay as well); only that these predictions come from this head on this checkpoint's features.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import NamedTuple

from audit import sample, verdict
from dataset_builder.grids.configs import get_config
from g2m_base.bounded_json import read_bytes
from g2m_base.errors import UsageError
from submission.probe_section import data_scale, decode, expected_rows, test_truth

#: The share of a grid's cells that may differ between the submitted and the replayed prediction of one row.
CELL_SLACK = 0.01


class ProbeAccess(NamedTuple):
    """Where the probes are replayed: the checkpoint (a Hub id or a folder), the release holding the probing
    configs, the device."""

    checkpoint: str | None
    data: str | None
    device: str = "cpu"
    batch_size: int = 4


def sections_of(path: Path) -> list[dict]:
    """The probe sections of a submission file that has just passed ``validate``."""
    doc = json.loads(read_bytes(path))
    return doc.get("probes") or []


def _rows(ids: list[str]) -> list[int]:
    return [int(i.rsplit("-", 1)[1]) for i in ids]  # a test id ends in its row number


def _check_data(sec: dict, data: str) -> None:
    """The probing rows must be the ones the section's predictions were made on: the same release revision, or a
    local build with the same manifest (and so the same rows)."""
    from dataset_builder.release.source import provenance

    have, want = provenance(data), sec.get("data") or {}
    keys = [k for k in ("revision", "manifest_sha256", "build_params") if k in want or k in have]
    if any(have.get(k) != want.get(k) for k in keys):
        raise UsageError(f"the probes of {sec['config']} were made on other data than {data} (its revision, manifest "
                         "or build settings differ): give the build they were made on with --probe-data")


def audit_probes(sections: list[dict], outputs_sha256: str, key: bytes, where: ProbeAccess, k: int,
                 progress: bool = True) -> tuple[list[dict], verdict.Verdict | None]:
    """Replay every replayable read-out of every sweep section; (what each section showed, the sample's verdict,
    or None when nothing could be replayed)."""
    from probing.sweep.replay import replay_predictions

    items: list[verdict.Item] = []
    shown = []
    for i, sec in enumerate(sections):
        heads = {ro["point"]: ro for ro in sec.get("readouts", []) if isinstance(ro.get("head"), dict)}
        if sec.get("kind") != "sweep" or not heads:
            shown.append({"config": sec.get("config"), "replayed": False,
                          "why": "no trained head in the section: its predictions cannot be replayed"})
            continue
        if not where.checkpoint or not where.data:
            shown.append({"config": sec["config"], "replayed": False,
                          "why": "no checkpoint or probing data to replay on (--probe-checkpoint, --probe-data)"})
            continue
        _check_data(sec, where.data)
        block = get_config(sec["config"]).split("test").blocks[0]
        n, c = block.grid_size, block.num_colors
        count = expected_rows(sec["config"], data_scale(sec.get("data") or {}))
        offered = [(block.sample_id(r), n, c) for r in range(count)]
        ids = sample.draw(sample.sample_key(key, f"{outputs_sha256}:probes[{i}]"), offered, k)
        rows = _rows(ids)
        truth = test_truth(sec["config"], count)
        points = {p: {f: ro[f] for f in ("stage", "layer", "feature_dim", "stored_grid")} for p, ro in heads.items()}
        replayed = replay_predictions(sec["recipe"], where.checkpoint, where.data, sec["config"], rows,
                                      {p: base64.b64decode(ro["head"]["data"]) for p, ro in heads.items()}, points,
                                      where.device, where.batch_size)
        readouts = []
        for p, ro in heads.items():
            submitted = decode(ro["cells"], truth, c, f"probes[{i}].{p}")[rows]
            mine = []
            for rid, a, b in zip(ids, submitted, replayed[p], strict=True):
                agreement = float((a == b).mean())
                mine.append(verdict.Item(f"{p}:{rid}", verdict.SAME_MATRIX if agreement >= 1 - CELL_SLACK
                                         else verdict.DIFFERS, agreement))
            items += mine
            readouts.append({"point": p, "submitted_cell_accuracy": float((submitted == truth[rows]).mean()),
                             "replayed_cell_accuracy": float((replayed[p] == truth[rows]).mean()),
                             "items": [m._asdict() for m in mine], "tier": verdict.decide(mine).tier})
        shown.append({"config": sec["config"], "replayed": True, "ids": ids, "readouts": readouts})
    if not items:
        return shown, None
    found = verdict.decide(items)
    return shown, found._replace(reason="probe predictions: " + found.reason.replace("answers", "predictions"))


def combined(answers: verdict.Verdict, probes: verdict.Verdict | None, sections: list[dict]) -> verdict.Verdict:
    """One tier for the row: refuted when either half is; reproduced only when the answers are and every probe
    section that was sent was replayed and agreed."""
    if not sections:
        return answers
    if probes is None:
        why = next((s["why"] for s in sections if not s.get("replayed")), "nothing replayed")
        probes = verdict.Verdict(verdict.SELF_REPORTED, f"probe predictions not replayed: {why}", 0, 0, 0)
    elif any(not s.get("replayed") for s in sections):
        probes = probes._replace(tier=verdict.SELF_REPORTED if probes.tier == verdict.REPRODUCED else probes.tier,
                                 reason=probes.reason + "; a section without a head was not replayed")
    if verdict.REFUTED in (answers.tier, probes.tier):
        first, second = (probes, answers) if probes.tier == verdict.REFUTED else (answers, probes)
        return first._replace(tier=verdict.REFUTED, reason=f"{first.reason} (and {second.reason})")
    if answers.tier == verdict.REPRODUCED and probes.tier == verdict.REPRODUCED:
        return answers._replace(reason=f"{answers.reason}; {probes.reason}")
    return answers._replace(tier=verdict.SELF_REPORTED, reason=f"{answers.reason}; {probes.reason}")


def resolve(given: ProbeAccess | None, access, meta: dict, data: str | None) -> ProbeAccess:
    """Where the probes are replayed: what the maintainer gave (``{model}`` and ``{revision}`` filled in from the
    submission, as for the answers), else the checkpoint the answers' replay loads (``pretrained=`` of its model
    arguments, or what ``--serve`` serves: a running server cannot give features) and its data and device."""
    from audit.replay import Access
    from harness_tasks import ModelArgs

    given = given or ProbeAccess(None, None)
    if given.checkpoint:
        args = Access(model="probe", model_args=f"pretrained={given.checkpoint}").named(meta).model_args
        checkpoint = ModelArgs.parse(args).name("")
    else:
        checkpoint = access.serve or ModelArgs.parse(access.model_args).name("")
    return given._replace(checkpoint=checkpoint or None, data=given.data or data,
                          device=access.device or given.device)
