"""``g2m probe sweep``: one probe per read-out point, from the vision tower's first block to the LLM's last layer.

Where is the grid lost? The authors probe two points (the tower's output and the projector's). A sweep probes every
vision block, the projector and every decoder layer of the LLM at the image positions, each with the same probe and
schedule as ``g2m probe``, and draws cell accuracy by depth on one axis (``sweep.png``), optionally against the
model's own end-to-end accuracy at that N (``--run``): the Digital Agnosia gap, layer by layer.

``run_sweep`` reads as its steps, each a function below or a module of its own:

1. Load the data (``_load_data``) and plan the points (``_plan``, ``probing.sweep.points``) from the model's config
   and what its image processor makes of the first image, before any weights load.
2. Key and open the feature store (``_store_key``, ``_open_store``, ``probing.sweep.store``).
3. Extract (``probing.sweep.extract``): one forward pass per batch of images collects every point still missing from
   the store; chunks of rows are shared out across data-parallel ranks.
4. Train one probe per point whose result is missing (``probing.sweep.train``; ranks share the points), writing
   ``points/<point>/result.json`` as each finishes.
5. Gather the points into one record (``_record``) and write ``sweep.json``, ``costs.json`` and the figure
   (``probing.sweep.report``).

An interrupted sweep rerun with the same command resumes: finished chunks are not re-encoded, finished points are
not retrained. Results go to ``OUT/<encoder>/sweep/<config>/`` (``sweep-<probe>`` for a probe other than ``conv``).
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from dataset_builder import __version__
from dataset_builder.grids.configs import get_config
from dataset_builder.grids.spec import SWEEP_RESULT_FORMAT
from dataset_builder.release.provenance import library_versions
from dataset_builder.release.source import load_config, provenance
from g2m_base.errors import UsageError
from g2m_base.files import safe_name
from probing.core.encoders import check_encoder_name, processor_input, processor_settings
from probing.core.features import cache_dir, config_sha256, fingerprint, open_cache
from probing.sweep import taps as chat  # the LLM's input
from probing.sweep.extract import extract, load_tokenizer
from probing.sweep.plan import checked_config
from probing.sweep.points import Point, TokenGrid, plan_points, stored_shape, sweep_family, token_grid
from probing.sweep.settings import SweepSpec
from probing.sweep.store import SPLITS, Dist, Store
from probing.sweep.train import finished, result_key, train_points

__all__ = ["SweepSpec", "run_sweep"]

STORE_FORMAT = "g2m-sweep-store/1"
VERSIONED = ("torch", "transformers", "numpy", "datasets", "accelerate")


@dataclass(frozen=True)
class Plan:
    """What the model's config, image processor and tokenizer make of this data: the points and the token grid they
    are laid out on. Worked out once, from files alone, and shared by every later step."""

    family: str
    image_processor: object
    image_input: dict
    grid: TokenGrid
    points: list[Point]
    tokenizer: object | None


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
    """The steps, in order. Every rank plans, keys and opens the same store, then does its share of the extraction
    and of the training; rank 0 alone gathers and writes, once every rank has finished (the barriers)."""
    block = get_config(spec.config).splits[0].blocks[0]
    check_encoder_name(spec.encoder, spec.revision)  # a mistyped name fails at once, before the data is read
    data, splits = _load_data(spec)
    plan = _plan(spec, splits)
    device = dist.device(spec.device)
    key = _store_key(spec, plan, data)
    store = _open_store(spec, key, splits, dist)
    store.shapes.update({p.name: stored_shape(p, block.grid_size, spec.pool) for p in plan.points})
    kind = "sweep" if spec.train.probe == "conv" else f"sweep-{spec.train.probe}"
    out = Path(spec.out) / safe_name(spec.encoder) / kind / spec.config
    keys = {p.name: result_key(store.folder, p, spec.train) for p in plan.points}
    todo = [p for p in plan.points if finished(out / "points" / p.name / "result.json", keys[p.name]) is None]
    extraction = extract(spec, store, splits, [p for p in todo if not store.complete(p.name)], plan.grid,
                         plan.tokenizer, plan.image_processor, dist, device, block.grid_size, progress)
    dist.barrier()
    training = train_points(dist.mine(todo), store, splits, spec.train, block, device, keys, out,
                            progress and dist.rank == 0)
    totals = dist.total([extraction["forward_passes"], extraction["images"]])
    dist.barrier()
    if dist.rank != 0:
        return {"rank": dist.rank}
    from probing.sweep.report import write_sweep

    results = [finished(out / "points" / p.name / "result.json", keys[p.name]) for p in plan.points]
    costs = {"extraction_seconds": round(extraction["seconds"], 3), "training_seconds": round(training, 3),
             "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
             "peak_device_bytes": torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None,
             "world_size": dist.world}
    sweep = _record(spec, plan, key, splits, block, results, store,
                    {"forward_passes": totals[0], "images": totals[1]}, costs)
    result = write_sweep(sweep, out)
    if spec.drop_features:
        shutil.rmtree(store.folder, ignore_errors=True)
    return result


def _load_data(spec: SweepSpec) -> tuple[dict, dict]:
    """The data's provenance and its three splits, first of all: a missing folder, a build without this config or an
    unreachable Hub fails before any model file is read."""
    data = {**provenance(spec.data), "config": spec.config}
    return data, {s: load_config(spec.config, s, spec.data) for s in SPLITS}


def _plan(spec: SweepSpec, splits: dict) -> Plan:
    """The points and their token grid, from the model's config and what its image processor makes of the first
    image. Every refusal a sweep can make without weights (a family we cannot lay out, rows without the prompt the
    LLM points need, ``--device-map auto`` under several processes per node) is made here, before extraction."""
    from transformers import AutoImageProcessor

    config = checked_config(spec.encoder, spec.revision)
    family = sweep_family(config)
    needs_llm = "llm" in spec.points
    if needs_llm and "prompt" not in splits["train"].column_names:
        raise UsageError(f"the {spec.config} rows have no 'prompt' column: the LLM points need the G2M prompt")
    if spec.device_map == "auto" and int(os.environ.get("LOCAL_WORLD_SIZE", "1")) > 1:
        raise UsageError("--device-map auto spreads the model over every GPU of the node: run one process per node "
                         "(torchrun --nproc-per-node 1)")
    image_processor = AutoImageProcessor.from_pretrained(spec.encoder, revision=spec.revision)
    image_input = processor_input(image_processor, splits["train"][0]["image"].convert("RGB"))
    grid = token_grid(config, image_input)
    points = plan_points(grid, spec.points, spec.stride, spec.tower_readout)
    return Plan(family, image_processor, image_input, grid, points, load_tokenizer(spec, needs_llm))


def _store_key(spec: SweepSpec, plan: Plan, data: dict) -> dict:
    """Everything that changes the stored features: the model (a local folder by its files' fingerprint), the
    read-out and pooling, both dtypes, the image processor, the chat template and message layout the LLM points are
    read under, the data and the chunking. Its hash names the store's folder, so a change opens a new store instead
    of mixing features."""
    template = getattr(plan.tokenizer, "chat_template", None) or ""
    return {"format": STORE_FORMAT, "encoder": spec.encoder, "revision": fingerprint(spec.encoder, spec.revision),
            "family": plan.family, "readout": "sweep", "tower_readout": spec.tower_readout, "pool": spec.pool,
            "encoder_dtype": spec.dtype, "cache_dtype": spec.cache_dtype,
            "image_processor": processor_settings(plan.image_processor), "image_input": plan.image_input,
            "chat": {"template_sha256": hashlib.sha256(template.encode()).hexdigest(), "layout": chat.MESSAGE_LAYOUT},
            "data": data, "config": spec.config, "chunk_rows": spec.chunk_rows}


def _open_store(spec: SweepSpec, key: dict, splits: dict, dist: Dist) -> Store:
    """The store for ``key`` under ``--cache-dir`` (default ``OUT/cache``). Rank 0 alone creates it or checks its
    ``key.json``; the other ranks wait for that, so no rank writes into a store whose key was not checked."""
    root = Path(spec.cache_dir or f"{spec.out}/cache")
    folder = open_cache(root, key) if dist.rank == 0 else cache_dir(root, key)
    dist.barrier()
    return Store(folder, {s: len(ds) for s, ds in splits.items()}, spec.chunk_rows, spec.cache_dtype)


def _record(spec: SweepSpec, plan: Plan, key: dict, splits: dict, block, results: list[dict], store: Store,
            passes: dict, costs: dict) -> dict:
    """The whole sweep as one record, with provenance on every number (model, settings, data, versions). The
    per-point extras (history, heatmap, the key) stay in each point's ``result.json``; ``write_sweep`` moves what
    this particular run did and cost (``passes``, ``costs``) to ``costs.json``, so ``sweep.json`` is the same bytes
    however the run was split or resumed."""
    text = chat.describe(plan.tokenizer, chat.expand(chat.chat_text(plan.tokenizer, splits["train"][0]["prompt"]),
                                                     plan.tokenizer, plan.family, plan.grid.image_tokens),
                         plan.grid) if "llm" in spec.points else None
    return {
        "format": SWEEP_RESULT_FORMAT,
        "model": {"name": spec.encoder, "revision": key["revision"], "config_sha256": config_sha256(spec.encoder),
                  "family": plan.family, "dtype": spec.dtype,
                  "tower_depth": plan.grid.tower_depth, "llm_layers": plan.grid.llm_layers,
                  "image_input": plan.image_input, "image_processor": key["image_processor"]},
        "config": spec.config, "grid_size": block.grid_size, "num_colors": block.num_colors,
        "chance_cell_accuracy": 1 / block.num_colors,
        "readout": {"tower": spec.tower_readout, "probe": spec.train.probe, "pool": spec.pool, "stride": spec.stride,
                    "llm_input": text, "cache_dtype": spec.cache_dtype},
        "data": key["data"], "rows": {s: len(ds) for s, ds in splits.items()}, "train": spec.train.to_json(),
        "points": [{k: v for k, v in r.items() if k not in ("key", "history", "heatmap", "train_seconds")}
                   for r in results],
        "reference": spec.reference,
        "passes": passes,
        "costs": {**costs, "disk_bytes": sum(store.bytes_of(p.name) for p in plan.points),
                  "train_seconds": {r["point"]: r["train_seconds"] for r in results}},
        "store": str(store.folder), "versions": {"grid2matrix": __version__, **library_versions(VERSIONED)},
    }
