"""``g2m probe sweep``: one probe per read-out point, from the vision tower's first block to the LLM's last layer.

Where is the grid lost? The authors probe two points (the tower's output and the projector's). A sweep probes every
vision block, the projector and every decoder layer of the LLM at the image positions, each with the same probe and
schedule as ``g2m probe``, and draws cell accuracy by depth on one axis (``sweep.png``), optionally against the
model's own end-to-end accuracy at that N (``--run``): the Digital Agnosia gap, layer by layer.

1. Plan (``probing.sweep.points``) from the model's config and what its image processor makes of the first image.
2. Extract (``probing.sweep.taps``): one forward pass per batch of images collects every point still missing from the
   store (``probing.sweep.store``); chunks of rows are shared out across data-parallel ranks.
3. Train one probe per point whose result is missing (ranks share the points), writing
   ``points/<point>/result.json`` as each finishes; then ``sweep.json`` and the figure.

An interrupted sweep rerun with the same command resumes: finished chunks are not re-encoded, finished points are
not retrained. Results go to ``OUT/<encoder>/sweep/<config>/`` (``sweep-<probe>`` for a probe other than ``conv``).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from dataset_builder import __version__
from dataset_builder.configs import CONFIG_NAMES, get_config
from dataset_builder.provenance import library_versions
from dataset_builder.source import load_config, provenance
from dataset_builder.spec import SWEEP_RESULT_FORMAT
from g2m_base.bounded_json import Rejected, read_json
from g2m_base.errors import UsageError
from g2m_base.files import atomic_write_text, safe_name
from probing.core.encoders import load_config as load_model_config
from probing.core.encoders import processor_input, processor_settings, torch_dtype_of
from probing.core.features import cache_dir, fingerprint, open_cache
from probing.core.probe import POOLED, FeatureSet, TrainConfig, predict, score, train_probe
from probing.sweep import chat
from probing.sweep.points import STAGES, plan_points, stored_shape, sweep_family, token_grid
from probing.sweep.store import SPLITS, Dist, Store

STORE_FORMAT = "g2m-sweep-store/1"
VERSIONED = ("torch", "transformers", "numpy", "datasets", "accelerate")


@dataclass(frozen=True)
class SweepSpec:
    encoder: str
    config: str
    data: str | None = None
    out: str = "g2m-probes"
    cache_dir: str | None = None  # default OUT/cache
    points: tuple[str, ...] = STAGES
    stride: int = 1
    tower_readout: str = "vision"
    revision: str | None = None
    device: str = "cpu"
    device_map: str | None = None  # "auto": the model spread over every visible GPU by accelerate
    dtype: str = "float32"
    cache_dtype: str = "float16"
    batch_size: int = 16
    chunk_rows: int = 256
    train: TrainConfig = field(default_factory=TrainConfig)
    reference: dict | None = None  # the model's end-to-end scores at this N (from --run)
    drop_features: bool = False

    def __post_init__(self) -> None:
        if self.config not in CONFIG_NAMES or not self.config.startswith("probe_"):
            raise UsageError(f"unknown probing config {self.config!r}; choose one of "
                             f"{', '.join(n for n in CONFIG_NAMES if n.startswith('probe_'))}")
        if self.cache_dtype not in ("float16", "float32"):
            raise UsageError(f"--cache-dtype must be float16 or float32, got {self.cache_dtype!r}")
        if self.batch_size < 1 or self.chunk_rows < 1:
            raise UsageError("--batch-size and --chunk-rows must be at least 1")
        if self.device_map not in (None, "auto"):
            raise UsageError(f"--device-map takes only 'auto', got {self.device_map!r}")
        torch_dtype_of(self.dtype)

    @property
    def pool(self) -> str:
        return self.train.probe if self.train.probe in POOLED else "grid"


def load_model(spec: SweepSpec, device: str, needs_llm: bool):
    """The VLM, frozen. With an LLM point: on ``device``, or spread by accelerate (``--device-map auto``); without
    one, the language model is dropped before anything moves to the device."""
    from transformers import AutoModelForImageTextToText

    kw = {"revision": spec.revision, "dtype": torch_dtype_of(spec.dtype)}
    if needs_llm:
        model = AutoModelForImageTextToText.from_pretrained(
            spec.encoder, device_map="auto" if spec.device_map == "auto" else {"": device}, **kw)
    else:
        model = AutoModelForImageTextToText.from_pretrained(spec.encoder, **kw)
        model.model.language_model = None
        model.lm_head = None
        model.to(device)
    return model.requires_grad_(False).eval()


def _tokenizer(spec: SweepSpec, needs_llm: bool):
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(spec.encoder, revision=spec.revision)
        chat.ensure_chat_template(tok, spec.encoder, spec.revision)
        return tok
    except UsageError:
        if needs_llm:
            raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        if needs_llm:
            raise UsageError(f"cannot load the tokenizer of {spec.encoder} for the LLM points ({type(e).__name__}: "
                             f"{e}); sweep --points tower,projector without it") from None
    return None  # a tower-only sweep needs no text


def _extract(spec: SweepSpec, store: Store, splits: dict, points: list, grid, tokenizer, image_processor,
             dist: Dist, device: str, grid_size: int, progress: bool) -> dict:
    """One forward pass per batch for every chunk of this rank that misses a point's shard."""
    from probing.sweep.taps import Taps

    names = [p.name for p in points]
    todo = [c for c in store.chunks() if store.missing(c, names)]
    dist.barrier()  # every rank has listed the work before anyone writes
    mine = dist.mine(todo)
    stats = {"forward_passes": 0, "images": 0, "seconds": 0.0}
    if not mine:
        return stats
    shapes = {p.name: stored_shape(p, grid_size, spec.pool) for p in points}
    model = load_model(spec, device, any(p.stage == "llm" for p in points))
    taps = Taps(model, grid, points, grid_size, spec.pool, spec.tower_readout, spec.cache_dtype,
                image_processor, tokenizer, torch_dtype_of(spec.dtype))
    bar = tqdm(total=sum(c.stop - c.start for c in mine), unit="img", desc="sweep features",
               disable=not progress or dist.rank != 0)
    start = time.perf_counter()
    try:
        for chunk in mine:
            missing = store.missing(chunk, names)
            store.begin(chunk, {n: shapes[n] for n in missing})
            ds = splits[chunk.split]
            for a in range(chunk.start, chunk.stop, spec.batch_size):
                rows = ds.select(range(a, min(chunk.stop, a + spec.batch_size)))
                images = [im.convert("RGB") for im in rows["image"]]
                got = taps.run(images, rows["prompt"] if taps.needs_llm else None)
                store.write(a - chunk.start, {n: got[n] for n in missing})
                bar.update(len(images))
            store.finish()
    finally:
        store.abandon()
        taps.close()
        bar.close()
    stats.update(forward_passes=taps.passes, images=taps.images, seconds=time.perf_counter() - start)
    return stats


def _result_key(store_dir: Path, point, spec: SweepSpec) -> str:
    raw = json.dumps({"store": store_dir.name, "point": point.name, "train": spec.train.to_json()}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _finished(path: Path, key: str) -> dict | None:
    try:
        res = read_json(path, 8 << 20, "sweep point result")
    except (OSError, Rejected):
        return None
    return res if isinstance(res, dict) and res.get("key") == key else None


def _train_point(point, store: Store, labels: dict, spec: SweepSpec, block, device: str, key: str, out: Path) -> dict:
    start = time.perf_counter()
    dev = torch.device(device)
    sets = {s: FeatureSet(store.features(point.name, s), labels[s], dev) for s in SPLITS}
    dim = sets["train"].feats.shape[-1]
    model, history = train_probe(sets["train"], sets["validation"], dim, block.num_colors, block.grid_size,
                                 spec.train, progress=False)
    test = score(predict(model, sets["test"]), sets["test"].labels, block.num_colors)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "heatmap.npy", test["heatmap"])
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


def run_sweep(spec: SweepSpec, progress: bool = True) -> dict:
    if not progress:
        import datasets
        import transformers

        transformers.utils.logging.disable_progress_bar()
        datasets.disable_progress_bars()
    dist = Dist.from_env(spec.device)
    try:
        return _run(spec, dist, progress)
    finally:
        dist.close()


def _run(spec: SweepSpec, dist: Dist, progress: bool) -> dict:
    from transformers import AutoImageProcessor

    block = get_config(spec.config).splits[0].blocks[0]
    # the data first: a missing folder, a build without this config or an unreachable Hub fails before any model loads
    data = {**provenance(spec.data), "config": spec.config}
    splits = {s: load_config(spec.config, s, spec.data) for s in SPLITS}
    config = load_model_config(spec.encoder, spec.revision)
    family = sweep_family(config)
    needs_llm = "llm" in spec.points
    if needs_llm and "prompt" not in splits["train"].column_names:
        raise UsageError(f"the {spec.config} rows have no 'prompt' column: the LLM points need the G2M prompt")
    device = dist.device(spec.device)
    if spec.device_map == "auto" and int(os.environ.get("LOCAL_WORLD_SIZE", "1")) > 1:
        raise UsageError("--device-map auto spreads the model over every GPU of the node: run one process per node "
                         "(torchrun --nproc-per-node 1)")
    image_processor = AutoImageProcessor.from_pretrained(spec.encoder, revision=spec.revision)
    image_input = processor_input(image_processor, splits["train"][0]["image"].convert("RGB"))
    grid = token_grid(config, image_input)
    points = plan_points(grid, spec.points, spec.stride, spec.tower_readout)
    tokenizer = _tokenizer(spec, needs_llm)
    template = getattr(tokenizer, "chat_template", None) or ""
    key = {"format": STORE_FORMAT, "encoder": spec.encoder, "revision": fingerprint(spec.encoder, spec.revision),
           "family": family, "readout": "sweep", "tower_readout": spec.tower_readout, "pool": spec.pool,
           "encoder_dtype": spec.dtype, "cache_dtype": spec.cache_dtype,
           "image_processor": processor_settings(image_processor), "image_input": image_input,
           "chat": {"template_sha256": hashlib.sha256(template.encode()).hexdigest(), "layout": chat.MESSAGE_LAYOUT},
           "data": data, "config": spec.config, "chunk_rows": spec.chunk_rows}
    root = Path(spec.cache_dir or f"{spec.out}/cache")
    store_dir = open_cache(root, key) if dist.rank == 0 else cache_dir(root, key)
    dist.barrier()
    rows = {s: len(ds) for s, ds in splits.items()}
    store = Store(store_dir, rows, spec.chunk_rows, spec.cache_dtype)
    kind = "sweep" if spec.train.probe == "conv" else f"sweep-{spec.train.probe}"
    out = Path(spec.out) / safe_name(spec.encoder) / kind / spec.config
    keys = {p.name: _result_key(store_dir, p, spec) for p in points}
    todo = [p for p in points if _finished(out / "points" / p.name / "result.json", keys[p.name]) is None]
    extraction = _extract(spec, store, splits, [p for p in todo if not store.complete(p.name)], grid, tokenizer,
                          image_processor, dist, device, block.grid_size, progress)
    dist.barrier()
    labels = {s: np.asarray(ds["matrix"], dtype=np.int8) for s, ds in splits.items()}
    start = time.perf_counter()
    mine = dist.mine(todo)
    bar = tqdm(mine, unit="probe", desc="sweep probes", disable=not progress or dist.rank != 0)
    for point in bar:
        res = _train_point(point, store, labels, spec, block, device, keys[point.name], out / "points" / point.name)
        bar.set_postfix(point=point.name, acc=f"{res['cell_accuracy']:.3f}")
    training = time.perf_counter() - start
    totals = dist.total([extraction["forward_passes"], extraction["images"]])
    dist.barrier()
    if dist.rank != 0:
        return {"rank": dist.rank}
    from probing.sweep.report import write_sweep

    text = chat.describe(tokenizer, chat.expand(chat.chat_text(tokenizer, splits["train"][0]["prompt"]), tokenizer,
                                                family, grid.image_tokens), grid) if needs_llm else None
    costs = {"extraction_seconds": round(extraction["seconds"], 3), "training_seconds": round(training, 3),
             "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
             "peak_device_bytes": torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None,
             "world_size": dist.world}
    results = [_finished(out / "points" / p.name / "result.json", keys[p.name]) for p in points]
    sweep = {
        "format": SWEEP_RESULT_FORMAT,
        "model": {"name": spec.encoder, "revision": key["revision"], "family": family, "dtype": spec.dtype,
                  "tower_depth": grid.tower_depth, "llm_layers": grid.llm_layers, "image_input": image_input,
                  "image_processor": key["image_processor"]},
        "config": spec.config, "grid_size": block.grid_size, "num_colors": block.num_colors,
        "chance_cell_accuracy": 1 / block.num_colors,
        "readout": {"tower": spec.tower_readout, "probe": spec.train.probe, "pool": spec.pool, "stride": spec.stride,
                    "llm_input": text, "cache_dtype": spec.cache_dtype},
        "data": data, "rows": rows, "train": spec.train.to_json(),
        "points": [{k: v for k, v in r.items() if k not in ("key", "history", "heatmap", "train_seconds")}
                   for r in results],
        "reference": spec.reference,
        "passes": {"forward_passes": totals[0], "images": totals[1]},
        "costs": {**costs, "disk_bytes": sum(store.bytes_of(p.name) for p in points),
                  "train_seconds": {r["point"]: r["train_seconds"] for r in results}},
        "store": str(store_dir), "versions": {"grid2matrix": __version__, **library_versions(VERSIONED)},
    }
    result = write_sweep(sweep, out)
    if spec.drop_features:
        shutil.rmtree(store_dir, ignore_errors=True)
    return result
