"""``g2m probe sweep`` end to end on tiny random VLMs built offline: every point and the figure, one encoder pass
per image, resumption, data parallelism (2 processes, gloo) against one process, equality with ``g2m probe`` at the
authors' read-outs, the pooled probes, ``--run`` and the report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from probing.core.probe import TrainConfig
from probing.sweep.run import SweepSpec, run_sweep
from tests.support.helpers import REPO, TEST_HIDDEN, g2m
from tests.support.tiny_models import make_tiny_internvl, make_tiny_qwen2_5_vl, make_tiny_qwen3_vl

pytestmark = pytest.mark.slow  # builds models, extracts features, trains probes

FAST = TrainConfig(steps=6, eval_every=3, patience=2, hidden=TEST_HIDDEN)


def _spec(model, release, tmp, **kw) -> SweepSpec:
    return SweepSpec(encoder=str(model), config="probe_n20_c3", data=str(release), out=str(tmp / "out"),
                     batch_size=4, chunk_rows=8, train=kw.pop("train", FAST), **kw)


def _counting(monkeypatch) -> dict:
    """Count the real modules' forward calls and the images each one took: the vision tower (its grid_thw has a
    row per image) and the language model (a batch row per image)."""
    from transformers.models.qwen3_vl import modeling_qwen3_vl as m

    seen = {"tower_calls": 0, "tower_images": 0, "llm_calls": 0, "llm_images": 0}
    tower, text = m.Qwen3VLVisionModel.forward, m.Qwen3VLTextModel.forward

    def count_tower(self, hidden_states, grid_thw, **kw):
        seen["tower_calls"] += 1
        seen["tower_images"] += len(grid_thw)
        return tower(self, hidden_states, grid_thw, **kw)

    def count_text(self, *args, **kw):
        seen["llm_calls"] += 1
        seen["llm_images"] += len(kw["inputs_embeds"] if kw.get("inputs_embeds") is not None else kw["input_ids"])
        return text(self, *args, **kw)

    monkeypatch.setattr(m.Qwen3VLVisionModel, "forward", count_tower)
    monkeypatch.setattr(m.Qwen3VLTextModel, "forward", count_text)
    return seen


#: One process's sweep on the command line: what the command-line test checks and the data-parallel run must equal.
ONE_PROCESS = ["--config", "probe_n20_c3", "--steps", "6", "--eval-every", "3", "--batch-size", "4", "--chunk-rows",
               "8", "--hidden", str(TEST_HIDDEN), "--quiet"]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # as each of the 2 ranks


@pytest.fixture(scope="module")
def one_process(tiny_vlm, tiny_release, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """`g2m probe sweep` as a user runs it, once for this file: its result and its out folder."""
    out = tmp_path_factory.mktemp("one") / "sweep"
    res = g2m("probe", "sweep", "--encoder", str(tiny_vlm), "--data", str(tiny_release), *ONE_PROCESS, "--out",
              str(out), env={**os.environ, **ONE_THREAD})
    return res, out


def test_the_command_line_sweep_writes_every_point_and_the_figure(one_process, tiny_vlm):
    """`g2m probe sweep` on the command line, on the tiny VLM that ``scripts/make_tiny_vlm.py --tower-depth 3
    --llm-layers 3`` writes (the session's ``tiny_vlm``; docs/gap.md runs the script itself, with the default batch
    and chunk sizes)."""
    res, root = one_process
    assert res.returncode == 0, res.stderr
    assert "tower" in res.stdout and "forward passes for 60 images" in res.stdout
    out = root / tiny_vlm.name / "sweep" / "probe_n20_c3"
    sweep = json.loads((out / "sweep.json").read_text())
    assert sweep["format"] == "g2m-probe-sweep/1"
    assert [(p["stage"], p["layer"]) for p in sweep["points"]] == [
        ("tower", 1), ("tower", 2), ("tower", 3), ("projector", None), ("deepstack", 1), ("llm", 1), ("llm", 2),
        ("llm", 3)]
    for p in sweep["points"]:
        assert (0 <= p["cell_accuracy"] <= 1
                and p["cell_accuracy_ci"][0] <= p["cell_accuracy"] <= p["cell_accuracy_ci"][1])
        assert 0 <= p["exact_match"] <= 1 and len(p["exact_match_ci"]) == 2 and len(p["per_colour_accuracy"]) == 3
    assert sweep["points"][2]["readout"] == "vision" and sweep["points"][3]["readout"] == "projector"
    assert sweep["points"][0]["feature_grid"] == [16, 16] and sweep["points"][4]["feature_grid"] == [8, 8]
    llm_input = sweep["readout"]["llm_input"]
    assert llm_input["image_tokens"] == 64 and "<|image_pad|> x 64" in llm_input["text"]
    assert "The image shows a 20x20 grid" in llm_input["text"] and llm_input["text"].endswith("<|im_start|>assistant\n")
    costs = json.loads((out / "costs.json").read_text())
    assert costs["passes"] == {"forward_passes": 16, "images": 60}  # batches of 4 in chunks of 8 rows: 3 + 1 + 4 chunks
    assert costs["costs"]["disk_bytes"] > 0 and costs["costs"]["peak_rss_bytes"] > 0 and "passes" not in sweep
    assert sweep["chance_cell_accuracy"] == pytest.approx(1 / 3) and sweep["data"]["manifest_sha256"]
    for name in ("sweep.png", "sweep.svg"):
        assert (out / name).stat().st_size > 5000
    with Image.open(out / "sweep.png") as im:
        assert im.format == "PNG" and im.size[0] >= 1440
        png_size = im.size
    svg = (out / "sweep.svg").read_text()
    box = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    assert png_size == (2 * int(box[1]), 2 * int(box[2]))  # drawn at 2x: two PNG pixels to a figure pixel
    assert "the same n = 30 test grids" in svg  # n on the figure: the config's 30 test rows, from the saved predictions
    assert "probe cell accuracy" in svg and "probe exact match" in svg  # one metric per axis
    assert len(list((out / "points").glob("*/result.json"))) == 8


def test_one_encoder_pass_per_image_for_the_whole_sweep_and_a_rerun_makes_none(tiny_vlm, tiny_release, tmp_path,
                                                                                   monkeypatch):
    seen = _counting(monkeypatch)
    first = run_sweep(_spec(tiny_vlm, tiny_release, tmp_path, device_map="auto"), progress=False)
    written = {f: (Path(first["output_dir"]) / f).read_bytes() for f in ("sweep.json", "sweep.svg", "sweep.png")}
    assert len(first["points"]) == 8  # with the DeepStack stream
    assert seen["tower_images"] == 24 + 6 + 30 and seen["tower_calls"] == 16  # 60 rows in batches of 4, chunks of 8
    assert seen["llm_calls"] == seen["tower_calls"] and seen["llm_images"] == 60  # the same pass feeds the LLM points
    assert first["passes"] == {"forward_passes": 16, "images": 60}
    second = run_sweep(_spec(tiny_vlm, tiny_release, tmp_path, device_map="auto"), progress=False)
    assert seen["tower_images"] == 60 and second["passes"]["images"] == 0  # resumed: nothing re-encoded
    assert [p["cell_accuracy"] for p in second["points"]] == [p["cell_accuracy"] for p in first["points"]]
    assert {f: (Path(first["output_dir"]) / f).read_bytes() for f in written} == written  # same settings, same bytes


def test_an_interrupted_sweep_resumes_without_redoing_finished_work(tiny_vlm, tiny_release, tmp_path, monkeypatch):
    from probing.sweep import train as sweep_train
    from probing.sweep.taps import Taps

    real_run, real_train = Taps.run, sweep_train.train_point
    calls = {"run": 0, "train": 0}

    def run_then_stop(self, images, prompts=None):
        calls["run"] += 1
        if calls["run"] == 6:  # inside the third chunk of 8 rows
            raise KeyboardInterrupt
        return real_run(self, images, prompts)

    monkeypatch.setattr(Taps, "run", run_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(_spec(tiny_vlm, tiny_release, tmp_path), progress=False)
    shards = sorted(p.relative_to(tmp_path) for p in (tmp_path / "out" / "cache").rglob("*.npy"))
    # 2 whole chunks of 8 points
    assert len(shards) == 2 * 8 and not list((tmp_path / "out" / "cache").rglob("*.partial"))
    monkeypatch.setattr(Taps, "run", real_run)

    def train_then_stop(point, *args):
        calls["train"] += 1
        if point.name == "llm.001":
            raise KeyboardInterrupt
        return real_train(point, *args)

    monkeypatch.setattr(sweep_train, "train_point", train_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(_spec(tiny_vlm, tiny_release, tmp_path), progress=False)
    monkeypatch.setattr(sweep_train, "train_point", real_train)
    seen = _counting(monkeypatch)
    done = run_sweep(_spec(tiny_vlm, tiny_release, tmp_path), progress=False)
    assert seen["tower_images"] == 0 and done["passes"]["images"] == 0  # every chunk was finished by the second run
    trained = {p.parent.name for p in (tmp_path / "out").rglob("points/*/result.json")}
    assert len(trained) == 8 and len(done["points"]) == 8
    fresh = run_sweep(_spec(tiny_vlm, tiny_release, tmp_path / "fresh"), progress=False)
    assert [p["cell_accuracy"] for p in done["points"]] == [p["cell_accuracy"] for p in fresh["points"]]


def test_two_data_parallel_processes_give_the_single_process_result(one_process, tiny_vlm, tiny_release, tmp_path):
    one = one_process[1]
    assert one_process[0].returncode == 0, one_process[0].stderr
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          "-m", "g2m_cli", "probe", "sweep", "--encoder", str(tiny_vlm), "--data", str(tiny_release),
                          *ONE_PROCESS, "--out", str(tmp_path / "two")], capture_output=True, text=True,
                         env={**os.environ, **ONE_THREAD}, cwd=REPO, timeout=600)
    assert two.returncode == 0, two.stderr[-3000:]
    folders = {"one": one, "two": tmp_path / "two"}
    sweeps = [json.loads(next(folders[d].rglob("sweep.json")).read_text()) for d in ("one", "two")]
    costs = [json.loads(next(folders[d].rglob("costs.json")).read_text()) for d in ("one", "two")]
    assert costs[0]["costs"]["world_size"] == 1 and costs[1]["costs"]["world_size"] == 2
    assert costs[0]["passes"] == costs[1]["passes"] == {"forward_passes": 16, "images": 60}
    assert sweeps[0]["points"] == sweeps[1]["points"]
    figures = [next(folders[d].rglob("sweep.svg")).read_bytes() for d in ("one", "two")]
    assert figures[0] == figures[1]  # the same figure, byte for byte
    shards = [sorted((folders[d] / "cache").rglob("*.npy")) for d in ("one", "two")]
    assert len(shards[0]) == len(shards[1]) == 8 * 8  # 8 points x 8 chunks of 8 rows (3 train, 1 validation, 4 test)
    for a, b in zip(*shards, strict=True):
        assert a.relative_to(one).parts[2:] == b.relative_to(tmp_path / "two").parts[2:]
        assert np.array_equal(np.load(a), np.load(b))


@pytest.mark.parametrize(("builder", "points"), [(make_tiny_qwen3_vl, ("tower", "projector", "llm")),
                                                 (make_tiny_qwen2_5_vl, ("tower", "projector")),  # window order
                                                 (make_tiny_internvl, ("tower", "projector"))])
def test_the_vision_and_projector_points_equal_g2m_probe_at_those_read_outs(builder, points, tiny_release, tmp_path):
    from probing.core.experiment import ProbeSpec, run_probe

    model = builder(tmp_path / "model")
    sweep = run_sweep(SweepSpec(encoder=str(model), config="probe_n20_c3", data=str(tiny_release),
                                out=str(tmp_path / "sweep"), points=points, batch_size=16, train=FAST), progress=False)
    by_readout = {p["readout"]: p for p in sweep["points"] if p["readout"]}
    for readout in ("vision", "projector"):
        res = run_probe(ProbeSpec(encoder=str(model), config="probe_n20_c3", readout=readout, data=str(tiny_release),
                                  out=str(tmp_path / "probe"), cache_dir=str(tmp_path / "cache"), batch_size=16,
                                  train=FAST), progress=False)
        point = by_readout[readout]
        for key in ("cell_accuracy", "cell_accuracy_ci", "exact_match", "exact_match_ci", "per_colour_accuracy"):
            assert point[key] == res["test"][key], (readout, key)
        heat = json.loads((Path(sweep["output_dir"]) / "points" / point["point"]
                           / "result.json").read_text())["heatmap"]
        assert heat == res["test"]["heatmap"]
        cached = np.load(Path(res["cache"]) / "test.features.npy")
        stored = np.concatenate([np.load(p) for p in sorted(Path(sweep["store"]).glob(f"{point['point']}/test/*.npy"))])
        assert np.array_equal(cached, stored)  # the same features, bit for bit
        assert res["encoder"]["feature_grid"] == point["feature_grid"]


def test_the_pooled_probes_run_in_both_commands(tiny_vlm, tiny_release, tmp_path):
    from probing.core.experiment import ProbeSpec, run_probe

    for kind in ("mean", "cls"):
        train = TrainConfig(probe=kind, steps=6, eval_every=3, hidden=TEST_HIDDEN)
        sweep = run_sweep(_spec(tiny_vlm, tiny_release, tmp_path, points=("tower", "projector"), train=train),
                          progress=False)
        assert sweep["readout"]["pool"] == kind and Path(sweep["output_dir"]).parent.name == f"sweep-{kind}"
        assert all(0 <= p["cell_accuracy"] <= 1 for p in sweep["points"])
        shard = next(Path(sweep["store"]).glob("tower.001/train/*.npy"))
        assert np.load(shard).shape[1:] == (1, 1, 64)  # one vector per image
        res = run_probe(ProbeSpec(encoder=str(tiny_vlm), config="probe_n20_c3", data=str(tiny_release),
                                  out=str(tmp_path / "p"), cache_dir=str(tmp_path / "c"), train=train), progress=False)
        assert res["encoder"]["pool"] == kind and res["encoder"]["stored_grid"] == [1, 1]
        assert res["output_dir"].endswith(f"vision-{kind}/probe_n20_c3")


def test_run_draws_the_end_to_end_line_and_the_report_shows_the_sweep(tiny_vlm, tiny_release, small_release, random_run,
                                                                      tmp_path):
    args = ["probe", "sweep", "--encoder", str(tiny_vlm), "--config", "probe_n20_c3", "--data", str(tiny_release),
            "--steps", "4", "--eval-every", "2", "--hidden", str(TEST_HIDDEN), "--points", "tower,projector", "--run",
            str(random_run), "--out", str(tmp_path / "probes"), "--quiet"]
    # the identity rule: g2m-random's answers are not the tiny VLM's, so its line is refused before anything loads
    refused = g2m(*args)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert (str(tiny_vlm) in refused.stderr and "g2m-random" in refused.stderr
            and "--compare-other-models" in refused.stderr)
    assert not (tmp_path / "probes").exists()
    res = g2m(*args, "--compare-other-models")
    assert res.returncode == 0, res.stderr
    sweep = json.loads(next((tmp_path / "probes").rglob("sweep.json")).read_text())
    ref = sweep["reference"]
    assert (ref["grid_size"], ref["num_colors"]) == (20, 3) and 0 <= ref["cell_accuracy"] <= 0.6  # g2m-random
    assert ref["other_model"] and f"ANOTHER MODEL: probe of {tiny_vlm}" in ref["source"]  # named on the figure too
    assert "end-to-end" in res.stdout
    # the tiny VLM's sweep is not of g2m-random: refused in one line naming both, compared only when asked
    refused = g2m("report", str(random_run), "--probes", str(tmp_path / "probes"), "--out", str(tmp_path / "report"))
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert (str(tiny_vlm) in refused.stderr and "g2m-random" in refused.stderr
            and "--compare-other-models" in refused.stderr)
    report = g2m("report", str(random_run), "--probes", str(tmp_path / "probes"), "--out", str(tmp_path / "report"),
                 "--compare-other-models")
    assert report.returncode == 0, report.stderr
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    (row,) = data["sweeps"]
    assert row["other_model"] == f"probe of {tiny_vlm}, answers of g2m-random"
    assert (f"ANOTHER MODEL: probe of {tiny_vlm}, answers of g2m-random"
            in (tmp_path / "report" / "index.md").read_text())
    assert row["end_to_end_cell_accuracy"] == pytest.approx(ref["cell_accuracy"])
    assert [p["point"] for p in row["points"]] == [p["point"] for p in sweep["points"]]
    assert all(p["gap"] == pytest.approx(p["cell_accuracy"] - ref["cell_accuracy"]) for p in row["points"])
    assert (tmp_path / "report" / data["figures"]["sweep_0"]).is_file()
    assert "Where the grid is lost" in (tmp_path / "report" / "index.md").read_text()
    bad = g2m("probe", "sweep", "--encoder", str(tiny_vlm), "--config", "probe_n28_c3", "--data", str(small_release),
              "--run", str(random_run), "--out", str(tmp_path / "x"), "--compare-other-models")
    assert bad.returncode == 2 and "no task at N=28, C=3" in bad.stderr


def test_deepstack_streams_are_points_and_show_where_the_signal_re_enters(tiny_release, tmp_path):
    """With the main merger zeroed, the projector is at chance, yet the first LLM layer holds the grid: the
    DeepStack stream added after decoder layer 1 brings it back, and the sweep now has a point for it."""
    import torch
    from transformers import Qwen3VLForConditionalGeneration

    from probing.figures.sweep import plot_sweep
    from probing.tiny import make_tiny_qwen3_vl

    path = make_tiny_qwen3_vl(tmp_path / "vlm", depth=3, layers=3, deepstack=(1,), max_side=256)
    model = Qwen3VLForConditionalGeneration.from_pretrained(path)
    with torch.no_grad():
        model.model.visual.merger.linear_fc2.weight.zero_()
        model.model.visual.merger.linear_fc2.bias.zero_()
    model.save_pretrained(path)
    train = TrainConfig(steps=40, eval_every=10, patience=4)  # the authors' width: at 64 the margin below is thin
    # from the projector on (the command-line test sees the towers before it): the points the finding is about
    sweep = run_sweep(_spec(path, tiny_release, tmp_path, train=train, points=("projector", "llm")), progress=False)
    acc = {p["point"]: p["cell_accuracy"] for p in sweep["points"]}
    assert list(acc) == ["projector", "deepstack.001", "llm.001", "llm.002", "llm.003"]
    chance = 1 / 3
    assert acc["projector"] < chance + 0.05  # nothing left at the projector: constant features
    assert acc["deepstack.001"] > acc["projector"] + 0.1 and acc["llm.001"] > acc["projector"] + 0.1
    # the figure draws the stream at llm layer 1, where it enters, apart from the depth curve
    svg = (Path(sweep["output_dir"]) / "sweep.svg").read_text()
    assert "DeepStack stream, where it enters the LLM" in svg and "DS1" in svg
    assert plot_sweep(sweep["points"], tmp_path / "again.png", "t", chance)


def test_clear_errors_before_anything_heavy(small_release, tmp_path):
    """Refused by ``g2m``'s own ``main`` in this process: these usage errors load no model, so a child per case would
    only add its start-up."""
    from tests.support.helpers import g2m_here
    from tests.support.tiny_models import make_tiny_siglip_vision

    siglip = make_tiny_siglip_vision(tmp_path / "siglip")
    res = g2m_here("probe", "sweep", "--encoder", str(siglip), "--config", "probe_n20_c3", "--data", str(small_release),
              "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "cannot lay out a 'siglip_vision_model'" in res.stderr
    res = g2m_here("probe", "sweep", "--encoder", str(tmp_path / "missing"), "--config", "probe_n20_c3", "--data",
              str(small_release), "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "does not exist" in res.stderr
    res = g2m_here("probe", "sweep", "--encoder", "x", "--config", "zero_shot", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "unknown probing config" in res.stderr
    res = g2m_here("probe", "--config", "probe_n20_c3")
    assert res.returncode == 2 and "needs --encoder and --config" in res.stderr
