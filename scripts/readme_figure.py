"""Draw the README's picture of a few release grids: python scripts/readme_figure.py [OUT.png]."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset_builder.grids.configs import get_config  # noqa: E402
from dataset_builder.grids.generate import make_sample  # noqa: E402
from dataset_builder.grids.render import PALETTE_RGB, render_indices  # noqa: E402

PICKS = [(3, 3), (9, 5), (20, 10), (64, 10)]
SIDE, GAP, LABEL = 512, 24, 40


def main(out: str = "docs/grids.png") -> None:
    blocks = {(b.grid_size, b.num_colors): b for b in get_config("zero_shot").split("test").blocks}
    canvas = Image.new("RGB", (len(PICKS) * (SIDE + GAP) - GAP, SIDE + LABEL), "white")
    draw = ImageDraw.Draw(canvas)
    for k, key in enumerate(PICKS):
        s = make_sample(blocks[key], 0)
        tile = Image.fromarray(PALETTE_RGB[render_indices(s.matrix)])
        x = k * (SIDE + GAP)
        canvas.paste(tile, (x, LABEL))
        draw.text((x, 8), f"{s.id}: N={s.grid_size}, C={s.num_colors}", fill=(0, 0, 0), font_size=24)
    canvas = canvas.resize((canvas.width // 2, canvas.height // 2), Image.Resampling.BOX)
    canvas.save(out, optimize=True)
    print(f"wrote {out} ({np.asarray(canvas).shape[1]}x{np.asarray(canvas).shape[0]})")


if __name__ == "__main__":
    main(*sys.argv[1:])
