"""A full-size sweep's extraction on a GPU, from a config alone: images/s, peak GPU memory and disk per point.

    python scripts/make_model_configs.py model-configs
    g2m build --out g2m-release --configs probe_n32_c10
    python benchmarks/bench_sweep_gpu.py model-configs/Qwen3-VL-8B-Instruct --data g2m-release --device cuda

The model is randomly initialised from its config on the device (no weights are needed: the cost of a forward pass
does not depend on their values), every point is hooked as ``g2m probe sweep`` hooks it, and one pass per image runs
over the whole split. The features are counted, not kept (the sweep of an 8B model at N = 32 stores ~3.0 TB). The
prompt is tokenized with the tiny Qwen tokenizer of ``probing.tiny`` (the config's image token ids are pointed at its
ids), which spends about twice the tokens of Qwen's own on the prompt text: a slightly pessimistic pass.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a folder with config.json and preprocessor_config.json")
    ap.add_argument("--data", required=True, help="a local build holding --config")
    ap.add_argument("--config", default="probe_n32_c10")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="images per split (default: all)")
    args = ap.parse_args()

    import torch
    from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageTextToText

    from dataset_builder.grids.configs import get_config
    from dataset_builder.release.source import load_config
    from probing.core.encoders import processor_input, torch_dtype_of
    from probing.sweep.points import STAGES, plan_points, token_grid
    from probing.sweep.taps import Taps
    from probing.tiny import qwen_parts

    tok, ids, _ = qwen_parts()
    config = AutoConfig.from_pretrained(args.model)
    for key, value in ids.items():
        setattr(config, key, value)
    dtype = torch_dtype_of(args.dtype)
    start = time.perf_counter()
    with torch.device(args.device):
        model = AutoModelForImageTextToText.from_config(config, dtype=dtype).eval().requires_grad_(False)
    built = time.perf_counter() - start
    ip = AutoImageProcessor.from_pretrained(args.model)
    n = get_config(args.config).splits[0].blocks[0].grid_size
    splits = {s: load_config(args.config, s, args.data) for s in ("train", "validation", "test")}
    if args.limit:
        splits = {s: ds.select(range(min(len(ds), args.limit))) for s, ds in splits.items()}
    first = splits["train"][0]["image"].convert("RGB")
    grid = token_grid(config, processor_input(ip, first))
    points = plan_points(grid, STAGES, args.stride)
    taps = Taps(model, grid, points, n, "grid", "vision", "float16", ip, tok, dtype)
    per_point: dict[str, int] = {}
    images = 0
    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for ds in splits.values():
        for a in range(0, len(ds), args.batch_size):
            rows = ds.select(range(a, min(len(ds), a + args.batch_size)))
            got = taps.run([im.convert("RGB") for im in rows["image"]], list(rows["prompt"]))
            for k, v in got.items():
                per_point[k] = per_point.get(k, 0) + v.nbytes
            images += len(rows)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 1e9 if args.device.startswith("cuda") else float("nan")
    params = sum(p.numel() for p in model.parameters()) / 1e9
    print(f"{args.model}: {params:.2f} B parameters ({args.dtype}, random, built in {built:.0f} s) on {args.device}")
    print(f"{images} images of {args.config} in {seconds:.1f} s: {images / seconds:.2f} images/s, {taps.passes} "
          f"passes of {args.batch_size}, {len(points)} points; peak GPU memory {peak:.1f} GB")
    sizes = sorted({v for v in per_point.values()})
    print(f"features: {sum(per_point.values()) / 1e9:.2f} GB in all, per point "
          f"{sizes[0] / 1e9:.2f}-{sizes[-1] / 1e9:.2f} GB "
          f"({sizes[0] / images / 1e6:.2f}-{sizes[-1] / images / 1e6:.2f} "
          "MB per image)")


if __name__ == "__main__":
    main()
