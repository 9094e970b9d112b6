"""``g2m probe sweep --dry-run``: what a sweep will ask of the machine, before anything loads.

Read from JSON only (the model's ``config.json``, its image processor's settings when it has them) and the probing
config's split sizes (or a local build's rows with ``--data``): the points and their token grids, the forward passes,
the feature store on disk, the memory the model and a batch need, the compute, and the probes to train. Parameters
are counted exactly by building the model on PyTorch's ``meta`` device (no memory, no weights). Memory, FLOPs and
time are estimates and say so: weights are parameters x bytes; activations are a batch's widest layer (its MLP)
kept a few times over; FLOPs are 2 x parameters x tokens (a mixture-of-experts counts its active experts only).
"""

from __future__ import annotations

import math

from dataset_builder.configs import get_config
from dataset_builder.prompt import build_prompt
from dataset_builder.spec import DEFAULT_RESOLUTION
from probing.core.encoders import QWEN, load_config, processor_input
from probing.sweep.points import default_input, plan_points, stored_shape, sweep_family, text_config, token_grid

BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
#: Characters per token of the G2M prompt under Qwen's tokenizer (583-647 characters -> 158-194 tokens), and the
#: chat template's own tokens around it, for a checkpoint shipped without a tokenizer.
CHARS_PER_TOKEN, TEMPLATE_TOKENS = 3.3, 16
#: Dense bf16 throughput of one H100 SXM, and the share of it a batched forward pass typically reaches.
H100_FLOPS, UTILISATION = 989e12, 0.4


def count_parameters(config) -> dict:
    """Total, vision (tower + projector) and active parameters, from the model built on the meta device."""
    import torch
    from transformers import AutoModelForImageTextToText

    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config)
    total = vision = experts = 0
    for name, p in model.named_parameters():
        total += p.numel()
        if any(k in name for k in (".visual.", ".vision_tower.", ".multi_modal_projector.")):
            vision += p.numel()
        elif ".experts." in name:
            experts += p.numel()
    t = text_config(config)
    share = getattr(t, "num_experts_per_tok", 0) / max(1, getattr(t, "num_experts", 0) or 1) if experts else 1.0
    return {"total": total, "vision": vision, "text": total - vision, "active": int(total - experts * (1 - share))}


def _image_input(spec, config) -> tuple[dict, str]:
    from PIL import Image
    from transformers import AutoImageProcessor

    try:
        ip = AutoImageProcessor.from_pretrained(spec.encoder, revision=spec.revision)
    except (OSError, ValueError):
        return default_input(config), "the family's default processor (no preprocessor_config.json)"
    side = DEFAULT_RESOLUTION
    return processor_input(ip, Image.new("RGB", (side, side), "white")), type(ip).__name__


def _rows(spec) -> dict[str, int]:
    if spec.data:
        from dataset_builder.source import load_config as load_rows

        return {s: len(load_rows(spec.config, s, spec.data)) for s in ("train", "validation", "test")}
    return {s.name: sum(b.count for b in s.blocks) for s in get_config(spec.config).splits}


def plan_sweep(spec, gpu_gb: float = 80.0) -> dict:
    config = load_config(spec.encoder, spec.revision)
    family = sweep_family(config)
    image_input, processor = _image_input(spec, config)
    grid = token_grid(config, image_input)
    points = plan_points(grid, spec.points, spec.stride, spec.tower_readout)
    block = get_config(spec.config).splits[0].blocks[0]
    rows = _rows(spec)
    images = sum(rows.values())
    params = count_parameters(config)
    needs_llm = any(p.stage == "llm" for p in points)
    prompt = math.ceil(len(build_prompt(block.grid_size, block.num_colors)) / CHARS_PER_TOKEN) + TEMPLATE_TOKENS
    seq = grid.image_tokens + prompt
    b = BYTES[spec.dtype]
    store_b = BYTES[spec.cache_dtype]
    per_point = {p.name: images * math.prod(stored_shape(p, block.grid_size, spec.pool)) * store_b for p in points}
    weights = (params["total"] if needs_llm else params["vision"]) * b
    v, t = config.vision_config, text_config(config)
    patches = grid.image_tokens * (grid.tower_grid[0] // grid.merged_grid[0]) ** 2  # tower tokens (every tile's)
    widest_t = (getattr(t, "moe_intermediate_size", 0) or 0) * getattr(t, "num_experts_per_tok", 0) or t.intermediate_size
    act_vision = spec.batch_size * patches * (2 * v.intermediate_size + 6 * grid.tower_dim) * b
    act_text = spec.batch_size * seq * (3 * widest_t + 6 * grid.text_dim) * b if needs_llm else 0
    activations = max(act_vision, act_text)
    host_batch = spec.batch_size * sum(math.prod(stored_shape(p, block.grid_size, spec.pool)) for p in points) * store_b
    flops = 2 * params["vision"] * patches + (2 * (params["active"] - params["vision"]) * seq if needs_llm else 0)
    gpus = max(1, math.ceil((weights + activations) / (gpu_gb * 1e9 * 0.9)))
    return {
        "model": spec.encoder, "family": family, "processor": processor, "image_input": image_input,
        "config": spec.config, "grid_size": block.grid_size, "num_colors": block.num_colors, "rows": rows,
        "points": points, "per_point_bytes": per_point, "disk_bytes": sum(per_point.values()),
        "params": params, "dtype": spec.dtype, "weights_bytes": weights, "activation_bytes": activations,
        "gpus_for_weights": gpus, "gpu_gb": gpu_gb, "host_batch_bytes": host_batch,
        "passes": math.ceil(images / spec.batch_size), "batch_size": spec.batch_size, "images": images,
        "cache_dtype": spec.cache_dtype, "seq_tokens": seq,
        "image_tokens": grid.image_tokens, "flops_per_image": flops, "steps": spec.train.steps,
        "train_batch": spec.train.batch_size, "needs_llm": needs_llm, "qwen": family in QWEN,
    }


def _size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 1e3:,.1f} kB"


def _stage_line(points, per_point, stage: str) -> str | None:
    sel = [p for p in points if p.stage == stage]
    if not sel:
        return None
    layers = "" if sel[0].layer is None else f" {sel[0].layer}-{sel[-1].layer}" + ("" if len(sel) == sel[-1].layer else
                                                                                 f" ({len(sel)} of {sel[-1].layer})")
    h, w = sel[0].grid
    return f"{stage}{layers}: {h}x{w}x{sel[0].dim}, {_size(per_point[sel[0].name])} each"


def format_plan(plan: dict) -> str:
    p, r = plan["params"], plan["rows"]
    stages = "; ".join(s for s in (_stage_line(plan["points"], plan["per_point_bytes"], st)
                                   for st in ("tower", "projector", "llm")) if s)
    seconds = plan["images"] * plan["flops_per_image"] / (H100_FLOPS * UTILISATION)
    moe = f", {p['active'] / 1e9:,.1f} B active per token" if p["active"] != p["total"] else ""
    rows = [
        ("model", f"{plan['model']} ({plan['family']}), {p['total'] / 1e9:,.2f} B parameters{moe}, {plan['dtype']}"),
        ("config", f"{plan['config']}: N = {plan['grid_size']}, C = {plan['num_colors']}; {plan['images']:,} images "
                   f"({r['train']:,} train / {r['validation']:,} validation / {r['test']:,} test)"),
        ("image input", f"{plan['image_input']} via {plan['processor']}; {plan['image_tokens']} image tokens, "
                        f"~{plan['seq_tokens']} tokens with the prompt" if plan["needs_llm"] else
                        f"{plan['image_input']} via {plan['processor']}"),
        ("points", f"{len(plan['points'])}: {stages}"),
        ("forward passes", f"{plan['passes']:,} of {plan['batch_size']} images: one per image for every point, "
                           "shared out over the data-parallel ranks"),
        ("disk (features)", f"{_size(plan['disk_bytes'])} of {plan['cache_dtype']} shards (--drop-features deletes "
                            "them once every probe is trained)"),
        ("GPU memory", f"~{_size(plan['weights_bytes'] + plan['activation_bytes'])} per model replica: "
                       f"{_size(plan['weights_bytes'])} weights + ~{_size(plan['activation_bytes'])} activations; "
                       f"{plan['gpus_for_weights']} GPU(s) of {plan['gpu_gb']:g} GB"
                       + (" (--device-map auto)" if plan["gpus_for_weights"] > 1 else "")),
        ("host memory", f"~{_size(plan['host_batch_bytes'])} of features per batch in flight, plus the probe's "
                        "train split when it fits in 2 GB (else read from the memory map)"),
        ("compute", f"~{plan['flops_per_image'] / 1e12:,.2f} TFLOP per image; ~{seconds / 60:,.0f} min of one H100 "
                    f"at {UTILISATION:.0%} of its bf16 peak (an estimate, not a measurement)"),
        ("probes", f"{len(plan['points'])} x {plan['steps']:,} steps of batch {plan['train_batch']} "
                   "(the ranks share them out)"),
    ]
    return "\n".join(f"{k:<18}{v}" for k, v in rows)
