"""Write a tiny random-weight SigLIP vision tower (from a config, offline) for the README's probing example:

    python scripts/make_tiny_encoder.py demo-encoder
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probing.tiny import make_tiny_siglip  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder to write the checkpoint to")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    args = ap.parse_args()
    path = make_tiny_siglip(args.out, hidden=args.hidden, layers=args.layers)
    print(f"wrote a random SigLIP vision tower (hidden {args.hidden}, {args.layers} layers) to {path}")


if __name__ == "__main__":
    main()
