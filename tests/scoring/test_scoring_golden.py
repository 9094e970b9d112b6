"""Golden numbers of a realistic run: what ``validate``, ``g2m report`` and ``g2m submit`` compute, pinned to the last
digit, so that a faster scoring path is proved to give the same numbers.

The answers are a seeded mix of what models write (exact, a few or many cells wrong, prose around the list, cut after
half the rows, a reasoning block, markdown rows, tuples, numpy print syntax, garbage, empty), for every zero_shot id
(``validate``) and for every sample of the small release's real lm-eval run (``report``, ``submit``).

    PYTHONPATH=. python tests/scoring/test_scoring_golden.py   # writes tests/support/golden/scoring_numbers.json
                                                               # again (only when the scoring is meant to change)
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.support.helpers import SUBMISSION_META, write_file

GOLDEN = Path(__file__).resolve().parents[1] / "support" / "golden" / "scoring_numbers.json"
KINDS = 12


def answer(matrix: np.ndarray, seed: int, num_colors: int) -> str:
    """One answer for ``matrix``, of a kind chosen by ``seed``."""
    from scoring.parsing import format_answer

    rng = np.random.default_rng(seed)
    kind = int(rng.integers(KINDS))
    n = len(matrix)
    noisy = []
    for p in (0.05, 0.2):
        w = matrix.copy()
        mask = rng.random(w.shape) < p
        w[mask] = (w[mask] + 1) % num_colors
        noisy.append(w)
    exact = format_answer(matrix)
    rows = [" ".join(map(str, r)) for r in noisy[0]]
    return [
        exact,
        format_answer(noisy[0]),
        format_answer(noisy[1]),
        f"Here is the matrix for the {n}x{n} grid:\n{format_answer(noisy[0])}\nDone.",
        exact[: len(exact) // 2],
        f"<think>The grid is {n} by {n}.</think>\n{exact}",
        "| " + " |\n| ".join(" | ".join(map(str, r)) for r in noisy[1]) + " |",
        repr(tuple(tuple(int(v) for v in r) for r in matrix)),
        "array(" + format_answer(noisy[0]) + ")",
        "I cannot read this image.",
        "",
        "\n".join(f"Row {i + 1}: {r}" for i, r in enumerate(rows)),
    ][kind]


def _rounded(value):
    """JSON's view of the numbers (tuples as lists), NaN kept as the string JSON writes for it."""
    return json.loads(json.dumps(value, sort_keys=True, default=lambda o: o.tolist()))


def _digest(value) -> str:
    """The sha256 of a long list's JSON: one line of the golden file that still pins every element."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def validate_numbers(tmp: Path) -> dict:
    from scoring.rescoring.rescore import truth_matrix, zero_shot_truth
    from submission.submission import validate

    truth = zero_shot_truth()
    doc = {"format": "g2m-submission/1", "metadata": SUBMISSION_META,
           "records": [{"id": i, "output": answer(truth_matrix(t), t.seed, t.num_colors)} for i, t in truth.items()],
           "paper_records": [{"id": i, "output": answer(truth_matrix(t), t.seed + 1, t.num_colors)}
                             for i, t in truth.items()]}
    v = validate(write_file(tmp, doc, "golden.json.gz"))
    assert v.ok, v.reason
    return _rounded({"scores": v.scores, "warnings": v.warnings, "data": v.data,
                     "strategies": {name: _digest([r.score.strategy for r in rows]) for name,
                                    rows in v.by_protocol.items()},
                     "masks": {name: _digest([r.score.mask for r in rows]) for name, rows in v.by_protocol.items()}})


def mixed_run(random_run: Path, tmp: Path) -> Path:
    """A copy of the real lm-eval run with its answers replaced by the seeded mix."""
    run = tmp / "run"
    shutil.copytree(random_run, run, ignore=shutil.ignore_patterns("report", "submission*"))
    for f in sorted(run.glob("samples_*.jsonl")):
        lines = []
        for line in f.read_text().splitlines():
            row = json.loads(line)
            doc = row["doc"]
            m = np.asarray(doc["matrix"])
            row["resps"] = [[answer(m, doc["seed"] + 7, doc["num_colors"])]]
            row["filtered_resps"] = row["resps"][0]
            lines.append(json.dumps(row))
        f.write_text("\n".join(lines) + "\n")
    return run


def report_numbers(run: Path, tmp: Path) -> dict:
    from report.report import build_report

    rep = build_report(run, tmp / "report")
    keep = ("overall", "protocols", "tasks", "patch_alignment", "confusion", "colour_bias", "failed_examples",
            "protocol", "partial")
    return _rounded({k: rep.document[k] for k in keep})


def submit_numbers(run: Path, tmp: Path) -> dict:
    from submission.submission import submit_run

    out = submit_run(run, tmp / "sub.json.gz", allow_partial=True, model_info={"id": "org/golden"})
    doc = json.loads(gzip.decompress(out.path.read_bytes()))
    def outputs(records):  # the texts, pinned apart from why each stopped (added to records later)
        return None if records is None else [{"id": r["id"], "output": r["output"]} for r in records]

    return _rounded({"records": _digest(outputs(doc["records"])),
                     "paper_records": _digest(outputs(doc.get("paper_records"))),
                     "finish_reasons": dict(Counter(r.get("finish_reason") for r in doc["records"])),
                     "missing": list(out.missing)})


def numbers(random_run: Path, tmp: Path) -> dict:
    run = mixed_run(random_run, tmp)
    return {"validate": validate_numbers(tmp), "report": report_numbers(run, tmp), "submit": submit_numbers(run, tmp)}


@pytest.mark.slow
def test_validate_report_and_submit_give_the_golden_numbers(random_run, tmp_path):
    got = numbers(random_run, tmp_path)
    want = json.loads(GOLDEN.read_text())
    for part in ("validate", "report", "submit"):
        for key in want[part]:
            assert json.dumps(got[part][key], sort_keys=True) == json.dumps(want[part][key],
                                                                            sort_keys=True), (part, key)
        assert set(got[part]) == set(want[part]), part


if __name__ == "__main__":
    import os
    import tempfile

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    from dataset_builder.release.build import BuildParams, build
    from harness_tasks.evaluate import EvalSpec, run_eval
    from tests.support.helpers import SMALL_CONFIGS, SMALL_SCALE

    with tempfile.TemporaryDirectory() as d:
        os.environ["HF_DATASETS_CACHE"] = str(Path(d) / "hf")
        data = Path(d) / "g2m"
        build(data, SMALL_CONFIGS, BuildParams(scale=SMALL_SCALE, rows_per_shard=60), workers=2, progress=False)
        res = run_eval(EvalSpec(model="g2m-random", data=str(data), output=str(Path(d) / "runs")))
        (Path(d) / "work").mkdir()
        GOLDEN.write_text(json.dumps(numbers(Path(res["output_dir"]), Path(d) / "work"), sort_keys=True,
                                     indent=1) + "\n")
    print(f"wrote {GOLDEN}")
