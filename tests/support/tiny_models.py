"""Tiny random-weight VLMs and vision encoders for tests, built offline (no Hub, no downloads).

One import point for the builders in ``tiny_vlms`` (chat VLMs; their module docstring documents the Qwen-VL
and InternVL vision read-out and token order) and ``tiny_encoders`` (SigLIP and CLIP vision towers). Every
builder takes an output folder, writes a checkpoint with ``save_pretrained`` and returns it as a ``Path``::

    @pytest.fixture(scope="session")
    def tiny_llava(tmp_path_factory):
        return make_tiny_llava(tmp_path_factory.mktemp("tiny_llava"))

    lm_eval.simple_evaluate(model="hf-multimodal", model_args=f"pretrained={tiny_llava}", ...)

| builder                      | loads with                                        | image tokens (512x512) |
|------------------------------|---------------------------------------------------|------------------------|
| make_tiny_llava              | AutoProcessor + AutoModelForImageTextToText       | 256                    |
| make_tiny_idefics3           | AutoProcessor + AutoModelForImageTextToText       | 245 (4 tiles + global) |
| make_tiny_qwen2_vl           | AutoImageProcessor + AutoModelForImageTextToText  | 324                    |
| make_tiny_qwen2_5_vl         | AutoImageProcessor + AutoModelForImageTextToText  | 324                    |
| make_tiny_qwen3_vl           | AutoImageProcessor + AutoModelForImageTextToText  | 256                    |
| make_tiny_internvl           | AutoImageProcessor + AutoModelForImageTextToText  | 5 tiles x 64           |
| make_tiny_siglip_vision      | AutoImageProcessor + AutoModel (SiglipVisionModel)| 196 patches            |
| make_tiny_clip_vision        | AutoImageProcessor + AutoModel (CLIPVisionModel)  | CLS + 256 patches      |

The Qwen-VL and InternVL ``AutoProcessor`` needs torchvision (video processor), so those folders are for
vision-tower probes and hand-built prompts, not for lm-eval's hf-multimodal on a torchvision-less machine.
"""

from tests.support.tiny_encoders import make_tiny_clip_vision, make_tiny_siglip2_vision, make_tiny_siglip_vision
from tests.support.tiny_vlms import (
                       make_tiny_idefics3,
                       make_tiny_internvl,
                       make_tiny_llava,
                       make_tiny_qwen2_5_vl,
                       make_tiny_qwen2_vl,
                       make_tiny_qwen3_vl,
                       qwen_patch_grid,
)

__all__ = [
    "make_tiny_clip_vision", "make_tiny_idefics3", "make_tiny_internvl", "make_tiny_llava",
    "make_tiny_qwen2_5_vl", "make_tiny_qwen2_vl", "make_tiny_qwen3_vl", "make_tiny_siglip2_vision",
    "make_tiny_siglip_vision",
    "qwen_patch_grid",
]
