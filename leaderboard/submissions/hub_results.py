"""A model's G2M scores in the Hub's own format: ``.eval_results/grid2matrix.yaml`` for its model repository.

The Hub shows the results files of a model repository on the model's page and gathers them into the leaderboards of
the benchmark they name (``eval.yaml`` at the release's root declares one task per leaderboard: ``spec.HUB_TASKS``).
The file is built with ``huggingface_hub``'s own ``EvalResultEntry`` and ``eval_result_entries_to_yaml``, from a
submission file that ``validate`` has just accepted and re-scored: every value is G2M's cell accuracy over the
task's grids, computed here from the raw outputs (any score a harness or a file states is never read). Only a
complete run of the release may report to the Hub: a partial run, or a run on a local build (data whose content hash
is not the release's), is refused in one line.

``g2m submit RUN --eval-results`` writes it beside the submission; ``g2m eval-results SUBMISSION`` from a submission
file. The file is then added to the model's repository by a pull request (README: "Scores on the Hub").
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID, HUB_TASKS, SUBMISSIONS_URL
from g2m_base.errors import UsageError
from g2m_base.untrusted import term

#: Where the Hub reads a model's results: this file name under ``.eval_results/`` of the model repository.
EVAL_RESULTS_PATH = ".eval_results/grid2matrix.yaml"


def task_rows(scored: list, task_id: str) -> list:
    """The re-scored outputs a Hub task ranks on: those of the G2M tasks its tag (the task id) names."""
    from scoring.catalog import task_info, task_names

    cells = {task_info(name)[:2] for name in task_names((task_id,))}
    if not cells:
        raise ValueError(f"{task_id!r} is not a tag of the G2M tasks")
    return [r for r in scored if (r.grid_size, r.num_colors) in cells]


def _notes(meta: dict) -> str:
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
    return (f"G2M protocol (task version {gen.get('task_version')}): G2M's prompt, answer budget, parser and partial "
            f"credit; {reasoning}; cell accuracy re-scored by g2m validate from the raw outputs")


def eval_result_entries(validation, source_url: str) -> list:
    """One ``EvalResultEntry`` per Hub task, from an accepted submission of the release (refused otherwise)."""
    from huggingface_hub import EvalResultEntry

    from leaderboard.rescoring.rescore import summarise
    from leaderboard.submissions.submission import RELEASE

    if not validation.ok:
        raise UsageError(f"only a complete run of the release can report to the Hub, and this submission is refused: "
                         f"{validation.reason}")
    if validation.data != RELEASE:
        note = next((w for w in validation.warnings if "local build" in w), "its data is not the release's")
        raise UsageError(f"only a run on the release ({HUB_REPO_ID} {DATASET_REVISION}) can report to the Hub; this "
                         f"one read a local build ({note})")
    meta = validation.metadata
    date = meta.get("date") if isinstance(meta.get("date"), str) else None
    notes = _notes(meta)
    return [EvalResultEntry(dataset_id=HUB_REPO_ID, task_id=task_id, dataset_revision=DATASET_REVISION,
                            value=summarise(task_rows(validation.scored, task_id))["cell_accuracy"], date=date,
                            source_url=source_url, source_name="G2M submission (raw outputs)", notes=notes)
            for task_id in HUB_TASKS]


def write_eval_results(submission: str | Path, out: str | Path | None = None, source_url: str | None = None) -> Path:
    """Validate and re-score ``submission``, then write its results file (default: ``.eval_results/grid2matrix.yaml``
    beside it). ``source_url`` links the raw outputs; by default, where the submission is sent."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    from g2m_base.files import atomic_write_text, output_file
    from leaderboard.submissions.submission import validate

    submission = Path(submission)
    out = output_file(out if out is not None else submission.parent / EVAL_RESULTS_PATH, inputs=(submission,))
    url = source_url or f"{SUBMISSIONS_URL}/blob/main/submissions/{submission.name}"
    entries = eval_result_entries(validate(submission), url)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, width=120))
    return out


def said(path: Path) -> str:
    return (f"wrote {term(path)}: add it as {EVAL_RESULTS_PATH} to the model's repository on the Hub, by a pull "
            "request on that repository (its Community tab); the scores then show on the model's page and on the "
            f"leaderboards of {HUB_REPO_ID}")


def _cmd(args: argparse.Namespace) -> int:
    print(said(write_eval_results(args.submission, args.out, args.source_url)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval-results", help="write a model's .eval_results file for the Hub from a submission file")
    p.add_argument("submission", help="a submission file of a complete run of the release (g2m submit)")
    p.add_argument("--out", default=None, help=f"file to write (default: {EVAL_RESULTS_PATH} beside the submission)")
    p.add_argument("--source-url", default=None, help="link to the raw outputs (default: where the submission is "
                                                      "sent, under submissions/ of the submissions repository)")
    p.set_defaults(func=_cmd, extra="report")
