"""The read-out points of a sweep, worked out from a model's config and one image's processor output alone.

Nothing here loads weights, so ``g2m probe sweep --dry-run`` and the sweep itself share one catalogue. A point is
a place where the image is a grid of tokens the authors' conv probe can read:

- ``tower`` layer k (1-based): the output of vision block k, read as ``--tower-readout`` says: ``vision`` (the
  default) passes every block's output through the per-token norm the model applies between its tower and its
  projector (Qwen's merger norm, ``ln_q``/``norm``; InternVL's tower ``layernorm``, an identity in its HF
  checkpoints), the way the authors read the tower's output, so the last block is exactly ``g2m probe --readout
  vision``; ``vision_raw`` (Qwen only) reads the blocks' residual stream as it is.
- ``projector``: the merger / pixel shuffle + MLP output, what the LLM receives at its input embeddings (``g2m probe
  --readout projector``). For Qwen3-VL that is not all the LLM receives: its DeepStack mergers turn the outputs of
  some vision blocks into further streams of image tokens, each added to the residual stream after one of the first
  decoder layers. So a model whose projector is at chance can still hold the grid a layer later.
- ``deepstack`` layer k (Qwen3-VL only, with the projector): the DeepStack merger output that is added after decoder
  layer k (stream k-1 of ``deepstack_visual_indexes``, from vision block ``deepstack_visual_indexes[k-1] + 1``), read
  as it leaves its merger; the figure draws it at ``llm`` layer k, where it enters.
- ``llm`` layer k (1-based): the LLM's residual stream after decoder layer k (before the final norm; for Qwen3-VL
  after the DeepStack features are added), at the image-token positions.

Grids: Qwen's tower is the patch grid (H, W) of ``grid_thw`` and its merged tokens (projector, LLM) the (H/M, W/M)
grid; InternVL's tiles (r x r, and a thumbnail when r > 1) are stitched into one (rP, rP) tower grid and (rP/2, rP/2)
after the pixel shuffle, the thumbnail dropped (``probing.core.tokens``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dataset_builder.grids.spec import DEFAULT_RESOLUTION
from g2m_base.flags import check_int
from probing.core.encoders import QWEN, EncoderError

STAGES = ("tower", "projector", "llm")  # what --points takes; ``deepstack`` points come with the projector
#: The families whose image tokens we can lay out at every depth; any other is refused with this list.
SWEEP_FAMILIES = (*QWEN, "internvl")
TOWER_READOUTS = ("vision", "vision_raw")


@dataclass(frozen=True)
class Point:
    stage: str
    layer: int | None  # 1-based block or decoder layer; None for the projector
    grid: tuple[int, int]  # the laid-out token grid of one image
    dim: int
    readout: str | None = None  # the ``g2m probe --readout`` this point equals, if any

    @property
    def name(self) -> str:
        return self.stage if self.layer is None else f"{self.stage}.{self.layer:03d}"


@dataclass(frozen=True)
class TokenGrid:
    """How one G2M image passes through the model: its token grids, widths and depths."""

    family: str
    tower_grid: tuple[int, int]
    merged_grid: tuple[int, int]
    tower_dim: int
    text_dim: int
    tower_depth: int
    llm_layers: int
    image_tokens: int  # placeholder tokens of one image in the LLM's sequence (InternVL: the thumbnail's too)
    image_token_id: int
    vision_layer: int  # the tower block the ``vision`` read-out equals
    deepstack: tuple[int, ...] = ()  # Qwen3-VL: the 0-based vision blocks whose DeepStack streams enter the LLM


def text_config(config):
    return getattr(config, "text_config", None) or config


def sweep_family(config) -> str:
    family = getattr(config, "model_type", None)
    if family not in SWEEP_FAMILIES:
        raise EncoderError(f"g2m probe sweep lays out image tokens for Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and -MoE) and "
                           f"InternVL (HF format) only; it cannot lay out a {family!r} model's (g2m probe reads the "
                           "vision towers of SigLIP and CLIP)")
    return family


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, list | tuple) else (int(v), int(v))


def default_input(config) -> dict:
    """What the family's image processor makes of a 512 x 512 image, from the config alone (for a dry run of a model
    whose processor files are absent): Qwen rounds each side to a multiple of patch x merge (512 -> 512 at patch 16,
    504 at patch 14); InternVL's tile picker keeps one tile for a square image unless the tiles are small enough that
    2 x 2 of them cover it better (the rule of ``GotOcr2ImageProcessor``: area > half of the tiled canvas)."""
    family = sweep_family(config)
    v = config.vision_config
    if family in QWEN:
        factor = v.patch_size * v.spatial_merge_size
        side = max(factor, round(DEFAULT_RESOLUTION / factor) * factor) // v.patch_size
        return {"grid_thw": [1, side, side]}
    tile = _pair(v.image_size)[0]
    r = 1
    for k in range(2, 7):  # the largest square tiling whose canvas is not more than twice the image's area
        if DEFAULT_RESOLUTION**2 > 0.5 * (tile * k) ** 2 and k * k <= 12:
            r = k
    return {"tiles": r * r + (1 if r > 1 else 0), "tile_px": [tile, tile]}


def token_grid(config, image_input: dict) -> TokenGrid:
    """The token grid of one image at every depth, with the model's widths and depths (``image_input``: ``grid_thw``
    for Qwen, ``tiles`` for InternVL, as ``Encoder.describe_input`` reports them)."""
    family = sweep_family(config)
    v, t = config.vision_config, text_config(config)
    if family in QWEN:
        _, h, w = (int(x) for x in image_input["grid_thw"])
        m = v.spatial_merge_size
        tower_dim = v.embed_dim if family == "qwen2_vl" else v.hidden_size
        deepstack = tuple(int(i) for i in getattr(v, "deepstack_visual_indexes", None) or ())
        return TokenGrid(family, (h, w), (h // m, w // m), int(tower_dim), int(t.hidden_size), int(v.depth),
                        int(t.num_hidden_layers), h * w // m**2, int(config.image_token_id), int(v.depth), deepstack)
    tiles = int(image_input["tiles"])
    r = math.isqrt(tiles) if math.isqrt(tiles) ** 2 == tiles else math.isqrt(tiles - 1)
    p = _pair(v.image_size)[0] // _pair(v.patch_size)[0]
    s = float(config.downsample_ratio)
    per_tile = int(p * s) ** 2
    layer = int(config.vision_feature_layer)
    depth = int(v.num_hidden_layers)
    vision_layer = depth if layer == -1 else layer % (depth + 1)
    if layer != -1 and not getattr(v, "use_mean_pooling", True):
        vision_layer = -1  # the read-out skips the tower's final norm there, which the tower points apply
    return TokenGrid(family, (r * p, r * p), (int(r * p * s), int(r * p * s)), int(v.hidden_size), int(t.hidden_size),
                    depth, int(t.num_hidden_layers), tiles * per_tile, int(config.image_token_id), vision_layer)


def pick_layers(depth: int, stride: int) -> list[int]:
    """Every ``stride``-th layer, plus the first and the last (so the tower's read-out and the LLM's last layer are
    always there)."""
    check_int("--stride", stride, 1, error=EncoderError)
    return sorted({1, depth, *range(stride, depth + 1, stride)})


def parse_stages(text: str) -> tuple[str, ...]:
    stages = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in stages if s not in STAGES]
    if bad or not stages:
        raise EncoderError(f"--points takes a comma-separated list of {', '.join(STAGES)}; got {text!r}")
    return tuple(s for s in STAGES if s in stages)


def plan_points(grid: TokenGrid, stages: tuple[str, ...], stride: int = 1, tower_readout: str = "vision",
                ) -> list[Point]:
    """The points of a sweep, tower -> projector -> LLM, each with the grid and width its tokens are laid out in."""
    if tower_readout not in TOWER_READOUTS:
        raise EncoderError(f"--tower-readout must be one of {', '.join(TOWER_READOUTS)}, got {tower_readout!r}")
    if tower_readout == "vision_raw" and grid.family not in QWEN:
        raise EncoderError("--tower-readout vision_raw is the Qwen family's blocks without the merger's norm; "
                           f"a {grid.family} tower has no such norm")
    points = []
    if "tower" in stages:
        points += [Point("tower", k, grid.tower_grid, grid.tower_dim, tower_readout if k == grid.vision_layer else None)
                   for k in pick_layers(grid.tower_depth, stride)]
    if "projector" in stages:
        points.append(Point("projector", None, grid.merged_grid, grid.text_dim, "projector"))
        points += [Point("deepstack", k + 1, grid.merged_grid, grid.text_dim) for k in range(len(grid.deepstack))]
    if "llm" in stages:
        points += [Point("llm", k, grid.merged_grid, grid.text_dim) for k in pick_layers(grid.llm_layers, stride)]
    return points


def stored_shape(point: Point, grid_size: int, pool: str) -> tuple[int, int, int]:
    """What the store keeps of one image at ``point``: (1, 1, D) for a pooled probe; the grid fitted to the probe's
    N x N input when it has at least N*N tokens (``probing.core.features.fit_to_probe``); else the grid itself."""
    if pool != "grid":
        return (1, 1, point.dim)
    h, w = point.grid
    return (grid_size, grid_size, point.dim) if h * w >= grid_size * grid_size else (h, w, point.dim)
