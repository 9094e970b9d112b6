"""Hooks that collect every read-out point of a sweep from one forward pass per batch of images.

``Taps(model, ...)`` hooks the requested points (``probing.sweep.points``) of a loaded VLM: a forward hook on each
vision block and on the merger/projector, and a forward *pre*-hook on each decoder layer k+1 (and on the final norm for
the last layer), whose input is the residual stream after layer k as the model carries it on (Qwen3-VL adds its
DeepStack features between layers, so a hook on a layer's own output would miss them). Each hook lays its tokens out as
one grid per image (``probing.core.tokens``, the layouts ``g2m probe`` uses), pools them for a pooled probe, fits them
to the probe's N x N input (``probing.core.features.fit_to_probe``) and keeps them in the store's dtype on the host, so
the device holds one point's tokens at a time. ``run(images, prompts)`` makes the one pass: the whole VLM when an LLM
point is asked for (on the chat input below), else the vision tower and projector alone.

The LLM's input (the second half of this module) is what the LLM sees at its read-out points: the G2M prompt of
the row, with its image, in the model's chat template.

One user turn holds the image, then the row's ``prompt`` (the text every harness sends, written by
``dataset_builder.grids.prompt``: the grid size, the colour mapping and the answer format), and the template's
generation prompt follows (``add_generation_prompt=True``), exactly as a chat request of ``g2m eval`` reaches the model.
The template is the model's own (the tokenizer's, else the checkpoint's ``chat_template.jinja`` /
``chat_template.json``).

The image placeholder the template writes is expanded as the model's processor would (we cannot build the processor
itself: Qwen's and InternVL's need torchvision for their video half): Qwen repeats ``<|image_pad|>`` once per merged
token (``prod(grid_thw) / merge**2``), InternVL writes ``<img>``, ``<IMG_CONTEXT>`` x (tokens per tile x tiles),
``</img>``. The text is tokenized without adding special tokens, since the template already holds them.

Attention is causal, so the hidden states at the image positions depend on what precedes the image only (the
template's preamble, e.g. a system prompt); the prompt's text follows the image and is what the model reads while
it writes the answer. ``sweep.json`` records the exact text of the first row (image tokens summarised).
"""

from __future__ import annotations

import json

import numpy as np
import torch

from probing.core import tokens as tk
from probing.core.encoders import QWEN, EncoderError, merger_norm
from probing.core.features import fit_to_probe, to_cache_dtype
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
            self.blocks, self.projector, self.post_norm = (vt.encoder.layer, self.inner.multi_modal_projector,
                                                           vt.layernorm)
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
        texts = [expand(chat_text(self.tokenizer, p), self.tokenizer, self.grid.family, k)
                 for p, k in zip(prompts, self.ctx["image_tokens"], strict=True)]
        enc = encode(self.tokenizer, texts)
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


# ------------------------------------------------------------------------------------------- the LLM's input

MESSAGE_LAYOUT = "one user turn: the image, then the row's prompt; then the template's generation prompt"


def ensure_chat_template(tokenizer, name: str, revision: str | None) -> None:
    """The tokenizer's chat template, or the checkpoint's processor template; an error when there is none."""
    if getattr(tokenizer, "chat_template", None):
        return
    from transformers.utils import cached_file

    for filename in ("chat_template.jinja", "chat_template.json"):
        path = cached_file(name, filename, revision=revision, _raise_exceptions_for_missing_entries=False)
        if path:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            tokenizer.chat_template = json.loads(text)["chat_template"] if filename.endswith(".json") else text
            return
    raise EncoderError(f"{name} has no chat template (tokenizer, chat_template.jinja or chat_template.json): the LLM "
                       "points need the model's own; sweep --points tower,projector without it")


def placeholders(tokenizer, family: str) -> tuple[str, str | None, str | None]:
    """The image token the template writes, and InternVL's start/end tokens."""
    if family in QWEN:
        return getattr(tokenizer, "image_token", None) or "<|image_pad|>", None, None
    return tokenizer.context_image_token, tokenizer.start_image_token, tokenizer.end_image_token


def chat_text(tokenizer, prompt: str) -> str:
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def expand(text: str, tokenizer, family: str, per_image_tokens: int) -> str:
    """The template's one image placeholder replaced by the processor's expansion for one image."""
    token, start, end = placeholders(tokenizer, family)
    if text.count(token) != 1:
        raise EncoderError(f"the chat template wrote {text.count(token)} image placeholders {token!r} for one image; "
                           "cannot place the image tokens")
    body = token * per_image_tokens
    return text.replace(token, body if start is None else f"{start}{body}{end}")


def encode(tokenizer, texts: list[str]) -> dict[str, torch.Tensor]:
    """Token ids and attention mask, left-padded when lengths differ (a config's prompts are all the same length)."""
    ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    longest = max(len(i) for i in ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.tensor([[pad] * (longest - len(i)) + i for i in ids])
    mask = torch.tensor([[0] * (longest - len(i)) + [1] * len(i) for i in ids])
    return {"input_ids": input_ids, "attention_mask": mask}


def describe(tokenizer, text: str, grid: TokenGrid) -> dict:
    """The exact text the LLM sees for one row, its image tokens summarised, and its length in tokens."""
    token, _, _ = placeholders(tokenizer, grid.family)
    n = text.count(token)
    first = text.index(token)
    shown = text[:first] + f"{token} x {n}" + text[first + len(token) * n:]
    return {"text": shown, "tokens": len(tokenizer(text, add_special_tokens=False)["input_ids"]), "image_tokens": n,
            "layout": MESSAGE_LAYOUT}
