"""Hooks that collect every read-out point of a sweep from one forward pass per batch of images.

``Taps(model, ...)`` hooks the requested points (``probing.sweep.points``) of a loaded VLM: a forward hook on each
vision block and on the merger/projector, and a forward *pre*-hook on each decoder layer k+1 (and on the final norm for
the last layer), whose input is the residual stream after layer k as the model carries it on (Qwen3-VL adds its
DeepStack features between layers, so a hook on a layer's own output would miss them). Each hook lays its tokens out as
one grid per image (``probing.core.tokens``, the layouts ``g2m probe`` uses), pools them for a pooled probe, fits them
to the probe's N x N input (``probing.core.features.fit_to_probe``) and keeps them in the store's dtype on the host, so
the device holds one point's tokens at a time. ``run(images, prompts)`` makes the one pass: the whole VLM when an LLM
point is asked for (on the chat input of ``probing.sweep.chat``), else the vision tower and projector alone.
"""

from __future__ import annotations

import numpy as np
import torch

from probing.core import tokens as tk
from probing.core.encoders import QWEN, merger_norm
from probing.core.features import fit_to_probe, to_cache_dtype
from probing.sweep import chat
from probing.sweep.points import Point, TokenGrid


def _tensor(output) -> torch.Tensor:
    return output[0] if isinstance(output, tuple | list) else getattr(output, "last_hidden_state", output)


class Taps:
    def __init__(self, model, grid: TokenGrid, points: list[Point], grid_size: int, pool: str = "grid",
                 tower_readout: str = "vision", cache_dtype: str = "float16", image_processor=None, tokenizer=None,
                 dtype: torch.dtype = torch.float32) -> None:
        self.model, self.grid, self.points, self.n, self.pool = model, grid, points, grid_size, pool
        self.tower_readout, self.cache_dtype, self.dtype = tower_readout, cache_dtype, dtype
        self.image_processor, self.tokenizer = image_processor, tokenizer
        self.inner = getattr(model, "model", model)
        self.qwen = grid.family in QWEN
        self.needs_llm = any(p.stage == "llm" for p in points)
        self.passes = self.images = 0
        self.out: dict[str, list[np.ndarray]] = {}
        self.ctx: dict = {}
        self.handles = []
        if self.qwen:
            visual = self.inner.visual
            self.blocks, self.projector = visual.blocks, visual.merger
            self.post_norm = merger_norm(visual) if tower_readout == "vision" else None
        else:
            vt = self.inner.vision_tower
            self.blocks, self.projector, self.post_norm = vt.encoder.layer, self.inner.multi_modal_projector, vt.layernorm
        for p in points:
            if p.stage == "tower":
                self.handles.append(self.blocks[p.layer - 1].register_forward_hook(self._tower_hook(p)))
            elif p.stage == "projector":
                self.handles.append(self.projector.register_forward_hook(self._projector_hook(p)))
            elif p.stage == "deepstack":  # stream k-1 leaves merger k-1 and is added after decoder layer k
                merger = self.inner.visual.deepstack_merger_list[p.layer - 1]
                self.handles.append(merger.register_forward_hook(self._projector_hook(p)))
            else:
                lm = self.inner.language_model
                target = lm.layers[p.layer] if p.layer < len(lm.layers) else lm.norm
                self.handles.append(target.register_forward_pre_hook(self._llm_hook(p), with_kwargs=True))

    def close(self) -> None:
        for h in self.handles:
            h.remove()

    # ---------------------------------------------------------------------------------------------- hooks
    def _emit(self, point: Point, grids: list[torch.Tensor], cls: list | None = None) -> None:
        kept = []
        for g, c in zip(grids, cls or [None] * len(grids), strict=True):
            g = fit_to_probe(tk.pool(g.float(), self.pool, None if c is None else c.float()), self.n)
            kept.append(g.cpu().numpy())
        block = np.stack(kept)
        self.out.setdefault(point.name, []).append(to_cache_dtype(block, self.cache_dtype, f"point {point.name}"))

    def _tower_hook(self, point: Point):
        def hook(module, args, output):
            x = _tensor(output)
            if self.qwen:
                if self.grid.family == "qwen2_5_vl":
                    x = tk.unwindow(x, self.ctx["window_index"].to(x.device), self.ctx["merge"])
                if self.post_norm is not None:
                    x = self.post_norm(x)
                parts = torch.split(x, self.ctx["patches"])
                self._emit(point, [tk.qwen_patch_grid(p, g, self.ctx["merge"]) for p, g in
                                   zip(parts, self.ctx["grid_thw"], strict=True)])
                return
            x = self.post_norm(x)
            tiles = torch.split(x, self.ctx["tiles"])
            cls = [t[-1, 0] for t in tiles]  # the thumbnail's CLS (the one tile's when there is one)
            self._emit(point, [tk.stitch_tiles(tk.vit_grid(t, has_cls=True)) for t in tiles], cls)
        return hook

    def _merged(self, x: torch.Tensor, per_image: list[torch.Tensor]) -> list[torch.Tensor]:
        """One image's merged tokens (after the projector, or at the LLM's image positions) -> its merged grid."""
        if self.qwen:
            return [tk.qwen_merged_grid(t, g, self.ctx["merge"]) for t, g in zip(per_image, self.ctx["grid_thw"],
                                                                                 strict=True)]
        return [tk.stitch_tiles(tk.vit_grid(t.reshape(k, -1, t.shape[-1]), has_cls=False))
                for t, k in zip(per_image, self.ctx["tiles"], strict=True)]

    def _projector_hook(self, point: Point):
        def hook(module, args, output):
            x = _tensor(output)
            x = x.reshape(-1, x.shape[-1])
            if self.grid.family == "qwen2_5_vl":  # the merger runs in window order; the tower restores it after
                x = tk.unwindow(x, self.ctx["window_index"].to(x.device), 1)
            self._emit(point, self._merged(x, list(torch.split(x, self.ctx["image_tokens"]))))
        return hook

    def _llm_hook(self, point: Point):
        def hook(module, args, kwargs):
            x = args[0] if args else kwargs["hidden_states"]
            mask = self.ctx["image_mask"].to(x.device)
            self._emit(point, self._merged(x, [x[b][mask[b]] for b in range(x.shape[0])]))
        return hook

    # ---------------------------------------------------------------------------------------------- one pass
    def _device(self, module: torch.nn.Module) -> torch.device:
        return next(module.parameters()).device

    @torch.inference_mode()
    def run(self, images: list, prompts: list[str] | None = None) -> dict[str, np.ndarray]:
        """One forward pass for ``images``: {point name: (B, h, w, D) array in the store's dtype}."""
        self.passes += 1
        self.images += len(images)
        self.out = {}
        x = self.image_processor(images=images, return_tensors="pt")
        pixels = x["pixel_values"].to(self._device(self.blocks), self.dtype)
        if self.qwen:
            thw = x["image_grid_thw"]
            merge = int(self.grid.tower_grid[0] // self.grid.merged_grid[0])
            self.ctx = {"grid_thw": thw.tolist(), "merge": merge, "patches": [int(v) for v in thw.prod(-1)],
                        "image_tokens": [int(v) // merge**2 for v in thw.prod(-1)]}
            if self.grid.family == "qwen2_5_vl":
                from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import get_vision_window_index

                cfg = self.inner.visual.config
                self.ctx["window_index"], _ = get_vision_window_index(
                    thw, spatial_merge_size=merge, window_size=cfg.window_size, patch_size=cfg.patch_size)
        else:
            counts = x["num_patches"].tolist() if "num_patches" in x else [len(pixels) // len(images)] * len(images)
            per_tile = self.grid.image_tokens // counts[0]
            self.ctx = {"tiles": counts, "image_tokens": [k * per_tile for k in counts]}
        if not self.needs_llm:
            if self.qwen:
                self.inner.visual(pixels, grid_thw=thw.to(pixels.device))
            else:
                cfg = self.inner.config
                self.inner.get_image_features(pixel_values=pixels, vision_feature_layer=cfg.vision_feature_layer,
                                              vision_feature_select_strategy=cfg.vision_feature_select_strategy)
            return {k: np.concatenate(v) for k, v in self.out.items()}
        texts = [chat.expand(chat.chat_text(self.tokenizer, p), self.tokenizer, self.grid.family, k)
                 for p, k in zip(prompts, self.ctx["image_tokens"], strict=True)]
        enc = chat.encode(self.tokenizer, texts)
        self.ctx["image_mask"] = enc["input_ids"] == self.grid.image_token_id
        found = self.ctx["image_mask"].sum(1).tolist()
        if found != self.ctx["image_tokens"]:
            raise RuntimeError(f"image tokens in the sequences {found} != the images' {self.ctx['image_tokens']}")
        device = self._device(self.inner.language_model)
        # Qwen's M-RoPE positions need each token's modality, which its processor returns beside the ids (1: image)
        extra = {"image_grid_thw": thw.to(device), "mm_token_type_ids": self.ctx["image_mask"].int().to(device)
                 } if self.qwen else {}
        self.inner(input_ids=enc["input_ids"].to(device), attention_mask=enc["attention_mask"].to(device),
                   pixel_values=pixels, use_cache=False, **extra)
        return {k: np.concatenate(v) for k, v in self.out.items()}
