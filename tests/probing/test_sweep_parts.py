"""The sweep's parts, fast: the warm-up, the pooled probes, the store's fitted grids and shards, the point catalogue
worked out from real transformers configs, the plan's arithmetic, and the command line (old and new)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.support.lazy import lazy

# torch and the probing modules (which import it) are imported by the first test that uses them, not when the file is
# collected: every xdist worker collects every file
torch = lazy("torch")
tk = lazy("probing.core.tokens")
core_encoders = lazy("probing.core.encoders")
core_features = lazy("probing.core.features")
core_probe = lazy("probing.core.probe")
sweep_points = lazy("probing.sweep.points")
sweep_store = lazy("probing.sweep.store")


@pytest.mark.parametrize("steps", [5000, 400, 20])
def test_the_warm_up_starts_at_a_learning_rate_of_zero_as_the_authors(steps):
    cfg = core_probe.TrainConfig(steps=steps)
    warm = max(1, int(cfg.warmup_frac * steps))
    factors = [core_probe._schedule(s, cfg) for s in range(steps)]
    assert factors[0] == 0.0 and factors[warm] == 1.0
    # the authors' get_cosine_schedule_with_warmup, written out: step / warm, then a half cosine
    for s in (1, warm // 2, warm, (steps + warm) // 2, steps - 1):
        expect = s / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / (steps - warm)))
        assert factors[s] == pytest.approx(expect)


@pytest.mark.slow  # torch's first optimizer costs about 2 s of lazy set-up
def test_torchs_scheduler_runs_the_first_update_at_a_learning_rate_of_zero():
    cfg = core_probe.TrainConfig(steps=400)
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: core_probe._schedule(s, cfg))
    assert opt.param_groups[0]["lr"] == 0.0  # the first update runs at lr 0
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(5e-4 / max(1, int(cfg.warmup_frac * 400)))


@pytest.mark.parametrize("kind", ["mean", "cls"])
def test_a_pooled_probe_maps_one_vector_to_every_cell_cell_major(kind):
    n, c, d = 4, 3, 6
    probe = core_probe.SpatialProbe(d, c, n, kind)
    with torch.no_grad():  # logit of (cell k, colour j) = feature k % d when j == k % c: a layout we can read back
        probe.head.weight.zero_()
        probe.head.bias.zero_()
        for k in range(n * n):
            probe.head.weight[k * c + k % c, 0] = float(k + 1)
    x = torch.zeros(2, 1, 1, d)
    x[..., 0] = 1.0
    logits = probe(x)
    assert logits.shape == (2, c, n, n)
    pred = logits.argmax(1)
    assert pred[0].flatten().tolist() == [k % c for k in range(n * n)]  # row-major cells, as the labels


def test_pooling_reads_the_mean_the_cls_token_or_else_the_first_token():
    grid = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)
    assert torch.equal(tk.pool(grid, "grid"), grid)
    assert torch.allclose(tk.pool(grid, "mean"), grid.reshape(-1, 4).mean(0).reshape(1, 1, 4))
    assert torch.equal(tk.pool(grid, "cls"), grid[0, 0].reshape(1, 1, 4))  # no CLS: the top-left token
    cls = torch.full((4,), -1.0)
    assert torch.equal(tk.pool(grid, "cls", cls), cls.reshape(1, 1, 4))


@pytest.mark.parametrize(("side", "n", "stored"), [(32, 20, 20), (36, 20, 20), (20, 20, 20), (16, 20, 16), (8, 32, 8)])
@pytest.mark.parametrize("kind", ["conv", "linear"])
def test_storing_the_grid_fitted_to_the_probe_changes_nothing_the_probe_computes(side, n, stored, kind):
    torch.manual_seed(0)
    probe = core_probe.SpatialProbe(8, 3, n, kind, hidden=16).eval()
    grid = torch.randn(side, side, 8)
    fitted = core_features.fit_to_probe(grid, n)
    assert fitted.shape == (stored, stored, 8)
    assert torch.allclose(probe(grid[None]), probe(fitted[None]), atol=1e-5)


def _configs():
    from transformers import InternVLConfig, Qwen2VLConfig, Qwen3VLConfig

    q2 = Qwen2VLConfig(text_config=dict(hidden_size=128, num_hidden_layers=5),
                       vision_config=dict(depth=3, embed_dim=64, hidden_size=128, patch_size=14), image_token_id=7)
    q3 = Qwen3VLConfig(text_config=dict(hidden_size=96, num_hidden_layers=4),
                       vision_config=dict(depth=6, hidden_size=48, out_hidden_size=96, patch_size=16), image_token_id=7)
    ivl = InternVLConfig(vision_config=dict(hidden_size=32, num_hidden_layers=3, image_size=448, patch_size=14),
                         text_config=dict(hidden_size=64, num_hidden_layers=2), image_token_id=7)
    return {"qwen2_vl": q2, "qwen3_vl": q3, "internvl": ivl}


@pytest.mark.parametrize(("family", "image_input", "tower", "merged", "dims", "tokens"), [
    ("qwen2_vl", {"grid_thw": [1, 36, 36]}, (36, 36), (18, 18), (64, 128), 324),
    ("qwen3_vl", {"grid_thw": [1, 32, 32]}, (32, 32), (16, 16), (48, 96), 256),
    ("internvl", {"tiles": 1}, (32, 32), (16, 16), (32, 64), 256),
    ("internvl", {"tiles": 5}, (64, 64), (32, 32), (32, 64), 1280),  # 2 x 2 tiles + thumbnail
])
def test_the_points_are_laid_out_from_the_config(family, image_input, tower, merged, dims, tokens):
    grid = sweep_points.token_grid(_configs()[family], image_input)
    assert (grid.tower_grid, grid.merged_grid, (grid.tower_dim, grid.text_dim), grid.image_tokens) == (
        tower, merged, dims, tokens)
    points = sweep_points.plan_points(grid, sweep_points.STAGES)
    assert [p.stage
            for p in points] == (["tower"] * grid.tower_depth + ["projector"] + ["deepstack"] * len(grid.deepstack)
                                         + ["llm"] * grid.llm_layers)
    assert (len(grid.deepstack) > 0) == (family == "qwen3_vl")  # Qwen3-VL's DeepStack streams are points of their own
    assert [p.layer for p in points if p.stage == "llm"] == list(range(1, grid.llm_layers + 1))
    assert [p.readout for p in points if p.readout] == ["vision", "projector"]
    assert points[grid.tower_depth - 1].readout == "vision"  # the tower's last block is g2m probe's read-out


def test_default_inputs_follow_each_processor_rule_for_a_512_px_image():
    from probing.sweep.points import default_input

    cfg = _configs()
    assert default_input(cfg["qwen2_vl"]) == {"grid_thw": [1, 36, 36]}  # 504 px at patch 14
    assert default_input(cfg["qwen3_vl"]) == {"grid_thw": [1, 32, 32]}
    assert default_input(cfg["internvl"])["tiles"] == 1  # 448 px tiles: one tile, as InternVL3.5 does


@pytest.mark.parametrize(("depth", "stride", "layers"),
                         [(27, 1, list(range(1, 28))), (27, 4, [1, 4, 8, 12, 16, 20, 24, 27]),
                                                         (36, 12, [1, 12, 24, 36]), (2, 5, [1, 2])])
def test_a_stride_keeps_the_first_and_the_last_layer(depth, stride, layers):
    assert sweep_points.pick_layers(depth, stride) == layers


@pytest.mark.parametrize(("text", "error"),
                         [("tower,llm", None), ("llm,tower", None), ("vision", "--points"), ("", "--points")])
def test_stages_are_checked(text, error):
    if error:
        with pytest.raises(core_encoders.EncoderError, match=error):
            sweep_points.parse_stages(text)
    else:
        assert sweep_points.parse_stages(text) == ("tower", "llm")


def test_a_family_without_a_layout_is_refused_and_vision_raw_is_qwen_only():
    from transformers import LlavaConfig, SiglipVisionConfig

    from probing.sweep.points import sweep_family

    with pytest.raises(core_encoders.EncoderError, match="lays out image tokens for Qwen2-VL.*'llava'"):
        sweep_family(LlavaConfig())
    with pytest.raises(core_encoders.EncoderError, match="cannot lay out a 'siglip_vision_model'"):
        sweep_family(SiglipVisionConfig())
    grid = sweep_points.token_grid(_configs()["internvl"], {"tiles": 1})
    with pytest.raises(core_encoders.EncoderError, match="vision_raw"):
        sweep_points.plan_points(grid, sweep_points.STAGES, tower_readout="vision_raw")


def test_stored_shapes_are_what_the_probe_reads():
    grid = sweep_points.TokenGrid("qwen3_vl", (32, 32), (16, 16), 48, 96, 2, 2, 256, 7, 2)
    tower, proj = sweep_points.plan_points(grid, ("tower", "projector"))[-2:]
    shape = sweep_points.stored_shape
    assert shape(tower, 20, "grid") == (20, 20, 48) and shape(tower, 40, "grid") == (32, 32, 48)
    assert shape(proj, 20, "grid") == (16, 16, 96) and shape(proj, 20, "mean") == (1, 1, 96)


def test_the_store_keeps_finished_chunks_and_reads_its_shards_as_one_array(tmp_path):
    store = sweep_store.Store(tmp_path, {"train": 10, "validation": 3, "test": 4}, chunk_rows=4)
    chunks = store.chunks()
    assert [(c.split, c.start, c.stop) for c in chunks] == [("train", 0, 4), ("train", 4, 8), ("train", 8, 10),
                                                            ("validation", 0, 3), ("test", 0, 4)]
    assert sweep_store.Dist(rank=1, world=2).mine(chunks) == chunks[1::2]
    data = np.arange(10 * 2 * 2 * 3, dtype=np.float16).reshape(10, 2, 2, 3)
    for c in chunks[:2]:
        store.begin(c, {"p": (2, 2, 3)})
        store.write(0, {"p": data[c.start : c.start + 2]})
        store.write(2, {"p": data[c.start + 2 : c.stop]})
        store.finish()
    store.begin(chunks[2], {"p": (2, 2, 3)})  # interrupted before finish: nothing of it counts
    store.abandon()
    assert store.missing(chunks[2], ["p", "q"]) == ["p", "q"] and store.missing(chunks[0], ["p", "q"]) == ["q"]
    store.begin(chunks[2], {"p": (2, 2, 3)})
    store.write(0, {"p": data[8:]})
    store.finish()
    arr = store.features("p", "train")
    assert isinstance(arr, sweep_store.ShardedArray) and arr.shape == (10, 2, 2, 3) and arr.nbytes == data.nbytes
    assert np.array_equal(np.asarray(arr), data) and np.array_equal(arr[np.array([1, 5, 9])], data[[1, 5, 9]])
    assert not list(tmp_path.rglob("*.partial"))


def test_the_old_command_line_still_parses_and_sweep_is_a_subcommand():
    from g2m_cli.main import make_parser

    parser = make_parser()
    old = parser.parse_args(["probe", "--encoder", "E", "--config", "probe_n20_c3", "--readout", "projector"])
    assert old.func.__name__ == "_probe" and old.readout == "projector" and old.steps == 5000
    new = parser.parse_args(["probe", "sweep", "--encoder", "E", "--config", "probe_n20_c3", "--stride", "4",
                             "--probe", "mean", "--dry-run"])
    assert new.func.__name__ == "_sweep" and new.stride == 4 and new.probe == "mean" and new.dry_run
    assert not hasattr(new, "read_run")  # nothing handed down: probing reads runs through scoring.runs itself
