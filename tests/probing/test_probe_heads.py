"""A sweep keeps each point's trained head, and the head replays: its names and shapes known without torch, its file
refused in one line unless it is exactly that head, and the checkpoint's features of chosen test rows, extracted
again, giving the submitted cells bit for bit on CPU."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from g2m_base.errors import UsageError
from probing.core.heads import HEAD_FILE, HEAD_FORMAT, MAX_HEAD_HEADER_BYTES, PROBES, head_shapes, parse_head
from tests.support.helpers import REPO
from tests.support.lazy import lazy

# torch and the modules that import it are imported by the first test that uses them, not when the file is collected
torch = lazy("torch")
core_probe = lazy("probing.core.probe")
sweep_replay = lazy("probing.sweep.replay")
sweep_store = lazy("probing.sweep.store")
sweep_train = lazy("probing.sweep.train")

#: A small conv head: every kind of tensor a head holds (weights, BatchNorm's statistics and its int64 counter).
SMALL = {"kind": "conv", "dim": 4, "grid_size": 3, "num_colors": 2, "hidden": 5}
EXPECTED = head_shapes(**SMALL)
REPLAY_ROWS = [0, 3, 7, 11, 29]  # of the tiny release's 30 test rows: the first, the last and some between


def _pack(tensors: dict[str, np.ndarray], meta: dict | None = None, pad: bool = True) -> bytes:
    """A safetensors file written by hand (no torch): the 8-byte header length, the JSON header, the data."""
    header, body = {}, b""
    for name, array in tensors.items():
        dtype = {np.dtype("<f4"): "F32", np.dtype("<i8"): "I64", np.dtype("<f2"): "F16"}[array.dtype]
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [len(body),
                                                                                     len(body) + array.nbytes]}
        body += array.tobytes()
    if meta is not None:
        header["__metadata__"] = meta
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8 if pad else 0)
    return len(text).to_bytes(8, "little") + text + body


def _tensors(expected=EXPECTED) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {name: np.array(7, dtype="<i8") if name.endswith("num_batches_tracked") else
            rng.standard_normal(shape).astype("<f4") for name, shape in expected.items()}


def _split(data: bytes) -> tuple[dict, bytes]:
    size = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + size]), data[8 + size :]


def _raw(header_text: bytes, body: bytes) -> bytes:
    return len(header_text).to_bytes(8, "little") + header_text + body


def _edit(change) -> bytes:
    """The good head with its header changed by ``change(header)``, the data as it was."""
    header, body = _split(_pack(_tensors()))
    change(header)
    return _raw(json.dumps(header).encode(), body)


def _nan() -> bytes:
    t = _tensors()
    t["head.3.weight"].flat[3] = np.nan
    return _pack(t)


def _duplicate_key() -> bytes:
    header, body = _split(_pack(_tensors()))
    first = next(iter(header))
    text = json.dumps(header)
    return _raw(("{" + json.dumps(first) + ": " + json.dumps(header[first]) + ", " + text[1:]).encode(), body)


def _overlap(header: dict) -> None:
    a, b = sorted(header, key=lambda k: header[k]["data_offsets"][0])[:2]
    header[b]["data_offsets"] = [header[a]["data_offsets"][0],
                                 header[a]["data_offsets"][0] + math.prod(header[b]["shape"]) * 4]


HOSTILE = [
    ("wrong shape", lambda: _edit(lambda h: h["head.0.weight"].update(shape=[5, 5, 1, 1])), "shape"),
    ("F16 dtype", lambda: _edit(lambda h: h["head.0.bias"].update(dtype="F16")), "'F16', not F32"),
    ("F32 counter", lambda: _edit(lambda h: h["head.1.num_batches_tracked"].update(dtype="F32")), "not I64"),
    ("extra tensor", lambda: _pack({**_tensors(), "head.2.weight": np.zeros(5, "<f4")}), "unexpected 'head.2.weight'"),
    ("missing tensor", lambda: _pack({k: v for k, v in _tensors().items() if k != "head.3.bias"}),
     "missing head.3.bias"),
    ("overlapping offsets", lambda: _edit(_overlap), "gap or overlap"),
    ("short offsets", lambda: _edit(lambda h: h["head.3.bias"].update(data_offsets=[
        h["head.3.bias"]["data_offsets"][0], h["head.3.bias"]["data_offsets"][1] - 4])), "not the 8 its shape needs"),
    ("trailing bytes", lambda: _pack(_tensors()) + b"\0" * 4, "the file holds"),
    ("header past the buffer", lambda: (10_000).to_bytes(8, "little") + _pack(_tensors())[8:],
     "runs past the end"),
    ("header over the cap", lambda: (MAX_HEAD_HEADER_BYTES + 1).to_bytes(8, "little") + b"{}" + b" " * (70 << 10),
     "over the 65,536-byte limit"),
    ("shorter than its length", lambda: b"\x02\0\0", "shorter than the 8-byte"),
    ("NaN weight", _nan, "head.3.weight holds a value that is not finite"),
    ("not JSON", lambda: _raw(b"{not json}", b""), "malformed JSON"),
    ("NaN in the header", lambda: _raw(b'{"a": NaN}', b""), "NaN is not JSON"),
    ("not an object", lambda: _raw(b"[1, 2]", b""), "not an object"),
    ("duplicate key", _duplicate_key, "repeats the key"),
    ("metadata not strings", lambda: _pack(_tensors(), {"format": 1}), "__metadata__"),
    ("shape of booleans", lambda: _edit(lambda h: h["head.0.bias"].update(shape=[True])), "shape"),
    ("entry with other keys", lambda: _edit(lambda h: h["head.0.bias"].update(extra=1)), "must be an object of"),
    ("not bytes", lambda: "text", "bytes expected"),
]


def test_the_heads_module_imports_without_torch_or_safetensors():
    """The board checks a submitted head on machines that have neither."""
    code = ("import sys\nfor m in ('torch', 'safetensors', 'transformers'):\n    sys.modules[m] = None\n"
            "import probing.core.heads as h\ntry:\n    h.parse_head(b'{}', {})\nexcept ValueError:\n    pass\n"
            "print(h.HEAD_FORMAT)")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0 and res.stdout.strip() == HEAD_FORMAT, res.stderr[-2000:]


@pytest.mark.parametrize("kind", PROBES)
@pytest.mark.parametrize(("dim", "grid_size", "num_colors", "hidden"), [(4, 3, 2, 5), (64, 20, 3, 512)])
def test_head_shapes_are_the_real_probe_s_state_dict(kind, dim, grid_size, num_colors, hidden):
    probe = core_probe.SpatialProbe(dim, num_colors, grid_size, kind, hidden)
    real = {name: tuple(t.shape) for name, t in probe.state_dict().items()}
    assert head_shapes(kind, dim, grid_size, num_colors, hidden) == real


@pytest.mark.parametrize(("args", "message"), [
    (("mlp", 4, 3, 2, 5), "unknown probe kind 'mlp'"), (("conv", 0, 3, 2, 5), "dim must be a positive integer"),
    (("conv", 4, 3, 2, True), "hidden must be a positive integer"), (("linear", 4, 3.0, 2, 5), "grid_size")])
def test_head_shapes_refuses_an_unknown_kind_or_a_bad_size(args, message):
    with pytest.raises(ValueError, match=message):
        head_shapes(*args)


def test_a_head_written_by_hand_is_accepted_as_the_table_s_control():
    parse_head(_pack(_tensors(), {"format": HEAD_FORMAT}), EXPECTED)
    parse_head(_pack(_tensors(), pad=False), EXPECTED)  # no metadata, no padding: still a well-formed file


@pytest.mark.parametrize(("make", "reason"), [(m, r) for _, m, r in HOSTILE], ids=[n for n, _, _ in HOSTILE])
def test_a_hostile_head_is_refused_in_one_line(make, reason):
    with pytest.raises(ValueError) as raised:
        parse_head(make(), EXPECTED)
    message = str(raised.value)
    assert reason in message and "\n" not in message, message


@pytest.mark.parametrize("kind", PROBES)
def test_save_head_round_trips_through_parse_head_and_load_head(kind):
    dims = {**SMALL, "kind": kind}
    torch.manual_seed(0)
    probe = core_probe.SpatialProbe(dims["dim"], dims["num_colors"], dims["grid_size"], kind, dims["hidden"])
    if kind == "conv":  # one training step, so BatchNorm's statistics and counter are not the defaults
        probe.train()
        probe(torch.randn(4, 2, 2, dims["dim"]))
    data = core_probe.save_head(probe)
    parse_head(data, head_shapes(**dims))
    assert _split(data)[0]["__metadata__"] == {"format": HEAD_FORMAT}
    back = core_probe.load_head(data, kind, dims["dim"], dims["grid_size"], dims["num_colors"], dims["hidden"])
    assert not back.training
    for name, tensor in probe.state_dict().items():
        assert torch.equal(back.state_dict()[name], tensor), name
    x = torch.randn(3, 2, 2, dims["dim"]) if kind not in ("mean", "cls") else torch.randn(3, 1, 1, dims["dim"])
    with torch.no_grad():
        assert torch.equal(back(x), probe.eval()(x))


def test_load_head_refuses_a_head_of_another_probe():
    probe = core_probe.SpatialProbe(4, 2, 3, "conv", 5)
    with pytest.raises(ValueError, match=r"head.0.weight has shape \[5, 4, 1, 1\], not \[5, 6, 1, 1\]"):
        core_probe.load_head(core_probe.save_head(probe), "conv", 6, 3, 2, 5)
    with pytest.raises(ValueError, match="missing"):
        core_probe.load_head(core_probe.save_head(probe), "linear", 4, 3, 2, 5)


# --- the tiny VLM's sweep (``sweep_dir``): its heads kept, applied to its store, and replayed from the checkpoint ---

def _sweep(sweep_dir: Path) -> tuple[Path, dict]:
    path = next(sweep_dir.rglob("sweep.json"))
    return path.parent, json.loads(path.read_text())


def _headline(points: list[dict]) -> list[str]:
    """The read-outs a submission carries: the last vision block, the projector, each DeepStack stream, the best and
    the last LLM layers, each once."""
    tower = [q for q in points if q["stage"] == "tower"]
    llm = [q for q in points if q["stage"] == "llm"]
    picks = [max(tower, key=lambda q: q["layer"])["point"]]
    picks += [q["point"] for q in points if q["stage"] in ("projector", "deepstack")]
    picks += [max(llm, key=lambda q: q["cell_accuracy"])["point"], max(llm, key=lambda q: q["layer"])["point"]]
    return list(dict.fromkeys(picks))


def _block(sweep: dict) -> tuple[int, int]:
    return sweep["grid_size"], sweep["num_colors"]


@pytest.mark.slow  # the sweep_dir fixture (a tiny sweep)
def test_every_point_of_a_sweep_keeps_its_head_and_the_head_gives_its_predictions(sweep_dir):
    out, sweep = _sweep(sweep_dir)
    n, colors = _block(sweep)
    key = json.loads((Path(sweep["store"]) / "key.json").read_text())
    store = sweep_store.Store(Path(sweep["store"]), sweep["rows"], key["chunk_rows"], sweep["readout"]["cache_dtype"])
    assert {p.parent.name for p in out.glob(f"points/*/{HEAD_FILE}")} == {p["point"] for p in sweep["points"]}
    for point in sweep["points"]:
        data = (out / "points" / point["point"] / HEAD_FILE).read_bytes()
        head = core_probe.load_head(data, sweep["train"]["probe"], point["feature_dim"], n, colors,
                                    sweep["train"]["hidden"])
        feats = store.features(point["point"], "test")
        pred = core_probe.predict(head, core_probe.FeatureSet(feats, np.zeros((len(feats), n, n), np.int8),
                                                              torch.device("cpu")))
        saved = np.load(out / "points" / point["point"] / "test_predictions.npy")
        assert np.array_equal(pred.numpy().astype(np.uint8), saved), point["point"]


@pytest.mark.slow  # the sweep_dir fixture, and a forward pass of the tiny VLM
def test_replaying_chosen_test_rows_gives_the_submitted_cells_exactly(sweep_dir, tiny_vlm, tiny_release):
    out, sweep = _sweep(sweep_dir)
    assert sweep["rows"]["test"] == 30  # REPLAY_ROWS ends at the last row
    points = {p["point"]: p for p in sweep["points"]}
    names = _headline(sweep["points"])
    assert {"tower.003", "projector", "deepstack.001", "llm.003"} <= set(names)
    recipe = sweep_replay.recipe_of(sweep)
    assert json.loads(json.dumps(recipe)) == recipe and recipe["probe"] == "conv" and recipe["hidden"] == 512
    got = sweep_replay.replay_predictions(
        recipe, str(tiny_vlm), str(tiny_release), "probe_n20_c3", REPLAY_ROWS,
        {p: (out / "points" / p / HEAD_FILE).read_bytes() for p in names}, {p: points[p] for p in names})
    assert sorted(got) == sorted(names)
    for name in names:
        saved = np.load(out / "points" / name / "test_predictions.npy")[REPLAY_ROWS]
        assert got[name].dtype == np.uint8 and np.array_equal(got[name], saved), name


def test_a_point_without_its_head_is_not_finished(tmp_path):
    """A sweep made before heads were kept retrains those points when resumed, and only those."""
    result = tmp_path / "points" / "tower.001" / "result.json"
    result.parent.mkdir(parents=True)
    result.write_text(json.dumps({"key": "k1", "point": "tower.001"}))
    assert sweep_train.finished(result, "k1") is None
    (result.parent / HEAD_FILE).write_bytes(b"head")
    assert sweep_train.finished(result, "k1") == {"key": "k1", "point": "tower.001"}
    assert sweep_train.finished(result, "k2") is None


@pytest.mark.slow  # the sweep_dir fixture, copied, and one probe trained again
def test_resuming_a_sweep_whose_point_lost_its_head_retrains_that_point_alone(sweep_dir, tiny_vlm, tiny_release,
                                                                              tmp_path, monkeypatch):
    from probing.core.probe import TrainConfig
    from probing.sweep import train
    from probing.sweep.run import SweepSpec, run_sweep

    copy = tmp_path / "probes"
    shutil.copytree(sweep_dir, copy)
    out, before = _sweep(copy)
    (out / "points" / "projector" / HEAD_FILE).unlink()
    trained = []
    real = train.train_point
    monkeypatch.setattr(train, "train_point", lambda point, *a: trained.append(point.name) or real(point, *a))
    res = run_sweep(SweepSpec(encoder=str(tiny_vlm), config="probe_n20_c3", data=str(tiny_release), out=str(copy),
                              batch_size=4, chunk_rows=8, train=TrainConfig(steps=6, eval_every=3, patience=2)),
                    progress=False)
    assert trained == ["projector"] and res["passes"]["images"] == 0
    assert (out / "points" / "projector" / HEAD_FILE).read_bytes() == (
        next(sweep_dir.rglob(f"points/projector/{HEAD_FILE}")).read_bytes())
    assert [p["cell_accuracy"] for p in res["points"]] == [p["cell_accuracy"] for p in before["points"]]


@pytest.mark.slow  # the sweep_dir fixture; refused after planning, before any weights load
@pytest.mark.parametrize(("change", "message"), [
    (lambda p, h: ({"tower.009": p["tower.003"]}, {"tower.009": h["tower.003"]}),
     "unknown sweep point 'tower.009': .* has no such read-out"),
    (lambda p, h: ({"vision.1": p["tower.003"]}, {"vision.1": h["tower.003"]}), "unknown sweep point 'vision.1'"),
    (lambda p, h: ({"tower.003": {**p["tower.003"], "feature_dim": 65}}, h),
     "point tower.003: the sweep recorded feature_dim 65, the checkpoint gives 64"),
    (lambda p, h: ({"tower.003": {**p["tower.003"], "stored_grid": [20, 20]}}, h),
     r"point tower.003: the sweep recorded stored_grid \[20, 20\], the checkpoint gives \[16, 16\]"),
    (lambda p, h: (p, {}), "has a head or a record but not both"),
], ids=["unknown layer", "unknown stage", "feature dim", "stored grid", "no head"])
def test_a_replay_of_a_point_the_checkpoint_does_not_have_is_refused_in_one_line(change, message, sweep_dir,
                                                                                   tiny_vlm, tiny_release):
    out, sweep = _sweep(sweep_dir)
    points = {"tower.003": next(p for p in sweep["points"] if p["point"] == "tower.003")}
    heads = {"tower.003": (out / "points" / "tower.003" / HEAD_FILE).read_bytes()}
    points, heads = change(points, heads)
    with pytest.raises(UsageError, match=message) as raised:
        sweep_replay.replay_predictions(sweep_replay.recipe_of(sweep), str(tiny_vlm), str(tiny_release),
                                        "probe_n20_c3", REPLAY_ROWS, heads, points)
    assert "\n" not in str(raised.value)


@pytest.mark.slow  # the sweep_dir fixture
def test_a_recipe_or_head_the_sweep_could_not_have_written_is_refused(sweep_dir, tiny_vlm, tiny_release):
    out, sweep = _sweep(sweep_dir)
    recipe = sweep_replay.recipe_of(sweep)
    points = {"tower.003": next(p for p in sweep["points"] if p["point"] == "tower.003")}
    heads = {"tower.003": (out / "points" / "tower.003" / HEAD_FILE).read_bytes()}
    for bad, message in (({**recipe, "pool": "mean"}, "pools 'mean', but a conv probe reads 'grid'"),
                         ({**recipe, "probe": "mlp"}, "probe must be one of"),
                         ({**recipe, "image_input": {"grid_thw": [1, 8, 8]}}, "image input is not the sweep's"),
                         ({k: v for k, v in recipe.items() if k != "dtype"}, "recipe has no dtype")):
        with pytest.raises(UsageError, match=message):
            sweep_replay.replay_predictions(bad, str(tiny_vlm), str(tiny_release), "probe_n20_c3", REPLAY_ROWS,
                                            heads, points)
    with pytest.raises(UsageError, match="not a row number of the 30-row test split"):
        sweep_replay.replay_predictions(recipe, str(tiny_vlm), str(tiny_release), "probe_n20_c3", [30], heads, points)
    projector = (out / "points" / "projector" / HEAD_FILE).read_bytes()  # 128 wide: another point's head
    with pytest.raises(ValueError, match=r"head.0.weight has shape \[512, 128, 1, 1\], not \[512, 64, 1, 1\]"):
        sweep_replay.replay_predictions(recipe, str(tiny_vlm), str(tiny_release), "probe_n20_c3", REPLAY_ROWS,
                                        {"tower.003": projector}, points)
    with pytest.raises(UsageError, match="not a sweep record"):
        sweep_replay.recipe_of({"model": {}})
