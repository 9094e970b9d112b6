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
from pathlib import Path
from types import SimpleNamespace

from dataset_builder.grids.configs import get_config
from dataset_builder.grids.prompt import build_prompt
from dataset_builder.grids.spec import DEFAULT_RESOLUTION
from g2m_base.bounded_json import read_json
from g2m_base.errors import UsageError
from g2m_base.flags import check_int, check_number
from probing.core.encoders import QWEN, check_encoder_name, load_config, processor_input
from probing.sweep.points import default_input, plan_points, stored_shape, sweep_family, text_config, token_grid
from probing.sweep.settings import MAX_LAYERS

BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
#: Characters per token of the G2M prompt under Qwen's tokenizer (583-647 characters -> 158-194 tokens), and the
#: chat template's own tokens around it, for a checkpoint shipped without a tokenizer.
CHARS_PER_TOKEN, TEMPLATE_TOKENS = 3.3, 16
#: Dense bf16 throughput of one H100 SXM, and the share of it a batched forward pass typically reaches.
H100_FLOPS, UTILISATION = 989e12, 0.4


#: Bounds on what a config may claim, far beyond any real model's, so that nothing a plan builds or counts grows
#: with a hostile number: (kind, lowest, highest); "layers" up to ``MAX_LAYERS``.
MAX_WIDTH, MAX_ID = 1 << 20, 1 << 24
_LAYERS, _WIDTH, _SMALL, _ID = (1, MAX_LAYERS), (1, MAX_WIDTH), (1, 1 << 12), (0, MAX_ID)
#: The fields the plan (and the meta-device model it counts) reads, where they live in config.json; a field that is
#: absent takes the family's default, which is sane. ``text`` fields sit in ``text_config`` or, for Qwen2-VL, at the
#: top level.
_VISION = {"depth": _LAYERS, "num_hidden_layers": _LAYERS, "hidden_size": _WIDTH, "embed_dim": _WIDTH,
           "intermediate_size": _WIDTH, "out_hidden_size": _WIDTH, "num_heads": _SMALL, "num_attention_heads": _SMALL,
           "patch_size": _SMALL, "spatial_merge_size": (1, 64), "temporal_patch_size": (1, 64),
           "image_size": (1, 1 << 15), "in_channels": (1, 64), "num_channels": (1, 64)}
_TEXT = {"num_hidden_layers": _LAYERS, "hidden_size": _WIDTH, "intermediate_size": _WIDTH,
         "moe_intermediate_size": _WIDTH, "num_attention_heads": _SMALL, "num_key_value_heads": _SMALL,
         "head_dim": _SMALL, "vocab_size": (1, MAX_ID), "num_experts": (1, 1 << 14),
         "num_experts_per_tok": (1, 1 << 14)}
_TOP = {"image_token_id": _ID, "vision_feature_layer": (-MAX_LAYERS - 1, MAX_LAYERS)}
#: Fields a real config may set to null (the family's default then applies).
_NULLABLE = {"head_dim", "moe_intermediate_size", "num_experts", "num_experts_per_tok", "num_key_value_heads"}


#: Image processor settings that decide how large the one image of a plan becomes (pixels, patches, tiles).
_PROCESSOR = {"min_pixels": (1, 1 << 24), "max_pixels": (1, 1 << 28), "patch_size": (1, 1 << 12),
              "merge_size": (1, 64), "temporal_patch_size": (1, 64), "shortest_edge": (1, 1 << 24),
              "longest_edge": (1, 1 << 28), "height": (1, 1 << 14), "width": (1, 1 << 14),
              "max_patches": (1, 1 << 10), "min_patches": (1, 1 << 10)}


def _check_int(where: str, value, bounds: tuple[int, int], what: str = "model config field") -> None:
    low, high = bounds
    if value is None and where.rsplit(".", 1)[-1] in _NULLABLE:
        return
    if isinstance(value, list) and where.endswith(("image_size", "patch_size")) and len(value) == 2:
        for v in value:
            _check_int(where, v, bounds)
        return
    check_int(f"{what} {where}", value, low, high)


def check_config(raw: object, where: str = "config.json") -> None:
    """Every field of ``raw`` (a parsed config.json) that the plan reads, type- and range-checked before anything
    is built from it: integers that are integers (not ``true``, ``"2"`` or ``2.5``), positive sizes, at most
    ``MAX_LAYERS`` layers, a finite downsample ratio in (0, 1]; a refusal names the field in one line."""
    if not isinstance(raw, dict):
        raise UsageError(f"{where} holds a JSON {type(raw).__name__.replace('NoneType', 'null')}, not a model config")
    sweep_family(SimpleNamespace(model_type=raw.get("model_type")))  # a family we cannot lay out, refused first
    parts = {"": raw}
    for sub in ("vision_config", "text_config"):
        if sub in raw:
            if not isinstance(raw[sub], dict):
                raise UsageError(f"model config field {sub} must be a JSON object, got {str(raw[sub])[:40]!r}")
            parts[sub] = raw[sub]
    for sub, fields in (("vision_config", _VISION), ("text_config", _TEXT), ("", _TEXT), ("", _TOP)):
        for name, bounds in fields.items():
            if sub in parts and name in parts[sub]:
                _check_int(f"{sub}.{name}".lstrip("."), parts[sub][name], bounds)
    check_number("model config field downsample_ratio", raw.get("downsample_ratio", 0.5), 0, 1, low_open=True)


def checked_config(name: str, revision: str | None = None):
    """The model's config, its config.json read as untrusted input (bounded size and depth, every field the plan
    reads checked by ``check_config``) before transformers builds a config object from it."""
    check_encoder_name(name, revision)  # a mistyped name fails here, before the Hub is asked for its config
    folder = Path(name).expanduser()
    path = folder / "config.json" if folder.is_dir() else None
    if path is None and not name.startswith((".", "/", "~")):
        try:
            from transformers.utils import cached_file

            path = Path(cached_file(name, "config.json", revision=revision))
        except (OSError, ValueError, TypeError):
            path = None  # load_config says why, in its words
    if path is not None and path.is_file():
        check_config(read_json(path, 4 << 20, "model config"), str(path))
    return load_config(name, revision)


def count_parameters(config) -> dict:
    """Total, vision (tower + projector) and active parameters, from the model built on the meta device."""
    import torch
    from transformers import AutoModelForImageTextToText

    try:
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(config)
    except (ValueError, TypeError, ArithmeticError, RuntimeError, AttributeError, KeyError, IndexError) as e:
        raise UsageError(f"the model config does not describe a model transformers can build "
                         f"({type(e).__name__}: {str(e)[:200]})") from None
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

    settings = Path(spec.encoder).expanduser() / "preprocessor_config.json"
    if settings.is_file():  # what the processor will resize a 512 px image to comes from here: bounded like config
        raw = read_json(settings, 1 << 20, "image processor settings")
        if not isinstance(raw, dict):
            raise UsageError(f"{settings} holds no JSON object of image processor settings")
        size = raw.get("size") if isinstance(raw.get("size"), dict) else {}
        for name, value in [*raw.items(), *((f"size.{k}", v) for k, v in size.items())]:
            if name.rsplit(".", 1)[-1] in _PROCESSOR:
                _check_int(name, value, _PROCESSOR[name.rsplit(".", 1)[-1]], "image processor setting")
    try:
        ip = AutoImageProcessor.from_pretrained(spec.encoder, revision=spec.revision)
    except (OSError, ValueError):
        return default_input(config), "the family's default processor (no preprocessor_config.json)"
    side = DEFAULT_RESOLUTION
    try:
        got = processor_input(ip, Image.new("RGB", (side, side), "white"))
    except (ValueError, TypeError, ArithmeticError, KeyError, IndexError) as e:
        raise UsageError(f"the image processor of {spec.encoder} fails on a {side} px image "
                         f"({type(e).__name__}: {str(e)[:200]})") from None
    for name, value in got.items():
        for v in value if isinstance(value, list) else [value]:
            _check_int(f"image input {name}", v, (1, 1 << 14), "processor output")
    return got, type(ip).__name__


def _rows(spec) -> dict[str, int]:
    if spec.data:
        from dataset_builder.release.source import load_config as load_rows

        return {s: len(load_rows(spec.config, s, spec.data)) for s in ("train", "validation", "test")}
    return {s.name: sum(b.count for b in s.blocks) for s in get_config(spec.config).splits}


def plan_sweep(spec, gpu_gb: float = 80.0) -> dict:
    config = checked_config(spec.encoder, spec.revision)
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
    widest_t = (getattr(t, "moe_intermediate_size", 0) or 0) * getattr(t, "num_experts_per_tok",
                                                                       0) or t.intermediate_size
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
    first, last = sel[0].layer, sel[-1].layer
    layers = "" if first is None else (f" {first}" if first == last else f" {first}-{last}") + (
        "" if len(sel) == last else f" ({len(sel)} of {last})")
    h, w = sel[0].grid
    return f"{stage}{layers}: {h}x{w}x{sel[0].dim}, {_size(per_point[sel[0].name])} each"


def format_plan(plan: dict) -> str:
    p, r = plan["params"], plan["rows"]
    stages = "; ".join(s for s in (_stage_line(plan["points"], plan["per_point_bytes"], st)
                                   for st in ("tower", "projector", "deepstack", "llm")) if s)
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
