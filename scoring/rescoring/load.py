"""Reading a run: an lm-eval output folder (the run in it that ``--run`` names, else the newest: its results and every
sample, each checked), or a VLMEvalKit prediction file or outputs folder, as one ``Run``."""

from __future__ import annotations

from pathlib import Path

from g2m_base.errors import G2MError
from scoring.catalog import task_info
from scoring.rescoring.release import check_row, first_off_release, release_samples
from scoring.rescoring.rescore import zero_shot_truth
from scoring.runs.find import choose_results, locate, prediction_file, read_results, samples_files, task_of
from scoring.runs.layout import results_date
from scoring.runs.run import NoResults, Run, RunError
from scoring.runs.samples import SamplesReader, missing_samples


def load_vlmevalkit(path: Path) -> Run:
    """A VLMEvalKit prediction file (for the TSV of ``g2m export vlmevalkit``) as a run: its rows and record read by
    ``scoring.runs.vlmevalkit``, each row's target from its id (``release_samples``). A row the
    spreadsheet cut is kept apart in ``Run.cut``."""
    from scoring.runs.vlmevalkit import read_predictions

    try:
        predictions = read_predictions(path)
        samples, cut = release_samples(predictions.rows)
    except G2MError as e:
        raise RunError(str(e)) from None
    except ValueError as e:
        raise RunError(f"{path.name}: {e}") from None
    if not samples:
        raise RunError(f"{path.name}: no predictions" + (f" ({len(cut):,} cut by the .xlsx format; use the .tsv)"
                                                          if cut else ""))
    return Run(path.parent, path, predictions.results, samples, cut=cut)


def load_run(path: str | Path, allow_partial: bool = False, run: str | None = None) -> Run:
    """The run ``run`` names in ``path`` (``find.choose_results``: a date, or its results file), else the newest; its
    results and every sample, each checked; a bad line is named, never skipped. ``Run.others`` are the dates of the
    folder's other runs, which the caller names beside the one it read.
    ``path`` may also be a VLMEvalKit prediction file (``<model>_Grid2Matrix.xlsx``/``.tsv``/``.csv``/``.json``), or
    a folder of VLMEvalKit's outputs that holds exactly one.

    A sample logged twice (the same id) is counted once when both copies agree, and refused when they differ. A run
    whose samples files do not match what it recorded (``missing_samples``) is refused, naming the first task and
    what is missing, unless ``allow_partial``: then it is read, and ``Run.incomplete`` says what is missing.
    """
    if Path(path).is_file() and results_date(path) is not None and run is None:
        return load_run(Path(path).parent, allow_partial, str(path))  # a run's results file: that run of its folder
    if Path(path).is_file():
        return _only(load_vlmevalkit(Path(path)), run)
    try:
        folder = locate(path)
    except NoResults:  # a VLMEvalKit outputs folder: its one prediction file
        return _only(load_vlmevalkit(prediction_file(Path(path))), run)
    chosen, others = choose_results(folder, run)
    results_path, date, results = read_results(chosen)
    truth = zero_shot_truth()
    reader = SamplesReader()
    for f in samples_files(folder, date):
        task = task_of(f, date)
        task_n, task_c, _ = task_info(task)
        reader.read(f, task, lambda s, n=task_n, c=task_c: check_row(s, n, c, truth),
                    lambda rows: first_off_release(rows, truth))
    incomplete = missing_samples(results, date, reader.logged, reader.cut)
    if incomplete and not allow_partial:
        more = f" (and {len(incomplete) - 1} more task(s))" if len(incomplete) > 1 else ""
        raise RunError(f"{folder}: the run of {date} is incomplete: {incomplete[0]}{more}; run the same g2m eval "
                       "again to finish it, or pass --allow-partial to read what is there (marked partial)")
    if not reader.samples:
        raise RunError(f"{folder}: the samples files of the run of {date} hold no samples")
    return Run(folder, results_path, results, reader.samples, tuple(incomplete), others=tuple(others))


def _only(run: Run, name: str | None) -> Run:
    """A VLMEvalKit prediction file is one run: ``--run`` has nothing to choose."""
    if name is not None:
        raise RunError(f"{run.results_path.name} is a VLMEvalKit prediction file, one run: --run chooses among the "
                       "lm-eval runs of a model folder")
    return run
