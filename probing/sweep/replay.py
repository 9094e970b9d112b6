"""Replay a sweep's saved heads on chosen test rows: the checkpoint's features extracted again, each point's head
applied, the predicted cells returned.

A sweep's ``test_predictions.npy`` is a claim; its ``head.safetensors`` makes the claim checkable. Whoever holds the
checkpoint and the release can pick a few test rows, extract their features exactly as the sweep did (the same
plan, hooks, pooling, fitting and storage dtype: ``run._plan``, ``extract.load_model``, ``taps.Taps``), apply the
saved head and compare the cells with the submitted ones. On CPU the features come out bit-identical to the store's,
whatever the batch, so the predictions match exactly; on a GPU in bfloat16, near-ties in the argmax may flip a cell.

``recipe_of`` takes from ``sweep.json`` what a replay needs to rebuild the sweep's read-out (JSON values only, so a
submission can carry it). ``replay_predictions`` refuses, in one line and before any weights load, a recipe it cannot
follow, a point the plan does not have, or a point whose width or stored grid differs from what the sweep recorded:
features of another shape would be another read-out. A replay proves that the cells come from this head on this
checkpoint's features, not how the head was trained.
"""

from __future__ import annotations

import json

import numpy as np
import torch

from dataset_builder.grids.configs import get_config
from g2m_base.errors import UsageError
from probing.core.encoders import processor_settings, torch_dtype_of
from probing.core.heads import head_shapes, parse_head
from probing.core.probe import POOLED, FeatureSet, TrainConfig, load_head, predict
from probing.sweep import taps as chat  # the LLM's input
from probing.sweep.extract import load_model
from probing.sweep.points import STAGES, stored_shape
from probing.sweep.run import _load_data, _plan
from probing.sweep.settings import SweepSpec
from probing.sweep.taps import Taps

#: What a replay reads from the sweep's record: the probe, the read-out (pooling, tower read-out, layer stride), both
#: dtypes, and what the model's processor and chat template made of the data, which the replay must make again.
RECIPE_FIELDS = {"probe": ("readout", "probe"), "hidden": ("train", "hidden"), "pool": ("readout", "pool"),
                 "tower_readout": ("readout", "tower"), "stride": ("readout", "stride"), "dtype": ("model", "dtype"),
                 "cache_dtype": ("readout", "cache_dtype"), "family": ("model", "family"),
                 "image_input": ("model", "image_input"), "image_processor": ("model", "image_processor"),
                 "llm_input": ("readout", "llm_input")}
#: The stage each kind of point name is planned with (DeepStack streams come with the projector).
_STAGE_OF = {"tower": "tower", "projector": "projector", "deepstack": "projector", "llm": "llm"}


def _plain(value):
    return json.loads(json.dumps(value))


def recipe_of(sweep: dict) -> dict:
    """The settings a replay of ``sweep`` (the content of its ``sweep.json``) needs, as JSON values."""
    try:
        return _plain({key: sweep[part][field] for key, (part, field) in RECIPE_FIELDS.items()})
    except (KeyError, TypeError) as e:
        raise UsageError(f"not a sweep record: it has no {str(e)[:60]} (a sweep.json has model, readout and train)"
                         ) from None


def _spec(recipe: dict, checkpoint: str, data: str, config: str, device: str, batch_size: int,
          stages: tuple[str, ...]) -> SweepSpec:
    """The sweep's spec for this replay, every layer planned (stride 1 plans every point of any stride)."""
    missing = [k for k in RECIPE_FIELDS if k not in recipe]
    if missing:
        raise UsageError(f"the replay recipe has no {', '.join(missing)}")
    try:
        train = TrainConfig(probe=recipe["probe"], hidden=recipe["hidden"])
        spec = SweepSpec(encoder=checkpoint, config=config, data=data, device=device, dtype=recipe["dtype"],
                         cache_dtype=recipe["cache_dtype"], batch_size=batch_size, train=train, points=stages,
                         tower_readout=recipe["tower_readout"])
    except (TypeError, KeyError) as e:
        raise UsageError(f"the replay recipe is not one a sweep writes ({type(e).__name__}: {str(e)[:80]})") from None
    want = recipe["probe"] if recipe["probe"] in POOLED else "grid"
    if recipe["pool"] != want:
        raise UsageError(f"the replay recipe pools {str(recipe['pool'])[:20]!r}, but a {recipe['probe']} probe "
                         f"reads {want!r}")
    return spec


def _stages(names: list[str]) -> tuple[str, ...]:
    found = set()
    for name in names:
        stage = _STAGE_OF.get(str(name).split(".", 1)[0])
        if stage is None:
            raise UsageError(f"unknown sweep point {str(name)[:60]!r}")
        found.add(stage)
    return tuple(s for s in STAGES if s in found)


def _check_rows(rows: list[int], count: int) -> list[int]:
    if not rows:
        raise UsageError("no test rows to replay")
    bad = [r for r in rows if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < count]
    if bad:
        raise UsageError(f"test row {str(bad[0])[:20]} is not a row number of the {count}-row test split")
    return [int(r) for r in rows]


def _check_plan(recipe: dict, plan, splits: dict, names: list[str]) -> None:
    """The model and data must make what the sweep recorded: the family, the processor's settings and input, and
    (with an LLM point) the exact text the LLM read."""
    for key, made in (("family", plan.family), ("image_processor", processor_settings(plan.image_processor)),
                      ("image_input", plan.image_input)):
        if _plain(made) != recipe[key]:
            raise UsageError(f"the checkpoint's {key.replace('_', ' ')} is not the sweep's: {str(_plain(made))[:80]}")
    if any(n.startswith("llm.") for n in names):
        tok = plan.tokenizer
        text = chat.describe(tok, chat.expand(chat.chat_text(tok, splits["train"][0]["prompt"]), tok, plan.family,
                                              plan.grid.image_tokens), plan.grid)
        if _plain(text) != recipe["llm_input"]:
            raise UsageError("the LLM's input (chat template, prompt or image tokens) is not the one the sweep read")


def replay_predictions(recipe: dict, checkpoint: str, data: str, config: str, rows: list[int], heads: dict[str, bytes],
                       points: dict[str, dict], device: str = "cpu", batch_size: int = 4) -> dict[str, np.ndarray]:
    """Each named point's predicted cells, (len(rows), N, N) uint8, for test rows ``rows`` of ``config`` in the
    release ``data``: ``checkpoint``'s features extracted as the sweep did, then ``heads[name]`` applied.
    ``points[name]`` is the point as the sweep recorded it (``stage``, ``layer``, ``feature_dim``, ``stored_grid``).
    A head that is not exactly this probe's is ``Rejected`` (a ValueError, from ``parse_head``) before any weights
    load."""
    names = list(points)
    if set(heads) != set(names):
        odd = sorted(set(heads) ^ set(names))
        raise UsageError(f"point {str(odd[0])[:60]!r} has a head or a record but not both")
    spec = _spec(recipe, checkpoint, data, config, device, batch_size, _stages(names))
    block = get_config(config).splits[0].blocks[0]
    n, colors = block.grid_size, block.num_colors
    _, splits = _load_data(spec)
    rows = _check_rows(rows, len(splits["test"]))
    plan = _plan(spec, splits)
    _check_plan(recipe, plan, splits, names)
    planned = {p.name: p for p in plan.points}
    for name in names:
        p, rec = planned.get(name), points[name]
        if p is None:
            raise UsageError(f"unknown sweep point {str(name)[:60]!r}: {checkpoint} has no such read-out")
        said = rec if isinstance(rec, dict) else {}
        made = {"stage": p.stage, "layer": p.layer, "feature_dim": p.dim,
                "stored_grid": list(stored_shape(p, n, spec.pool)[:2])}
        for key, value in made.items():
            if said.get(key) != value:
                raise UsageError(f"point {name}: the sweep recorded {key} {str(said.get(key))[:40]}, the checkpoint "
                                 f"gives {value}")
    wanted = [planned[name] for name in names]
    for p in wanted:  # every head checked before any weights load; load_head checks it again when it loads
        parse_head(heads[p.name], head_shapes(recipe["probe"], p.dim, n, colors, recipe["hidden"]))
    feats = _extract(spec, plan, wanted, splits["test"], rows, n, device)
    out = {}
    for p in wanted:
        head = load_head(heads[p.name], recipe["probe"], p.dim, n, colors, recipe["hidden"]).to(device)
        labels = np.zeros((len(rows), n, n), dtype=np.int8)  # unused: predict reads the features alone
        out[p.name] = predict(head, FeatureSet(feats[p.name], labels, torch.device(device))).cpu().numpy().astype(
            np.uint8)
    return out


def _extract(spec: SweepSpec, plan, points: list, test, rows: list[int], grid_size: int,
             device: str) -> dict[str, np.ndarray]:
    """The points' stored features of ``rows``, one forward pass per ``spec.batch_size`` rows, as the sweep's
    extraction makes them."""
    model = load_model(spec, device, any(p.stage == "llm" for p in points))
    taps = Taps(model, plan.grid, points, grid_size, spec.pool, spec.tower_readout, spec.cache_dtype,
                plan.image_processor, plan.tokenizer, torch_dtype_of(spec.dtype))
    got: dict[str, list[np.ndarray]] = {p.name: [] for p in points}
    try:
        for a in range(0, len(rows), spec.batch_size):
            batch = test.select(rows[a : a + spec.batch_size])
            images = [im.convert("RGB") for im in batch["image"]]
            for name, block in taps.run(images, batch["prompt"] if taps.needs_llm else None).items():
                got[name].append(block)
    finally:
        taps.close()
    return {name: np.concatenate(blocks) for name, blocks in got.items()}
