"""Token -> patch-grid mappings, checked on hand-built tensors whose values spell out their own position."""

from __future__ import annotations

import pytest

from tests.support.lazy import lazy

# imported by the first test that uses them, not when the file is collected (probing.core.tokens imports torch)
torch = lazy("torch")
tk = lazy("probing.core.tokens")


def _pos_grid(h: int, w: int) -> torch.Tensor:
    """(h, w, 2) with grid[r, c] = (r, c)."""
    return torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"), -1).float()


@pytest.mark.parametrize(("h", "w"), [(4, 4), (6, 8), (36, 36)])
def test_qwen_block_order_before_the_merger(h, w):
    m = 2
    tokens = torch.zeros(h * w, 2)
    for r in range(h):
        for c in range(w):
            k = ((r // m) * (w // m) + c // m) * m * m + (r % m) * m + (c % m)  # where the processor puts (r, c)
            tokens[k] = torch.tensor([r, c])
    assert torch.equal(tk.qwen_patch_grid(tokens, (1, h, w), m), _pos_grid(h, w))


def test_qwen_merged_tokens_are_row_major_blocks():
    h, w = 6, 8
    tokens = _pos_grid(h // 2, w // 2).reshape(-1, 2)
    assert torch.equal(tk.qwen_merged_grid(tokens, (1, h, w)), _pos_grid(h // 2, w // 2))


@pytest.mark.slow  # imports the Qwen2.5-VL modeling code (seconds)
def test_qwen25_window_order_is_undone():
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import get_vision_window_index

    thw = torch.tensor([[1, 36, 36]])
    widx, _ = get_vision_window_index(thw, spatial_merge_size=2, window_size=112, patch_size=14)
    processor_order = torch.arange(36 * 36, dtype=torch.float32)[:, None]
    windowed = processor_order.reshape(-1, 4, 1)[widx].reshape(-1, 1)  # what the tower hands back
    assert not torch.equal(windowed, processor_order)
    assert torch.equal(tk.unwindow(windowed, widx), processor_order)


@pytest.mark.parametrize(("tiles_per_side", "thumbnail"), [(1, False), (2, True), (3, True)])
def test_internvl_tiles_are_stitched_and_the_thumbnail_dropped(tiles_per_side, thumbnail):
    p, r = 4, tiles_per_side
    full = _pos_grid(r * p, r * p)
    tiles = [full[i * p : (i + 1) * p, j * p : (j + 1) * p] for i in range(r) for j in range(r)]
    if thumbnail:
        tiles.append(torch.full((p, p, 2), -1.0))
    assert torch.equal(tk.stitch_tiles(torch.stack(tiles)), full)


def test_vit_grids_with_and_without_cls():
    grid = _pos_grid(5, 5).reshape(1, 25, 2)
    assert torch.equal(tk.vit_grid(grid, has_cls=False)[0], _pos_grid(5, 5))
    with_cls = torch.cat([torch.full((1, 1, 2), -1.0), grid], 1)
    assert torch.equal(tk.vit_grid(with_cls, has_cls=True)[0], _pos_grid(5, 5))


@pytest.mark.parametrize("bad", [
    lambda: tk.vit_grid(torch.zeros(1, 24, 2), has_cls=False),
    lambda: tk.qwen_patch_grid(torch.zeros(15, 2), (1, 4, 4)),
    lambda: tk.qwen_merged_grid(torch.zeros(5, 2), (1, 4, 4)),
    lambda: tk.stitch_tiles(torch.zeros(3, 2, 2, 1)),
])
def test_shapes_that_do_not_fit_are_refused(bad):
    with pytest.raises(ValueError):
        bad()
