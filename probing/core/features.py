"""Extract frozen-encoder features once per split into an on-disk cache; train probes on the cache.

The authors run the frozen backbone at every training step. The backbone is frozen, so its output per image never
changes: we run it once per image, store the patch grid (float16 ``.npy``, memory-mapped when read back), and every
later step or rerun reads the file (``benchmarks/bench_probe.py`` measures the ratio).

What is stored is what the probe reads (``fit_to_probe``): a grid with at least N x N tokens is stored already resized
to N x N. The probe's bilinear resize (``align_corners=False``, no antialiasing) reads at most four neighbours per
cell, so the other tokens never reach it, and resizing N x N to N x N is the identity: the probe computes the same
function on a fraction of the bytes (an 8B model's 32 x 32 tower grid at N = 20: 400 tokens stored instead of 1,024).
The resize runs in float32 before the one rounding to the cache's dtype. Smaller grids are stored as they are.

A cache folder is keyed by everything that changes the numbers: encoder and revision (for a local folder, a
fingerprint of its files), read-out point, dtype, the image processor's settings, the data source and revision (or
build manifest), config and split. The key's hash names the folder and ``key.json`` inside holds the key itself;
a folder whose ``key.json`` differs from what a run expects is an error, never silently reused.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F
from tqdm.auto import tqdm

from g2m_base.bounded_json import Rejected, read_json
from g2m_base.errors import BuildError, G2MError
from g2m_base.files import atomic_open, atomic_write_text, durable_replace, safe_name
from probing.core.encoders import Encoder

KEY_FILE = "key.json"
CACHE_FORMAT = "g2m-probe-cache/2"  # 2: grids fitted to the probe's N x N input; the pooled probes' vectors
SHAPE_FILE = "shape.json"


class NonFiniteFeatures(G2MError, RuntimeError):
    """An encoder's features overflow the cache's dtype (or are NaN): they are refused, never cached.

    Not a usage error: every argument was valid, and the numbers the model produced on this data are what failed. So
    it is a run's failure (exit 1, like a full disk), shown in one line saying which flag avoids it."""

    exit_code = 1


class CacheMismatch(BuildError):
    """A cache folder was built with other settings than this run's, or holds another number of rows: a problem with
    an output folder's contents, never a silent reuse."""


def fingerprint(name: str, revision: str | None) -> str:
    """A Hub id's revision as given, or for a local folder a hash of its config files and weight files' sizes and
    modification times (hashing many GB of weights on every run would cost more than it protects)."""
    path = Path(name)
    if not path.is_dir():
        return revision or "main"
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file():
            st = p.stat()
            h.update(str(p.relative_to(path)).encode())
            h.update(p.read_bytes() if p.suffix == ".json" else f"{st.st_size}:{st.st_mtime_ns}".encode())
    return "local:" + h.hexdigest()[:16]


def config_sha256(name: str) -> str | None:
    """The sha256 of a local model folder's ``config.json`` (None for a Hub id): recorded with every probe and sweep so
    that a report or a submission compares them only with runs of the same model (``scoring.runs.identity``)."""
    p = Path(name) / "config.json"
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def cache_key(encoder: Encoder, revision: str | None, data: dict, config: str, cache_dtype: str) -> dict:
    return {
        "format": CACHE_FORMAT,
        "encoder": encoder.name,
        "revision": fingerprint(encoder.name, revision),
        "family": encoder.family,
        "readout": encoder.readout,
        "pool": encoder.pool,
        "encoder_dtype": str(encoder.dtype).removeprefix("torch."),
        "cache_dtype": cache_dtype,
        "image_processor": {k: v for k, v in encoder.processor_info().items() if k != "input"},
        "data": data,
        "config": config,
    }


def save_npy(path: Path, array: np.ndarray, tmp: Path | None = None) -> None:
    """``np.save`` whole or not at all (``atomic_open``): a reader never meets half an array."""
    with atomic_open(path, "wb", tmp) as f:
        np.save(f, array)


def cache_dir(root: str | os.PathLike, key: dict) -> Path:
    slug = safe_name(key["encoder"], "_")
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return Path(root) / f"{slug}-{key['readout']}-{key['config']}-{digest}"


def open_cache(root: str | os.PathLike, key: dict) -> Path:
    """The folder for ``key``: created with its ``key.json``, or checked against it."""
    folder = cache_dir(root, key)
    stored = folder / KEY_FILE
    if stored.is_file():
        try:
            old = read_json(stored, 1 << 20, "feature cache key")
        except Rejected:
            old = None
        if old != key:
            diff = sorted(k for k in set(key) | set(old or {}) if (old or {}).get(k) != key.get(k))
            raise CacheMismatch(f"feature cache {folder} was built with other settings ({', '.join(diff)} differ); "
                                "delete it or use another --cache-dir")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(stored, json.dumps(key, indent=1, sort_keys=True) + "\n")
    return folder


def fit_to_probe(grid: torch.Tensor, n: int) -> torch.Tensor:
    """(H, W, D) -> what the N x N probe reads: resized to (N, N, D) when it has at least N*N tokens (the probe's own
    resize would then read only those values), else unchanged. The probe's forward gives the same logits either way."""
    if grid.shape[0] * grid.shape[1] < n * n:
        return grid
    x = F.interpolate(grid.float().permute(2, 0, 1)[None], size=(n, n), mode="bilinear", align_corners=False)
    return x[0].permute(1, 2, 0)


def to_cache_dtype(block: np.ndarray, cache_dtype: str, where: str) -> np.ndarray:
    """``block`` in the cache's dtype, or a NonFiniteFeatures error saying what to do (never a cached infinity)."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported just below
        stored = block.astype(cache_dtype)
    if not np.isfinite(stored).all():
        raise NonFiniteFeatures(
            f"{where} gave features that are not finite in {cache_dtype} (largest magnitude "
            f"{float(np.nanmax(np.abs(block))):.3g}); nothing was cached. "
            + ("Rerun with --cache-dtype float32." if np.isfinite(block).all() else
               "The encoder itself produced NaN or infinity: try --dtype float32."))
    return stored


def native_grid(folder: Path) -> list[int] | None:
    """The encoder's own grid (H, W) before ``fit_to_probe``, as recorded when the cache was built."""
    try:
        return read_json(folder / SHAPE_FILE, 4096, "feature cache shape")["feature_grid"]
    except (OSError, Rejected, KeyError, TypeError):
        return None


def extract_split(encoder: Encoder, dataset, folder: Path, split: str, batch_size: int = 16,
                  cache_dtype: str = "float16", progress: bool = True, grid_size: int | None = None,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(features (n, h, w, D), labels (n, N, N)) for one split, memory-mapped from the cache; built if absent. With
    ``grid_size`` the grids are stored as the N x N probe reads them (``fit_to_probe``)."""
    feats_path, labels_path = folder / f"{split}.features.npy", folder / f"{split}.labels.npy"
    n = len(dataset)
    if feats_path.is_file() and labels_path.is_file():
        feats, labels = np.load(feats_path, mmap_mode="r"), np.load(labels_path, mmap_mode="r")
        if len(feats) != n or len(labels) != n:
            raise CacheMismatch(f"feature cache {folder} holds {len(feats)} {split} rows; the split has {n}")
        return feats, labels
    labels = np.asarray(dataset["matrix"], dtype=np.int8)
    partial = folder / f".{split}.features.npy.partial"
    out = None
    bar = tqdm(total=n, unit="img", desc=f"features {split}", disable=not progress)
    try:
        for start in range(0, n, batch_size):
            rows = dataset.select(range(start, min(n, start + batch_size)))
            grids = encoder.grids([im.convert("RGB") for im in rows["image"]])
            fitted = [g if grid_size is None else fit_to_probe(g, grid_size) for g in grids]
            if out is None:
                out = np.lib.format.open_memmap(partial, mode="w+", dtype=cache_dtype, shape=(n, *fitted[0].shape))
                atomic_write_text(folder / SHAPE_FILE, json.dumps({"feature_grid": list(grids[0].shape[:2])}) + "\n")
            block = np.stack([g.cpu().numpy() for g in fitted])
            out[start : start + len(grids)] = to_cache_dtype(
                block, cache_dtype,
                f"{encoder.name} [{encoder.readout}] (rows {start}..{start + len(grids) - 1} of {split})")
            bar.update(len(grids))
        out.flush()
        del out
        durable_replace(partial, feats_path)
        save_npy(labels_path, labels, folder / f".{split}.labels.npy.partial")
    finally:
        bar.close()
        partial.unlink(missing_ok=True)
    return np.load(feats_path, mmap_mode="r"), np.load(labels_path, mmap_mode="r")
