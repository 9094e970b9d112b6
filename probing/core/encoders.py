"""Frozen vision encoders, loaded with ``from_pretrained`` (a local folder or a Hub id), read out as patch grids.

Families: Qwen2-VL, Qwen2.5-VL and Qwen3-VL (the vision tower of the full VLM), InternVL in its HF format
(``InternVLForConditionalGeneration``), and plain SigLIP/SigLIP2/CLIP vision models. Read-out points:
``vision`` is the tower's patch tokens before the merger/projector (for the Qwen family, after the merger's own
normalisation, ``ln_q``/``norm``, which the authors apply before reading out: per patch, so the grid is unchanged);
``vision_raw`` is Qwen's tokens before that norm; ``projector`` is after the merger (Qwen's 2x2 merger, InternVL's
pixel shuffle + MLP), i.e. what the language model receives. Plain ViTs have only ``vision``.

Images go through the model's own image processor (``AutoImageProcessor``): for Qwen that is the PIL one, which
needs no torchvision (only ``AutoProcessor`` does, for its video processor). Its resizing (Qwen's min/max pixels,
InternVL's tiling, CLIP's crop) is recorded with the results via ``processor_info``.

Loading a full VLM reads the language model's weights too (from_pretrained has no "vision only" switch that
survives every checkpoint layout); they are dropped right after, so only the tower goes to the device. Plan host
memory for the whole checkpoint once (about 17 GB for an 8B model in bfloat16).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import torch

from g2m_base.errors import UsageError
from g2m_base.installs import one_line
from g2m_base.model_names import check_model_name
from probing.core import tokens as tk

#: vision: the tower's patch tokens before the merger/projector (for Qwen, after the merger's own norm, as the authors
#: read them); vision_raw: Qwen's tokens before that norm; projector: after the merger/projector.
READOUTS = ("vision", "vision_raw", "projector")
QWEN = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe")
VITS = frozenset({"siglip", "siglip_vision_model", "siglip2", "siglip2_vision_model", "clip", "clip_vision_model"})


class EncoderError(UsageError):
    """The checkpoint cannot be probed as asked (no vision tower, no projector, unknown family), or a read-out flag
    does not fit it: a usage error, since another model or another flag is the fix."""


@dataclass
class Encoder:
    """A frozen encoder and its image processor; ``grids(images)`` -> one (H, W, D) float tensor per image."""

    name: str
    family: str
    readout: str
    model: torch.nn.Module
    image_processor: object
    device: torch.device
    dtype: torch.dtype
    pool: str = "grid"  # "grid", or one vector per image for the pooled probes: "mean" or "cls" (tokens.POOLS)
    calls: int = 0  # forward passes and images encoded, counted so tests and benchmarks can prove the cache works
    images_encoded: int = 0
    last_input: dict = field(default_factory=dict)
    _cls: list | None = field(default=None, repr=False)

    def describe_input(self, image) -> dict:
        """What the image processor makes of one image (grid, tiles or size), without running the encoder."""
        self.last_input = processor_input(self.image_processor, image)
        return self.last_input

    @torch.inference_mode()
    def grids(self, images: list) -> list[torch.Tensor]:
        """One (H, W, D) grid per image, or (1, 1, D) for the pooled probes (``pool`` "mean" or "cls")."""
        self.calls += 1
        self.images_encoded += len(images)
        self._cls = None  # the CLS token per image, where the read-out has one (CLIP, InternVL's vision tower)
        if self.family in QWEN:
            grids = self._qwen(images)
        elif self.family == "internvl":
            grids = self._internvl(images)
        else:
            grids = self._vit(images)
        cls = self._cls or [None] * len(grids)
        return [tk.pool(g, self.pool, c) for g, c in zip(grids, cls, strict=True)]

    def _inputs(self, images: list) -> dict:
        out = self.image_processor(images=images, return_tensors="pt")
        return {k: (v.to(self.device, self.dtype) if torch.is_floating_point(v) else v.to(self.device))
                for k, v in out.items() if isinstance(v, torch.Tensor)}

    def _qwen(self, images: list) -> list[torch.Tensor]:
        x = self._inputs(images)
        thw = x["image_grid_thw"]
        out = self.model(x["pixel_values"], grid_thw=thw)
        merge = self.model.config.spatial_merge_size
        sizes = [int(t * h * w) for t, h, w in thw.tolist()]
        if self.readout == "projector":
            merged = torch.split(out.pooler_output, [s // merge**2 for s in sizes])
            return [tk.qwen_merged_grid(m, g, merge).float() for m, g in zip(merged, thw, strict=True)]
        hidden = out.last_hidden_state
        if self.family == "qwen2_5_vl":  # the tower returns its pre-merger tokens in window order
            from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import get_vision_window_index

            cfg = self.model.config
            widx, _ = get_vision_window_index(thw, spatial_merge_size=merge, window_size=cfg.window_size,
                                              patch_size=cfg.patch_size)
            hidden = tk.unwindow(hidden, widx.to(hidden.device), merge)
        if self.readout == "vision":
            hidden = merger_norm(self.model)(hidden)
        parts = torch.split(hidden, sizes)
        return [tk.qwen_patch_grid(p, g, merge).float() for p, g in zip(parts, thw, strict=True)]

    def _internvl(self, images: list) -> list[torch.Tensor]:
        x = self._inputs(images)
        counts = (x["num_patches"].tolist() if "num_patches" in x
                  else [x["pixel_values"].shape[0] // len(images)] * len(images))
        if self.readout == "projector":
            feats = self.model.get_image_features(x["pixel_values"]).pooler_output
        else:
            layer = self.model.config.vision_feature_layer
            out = self.model.vision_tower(pixel_values=x["pixel_values"], output_hidden_states=layer != -1)
            feats = out.last_hidden_state if layer == -1 else out.hidden_states[layer]
            self._cls = [t[-1, 0].float() for t in torch.split(feats, counts)]  # the thumbnail's, or the one tile's
            feats = feats[:, 1:]
        tiles = tk.vit_grid(feats, has_cls=False)
        return [tk.stitch_tiles(t).float() for t in torch.split(tiles, counts)]

    def _vit(self, images: list) -> list[torch.Tensor]:
        x = self._inputs(images)
        if "spatial_shapes" in x:  # SigLIP2 (NaFlex): padded sequences with their own (h, w)
            out = self.model(pixel_values=x["pixel_values"], pixel_attention_mask=x["pixel_attention_mask"],
                             spatial_shapes=x["spatial_shapes"]).last_hidden_state
            return [o[: h * w].reshape(h, w, -1).float() for o,
                    (h, w) in zip(out, x["spatial_shapes"].tolist(), strict=True)]
        out = self.model(pixel_values=x["pixel_values"]).last_hidden_state
        if self.family.startswith("clip"):
            self._cls = list(out[:, 0].float())
        return list(tk.vit_grid(out, has_cls=self.family.startswith("clip")).float())

    def processor_info(self) -> dict:
        """The image processor's settings (how G2M's 512x512 images were resized) plus what the last batch got."""
        return {**processor_settings(self.image_processor), "input": self.last_input}


def processor_input(image_processor, image) -> dict:
    """What ``image_processor`` makes of one image: Qwen's ``grid_thw``, InternVL's tiles, SigLIP2's shape or a size."""
    x = image_processor(images=[image], return_tensors="pt")
    if "image_grid_thw" in x:
        return {"grid_thw": x["image_grid_thw"][0].tolist()}
    if "num_patches" in x:
        return {"tiles": int(x["num_patches"][0]), "tile_px": list(x["pixel_values"].shape[-2:])}
    if "spatial_shapes" in x:
        return {"spatial_shape": x["spatial_shapes"][0].tolist()}
    return {"pixel_size": list(x["pixel_values"].shape[-2:])}


def processor_settings(image_processor) -> dict:
    """The settings that decide how an image is resized and normalised, as recorded with every result and cache."""
    raw = json.loads(image_processor.to_json_string())
    return {"class": type(image_processor).__name__, **{k: raw[k] for k in sorted(raw) if k in _PROCESSOR_KEYS}}


_PROCESSOR_KEYS = {"size", "crop_size", "do_resize", "do_center_crop", "resample", "min_pixels", "max_pixels",
                   "patch_size", "merge_size", "temporal_patch_size", "crop_to_patches", "min_patches",
                   "max_patches", "max_num_patches", "image_mean", "image_std", "do_rescale", "rescale_factor"}


def merger_norm(tower: torch.nn.Module) -> torch.nn.Module:
    """The normalisation the Qwen merger applies to each patch token before merging 2x2 blocks (Qwen2/2.5-VL
    ``merger.ln_q``, Qwen3-VL ``merger.norm``); the authors read the "vision" features after it."""
    merger = tower.merger
    norm = getattr(merger, "ln_q", None) or getattr(merger, "norm", None)
    if norm is None or getattr(merger, "use_postshuffle_norm", False):
        raise EncoderError(f"this {type(tower).__name__} has no per-patch norm before its merger")
    return norm


def family_of(config) -> str:
    model_type = getattr(config, "model_type", None)
    if model_type in QWEN or model_type == "internvl" or model_type in VITS:
        return model_type
    raise EncoderError(f"cannot probe a {model_type!r} checkpoint: supported are Qwen2-VL, Qwen2.5-VL, Qwen3-VL, "
                       "InternVL (HF format), SigLIP, SigLIP2 and CLIP (vision towers or full models)")


def load_encoder(name: str, readout: str = "vision", revision: str | None = None, device: str = "cpu",
                 dtype: str = "float32", pool: str = "grid") -> Encoder:
    """Load ``name`` (folder or Hub id) and keep only what the read-out needs, frozen, on ``device``."""
    from transformers import AutoImageProcessor

    if readout not in READOUTS:
        raise EncoderError(f"readout must be one of {READOUTS}, got {readout!r}")
    if pool not in tk.POOLS:
        raise EncoderError(f"pool must be one of {tk.POOLS}, got {pool!r}")
    torch_dtype = torch_dtype_of(dtype)
    family = family_of(load_config(name, revision))
    if family in VITS and readout == "projector":
        raise EncoderError(f"{name} is a plain vision encoder ({family}); it has no projector to read out")
    if family not in QWEN and readout == "vision_raw":
        raise EncoderError(f"vision_raw is the Qwen family's tokens before its merger's norm; {name} is {family}")
    model = _load_tower(name, revision, family, readout, torch_dtype)
    model.requires_grad_(False).eval().to(device)
    image_processor = AutoImageProcessor.from_pretrained(name, revision=revision)
    return Encoder(name, family, readout, model, image_processor, torch.device(device), torch_dtype, pool)


def torch_dtype_of(dtype: str) -> torch.dtype:
    found = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}.get(dtype)
    if found is None:
        raise EncoderError(f"dtype must be float32, bfloat16 or float16, got {dtype!r}")
    return found


def load_config(name: str, revision: str | None = None):
    """The model's config (JSON only, no weights): a clear error for a missing folder or a folder without one."""
    from transformers import AutoConfig

    check_encoder_name(name, revision)
    try:
        return AutoConfig.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as e:
        raise EncoderError(f"cannot load a model config from {name!r}: {one_line(e)[:600]}") from None


def check_encoder_name(name: str, revision: str | None = None) -> None:
    """A folder, or a Hub id that can be loaded (``g2m_base.model_names``): a mistyped name fails at once."""
    try:
        check_model_name(name, revision)
    except EncoderError:
        raise
    except UsageError as e:
        raise EncoderError(str(e)) from None


def _load_tower(name: str, revision: str | None, family: str, readout: str, dtype: torch.dtype) -> torch.nn.Module:
    from transformers import AutoModel, AutoModelForImageTextToText

    if family in VITS:
        from transformers import CLIPVisionModel, Siglip2VisionModel, SiglipVisionModel

        cls = {"siglip": SiglipVisionModel, "siglip_vision_model": SiglipVisionModel, "siglip2": Siglip2VisionModel,
               "siglip2_vision_model": Siglip2VisionModel, "clip": CLIPVisionModel,
               "clip_vision_model": CLIPVisionModel}
        return cls[family].from_pretrained(name, revision=revision, dtype=dtype)
    try:
        full = AutoModelForImageTextToText.from_pretrained(name, revision=revision, dtype=dtype)
    except ValueError:
        full = AutoModel.from_pretrained(name, revision=revision, dtype=dtype)
    inner = getattr(full, "model", full)
    if family in QWEN:
        tower = getattr(inner, "visual", None)
        if tower is None:
            raise EncoderError(f"{name} has no vision tower (model.visual)")
        return tower
    if getattr(inner, "vision_tower", None) is None:
        raise EncoderError(f"{name} has no vision tower (model.vision_tower)")
    inner.language_model = None  # InternVL's read-outs need the tower, pixel shuffle and projector only
    return inner
