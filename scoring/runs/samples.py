"""Reading a run's samples: each line of a ``samples_<task>_<date>.jsonl`` file parsed and checked as a G2M row (an
N x N target of the row's palette, the model's text), a sample logged twice counted once, and what the run's record
promises that its files do not hold."""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from pathlib import Path

import numpy as np

from dataset_builder.grids.spec import MAX_COLORS, MAX_GRID_SIZE, MIN_COLORS
from g2m_base.bounded_json import loads
from scoring.catalog import task_info
from scoring.runs.run import RunError, Sample
from scoring.score import FINISH_REASONS


def parse_sample(line: str) -> Sample:
    """One logged sample, checked: a target that is not an N x N matrix of the row's palette values is refused."""
    row = loads(line, "sample line")
    if not isinstance(row, dict) or not isinstance(row.get("doc"), dict):
        raise ValueError("no doc")
    doc = row["doc"]
    sid, n, c, matrix = doc.get("id"), doc.get("grid_size"), doc.get("num_colors"), doc.get("matrix")
    if not isinstance(sid, str) or not sid:
        raise ValueError("the doc has no string id")
    if type(n) is not int or not 1 <= n <= MAX_GRID_SIZE:
        raise ValueError(f"grid_size {n!r} is not an integer from 1 to {MAX_GRID_SIZE}")
    if type(c) is not int or not MIN_COLORS <= c <= MAX_COLORS:
        raise ValueError(f"num_colors {c!r} is not an integer from {MIN_COLORS} to {MAX_COLORS}")
    if not (isinstance(matrix, list) and len(matrix) == n
            and all(isinstance(r, list) and len(r) == n for r in matrix)):
        raise ValueError(f"the target is not a {n}x{n} matrix")
    target = _colours(matrix, c)
    resps = row.get("resps")
    output = resps[0][0] if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0] else None
    if not isinstance(output, str):
        raise ValueError("resps[0][0] is not the model's text")
    detail = doc.get("g2m") if isinstance(doc.get("g2m"), dict) else {}
    finish = detail.get("finish_reason")
    finish = finish if isinstance(finish, str) and finish in FINISH_REASONS else None
    return Sample(sid, n, c, target, output, finish_reason=finish)


def _colours(matrix: list[list], c: int) -> np.ndarray:
    """An N x N matrix (N >= 1) as int64, every cell an int from 0 to c - 1, else a ValueError naming the first cell
    that is not: the same test as one per cell in Python, by a C loop over the cells' types and numpy's range."""
    if set(map(type, chain.from_iterable(matrix))) == {int}:
        try:
            target = np.asarray(matrix, dtype=np.int64)
        except OverflowError:  # past int64: out of range, named below
            target = None
        if target is not None and target.min() >= 0 and target.max() < c:
            return target
    bad = next(v for v in chain.from_iterable(matrix) if not (type(v) is int and 0 <= v < c))
    raise ValueError(f"the target holds {bad!r}, not a colour value from 0 to {c - 1}")


class SamplesReader:
    """The samples of one run's files, read in order: a bad line is named (file and line), never skipped; a sample
    logged twice (the same protocol and id) is kept once when both copies agree and refused when they differ.
    ``logged`` counts the ids each task's file holds; ``cut`` names the tasks whose last line is cut short."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.logged: dict[str, int] = {}
        self.cut: set[str] = set()
        self._where: dict[tuple[str, str], tuple[str, int, str]] = {}

    def read(self, path: Path, task: str, check: Callable[[Sample], None],
             check_all: Callable[[list[Sample]], tuple[int, str] | None] | None = None) -> None:
        """Every line of ``path`` (the samples of ``task``), each passed to ``check`` (raising ValueError) first;
        then ``check_all`` checks the lines read together (returning the index of the first that fails, and why),
        and the first line that fails either way is the one named, as if each were checked in turn."""
        protocol = task_info(task)[2]
        ids: set[str] = set()
        read: list[tuple[int, Sample]] = []
        error: tuple[int, Exception] | None = None
        with open(path, "rb") as fh:
            line_no = 0
            try:
                for line_no, raw in enumerate(fh, 1):
                    if not raw.endswith(b"\n"):
                        self.cut.add(task)
                        break
                    line = raw.decode("utf-8")
                    if line.isspace():  # a blank line (never empty: it ends in a line break), not copied
                        continue
                    s = parse_sample(line)
                    s.protocol = protocol
                    check(s)
                    read.append((line_no, s))
                    ids.add(s.id)
                    self._keep(s, path.name, line_no)
            except (ValueError, RecursionError, UnicodeDecodeError) as e:
                error = (line_no, e)
        if check_all is not None and read and (off := check_all([s for _, s in read])) is not None:
            error = (read[off[0]][0], ValueError(off[1]))  # a line read before any that failed on its own
        if error is not None:
            raise RunError(f"{path.name}:{error[0]}: not a G2M sample ({error[1]})") from None
        self.logged[task] = len(ids)

    def _keep(self, s: Sample, name: str, line_no: int) -> None:
        key = (s.protocol, s.id)
        if key in self._where:
            first = self._where[key]
            if first[2] != s.output:
                raise ValueError(f"id {s.id} was logged before, at {first[0]}:{first[1]}, with another output")
            return
        self._where[key] = (name, line_no, s.output)
        self.samples.append(s)


def missing_samples(results: dict, date: str, logged: dict[str, int], cut: set[str]) -> list[str]:
    """What the run's record promises and its samples files do not hold, one line per task: a missing file, fewer
    (or more) samples than recorded, a last line cut short. The record is ``g2m.samples`` (``g2m eval`` writes it)
    or lm-eval's own ``n-samples``; every task with results must have its samples. A cut last line is named whatever
    the results file lists (a plain or older lm-eval run lists no counts, and may list no task at all)."""
    recorded = (results.get("g2m") or {}).get("samples")
    if not isinstance(recorded, dict):
        recorded = {t: v.get("effective") for t, v in (results.get("n-samples") or {}).items() if isinstance(v, dict)}
    recorded = {str(t).strip(" -"): v for t, v in recorded.items()}  # an alias (" - g2m_n05_c5") names its task
    listed = {str(t).strip(" -") for t in (results.get("results") or {})}
    problems = []
    for task in sorted(t for t in {*listed, *recorded, *cut} if task_info(t)):
        want, got = recorded.get(task), logged.get(task)
        if task in cut:
            problems.append(f"{task}: the last line of its samples file is cut short")
        elif got is None:
            problems.append(f"{task}: its samples file (samples_{task}_{date}.jsonl) is missing")
        elif type(want) is int and got != want:
            problems.append(f"{task}: {got:,} of the {want:,} samples the run recorded are logged")
    return problems
