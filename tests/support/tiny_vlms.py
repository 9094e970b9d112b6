"""Tiny random-weight vision-language models, built offline for tests.

Nothing is downloaded: every config is written here and every tokenizer is a byte-level BPE trained on
the spot on a few sentences. Each ``make_tiny_*(path)`` saves with ``save_pretrained`` (model, tokenizer,
processor or image processor) so the folder loads back like a Hub checkpoint, and returns ``path``.
Weights are deterministic (``torch.manual_seed(0)`` in each builder; identical bytes across processes).
Folders are 2.2-3.1 MB; a builder takes about 0.05 s once transformers' model modules are imported (the
first one in a process pays about 2 s of imports).

Text models: hidden 128, intermediate 256, 2 layers, 4 heads, 2 KV heads, head_dim 32 (vLLM's CPU attention
rejects head_dim 16). Vision towers: hidden 64, 2 heads (head_dim 32), 2 layers.

LLaVA and Idefics3 load with ``AutoProcessor`` / ``AutoModelForImageTextToText`` and run through lm-eval's
``hf-multimodal`` (``model_args="pretrained=DIR"``; lm-eval's HF backend imports ``accelerate``). The Qwen-VL
and InternVL folders hold the model, tokenizer (with chat template) and image processor only: their
``AutoProcessor`` also builds a video processor that needs torchvision. Load the image processor with
``AutoImageProcessor.from_pretrained(path)``; without torchvision it is ``Qwen2VLImageProcessorPil`` /
``GotOcr2ImageProcessorPil`` (the JSON names the canonical class, so torchvision builds load too).

Qwen vision read-out (transformers 5.24; verified by perturbing single patches with identity blocks)::

    model = AutoModelForImageTextToText.from_pretrained(path)      # Qwen2VL/Qwen2_5_VL/Qwen3VLForConditionalGeneration
    ip = AutoImageProcessor.from_pretrained(path)                  # Qwen2VLImageProcessorPil
    x = ip(images=[img], return_tensors="pt")                      # pixel_values (N, 3*2*P*P), image_grid_thw (n_img,
    3)
    out = model.model.visual(x["pixel_values"], grid_thw=x["image_grid_thw"])
    out.last_hidden_state   # (N, 64) patch tokens BEFORE the merger, all images concatenated
    out.pooler_output       # (N/4, 128) merged tokens AFTER the merger (what the LLM receives)
    out.deepstack_features  # Qwen3-VL only: list (one per deepstack_visual_indexes) of (N/4, 128)
    model.model.get_image_features(pixel_values, image_grid_thw)  # same, pooler_output split per image
    model.model.visual(..., output_hidden_states=True).hidden_states  # (depth+1) x (N, 64); [0] = embeddings

Tower classes: ``Qwen2VisionTransformerPretrainedModel`` (merger ``.merger``), ``Qwen2_5_VisionTransformer
PretrainedModel``, ``Qwen3VLVisionModel`` (``.merger`` and ``.deepstack_merger_list``). A 512x512 RGB image
becomes grid_thw [1, 36, 36] with patch 14 (resized to 504x504; N = 1296, 324 merged tokens) and [1, 32, 32]
with patch 16 (Qwen3-VL; N = 1024, 256 merged). The image is repeated to temporal_patch_size 2 (t = 1).

Token order (grid t, H, W in patches; M = spatial_merge_size = 2). The processor emits patches in 2x2
blocks: block row ``bh``, block column ``bw`` (row-major over the (H/M, W/M) grid), then the 4 patches of
the block row-major. So pre-merger index ``k`` is patch (h, w) with::

    k = ((h // M) * (W // M) + w // M) * M * M + (h % M) * M + (w % M)

and merged token ``n`` is the 2x2 block (bh, bw) = divmod(n, W // M), row-major over the merged grid; the
merger concatenates the 4 patch vectors of a block in the order (0,0), (0,1), (1,0), (1,1). Images follow
one another, each with its own (H, W). ``qwen_patch_grid`` below reshapes one image's tokens to (t, H, W, D).
Qwen2-VL and Qwen3-VL keep this processor order in ``last_hidden_state``, ``hidden_states``,
``pooler_output`` and ``deepstack_features``. Qwen2.5-VL runs its blocks in WINDOW order: its
``last_hidden_state`` / ``hidden_states`` hold the 2x2 groups permuted by ``window_index`` (windows of
``window_size / patch / M`` = 4x4 merged units, windows row-major, units row-major inside a window), and only
``pooler_output`` is put back in processor order. To restore processor order before the merger::

    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import get_vision_window_index
    widx, _ = get_vision_window_index(grid_thw, spatial_merge_size=2, window_size=112, patch_size=14)
    hid = out.last_hidden_state.reshape(-1, 4, D)[torch.argsort(widx)].reshape(-1, D)

InternVL read-out (``make_tiny_internvl``): ``ip(images=[img])`` gives ``pixel_values`` (tiles, 3, 224, 224)
and ``num_patches``; tiles are the crop grid row-major, then a thumbnail of the whole image when there is
more than one tile (512x512 -> 2x2 + 1 = 5 tiles). ``model.model.vision_tower(pixel_values=pv)
.last_hidden_state`` is (tiles, 1 + 256, 64): CLS first, then the 16x16 patches row-major (patch tokens
before the merge). ``model.model.get_image_features(pv, vision_feature_layer=-1,
vision_feature_select_strategy="default").pooler_output`` is (tiles, 64, 128): CLS dropped, pixel shuffle
0.5, projector. Merged token m = r2 * 8 + c2 holds the channel blocks of patches (2r2, 2c2), (2r2, 2c2+1),
(2r2+1, 2c2), (2r2+1, 2c2+1) in that order (``model.model.pixel_shuffle`` before the projector).
"""

from __future__ import annotations

import json
from pathlib import Path

from probing.tiny import TEXT, chat_template, qwen_image_processor, qwen_parts, train_tokenizer
from probing.tiny import make_tiny_qwen3_vl as _make_qwen3_vl
from tests.support.lazy import lazy

torch = lazy("torch")  # imported by the first test that uses it, not when collected

_tokenizer = train_tokenizer
_template = chat_template


def qwen_patch_grid(tokens: torch.Tensor, grid_thw, merge: int = 2) -> torch.Tensor:
    """One image's Qwen tokens in processor order, (t*H*W, D), -> (t, H, W, D) patch grid (see above)."""
    t, h, w = (int(v) for v in grid_thw)
    grid = tokens.reshape(t, h // merge, w // merge, merge, merge, -1).permute(0, 1, 3, 2, 4, 5)
    return grid.reshape(t, h, w, -1)


def _ids(tok, **names: str) -> dict[str, int]:
    return {k: tok.convert_tokens_to_ids(v) for k, v in names.items()}


def _save(path, model, *others) -> Path:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(path)
    for o in others:
        o.save_pretrained(path)
    return path


def _gen_config(model, tok) -> None:
    """Pin bos/eos/pad in generation_config so generate() neither warns nor guesses."""
    g = model.generation_config
    g.bos_token_id, g.eos_token_id, g.pad_token_id = tok.bos_token_id, tok.eos_token_id, tok.pad_token_id
    g.do_sample = False


# --------------------------------------------------------------------------------------------------- LLaVA
def make_tiny_llava(path) -> Path:
    """LlavaForConditionalGeneration: CLIP vision (224 px, patch 14 -> 16x16 = 256 image tokens) + Llama.

    ``num_additional_image_tokens=1`` tells the processor that CLIP prepends a CLS token, and
    ``vision_feature_select_strategy="default"`` drops it again, so the processor writes 256 ``<image>``
    tokens, matching the 256 patch features the model produces.
    """
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tok = _tokenizer(["<unk>", "<s>", "</s>", "<pad>", "<image>"],
                     _template("<image>", "USER: ", "ASSISTANT:", "\n", bos=True),
                     unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    ids = _ids(tok, image="<image>")
    text = LlamaConfig(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                       pad_token_id=tok.pad_token_id, **TEXT)
    vision = CLIPVisionConfig(image_size=224, patch_size=14, hidden_size=64, intermediate_size=128,
                              num_hidden_layers=2, num_attention_heads=2, projection_dim=64)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_id=ids["image"],
                         image_seq_length=256, vision_feature_select_strategy="default",
                         vision_feature_layer=-2, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    _gen_config(model, tok)
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tok, patch_size=14,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=tok.chat_template)
    return _save(path, model, processor)


# ------------------------------------------------------------------------------------------------ Idefics3
def make_tiny_idefics3(path) -> Path:
    """Idefics3ForConditionalGeneration: SigLIP-like vision (224 px tiles, patch 16 -> 14x14 patches, pixel
    shuffle by 2 -> 49 tokens per tile) + Llama. A 512x512 image is resized to 448 and split into 2x2 tiles
    plus a global view: 5 x 49 = 245 ``<image>`` tokens. The processor looks up <fake_token_around_image>,
    <image>, <end_of_utterance>, <global-img> and <row_R_col_C> (R, C in 1..6), so all are special tokens.
    """
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    grid = [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    specials = ["<unk>", "<s>", "</s>", "<pad>", "<fake_token_around_image>", "<image>",
                "<end_of_utterance>", "<global-img>", *grid]
    tok = _tokenizer(specials, _template("<image>", "User:", "Assistant:", "<end_of_utterance>\n",
                                         bos=True),
                     unk_token="<unk>", bos_token="<s>", eos_token="<end_of_utterance>", pad_token="<pad>")
    ids = _ids(tok, image="<image>")
    text = LlamaConfig(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                       pad_token_id=tok.pad_token_id, **TEXT)
    vision = Idefics3VisionConfig(image_size=224, patch_size=16, hidden_size=64, intermediate_size=128,
                                  num_hidden_layers=2, num_attention_heads=2)
    config = Idefics3Config(vision_config=vision, text_config=text, scale_factor=2,
                            image_token_id=ids["image"], pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = Idefics3ForConditionalGeneration(config)
    _gen_config(model, tok)
    image_processor = Idefics3ImageProcessorPil(size={"longest_edge": 448}, max_image_size={"longest_edge": 224})
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tok, image_seq_len=49,
                                  chat_template=tok.chat_template)
    return _save(path, model, processor)


# ------------------------------------------------------------------------------------------------ Qwen-VL
_qwen_parts = qwen_parts
_qwen_image_processor = qwen_image_processor


def _qwen2_text_parts():
    """Tokenizer, token ids and text config for Qwen2-VL and Qwen2.5-VL (no head_dim; mrope [4, 6, 6])."""
    tok, ids, text = _qwen_parts()
    text.pop("head_dim")
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6]}
    return tok, ids, text


def make_tiny_qwen2_vl(path) -> Path:
    """Qwen2VLForConditionalGeneration: vision patch 14, merge 2, depth 2, embed 64 -> merger 128; text
    mrope_section [4, 6, 6] (sums to head_dim / 2 = 16)."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    tok, ids, text = _qwen2_text_parts()
    vision = dict(depth=2, embed_dim=64, hidden_size=TEXT["hidden_size"], mlp_ratio=2, num_heads=2,
                  patch_size=14, spatial_merge_size=2, temporal_patch_size=2)
    config = Qwen2VLConfig(text_config=text, vision_config=vision, **ids)
    torch.manual_seed(0)
    model = Qwen2VLForConditionalGeneration(config)
    _gen_config(model, tok)
    return _save(path, model, tok, _qwen_image_processor(14))


def make_tiny_qwen2_5_vl(path) -> Path:
    """Qwen2_5_VLForConditionalGeneration: like Qwen2-VL, plus window attention (window 112 px = 4x4
    merged tokens = 8x8 patches) in block 0 and full attention in block 1 (``fullatt_block_indexes=[1]``)."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    tok, ids, text = _qwen2_text_parts()
    vision = dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=2, out_hidden_size=TEXT["hidden_size"],
                  patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                  fullatt_block_indexes=[1])
    config = Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(config)
    _gen_config(model, tok)
    return _save(path, model, tok, _qwen_image_processor(14))


def make_tiny_qwen3_vl(path) -> Path:
    """Qwen3VLForConditionalGeneration (the package's own builder, ``probing.tiny.make_tiny_qwen3_vl``): vision patch
    16, merge 2, depth 2, hidden 64, learned position grid 16x16 (``num_position_embeddings=256``, bilinearly
    resampled per image), DeepStack merger after block 0; text mrope_section [6, 5, 5] interleaved. Image mean/std
    0.5 as in the real Qwen3-VL processor."""
    return _make_qwen3_vl(path)


# ------------------------------------------------------------------------------------------------ InternVL
def make_tiny_internvl(path) -> Path:
    """InternVLForConditionalGeneration (native HF format, as OpenGVLab/InternVL3-*-hf): InternViT-like vision
    (224 px tiles, patch 14 -> CLS + 16x16 patches), pixel shuffle 0.5 -> 8x8 = 64 tokens per tile, MLP
    projector, Qwen2 text. Saves model, tokenizer and ``GotOcr2ImageProcessor`` (``crop_to_patches`` as the
    InternVL processor passes it: a 512x512 image -> 2x2 tiles of 224 + 1 thumbnail = 5 tiles) and the processor's
    ``processor_config.json`` (``image_seq_length`` 64)."""
    from transformers import (
        GotOcr2ImageProcessorPil,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLVisionConfig,
        Qwen2Config,
    )

    names = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
             "video_token": "<video>"}
    tok = _tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", *names.values()],
                     _template("<IMG_CONTEXT>\n", "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>\n"),
                     named=names, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    text = Qwen2Config(vocab_size=len(tok), bos_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                       pad_token_id=tok.pad_token_id, **TEXT)
    vision = InternVLVisionConfig(image_size=224, patch_size=14, hidden_size=64, intermediate_size=128,
                                  num_hidden_layers=2, num_attention_heads=2)
    config = InternVLConfig(vision_config=vision, text_config=text, image_token_id=tok.convert_tokens_to_ids(
        "<IMG_CONTEXT>"), image_seq_length=64, downsample_ratio=0.5, vision_feature_layer=-1,
        vision_feature_select_strategy="default", tie_word_embeddings=False)
    torch.manual_seed(0)
    model = InternVLForConditionalGeneration(config)
    _gen_config(model, tok)
    image_processor = GotOcr2ImageProcessorPil(size={"height": 224, "width": 224}, crop_to_patches=True,
                                               min_patches=1, max_patches=4)
    path = _save(path, model, tok, image_processor)
    # what the -hf checkpoints ship beside it (written by hand: InternVLProcessor cannot be built without its video
    # processor, which needs torchvision): the image tokens per tile, 64 here where the processor's default is 256
    (path / "processor_config.json").write_text(json.dumps({"image_seq_length": 64,
                                                            "processor_class": "InternVLProcessor"}, indent=2) + "\n")
    return path
