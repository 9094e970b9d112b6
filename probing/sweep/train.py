"""The sweep's training step: one probe per point, on that point's shards of the store, scored on the test split and
written to ``points/<point>/result.json`` as soon as it is done, with the trained head beside it
(``head.safetensors``, so the point's predictions can be replayed: ``probing.sweep.replay``).

A result is keyed by the store it was trained on, the point and the training settings (``result_key``), so a rerun
retrains exactly the points whose result is missing or was made with other settings, and the ranks of a data-parallel
run share out the points still to do.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from g2m_base.bounded_json import Rejected, read_json
from g2m_base.files import atomic_write_bytes, atomic_write_text
from probing.core.features import save_npy
from probing.core.heads import HEAD_FILE
from probing.core.probe import FeatureSet, TrainConfig, predict, save_head, score, train_probe
from probing.sweep.points import Point
from probing.sweep.store import SPLITS, Store


def result_key(store_dir: Path, point: Point, train: TrainConfig) -> str:
    """The store's folder name already hashes the model, data and read-out settings; the point and the training
    settings complete what the probe's numbers depend on."""
    raw = json.dumps({"store": store_dir.name, "point": point.name, "train": train.to_json()}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def finished(path: Path, key: str) -> dict | None:
    """The point's saved result if it was made with ``key``; ``None`` for a missing, damaged or stale one, or one
    without its head beside it (a sweep made before heads were kept retrains just those points when resumed)."""
    if not path.with_name(HEAD_FILE).is_file():
        return None
    try:
        res = read_json(path, 8 << 20, "sweep point result")
    except (OSError, Rejected):
        return None
    return res if isinstance(res, dict) and res.get("key") == key else None


def train_point(point: Point, store: Store, labels: dict, train: TrainConfig, block, device: str, key: str,
                out: Path) -> dict:
    """One probe at one point, as ``g2m probe`` trains it (the same probe, schedule and scores, so the points that
    equal its read-outs give its numbers), its result written atomically: a result file that exists is whole."""
    start = time.perf_counter()
    dev = torch.device(device)
    sets = {s: FeatureSet(store.features(point.name, s), labels[s], dev) for s in SPLITS}
    dim = sets["train"].feats.shape[-1]
    model, history = train_probe(sets["train"], sets["validation"], dim, block.num_colors, block.grid_size,
                                 train, progress=False)
    pred = predict(model, sets["test"])
    test = score(pred, sets["test"].labels, block.num_colors)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / HEAD_FILE, save_head(model))  # before result.json: a finished point has its head
    save_npy(out / "heatmap.npy", test["heatmap"])
    save_npy(out / "test_predictions.npy", pred.cpu().numpy().astype(np.uint8))  # what a submission re-scores
    res = {"key": key, "point": point.name, "stage": point.stage, "layer": point.layer, "readout": point.readout,
           "feature_grid": list(point.grid), "stored_grid": list(store.features(point.name, "train").shape[1:3]),
           "feature_dim": int(dim), "disk_bytes": store.bytes_of(point.name),
           **{k: test[k] for k in ("cell_accuracy", "cell_accuracy_ci", "exact_match", "exact_match_ci",
                                   "per_colour_accuracy")},
           "heatmap": np.round(test["heatmap"], 4).tolist(), "best_step": history["best"]["step"],
           "stopped_at": history["stopped_at"], "history": history["history"],
           "train_seconds": round(time.perf_counter() - start, 3)}
    atomic_write_text(out / "result.json", json.dumps(res, indent=1) + "\n")
    return res


def train_points(points: list[Point], store: Store, splits: dict, train: TrainConfig, block, device: str,
                 keys: dict[str, str], out: Path, progress: bool) -> float:
    """Train this rank's share of the points still to do; returns the seconds it took (a cost, kept apart)."""
    labels = {s: np.asarray(ds["matrix"], dtype=np.int8) for s, ds in splits.items()}
    start = time.perf_counter()
    bar = tqdm(points, unit="probe", desc="sweep probes", disable=not progress)
    for point in bar:
        res = train_point(point, store, labels, train, block, device, keys[point.name], out / "points" / point.name)
        bar.set_postfix(point=point.name, acc=f"{res['cell_accuracy']:.3f}")
    return time.perf_counter() - start
