"""What a probe sweep costs, and why its features are stored the way they are, measured in one run.

    python benchmarks/bench_sweep.py

1. The README's offline sweep, end to end (``run_sweep`` as ``g2m probe sweep`` calls it): the tiny Qwen3-VL-style
   VLM of ``scripts/make_tiny_vlm.py`` (2 vision blocks, 2 decoder layers, 256 px) on a 1% probe_n20_c3 build
   (200 images), 40 probe steps per point: wall time of extraction and training, feature bytes on disk, peak RSS.
2. The storage decision, on the same model at full size (512 px: a 32 x 32 tower grid, 16 x 16 image tokens) over 64
   images: bytes per image of all points as the encoder lays them out, as stored (fitted to the probe's 20 x 20
   input) and pooled to one vector (the pooled probes); and the time of one forward pass hooking every point against
   the same pass hooking one point, i.e. what a pass per point would cost instead.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def _passes(taps, images, prompts, batch=16) -> tuple[float, int]:
    start, nbytes = time.perf_counter(), 0
    for a in range(0, len(images), batch):
        nbytes += sum(v.nbytes for v in taps.run(images[a : a + batch], prompts[a : a + batch]).values())
    taps.close()
    return time.perf_counter() - start, nbytes


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-sweep-"))
    os.environ["HF_DATASETS_CACHE"] = str(tmp / "hf")
    import torch
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    from dataset_builder.release.build import BuildParams, build
    from dataset_builder.release.source import load_config
    from probing.core.encoders import load_config as model_config
    from probing.core.encoders import processor_input
    from probing.core.probe import TrainConfig
    from probing.sweep.points import STAGES, plan_points, token_grid
    from probing.sweep.run import SweepSpec, run_sweep
    from probing.sweep.taps import Taps
    from probing.tiny import make_tiny_qwen3_vl

    build(tmp / "data", "probe_n20_c3", BuildParams(scale=0.01), progress=False)
    demo = make_tiny_qwen3_vl(tmp / "demo-vlm", max_side=256)
    res = run_sweep(SweepSpec(encoder=str(demo), config="probe_n20_c3", data=str(tmp / "data"), out=str(tmp / "out"),
                              train=TrainConfig(steps=40, eval_every=20)), progress=False)
    c, rows = res["costs"], sum(res["rows"].values())
    print(f"README sweep ({len(res['points'])} points, {rows} images, {torch.get_num_threads()} threads): extraction "
          f"{c['extraction_seconds']:.1f} s ({rows / c['extraction_seconds']:.1f} images/s, "
          f"{res['passes']['forward_passes']} passes), training {c['training_seconds']:.1f} s "
          f"({c['training_seconds'] / len(res['points']):.1f} s per point), features {c['disk_bytes'] / 1e6:.1f} MB, "
          f"peak RSS {c['peak_rss_bytes'] / 1e9:.2f} GB")

    full = make_tiny_qwen3_vl(tmp / "full-vlm")
    ds = load_config("probe_n20_c3", "train", str(tmp / "data")).select(range(64))
    images, prompts = [im.convert("RGB") for im in ds["image"]], list(ds["prompt"])
    ip, tok = AutoImageProcessor.from_pretrained(full), AutoTokenizer.from_pretrained(full)
    grid = token_grid(model_config(str(full)), processor_input(ip, images[0]))
    points = plan_points(grid, STAGES)
    model = AutoModelForImageTextToText.from_pretrained(full).eval()

    def taps(pts, n=20, pool="grid"):
        return Taps(model, grid, pts, n, pool, image_processor=ip, tokenizer=tok)

    _passes(taps(points[-1:]), images[:16], prompts[:16])  # warm-up
    t_one, _ = _passes(taps(points[-1:]), images, prompts)
    t_all, fitted = _passes(taps(points), images, prompts)
    _, native = _passes(taps(points, n=64), images, prompts)  # N = 64: no grid here is fitted
    _, pooled = _passes(taps(points, pool="mean"), images, prompts)
    per = len(images) * 1e3
    print(f"512 px model, {len(points)} points, {len(images)} images: bytes per image as laid out {native / per:.0f} "
          f"kB, fitted to 20x20 {fitted / per:.0f} kB ({native / fitted:.2f}x less), pooled {pooled / per:.1f} kB "
          f"({native / pooled:.0f}x less)")
    print(f"one pass hooking all {len(points)} points {t_all:.2f} s vs one point {t_one:.2f} s: a pass per point would "
          f"take {len(points) * t_one:.2f} s, {len(points) * t_one / t_all:.1f}x the sweep's one pass")


if __name__ == "__main__":
    main()
