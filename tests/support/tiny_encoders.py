"""Tiny random-weight vision encoders (SigLIP, CLIP), built offline for encoder-probe tests.

Each builder saves the vision model and its image processor into ``path`` (``config.json``,
``model.safetensors``, ``preprocessor_config.json``), so ``AutoModel.from_pretrained(path)`` (or the specific
class) and ``AutoImageProcessor.from_pretrained(path)`` load it like a Hub checkpoint, and returns ``path``.
The image processors are the pure-PIL ones (``*ImageProcessorPil``): transformers 5 writes the canonical
class name into the JSON and falls back to the PIL backend on load when torchvision is missing.

Sizes: 224x224 input, hidden 64, 2 layers, 2 heads (head_dim 32), intermediate 128; under 0.5 MB each.

Read-out (224x224 after preprocessing, any input size):
    SigLIP patch 16: ``last_hidden_state`` (B, 196, 64): the 14x14 patch grid in row-major order, no CLS;
        ``pooler_output`` (B, 64) from the attention-pooling head.
    CLIP patch 14: ``last_hidden_state`` (B, 257, 64): CLS first, then the 16x16 grid row-major;
        ``pooler_output`` (B, 64) = post-layernormed CLS. No projection head (``CLIPVisionModel``).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.lazy import lazy

torch = lazy("torch")  # imported by the first test that uses it, not when collected

VISION = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2)


def _save(path, model, image_processor) -> Path:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(path)
    image_processor.save_pretrained(path)
    return path


def make_tiny_siglip_vision(path) -> Path:
    """SiglipVisionModel (224 px, patch 16, 196 patch tokens, attention-pool head) + SiglipImageProcessor
    (plain resize to 224x224, mean/std 0.5, as in the real SigLIP checkpoints): the package's own builder."""
    from probing.tiny import make_tiny_siglip

    return make_tiny_siglip(path, hidden=VISION["hidden_size"], layers=VISION["num_hidden_layers"],
                            heads=VISION["num_attention_heads"])


def make_tiny_clip_vision(path) -> Path:
    """CLIPVisionModel (224 px, patch 14, CLS + 256 patch tokens, no projection) + CLIPImageProcessor
    (resize shortest edge to 224, centre crop 224, CLIP mean/std)."""
    from transformers import CLIPImageProcessorPil, CLIPVisionConfig, CLIPVisionModel

    torch.manual_seed(0)
    model = CLIPVisionModel(CLIPVisionConfig(image_size=224, patch_size=14, **VISION))
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    return _save(path, model, image_processor)


def make_tiny_siglip2_vision(path) -> Path:
    """Siglip2VisionModel (NaFlex: patch 16, at most 256 patches, so a 512x512 image becomes 16x16 patches at its own
    aspect ratio) + Siglip2ImageProcessor."""
    from transformers import Siglip2ImageProcessorPil, Siglip2VisionConfig, Siglip2VisionModel

    torch.manual_seed(0)
    model = Siglip2VisionModel(Siglip2VisionConfig(patch_size=16, num_patches=256, **VISION))
    return _save(path, model, Siglip2ImageProcessorPil(patch_size=16, max_num_patches=256))
