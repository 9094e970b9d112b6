"""Probe training on cached features against re-encoding every step (the authors' approach), in one run.

    python benchmarks/bench_probe.py

Uses a random-weight ViT-S/16-sized SigLIP (384 wide, 12 layers, 224 px; built from a config, nothing is downloaded)
on a 1% probe_n32_c3 build. Prints encoder passes per image for a first and a second ``g2m probe`` run, and training
steps/s of the conv probe (batch 64) when features come from the cache vs from the frozen encoder at every step.
A real 8B VLM's tower is 2-10x larger again, so the ratio here is a lower bound.
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

import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-probe-"))
    os.environ["HF_DATASETS_CACHE"] = str(tmp / "hf")
    from transformers import SiglipImageProcessorPil, SiglipVisionConfig, SiglipVisionModel

    from dataset_builder.release.build import BuildParams, build
    from dataset_builder.release.source import load_config
    from probing.core.encoders import load_encoder
    from probing.core.experiment import ProbeSpec, run_probe
    from probing.core.probe import FeatureSet, SpatialProbe, TrainConfig

    build(tmp / "data", "probe_n32_c3", BuildParams(scale=0.01), progress=False)
    enc_dir = tmp / "vit-s16"
    torch.manual_seed(0)
    SiglipVisionModel(SiglipVisionConfig(image_size=224, patch_size=16, hidden_size=384, intermediate_size=1536,
                                         num_hidden_layers=12, num_attention_heads=6)).save_pretrained(enc_dir)
    SiglipImageProcessorPil(size={"height": 224, "width": 224}).save_pretrained(enc_dir)
    spec = ProbeSpec(encoder=str(enc_dir), config="probe_n32_c3", data=str(tmp / "data"), out=str(tmp / "out"),
                     cache_dir=str(tmp / "cache"), train=TrainConfig(steps=10, eval_every=5))
    first = run_probe(spec, progress=False)
    rows = sum(first["rows"].values())
    second = run_probe(spec, progress=False)
    print(f"encoder passes per image: first run {first['images_encoded'] / rows:.3f} ({rows} images), "
          f"second run {second['images_encoded'] / rows:.3f}")

    import numpy as np

    cache = Path(first["cache"])
    feats, labels = np.load(cache / "train.features.npy", mmap_mode="r"), np.load(cache / "train.labels.npy")
    train = FeatureSet(feats, labels, torch.device("cpu"))
    probe = SpatialProbe(feats.shape[-1], 3, 32)
    opt = torch.optim.AdamW(probe.parameters(), lr=5e-4)
    gen = torch.Generator().manual_seed(0)

    def step(x, y):
        loss = F.cross_entropy(probe(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    t, n_cached = time.perf_counter(), 100
    for _ in range(n_cached):
        step(*train.batch(torch.randint(0, train.n, (64,), generator=gen)))
    cached = n_cached / (time.perf_counter() - t)

    encoder = load_encoder(str(enc_dir))
    ds = load_config("probe_n32_c3", "train", str(tmp / "data"))
    t, n_enc = time.perf_counter(), 3
    for _ in range(n_enc):
        idx = torch.randint(0, len(ds), (64,), generator=gen).tolist()
        rows_ = ds.select(idx)
        x = torch.stack(encoder.grids(list(rows_["image"])))
        step(x, torch.tensor(np.asarray(rows_["matrix"]), dtype=torch.long))
    encoded = n_enc / (time.perf_counter() - t)
    print(f"probe steps/s (batch 64, CPU, {torch.get_num_threads()} threads): cached features {cached:.1f}, "
          f"re-encoding every step {encoded:.3f}; ratio {cached / encoded:.0f}x")


if __name__ == "__main__":
    main()
