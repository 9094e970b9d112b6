"""A tiny random-weight SigLIP vision tower built from a config, offline: the encoder of the README's one-minute
probing example (and of the tests). It is saved like a Hub checkpoint (``config.json``, ``model.safetensors``,
``preprocessor_config.json``), so ``g2m probe --encoder FOLDER`` loads it through the same ``from_pretrained`` path
as a real model. Random weights still carry colour: the patch embedding is a random linear map of the pixels, so a
probe on them learns the grid, though far from the real towers' accuracy.
"""

from __future__ import annotations

from pathlib import Path


def make_tiny_siglip(path: str | Path, hidden: int = 64, layers: int = 2, heads: int = 2, image_size: int = 224,
                     patch: int = 16, seed: int = 0) -> Path:
    """SiglipVisionModel + its PIL image processor (plain resize to ``image_size``, mean/std 0.5) in ``path``."""
    import torch
    from transformers import SiglipImageProcessorPil, SiglipVisionConfig, SiglipVisionModel

    torch.manual_seed(seed)
    config = SiglipVisionConfig(image_size=image_size, patch_size=patch, hidden_size=hidden, intermediate_size=2 * hidden,
                                num_hidden_layers=layers, num_attention_heads=heads)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    SiglipVisionModel(config).eval().save_pretrained(path)
    SiglipImageProcessorPil(size={"height": image_size, "width": image_size}).save_pretrained(path)
    return path
