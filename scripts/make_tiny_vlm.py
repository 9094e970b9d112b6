"""Write a tiny random-weight Qwen3-VL-style VLM (config, weights, tokenizer with a chat template, image processor)
from a transformers config, offline, for the README's probe-sweep example:

    python scripts/make_tiny_vlm.py demo-vlm
    g2m probe sweep --encoder demo-vlm --config probe_n20_c3 --data demo-data ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probing.tiny import make_tiny_qwen3_vl  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder to write the checkpoint to")
    ap.add_argument("--tower-depth", type=int, default=2, help="vision blocks")
    ap.add_argument("--llm-layers", type=int, default=2, help="decoder layers of the language model")
    ap.add_argument("--image-side", type=int, default=256,
                    help="the side (px) the model sees a 512 px image at: 256 gives 16x16 patches, 64 image tokens "
                         "(the real Qwen3-VL sees 512: 32x32 patches, 256 tokens); 512 for the full size")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.tower_depth < 1 or args.llm_layers < 1:
        ap.error("--tower-depth and --llm-layers must be at least 1")
    path = make_tiny_qwen3_vl(args.out, depth=args.tower_depth, layers=args.llm_layers, seed=args.seed,
                              max_side=None if args.image_side >= 512 else args.image_side)
    print(f"wrote a random Qwen3-VL-style model ({args.tower_depth} vision blocks, {args.llm_layers} decoder layers, "
          f"images seen at {min(args.image_side, 512)} px) to {path}")


if __name__ == "__main__":
    main()
