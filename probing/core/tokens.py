"""Put an encoder's token sequence back on its patch grid, family by family.

Every function returns ``(H, W, D)`` (or ``(B, H, W, D)``) with ``out[h, w]`` the token of the patch in row ``h``,
column ``w`` of the image. Getting this wrong silently scrambles the probe's spatial map (a heatmap would show
structure that is not there), so each mapping is tested on a hand-built tensor whose values spell out their own
position (``tests/probing/test_probe_tokens.py``), and against the real tiny models.

Qwen-VL (2, 2.5, 3). The image processor emits patches in ``M x M`` blocks (``M = spatial_merge_size = 2``): block
rows top to bottom, blocks left to right, then the four patches of a block row-major. So patch (h, w) sits at

    k = ((h // M) * (W // M) + w // M) * M * M + (h % M) * M + (w % M)

and merged token ``n`` (after the merger) is block ``divmod(n, W // M)``: already row-major. Qwen2.5-VL's tower
also runs its blocks in *window* order and returns the pre-merger tokens in that order; ``window_index`` undoes it.

InternVL. A square image is cut into ``r x r`` tiles (plus a thumbnail when r > 1); each tile's tokens are row-major
after the CLS token, and after the pixel shuffle the ``(P/2) x (P/2)`` merged tokens are row-major too. The tiles are
stitched into one ``(r P) x (r P)`` grid; the thumbnail, a second low-resolution view, is dropped.

ViTs (SigLIP, CLIP). Row-major patches; CLIP puts a CLS token first.

Pooled probes (the authors' ``mean`` and ``cls``) read one vector per image: the mean of the grid's tokens, or the CLS
token where the read-out has one (CLIP; InternVL's tower, whose thumbnail tile sees the whole image) and otherwise the
first token, the top-left patch, as the authors' code reads ``features[:, 0]`` whatever the model.
"""

from __future__ import annotations

import math

import torch

#: What is kept of a grid: all of it, or one vector per image (shaped (1, 1, D)) for the pooled probes.
POOLS = ("grid", "mean", "cls")


def vit_grid(tokens: torch.Tensor, has_cls: bool) -> torch.Tensor:
    """(B, L, D) -> (B, H, W, D) for a square row-major patch grid, dropping a leading CLS token."""
    if has_cls:
        tokens = tokens[:, 1:]
    side = math.isqrt(tokens.shape[1])
    if side * side != tokens.shape[1]:
        raise ValueError(f"{tokens.shape[1]} patch tokens do not form a square grid")
    return tokens.reshape(tokens.shape[0], side, side, tokens.shape[2])


def qwen_patch_grid(tokens: torch.Tensor, grid_thw, merge: int = 2) -> torch.Tensor:
    """One image's pre-merger tokens (t*H*W, D), in processor block order, -> (H, W, D) (first temporal slice)."""
    t, h, w = (int(v) for v in grid_thw)
    if tokens.shape[0] != t * h * w or h % merge or w % merge:
        raise ValueError(f"{tokens.shape[0]} tokens do not match grid_thw {(t, h, w)} with merge {merge}")
    grid = tokens.reshape(t, h // merge, w // merge, merge, merge, -1).permute(0, 1, 3, 2, 4, 5)
    return grid.reshape(t, h, w, -1)[0]


def qwen_merged_grid(tokens: torch.Tensor, grid_thw, merge: int = 2) -> torch.Tensor:
    """One image's post-merger tokens (t*H*W/M^2, D) -> (H/M, W/M, D): they are row-major over the merged grid."""
    t, h, w = (int(v) for v in grid_thw)
    if tokens.shape[0] != t * (h // merge) * (w // merge):
        raise ValueError(f"{tokens.shape[0]} merged tokens do not match grid_thw {(t, h, w)} with merge {merge}")
    return tokens.reshape(t, h // merge, w // merge, -1)[0]


def unwindow(tokens: torch.Tensor, window_index: torch.Tensor, merge: int = 2) -> torch.Tensor:
    """Qwen2.5-VL: pre-merger tokens in window order -> processor order (groups of M*M move together)."""
    d = tokens.shape[-1]
    groups = tokens.reshape(-1, merge * merge, d)
    if groups.shape[0] != window_index.numel():
        raise ValueError(f"{groups.shape[0]} token groups but a window index of {window_index.numel()}")
    return groups[torch.argsort(window_index)].reshape(-1, d)


def stitch_tiles(tiles: torch.Tensor) -> torch.Tensor:
    """InternVL: (T, P, P, D) tile grids of one square image -> (rP, rP, D); T is r*r, or r*r + 1 with a thumbnail."""
    t = tiles.shape[0]
    r = math.isqrt(t) if math.isqrt(t) ** 2 == t else math.isqrt(t - 1)
    if not (r * r == t or (r > 1 and r * r + 1 == t)):
        raise ValueError(f"{t} tiles do not form a square grid (with or without a thumbnail)")
    p, d = tiles.shape[1], tiles.shape[3]
    grid = tiles[: r * r].reshape(r, r, p, p, d).permute(0, 2, 1, 3, 4)
    return grid.reshape(r * p, r * p, d)


def pool(grid: torch.Tensor, kind: str, cls: torch.Tensor | None = None) -> torch.Tensor:
    """(H, W, D) -> itself (``grid``), or (1, 1, D): the mean of its tokens, or the CLS token (the top-left token where
    the read-out has no CLS, as the authors' code)."""
    if kind == "grid":
        return grid
    if kind == "mean":
        return grid.mean(dim=(0, 1), keepdim=True)
    if kind == "cls":
        return (grid[0, 0] if cls is None else cls).reshape(1, 1, -1)
    raise ValueError(f"pool must be one of {POOLS}, got {kind!r}")
