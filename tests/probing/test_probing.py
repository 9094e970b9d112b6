"""Probing end to end on tiny random encoders built offline, on a scaled-down probing build."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.spec import PROBE_RESULT_FORMAT
from probing.core.encoders import Encoder, EncoderError, load_encoder
from probing.core.experiment import ProbeSpec, run_probe
from probing.core.features import CacheMismatch
from probing.core.probe import TrainConfig
from tests.support.helpers import TEST_HIDDEN
from tests.support.lazy import lazy
from tests.support.tiny_models import (
    make_tiny_clip_vision,
    make_tiny_internvl,
    make_tiny_qwen2_5_vl,
    make_tiny_qwen2_vl,
    make_tiny_qwen3_vl,
    make_tiny_siglip2_vision,
    make_tiny_siglip_vision,
)

torch = lazy("torch")  # imported by the first test that uses it, not when collected

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

FAST = TrainConfig(steps=80, eval_every=20, batch_size=32, patience=2, hidden=TEST_HIDDEN)


@pytest.fixture(scope="module")
def pixel_encoder(tmp_path_factory) -> Path:
    """A one-layer SigLIP whose 8-px patches line up with 20x20 grids: its patch tokens carry the pixels."""
    from transformers import SiglipImageProcessorPil, SiglipVisionConfig, SiglipVisionModel

    path = tmp_path_factory.mktemp("pixel_siglip")
    torch.manual_seed(0)
    SiglipVisionModel(SiglipVisionConfig(image_size=160, patch_size=8, hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=1, num_attention_heads=2)).save_pretrained(path)
    SiglipImageProcessorPil(size={"height": 160, "width": 160}).save_pretrained(path)
    return path


def _command(capsys, encoder, release, tmp) -> tuple[int, list[str], str]:
    """``g2m probe`` in this process (so a monkeypatched encoder stays patched): its exit code, its error lines and
    all it wrote to stderr."""
    import signal

    from g2m_cli.main import main

    capsys.readouterr()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        code = main(["probe", "--encoder", str(encoder), "--config", "probe_n20_c3", "--data", str(release), "--out",
                     str(tmp / "out"), "--cache-dir", str(tmp / "cache"), "--steps", "2", "--eval-every", "1",
                     "--hidden", str(TEST_HIDDEN), "--quiet"])
    finally:  # main() takes SIGTERM and SIGHUP for its clean stop; give them back to pytest
        for s, h in handlers.items():
            signal.signal(s, h)
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("g2m: error:")], err


def _spec(encoder, release, tmp, **kw):
    return ProbeSpec(encoder=str(encoder), config="probe_n20_c3", data=str(release), out=str(tmp / "out"),
                     cache_dir=str(tmp / "cache"), train=kw.pop("train", FAST), **kw)


@pytest.fixture(scope="module")
def learned(pixel_encoder, small_release, tmp_path_factory) -> tuple[dict, Path]:
    """One probe trained on the pixel encoder (its results and its folder), which the tests below read and rerun."""
    tmp = tmp_path_factory.mktemp("learned")
    return run_probe(_spec(pixel_encoder, small_release, tmp), progress=False), tmp


def test_the_probe_learns_and_writes_its_results(learned):
    res = learned[0]
    assert res["test"]["cell_accuracy"] > 0.9  # chance is 1/3
    assert res["images_encoded"] == 160 + 40 + 200  # every image exactly once
    out = Path(res["output_dir"])
    saved = json.loads((out / "result.json").read_text())
    assert saved["format"] == PROBE_RESULT_FORMAT and saved["grid_size"] == 20 and saved["num_colors"] == 3
    assert (saved["encoder"]["feature_grid"] == [20, 20]
            and saved["encoder"]["image_processor"]["input"]["pixel_size"] == [160, 160])
    assert np.array(saved["test"]["heatmap"]).shape == (20, 20) and len(saved["test"]["per_colour_accuracy"]) == 3
    assert np.asarray(saved["test"]["confusion"]).sum() == 200 * 400
    assert saved["train"]["lr"] == 5e-4 and saved["best"]["step"] >= 20 and saved["data"]["manifest_sha256"]
    assert np.load(out / "heatmap.npy").shape == (20, 20)
    for png in ("heatmap.png", "curve.png"):
        with Image.open(out / png) as im:
            assert im.format == "PNG" and im.size[0] > 300


def test_a_rerun_reads_the_cache_and_never_calls_the_encoder(learned, pixel_encoder, small_release, tmp_path,
                                                            monkeypatch):
    first, tmp = learned

    def forbidden(self, images):
        raise AssertionError("the encoder ran although its features were cached")

    monkeypatch.setattr(Encoder, "grids", forbidden)
    # the first run's cache, results written elsewhere (the first run's files stay as the test above reads them)
    second = run_probe(replace(_spec(pixel_encoder, small_release, tmp), out=str(tmp_path / "out")), progress=False)
    assert first["encoder_calls"] > 0 and second["encoder_calls"] == 0 and second["cache"] == first["cache"]
    assert second["test"] == first["test"]  # same seed, same cache: the same probe


def test_a_cache_built_with_other_settings_is_an_error_not_reused(pixel_encoder, small_release, tmp_path, capsys):
    res = run_probe(_spec(pixel_encoder, small_release, tmp_path,
                          train=TrainConfig(steps=2, eval_every=1, hidden=TEST_HIDDEN)), progress=False)
    key_file = Path(res["cache"]) / "key.json"
    key = json.loads(key_file.read_text())
    key["cache_dtype"] = "float32"
    key_file.write_text(json.dumps(key))
    with pytest.raises(CacheMismatch, match="cache_dtype differ"):
        run_probe(_spec(pixel_encoder, small_release, tmp_path), progress=False)
    code, errors, err = _command(capsys, pixel_encoder, small_release, tmp_path)  # a folder's contents: still exit 2
    assert code == 2 and len(errors) == 1 and "cache_dtype differ" in errors[0] and "Traceback" not in err, err


def test_linear_probe_variant(pixel_encoder, small_release, tmp_path):
    res = run_probe(_spec(pixel_encoder, small_release, tmp_path,
                          train=TrainConfig(probe="linear", steps=40, eval_every=20)),
                    progress=False)
    assert res["train"]["probe"] == "linear" and 0 <= res["test"]["cell_accuracy"] <= 1


@pytest.mark.parametrize(("builder", "grids"), [
    (make_tiny_qwen2_vl, {"vision": [36, 36, 64], "projector": [18, 18, 128]}),
    (make_tiny_qwen3_vl, {"vision": [32, 32, 64], "projector": [16, 16, 128]}),
])
def test_qwen_towers_probe_at_both_read_outs(builder, grids, tiny_release, tmp_path):
    model = builder(tmp_path / "model")
    for readout, shape in grids.items():
        res = run_probe(_spec(model, tiny_release, tmp_path, readout=readout,
                              train=TrainConfig(steps=4, eval_every=2, hidden=TEST_HIDDEN)), progress=False)
        assert res["encoder"]["feature_grid"] + [res["encoder"]["feature_dim"]] == shape
        assert res["encoder"]["family"] in ("qwen2_vl", "qwen3_vl")
        assert res["images_encoded"] == 24 + 6 + 30
        assert "grid_thw" in res["encoder"]["image_processor"]["input"]


def _halves(size: int, vertical: bool) -> Image.Image:
    a = np.zeros((size, size, 3), np.uint8)
    a[...] = (72, 105, 200)
    if vertical:
        a[:, : size // 2] = (205, 78, 78)
    else:
        a[: size // 2] = (205, 78, 78)
    return Image.fromarray(a)


def _silence_mixing(module: torch.nn.Module) -> None:
    """Zero every block and position embedding, so each output token is its own patch's embedding."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if any(s in name for s in ("blocks.", "encoder.layer", "position_embedding", "pos_embed")):
                p.zero_()


VLMS = [make_tiny_qwen2_vl, make_tiny_qwen2_5_vl, make_tiny_qwen3_vl, make_tiny_internvl]
VITS = [make_tiny_siglip_vision, make_tiny_siglip2_vision, make_tiny_clip_vision]


@pytest.mark.parametrize(("builder", "readout"), [(b, r) for b in VLMS for r in ("vision", "projector")] +
                         [(b, "vision") for b in VITS])
def test_real_towers_put_tokens_where_the_pixels_are(builder, readout, tmp_path):
    enc = load_encoder(str(builder(tmp_path / "m")), readout)
    _silence_mixing(enc.model)
    for vertical in (True, False):
        grid = enc.grids([_halves(512, vertical)])[0]
        h = grid.shape[0]
        first, second = (grid[:, : h // 2 - 1],
                         grid[:, h // 2 + 1 :]) if vertical else (grid[: h // 2 - 1], grid[h // 2 + 1 :])
        flat1, flat2 = first.reshape(-1, grid.shape[-1]), second.reshape(-1, grid.shape[-1])
        assert torch.allclose(flat1, flat1[0].expand_as(flat1), atol=1e-4), "the red half is not one block"
        assert torch.allclose(flat2, flat2[0].expand_as(flat2), atol=1e-4), "the blue half is not one block"
        assert not torch.allclose(flat1[0], flat2[0], atol=1e-3)


def test_clip_drops_its_cls_token(small_release, tmp_path):
    enc = load_encoder(str(make_tiny_clip_vision(tmp_path / "clip")))
    assert enc.grids([_halves(512, True)])[0].shape == (16, 16, 64)


def test_bad_inputs_are_clear_errors(pixel_encoder, small_release, tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    text_only = tmp_path / "llama"
    LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=2)).save_pretrained(text_only)
    with pytest.raises(EncoderError, match="cannot probe a 'llama' checkpoint"):
        load_encoder(str(text_only))
    with pytest.raises(EncoderError, match="no projector"):
        load_encoder(str(pixel_encoder), "projector")
    with pytest.raises(EncoderError, match="does not exist"):
        load_encoder(str(tmp_path / "nothing-here"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(EncoderError, match="cannot load a model config"):
        load_encoder(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="unknown probing config"):
        ProbeSpec(encoder="x", config="zero_shot")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run_probe(ProbeSpec(encoder=str(pixel_encoder), config="probe_n24_c3", data=str(tmp_path / "nope")),
                  progress=False)


@pytest.mark.parametrize("kind", ["conv", "linear"])
@pytest.mark.parametrize("patches", [7, 40])
def test_resizing_and_the_first_convolution_commute(kind, patches):
    from probing.core.probe import SpatialProbe

    torch.manual_seed(0)
    probe = SpatialProbe(16, 3, 20, kind, hidden=8).eval()
    x = torch.randn(2, patches, patches, 16)
    first = probe.head[0] if kind == "conv" else probe.head
    resized = torch.nn.functional.interpolate(x.permute(0, 3, 1, 2), size=(20, 20), mode="bilinear",
                                              align_corners=False)
    reference = first(resized)
    if kind == "conv":
        reference = probe.head[1:](reference)
    assert torch.allclose(probe(x), reference, atol=1e-5)


@pytest.mark.parametrize("builder", [make_tiny_qwen2_vl, make_tiny_qwen2_5_vl, make_tiny_qwen3_vl])
def test_the_qwen_vision_read_out_applies_the_mergers_norm(builder, tmp_path):
    from probing.core.encoders import merger_norm

    path = str(builder(tmp_path / "m"))
    normed, raw = load_encoder(path, "vision"), load_encoder(path, "vision_raw")
    image = _halves(512, True)
    g_normed, g_raw = normed.grids([image])[0], raw.grids([image])[0]
    assert g_normed.shape == g_raw.shape
    with torch.no_grad():
        expected = merger_norm(raw.model)(g_raw)  # the norm is per patch token, so it commutes with the grid layout
    assert torch.allclose(g_normed, expected, atol=1e-5)
    assert not torch.allclose(g_normed, g_raw, atol=1e-3)


def test_vision_raw_is_only_for_qwen(pixel_encoder):
    with pytest.raises(EncoderError, match="vision_raw is the Qwen family"):
        load_encoder(str(pixel_encoder), "vision_raw")


def test_features_that_overflow_the_cache_are_refused_and_never_cached(pixel_encoder, small_release, tmp_path,
                                                                       monkeypatch,
                                                                        capsys):
    from probing.core.features import NonFiniteFeatures

    real = Encoder.grids

    def huge(self, images):
        return [g * 1e6 for g in real(self, images)]

    monkeypatch.setattr(Encoder, "grids", huge)
    with pytest.raises(NonFiniteFeatures, match="not finite in float16.*--cache-dtype float32"):
        run_probe(_spec(pixel_encoder, small_release, tmp_path), progress=False)
    assert not list((tmp_path / "cache").rglob("*.features.npy"))
    code, errors, err = _command(capsys, pixel_encoder, small_release, tmp_path)  # no argument was wrong: exit 1
    assert code == 1 and len(errors) == 1 and "not finite in float16" in errors[0] and "Traceback" not in err, err
    assert not list((tmp_path / "cache").rglob("*.features.npy"))
    res = run_probe(_spec(pixel_encoder, small_release, tmp_path, cache_dtype="float32",
                          train=TrainConfig(steps=2, eval_every=1, hidden=TEST_HIDDEN)), progress=False)
    assert res["encoder_calls"] > 0


def test_the_default_schedule_is_the_authors_shuffled_epochs():
    from probing.core.probe import _batches

    cfg = TrainConfig()
    assert (cfg.batch_size, cfg.sampling, cfg.lr, cfg.weight_decay, cfg.steps, cfg.eval_every, cfg.patience) == (
        32, "epochs", 5e-4, 1e-4, 5000, 500, 3)
    gen = torch.Generator().manual_seed(0)
    it = _batches(100, cfg, gen)
    epoch = torch.cat([next(it) for _ in range(4)])  # 32 + 32 + 32 + 4
    assert sorted(epoch.tolist()) == list(range(100))
    second = torch.cat([next(it) for _ in range(4)])
    assert sorted(second.tolist()) == list(range(100)) and not torch.equal(epoch, second)
    draws = _batches(100, TrainConfig(sampling="replacement"), gen)
    assert len(next(draws)) == 32


def test_the_data_is_checked_before_any_model_loads(small_release, tmp_path):
    from tests.support.helpers import g2m

    (tmp_path / "empty-encoder").mkdir()  # a folder (its name passes), holding no model: never loaded
    res = g2m("probe", "--encoder", str(tmp_path / "empty-encoder"), "--config", "probe_n32_c3",
              "--data", str(small_release))  # the small release has no probe_n32_c3
    assert res.returncode == 2 and "probe_n32_c3" in res.stderr and "empty-encoder" not in res.stderr
    # a name that is no folder and no Hub id is refused first, in one line, before the data is read
    typo = g2m("probe", "--encoder", str(tmp_path / "no-such-encoder"), "--config", "probe_n32_c3",
               "--data", str(small_release))
    assert typo.returncode == 2 and typo.stderr.strip() == f"g2m: error: no folder {tmp_path}/no-such-encoder here " \
        "(it does not exist)"
    helptext = g2m("probe", "--help").stdout
    assert "(default: 5000)" in helptext and "(default: 32)" in helptext and "(default: epochs)" in helptext
