"""Write the configs of Qwen3-VL-8B-Instruct and Qwen3-VL-235B-A22B-Instruct, offline, from transformers' config
classes with the published sizes (no download, no weights), for ``g2m probe sweep --dry-run``:

    python scripts/make_model_configs.py model-configs
    g2m probe sweep --encoder model-configs/Qwen3-VL-8B-Instruct --config probe_n32_c10 --dry-run

Each folder holds ``config.json`` and the published image processor's settings (``preprocessor_config.json``:
patch 16, merge 2, mean/std 0.5), which is all a dry run reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: Qwen3-VL's vision tower (both sizes): 27 blocks of width 1152, DeepStack after blocks 8, 16 and 24.
VISION = dict(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, out_hidden_size=4096, patch_size=16,
              spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=2304,
              deepstack_visual_indexes=[8, 16, 24], hidden_act="gelu_pytorch_tanh")
ROPE = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True}
IDS = dict(image_token_id=151655, video_token_id=151656, vision_start_token_id=151652, vision_end_token_id=151653)
TEXT = dict(vocab_size=151936, hidden_size=4096, head_dim=128, max_position_embeddings=262144, rms_norm_eps=1e-6,
            rope_parameters=ROPE, bos_token_id=151643, eos_token_id=151645)


def configs() -> dict:
    from transformers import Qwen3VLConfig, Qwen3VLMoeConfig

    dense = Qwen3VLConfig(text_config=dict(TEXT, intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32,
                                           num_key_value_heads=8), vision_config=VISION, tie_word_embeddings=False,
                          **IDS)
    moe = Qwen3VLMoeConfig(text_config=dict(TEXT, intermediate_size=12288, num_hidden_layers=94, num_attention_heads=64,
                                            num_key_value_heads=4, moe_intermediate_size=1536, num_experts=128,
                                            num_experts_per_tok=8, decoder_sparse_step=1, mlp_only_layers=[],
                                            tie_word_embeddings=False),
                           vision_config=VISION, tie_word_embeddings=False, **IDS)
    return {"Qwen3-VL-8B-Instruct": dense, "Qwen3-VL-235B-A22B-Instruct": moe}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder to write one sub-folder per model into")
    args = ap.parse_args()
    from transformers import Qwen2VLImageProcessorPil

    for name, config in configs().items():
        path = Path(args.out) / name
        path.mkdir(parents=True, exist_ok=True)
        config.save_pretrained(path)
        Qwen2VLImageProcessorPil(patch_size=16, merge_size=2, temporal_patch_size=2, image_mean=[0.5] * 3,
                                 image_std=[0.5] * 3, size={"shortest_edge": 65536, "longest_edge": 16777216}
                                 ).save_pretrained(path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
