"""Probe and sweep results in a submission, re-scored by ``validate`` from the seeds' truth.

A real tiny Qwen3-VL (conftest's session fixtures, shared with the site's tests) answers the end-to-end tasks behind a
real loopback server, the same model is swept with ``g2m probe sweep``, and ``g2m submit RUN --probes DIR`` adds the
sweep's predictions; ``validate`` re-scores them and ignores every number written in the file. Hostile probe sections
are rejected in one line."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from g2m_base.bounded_json import Rejected
from submission import probe_section
from submission.submission import validate, write_submission
from tests.support.helpers import write_file

pytestmark = pytest.mark.slow  # builds a model, runs it behind a server, sweeps it


def _sweep(sweep_dir: Path) -> dict:
    return json.loads(next(sweep_dir.rglob("sweep.json")).read_text())


def test_a_sweep_submitted_with_its_run_validates_with_re_scored_numbers_and_forgeries_change_nothing(
        submitted, sweep_dir, tiny_vlm, tmp_path):
    sweep = _sweep(sweep_dir)
    (sec,) = submitted["probes"]
    # named as the submission names the model (its Hub id, --model-id); the local folder it was probed as is not shown
    assert sec["model"]["name"] == "org/tiny-vlm" == submitted["metadata"]["model"]["id"]
    assert sec["model"]["probed_as"] == "(a local folder)" and str(tiny_vlm) not in json.dumps(submitted["probes"])
    assert sec["rows"] == {"split": "test", "first": 0, "count": 30} and len(sec["points"]) == len(sweep["points"])
    roles = {r["point"]: r["role"] for r in sec["readouts"]}
    best = max((q for q in sweep["points"] if q["stage"] == "llm"), key=lambda q: q["cell_accuracy"])["point"]
    assert roles["tower.003"] == "last vision block" and roles["projector"] == "projector"
    assert roles[best] == "best LLM layer" and "llm.003" in roles
    v = validate(write_file(tmp_path, submitted))
    assert v.ok, v.reason
    (scored,) = v.probes
    claimed = {q["point"]: q for q in sweep["points"]}
    for r in scored["readouts"]:  # regenerated truth, re-computed scores: the probe's own numbers
        assert r["cell_accuracy"] == pytest.approx(claimed[r["point"]]["cell_accuracy"], abs=1e-6)
        assert r["exact_match"] == pytest.approx(claimed[r["point"]]["exact_match"], abs=1e-9)
    forged = copy.deepcopy(submitted)
    for q in forged["probes"][0]["points"]:
        q["cell_accuracy"], q["exact_match"] = 1.0, 1.0
    for r in forged["probes"][0]["readouts"]:
        r["cell_accuracy"] = 1.0
    again = validate(write_file(tmp_path, forged, "forged.json"))
    assert again.ok and [r["cell_accuracy"] for r in again.probes[0]["readouts"]] == \
        [r["cell_accuracy"] for r in scored["readouts"]]


def _decoded_cells(sec: dict, value: int) -> str:
    import base64
    import zlib

    return base64.b64encode(zlib.compress(bytes([value]) * (sec["rows"]["count"] * sec["grid_size"] ** 2))).decode()


def _mutate(sec: dict, how: str) -> object:
    import base64
    import zlib

    s = copy.deepcopy(sec)
    ro = s["readouts"][0]
    if how == "not a list":
        return {"a": s}
    if how == "zero-shot config":
        s["config"] = "zero_shot"
    elif how == "unknown config":
        s["config"] = "probe_n21_c3"
    elif how == "another model":
        s["model"]["name"] = "google/siglip-base-patch16-224"
    elif how == "missing rows":
        s["rows"]["count"] -= 1
    elif how == "rows from elsewhere":
        s["rows"]["first"] = 1
    elif how == "short cells":
        ro["cells"] = base64.b64encode(zlib.compress(b"\0" * 100)).decode()
    elif how == "long cells":
        ro["cells"] = base64.b64encode(zlib.compress(b"\0" * (s["rows"]["count"] * 400 + 1))).decode()
    elif how == "outside the palette":
        ro["cells"] = _decoded_cells(s, 3)
    elif how == "not base64":
        ro["cells"] = "@@@@"
    elif how == "not deflate":
        ro["cells"] = base64.b64encode(b"hello world").decode()
    elif how == "huge":
        ro["cells"] = base64.b64encode(zlib.compress(b"\0" * (16 << 20), 9)).decode()  # a deflate bomb (1,000:1)
    elif how == "huge string":
        ro["cells"] = "A" * (10 << 20)
    elif how == "repeated read-out":
        s["readouts"].append(dict(ro))
    elif how == "read-out of no point":
        ro["point"] = "llm.999"
    elif how == "point out of range":
        s["points"][0]["cell_accuracy"] = 1.5
    elif how == "scale out of range":
        s["data"]["build_params"]["scale"] = 7
    return [s]


HOSTILE = [  # (what is wrong, what the one-line refusal says)
    ("not a list", "probes must be a list"),
    ("zero-shot config", "must be a probing config"),
    ("unknown config", "must be a probing config"),
    ("another model", "is a probe of 'google/siglip-base-patch16-224', not of the submission's model"),
    ("missing rows", "rows must be every test row of probe_n20_c3 once"),
    ("rows from elsewhere", "rows must be every test row"),
    ("short cells", "hold 100 values, not 12,000"),
    ("long cells", "hold more than 12,000 values"),
    ("outside the palette", "outside the palette of 3 colours"),
    ("not base64", "cells are not residual-mod-c"),
    ("not deflate", "cells are not residual-mod-c"),
    ("huge", "hold more than 12,000 values"),
    ("huge string", "cells must be a base64 string of at most"),
    ("repeated read-out", "appears more than once"),
    ("read-out of no point", "must name one of the section's points"),
    ("point out of range", "must be a number from 0 to 1"),
    ("scale out of range", "data scale must be a number in (0, 1]"),
]


@pytest.mark.parametrize(("how", "words"), HOSTILE)
def test_hostile_probe_sections_are_rejected_in_one_line(submitted, how, words):
    with pytest.raises(Rejected) as e:
        probe_section.rescore(_mutate(submitted["probes"][0], how), submitted["metadata"]["model"]["id"])
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize(("section", "meta", "words"), [
    ({"revision": "4b1c0de"}, {"revision": "9f00d1e"}, "(revision 9f00d1e against 4b1c0de)"),
    ({"config_sha256": "a" * 64}, {"config_sha256": "b" * 64}, "(another config.json (bbbbbbbbbbbb against aaaa"),
    ({"revision": "local:0123"}, {"revision": "9f00d1e"}, None),  # a local folder's hash says nothing of Hub ones
    ({"revision": "4b1c0de"}, {}, None),  # the run named no revision: nothing to contradict
])
def test_a_probe_section_must_not_contradict_the_submissions_model(submitted, section, meta, words):
    """validate applies ``g2m submit --probes``'s identity rule: a section whose revision or config.json hash is not
    the submission's model's is refused; each accepted section says what it probed."""
    sec = copy.deepcopy(submitted["probes"][0])
    sec["model"].update(section)
    model = {**submitted["metadata"]["model"], **meta}
    if words is None:
        out = probe_section.rescore([sec], model["id"], model)[0]
        assert out["checkpoint"] == sec["model"]["probed_as"] and out["revision"] == sec["model"]["revision"]
        return
    with pytest.raises(Rejected) as e:
        probe_section.rescore([sec], model["id"], model)
    assert "is a probe of" in str(e.value) and words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_validate_rejects_a_hostile_probe_section_and_submit_refuses_another_models_probe(submitted, sweep_dir,
                                                                                          random_run, tmp_path):
    from g2m_base.errors import UsageError

    doc = copy.deepcopy(submitted)
    doc["probes"] = _mutate(submitted["probes"][0], "outside the palette")
    v = validate(write_file(tmp_path, doc))
    assert not v.ok and "outside the palette" in v.reason
    with pytest.raises(UsageError, match="not of the run's model g2m-random") as e:
        write_submission(random_run, tmp_path / "x.json", allow_partial=True, probes=sweep_dir,
                         model_info={"id": "org/random-run"})  # a baseline's own name is refused before the probes
    assert "\n" not in str(e.value) and not (tmp_path / "x.json").exists()


#: ``g2m`` as a user without matplotlib runs it
_NO_MATPLOTLIB = ("import sys; sys.modules['matplotlib'] = None\n"
                  "from g2m_cli.main import main\nsys.exit(main(sys.argv[1:]))")


def test_a_report_draws_every_figure_without_matplotlib(random_run, sweep_dir, tmp_path):
    """Every figure, a probe sweep's too, is drawn by the one canvas: a report with probes needs no plotting library
    (the import of one is blocked here), and says nothing of one."""
    def report(out: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _NO_MATPLOTLIB, "report", str(random_run), "--out",
                               str(tmp_path / out), *extra], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})

    res = report("plain")
    assert res.returncode == 0, res.stderr[-2000:]
    for name in ("accuracy_vs_n", "heatmaps", "confusion", "patch_alignment"):
        assert (tmp_path / "plain" / f"{name}.png").stat().st_size > 10_000
        assert (tmp_path / "plain" / f"{name}.svg").stat().st_size > 10_000
    res = report("swept", "--probes", str(sweep_dir), "--compare-other-models")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "matplotlib" not in res.stderr + res.stdout
    for name in ("sweep_0.png", "sweep_0.svg"):
        assert (tmp_path / "swept" / name).stat().st_size > 10_000
    assert "probe exact match" in (tmp_path / "swept" / "sweep_0.svg").read_text()
