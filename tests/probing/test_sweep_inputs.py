"""Hostile input to ``g2m probe`` and ``g2m probe sweep``, refused in one line before anything is built or loaded:
model configs read by ``--dry-run`` (which exists to plan for models one cannot load, so their configs are whatever
one was given) and every numeric option. Each case runs the real command in-process and must be quick: a refusal
that took seconds would mean something grew with the hostile number first."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

#: A tiny Qwen3-VL config.json as transformers writes one (the fields the plan reads), for the cases to spoil.
BASE = {
    "model_type": "qwen3_vl", "image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 7,
    "vision_end_token_id": 8, "tie_word_embeddings": True,
    "vision_config": {"model_type": "qwen3_vl", "depth": 2, "hidden_size": 32, "intermediate_size": 64,
                      "num_heads": 2, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
                      "out_hidden_size": 48, "in_channels": 3, "num_position_embeddings": 64,
                      "deepstack_visual_indexes": [0]},
    "text_config": {"model_type": "qwen3_vl_text", "vocab_size": 64, "hidden_size": 48, "intermediate_size": 96,
                    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 24,
                    "rope_scaling": {"rope_type": "default", "mrope_section": [4, 4, 4], "mrope_interleaved": True}},
}


@pytest.fixture(scope="module", autouse=True)
def _imported():
    """The command's modules imported once (torch among them), so each case times its own work."""
    import g2m_cli.main  # noqa: F401
    import probing.sweep.plan  # noqa: F401
    import probing.sweep.run  # noqa: F401


def _run(capsys, *args: str) -> tuple[int, str, float]:
    from g2m_cli.main import main

    start = time.perf_counter()
    code = main(list(args))
    took = time.perf_counter() - start
    return code, capsys.readouterr().err, took


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("g2m: error: ") and "Traceback" not in err, err
    return lines[0]


def _spoil(doc: dict, field: str, value) -> dict:
    doc = json.loads(json.dumps(doc))
    *parents, last = field.split(".")
    target = doc
    for p in parents:
        target = target[p]
    target[last] = value
    return doc


#: (case, config.json text, what the one-line error must name)
HOSTILE = [
    ("null", "null", "null"),
    ("a list", "[1, 2]", "not a model config"),
    ("deep nesting", "[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ("NaN hidden size", json.dumps(_spoil(BASE, "text_config.hidden_size", float("nan"))), "NaN"),
    ("infinite hidden size", json.dumps(_spoil(BASE, "text_config.hidden_size", 1)).replace(
        '"hidden_size": 1,', '"hidden_size": 1e400,'), "text_config.hidden_size"),
    *[(f"layers {v!r}", json.dumps(_spoil(BASE, "text_config.num_hidden_layers", v)), "text_config.num_hidden_layers")
      for v in ("2", 2.5, True, None, 0, -3, 10**12)],
    ("negative hidden size", json.dumps(_spoil(BASE, "vision_config.hidden_size", -5)), "vision_config.hidden_size"),
    ("merge size 0", json.dumps(_spoil(BASE, "vision_config.spatial_merge_size", 0)),
     "vision_config.spatial_merge_size"),
    ("vision depth 0", json.dumps(_spoil(BASE, "vision_config.depth", 0)), "vision_config.depth"),
    ("vision depth 10^9", json.dumps(_spoil(BASE, "vision_config.depth", 10**9)), "vision_config.depth"),
    ("heads 0", json.dumps(_spoil(BASE, "vision_config.num_heads", 0)), "vision_config.num_heads"),
    ("patch size text", json.dumps(_spoil(BASE, "vision_config.patch_size", "16")), "vision_config.patch_size"),
    ("image token -1", json.dumps(_spoil(BASE, "image_token_id", -1)), "image_token_id"),
    ("vision config a string", json.dumps(_spoil(BASE, "vision_config", "x")), "vision_config"),
    ("text config a list", json.dumps(_spoil(BASE, "text_config", [])), "text_config"),
    ("vocabulary 10^12", json.dumps(_spoil(BASE, "text_config.vocab_size", 10**12)), "text_config.vocab_size"),
    ("InternVL ratio 0", json.dumps({"model_type": "internvl", "downsample_ratio": 0.0}), "downsample_ratio"),
    ("InternVL ratio text", json.dumps({"model_type": "internvl", "downsample_ratio": "0.5"}), "downsample_ratio"),
    ("InternVL read-out layer 10^9", json.dumps({"model_type": "internvl", "vision_feature_layer": 10**9}),
     "vision_feature_layer"),
    ("InternVL tile size pair", json.dumps({"model_type": "internvl", "vision_config": {"image_size": [448, 0]}}),
     "vision_config.image_size"),
    ("unknown family", json.dumps({"model_type": {"x": 1}}), "cannot lay out"),
]


@pytest.mark.parametrize(("text", "names"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_a_hostile_model_config_is_refused_in_one_line_naming_the_field(text, names, tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(text)
    code, err, took = _run(capsys, "probe", "sweep", "--encoder", str(model), "--config", "probe_n20_c3",
                           "--dry-run", "--out", str(tmp_path / "o"))
    assert code == 2 and names in _one_line(err), err
    assert took < 2.0  # refused before anything was built or counted


@pytest.mark.slow  # the config is read by transformers first
@pytest.mark.parametrize(("settings", "names"), [
    ({"min_pixels": 10**12}, "min_pixels"), ({"patch_size": 0}, "patch_size"), ({"size": {"longest_edge": -1}},
                                                                               "size.longest_edge"),
    ({"merge_size": "2"}, "merge_size"), ([], "no JSON object")])
def test_hostile_image_processor_settings_are_refused_in_one_line(settings, names, tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(BASE))
    (model / "preprocessor_config.json").write_text(json.dumps(settings))
    code, err, _ = _run(capsys, "probe", "sweep", "--encoder", str(model), "--config", "probe_n20_c3",
                        "--dry-run", "--out", str(tmp_path / "o"))
    assert code == 2 and names in _one_line(err), err


@pytest.mark.slow  # builds the model on the meta device to count its parameters
def test_the_checks_pass_a_real_config_and_its_plan_is_made(tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(BASE))
    code, err, _ = _run(capsys, "probe", "sweep", "--encoder", str(model), "--config", "probe_n20_c3", "--dry-run",
                        "--gpu-gb", "40", "--out", str(tmp_path / "o"))
    assert code == 0, err


SWEEP, PROBE = ("probe", "sweep", "--config", "probe_n20_c3"), ("probe", "--config", "probe_n20_c3")
#: (command, option, value, what the error names): every numeric option of both commands, each bad in each way.
BAD_NUMBERS = [
    *[(SWEEP, "--lr", v, "--lr") for v in ("nan", "inf", "-inf", "0", "-1e-3", "1e9")], (PROBE, "--lr", "nan", "--lr"),
    *[(SWEEP, "--gpu-gb", v, "--gpu-gb") for v in ("0", "nan", "-5", "inf", "1e300")],
    *[(cmd, opt, v, opt) for cmd in (SWEEP, PROBE)
      for opt in ("--batch-size", "--steps", "--train-batch-size", "--eval-every", "--patience", "--hidden")
      for v in ("0", "10000000000000")],
    *[(cmd, "--seed", v, "--seed") for cmd in (SWEEP, PROBE) for v in ("-1", str(2**32))],
    *[(SWEEP, opt, v, opt) for opt in ("--stride", "--chunk-rows") for v in ("0", "-2", "10000000000000")],
    *[(SWEEP, "--points", v, "--points") for v in ("tower,tower", "llm,tower,llm", ",", "tower,pixels")],
]


@pytest.mark.parametrize(("command", "option", "value", "names"), BAD_NUMBERS,
                         ids=[f"{c[0][1] if c[0] is SWEEP else 'probe'}{c[1]}={c[2]}" for c in BAD_NUMBERS])
def test_every_numeric_option_is_checked_in_one_line(command, option, value, names, tmp_path, capsys):
    code, err, _ = _run(capsys, *command, "--encoder", str(tmp_path / "no-model"), "--out", str(tmp_path / "o"),
                        f"{option}={value}", *(["--dry-run"] if "sweep" in command else []))
    assert code == 2 and names in _one_line(err), err
    assert not Path(tmp_path / "o").exists()
