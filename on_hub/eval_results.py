"""A model's G2M scores in the Hub's own format: ``.eval_results/grid2matrix.yaml`` for its model repository.

The Hub shows the results files of a model repository on the model's page and gathers them into the leaderboards of
the benchmark they name (``eval.yaml`` at the release's root declares one task per leaderboard: ``spec.HUB_TASKS``).
The file is built with ``huggingface_hub``'s own ``EvalResultEntry`` and ``eval_result_entries_to_yaml``, from a
submission file that ``validate`` has just accepted and re-scored: every value is G2M's cell accuracy over the
task's grids, computed here from the raw outputs (any score a harness or a file states is never read). Only a
complete run of the release may report to the Hub: a partial run, or a run on a local build (data whose content hash
is not the release's), is refused in one line.

Nothing from the submission is written as fact unless it was checked: the date only when it is an ISO-8601 date
from 2020 up to today, the task version only when it is a version number, the source only as an http(s) link, and no
free text at all. Every entry's notes say the value is self-reported: re-scored from the raw outputs, not replayed
from the model by the maintainers.

``g2m submit RUN --eval-results`` writes it beside the submission; ``g2m eval-results SUBMISSION`` from a submission
file. The file is then added to the model's repository by a pull request (README: "Scores on the Hub").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from audit.records import TIERS
from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID, HUB_TASKS, SUBMISSIONS_URL
from g2m_base.errors import UsageError
from g2m_base.untrusted import term

#: Where the Hub reads a model's results: this file name under ``.eval_results/`` of the model repository.
EVAL_RESULTS_PATH = ".eval_results/grid2matrix.yaml"
#: What every entry says of its value: no maintainer ran the model to check that these outputs are its own.
SELF_REPORTED = f"self-reported: {TIERS['self-reported']}"
_VERSION = re.compile(r"[0-9]{1,4}(?:\.[0-9]{1,4}){0,3}")
_FIRST_DATE = datetime(2020, 1, 1, tzinfo=UTC)  # before any G2M run


class Written(NamedTuple):
    path: Path
    left_out: tuple[str, ...]  # what the submission said that was not checked, so not written
    tier: str = "self-reported"  # what every entry's notes say of it


def checked_date(value: object, now: datetime | None = None) -> str | None:
    """``value`` when it is an ISO-8601 date or time from 2020 up to a day after ``now``; else None."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return value if _FIRST_DATE <= when <= (now or datetime.now(UTC)) + timedelta(days=1) else None


def checked_version(value: object) -> str | None:
    """A task version number (``2.2``) as text; anything else (text, a bool, a long string) is None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    text = str(value)
    return text if _VERSION.fullmatch(text) else None


def task_rows(scored: list, task_id: str) -> list:
    """The re-scored outputs a Hub task ranks on: those of the G2M tasks its tag (the task id) names."""
    from scoring.catalog import task_info, task_names

    cells = {task_info(name)[:2] for name in task_names((task_id,))}
    if not cells:
        raise ValueError(f"{task_id!r} is not a tag of the G2M tasks")
    return [r for r in scored if (r.grid_size, r.num_colors) in cells]


def tier_note(tier: dict | None) -> str:
    """What an entry says of who produced its value: reproduced only when a verified audit record of these very
    outputs says so (``tier``: ``audit_records.tier_of``); self-reported otherwise."""
    if tier and tier.get("tier") == "reproduced":
        return (f"reproduced: {tier['why']} (the maintainers' audit of {tier.get('audited') or 'an unstated date'}: a "
                "keyed sample of the answers replayed from the named weights)")
    return SELF_REPORTED


def _notes(meta: dict, tier: dict | None = None) -> str:
    """The protocol and the reasoning budget, from what the run recorded (its per-task answer budgets)."""
    from scoring.catalog import budget, task_info

    gen = meta.get("generation") or {}
    toks = gen.get("max_gen_toks") if isinstance(gen.get("max_gen_toks"), dict) else {}
    extra = {v - budget(info[0], info[2]) for t, v in toks.items()
             if isinstance(v, int) and (info := task_info(str(t))) is not None and info[2] == "g2m"}
    if len(extra) == 1:
        reasoning = f"reasoning budget {extra.pop():,} tokens on top of each answer budget"
    else:
        reasoning = "reasoning budget not recorded" if not extra else "reasoning budget differs between tasks"
    version = checked_version(gen.get("task_version")) or "not recorded"
    return (f"G2M protocol (task version {version}): G2M's prompt, answer budget, parser and partial credit; "
            f"{reasoning}; cell accuracy re-scored by g2m validate from the raw outputs; {tier_note(tier)}")


def eval_result_entries(validation, source_url: str, left_out: list[str] | None = None,
                        tier: dict | None = None) -> list:
    """One ``EvalResultEntry`` per Hub task, from an accepted submission of the release (refused otherwise). What the
    submission says that is not checked here is not written, and named in ``left_out``. ``tier``: what the audit of
    these outputs found (None: not audited); a refuted submission is refused."""
    from huggingface_hub import EvalResultEntry

    from scoring.rescoring.rescore import summarise
    from submission.model_info import is_link
    from submission.submission import RELEASE

    if not is_link(source_url):
        raise UsageError(f"the source link must be an http(s) link of at most 300 characters, not {term(source_url)}")

    if not validation.ok:
        raise UsageError(f"only a complete run of the release can report to the Hub, and this submission is refused: "
                         f"{validation.reason}")
    if validation.data != RELEASE:
        note = next((w for w in validation.warnings if "local build" in w), "its data is not the release's")
        raise UsageError(f"only a run on the release ({HUB_REPO_ID} {DATASET_REVISION}) can report to the Hub; this "
                         f"one read a local build ({note})")
    if tier and tier.get("tier") == "refuted":
        raise UsageError(f"the maintainers' audit refuted these outputs ({tier.get('why')}): they are not reported as "
                         "the model's anywhere")
    meta = validation.metadata
    date = checked_date(meta.get("date"))
    if date is None and meta.get("date") is not None and left_out is not None:
        left_out.append(f"the run's date {term(meta.get('date'), 60)} (not an ISO-8601 date from 2020 up to today)")
    gen = meta.get("generation") if isinstance(meta.get("generation"), dict) else {}
    if checked_version(gen.get("task_version")) is None and left_out is not None:
        left_out.append(f"the task version {term(gen.get('task_version'), 60)} (not a version number)")
    notes = _notes(meta, tier)
    return [EvalResultEntry(dataset_id=HUB_REPO_ID, task_id=task_id, dataset_revision=DATASET_REVISION,
                            value=summarise(task_rows(validation.scored, task_id)).cell_accuracy, date=date,
                            source_url=source_url, source_name="G2M submission (raw outputs)", notes=notes)
            for task_id in HUB_TASKS]


def write_eval_results(submission: str | Path, out: str | Path | None = None, source_url: str | None = None,
                       tier_of=None) -> Written:
    """Validate and re-score ``submission``, then write its results file (default: ``.eval_results/grid2matrix.yaml``
    beside it). ``source_url`` links the raw outputs; by default, where the submission is sent. ``tier_of(validation)``
    says what an audit of its outputs found (None, the default: not audited, so self-reported)."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    from g2m_base.files import atomic_write_text, output_file
    from submission.submission import validate

    submission = Path(submission)
    out = output_file(out if out is not None else submission.parent / EVAL_RESULTS_PATH, inputs=(submission,))
    url = source_url or f"{SUBMISSIONS_URL}/blob/main/submissions/{submission.name}"
    left_out: list[str] = []
    v = validate(submission)
    tier = tier_of(v) if tier_of and v.ok else None
    entries = eval_result_entries(v, url, left_out, tier)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, width=120))
    return Written(out, tuple(left_out), "reproduced" if tier_note(tier) != SELF_REPORTED else "self-reported")


def said(written: Written) -> str:
    left = "".join(f"\nleft out: {what}" for what in written.left_out)
    how = ("reproduced: re-scored, and a keyed sample replayed by the maintainers" if written.tier == "reproduced"
           else "self-reported: re-scored, not reproduced")
    return (f"wrote {term(written.path)} (every value {how}): add it as "
            f"{EVAL_RESULTS_PATH} to the model's repository on the Hub, by a pull request on that repository (its "
            f"Community tab); the scores then show on the model's page and on the leaderboards of {HUB_REPO_ID}"
            + left)
