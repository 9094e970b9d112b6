"""Tiny random-weight models built from configs, offline: the encoders of docs/probing.md's offline probing examples
(and of the tests). Each is saved like a Hub checkpoint, so ``g2m probe`` / ``g2m probe sweep --encoder FOLDER`` load it
through the same ``from_pretrained`` path as a real model.

- ``make_tiny_siglip``: a SigLIP vision tower and its PIL image processor.
- ``make_tiny_qwen3_vl``: a whole Qwen3-VL-style VLM (vision tower, merger with DeepStack, language model), its
  tokenizer (a byte-level BPE trained on the spot on a few sentences, with Qwen's special tokens and a short chat
  template that emits Qwen's image placeholder) and its image processor: everything ``g2m probe sweep`` reads.

Random weights still carry colour: the patch embedding is a random linear map of the pixels and every block adds to
a residual stream, so a probe learns the grid at every depth, though far from the real models' accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The sentences the tiny tokenizers are trained on (about 400 tokens; deterministic).
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Describe the image. What colour is the square? It is red, green, blue, yellow, white or black.",
    "A grid of cells: 0 1 2 3 4 5 6 7 8 9, rows and columns, [[1, 2], [3, 4]].",
    "User: hi\nAssistant: hello, how can I help you today?",
    "Answer the question about the picture in one word.",
] * 4

#: Text-model sizes of every tiny VLM (head_dim 32 suits vLLM's CPU attention too).
TEXT = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, head_dim=32, max_position_embeddings=4096)

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                 "<|image_pad|>", "<|video_pad|>"]


def make_tiny_siglip(path: str | Path, hidden: int = 64, layers: int = 2, heads: int = 2, image_size: int = 224,
                     patch: int = 16, seed: int = 0) -> Path:
    """SiglipVisionModel + its PIL image processor (plain resize to ``image_size``, mean/std 0.5) in ``path``."""
    import torch
    from transformers import SiglipImageProcessorPil, SiglipVisionConfig, SiglipVisionModel

    torch.manual_seed(seed)
    config = SiglipVisionConfig(image_size=image_size, patch_size=patch, hidden_size=hidden,
                                intermediate_size=2 * hidden,
                                num_hidden_layers=layers, num_attention_heads=heads)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    SiglipVisionModel(config).eval().save_pretrained(path)
    SiglipImageProcessorPil(size={"height": image_size, "width": image_size}).save_pretrained(path)
    return path


def train_tokenizer(specials: list[str], chat_template: str, named: dict | None = None, **roles: str):
    """A byte-level BPE (about 400 tokens) whose first ids are ``specials``, wrapped for transformers.

    ``roles`` names the special tokens (bos_token=..., eos_token=..., pad_token=..., unk_token=...); the other
    specials become ``extra_special_tokens`` (a dict ``named`` also makes them tokenizer attributes, e.g.
    ``tok.start_image_token``) so they never get split and are skipped when decoding.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    extra = named or [s for s in specials if s not in roles.values()]
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, extra_special_tokens=extra, **roles)
    fast.chat_template = chat_template
    return fast


def chat_template(image: str, user: str, assistant: str, end: str, bos: bool = False) -> str:
    """A short Jinja chat template: plain string contents, {"type": "text"} parts, and {"type": "image"}
    parts, which become ``image``, the placeholder that the processor expands. Literals go through
    ``json.dumps`` so that newlines survive Jinja's ``{%- -%}`` whitespace trimming."""
    q = json.dumps
    return (
        ("{{ bos_token }}" if bos else "") + "{%- for m in messages -%}"
        f"{{{{ {q(user)} if m['role'] == 'user' else ({q(assistant)} if m['role'] == 'assistant' "
        "else m['role'] + ': ') }}"
        "{%- if m['content'] is string -%}{{ m['content'] }}{%- else -%}{%- for c in m['content'] -%}"
        f"{{%- if c['type'] == 'image' -%}}{{{{ {q(image)} }}}}{{%- elif c['type'] == 'text' -%}}{{{{ c['text'] }}}}"
        f"{{%- endif -%}}{{%- endfor -%}}{{%- endif -%}}{{{{ {q(end)} }}}}{{%- endfor -%}}"
        f"{{%- if add_generation_prompt -%}}{{{{ {q(assistant)} }}}}{{%- endif -%}}"
    )


def qwen_parts():
    """Qwen's tokenizer (special tokens and chat template), its token ids and the shared text-config fields."""
    tok = train_tokenizer(QWEN_SPECIALS, chat_template("<|vision_start|><|image_pad|><|vision_end|>",
                                                       "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>\n"),
                          eos_token="<|im_end|>", pad_token="<|endoftext|>")
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in dict(
        image_token_id="<|image_pad|>", video_token_id="<|video_pad|>", vision_start_token_id="<|vision_start|>",
        vision_end_token_id="<|vision_end|>").items()}
    text = dict(TEXT, vocab_size=len(tok), bos_token_id=tok.convert_tokens_to_ids("<|endoftext|>"),
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return tok, ids, text


def qwen_image_processor(patch: int, mean_std: float | None = None, max_side: int | None = None):
    """Qwen's PIL image processor; ``max_side`` caps the pixels (``max_pixels = max_side**2``), so a 512 x 512 image
    is seen at ``max_side`` px (fewer patches: a faster model on a CPU)."""
    from transformers import Qwen2VLImageProcessorPil

    kw = {} if mean_std is None else dict(image_mean=[mean_std] * 3, image_std=[mean_std] * 3)
    if max_side is not None:
        kw["size"] = {"shortest_edge": 56 * 56, "longest_edge": max_side * max_side}
    return Qwen2VLImageProcessorPil(patch_size=patch, merge_size=2, temporal_patch_size=2, **kw)


def save_vlm(path: str | Path, model, tok, *others) -> Path:
    """Greedy generation settings pinned, then model, tokenizer and processors saved side by side."""
    g = model.generation_config
    g.bos_token_id, g.eos_token_id, g.pad_token_id = tok.bos_token_id, tok.eos_token_id, tok.pad_token_id
    g.do_sample = False
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(path)
    for o in (tok, *others):
        o.save_pretrained(path)
    return path


def make_tiny_qwen3_vl(path: str | Path, depth: int = 2, layers: int = 2, deepstack: tuple[int, ...] = (0,),
                       max_side: int | None = None, seed: int = 0) -> Path:
    """Qwen3VLForConditionalGeneration: vision patch 16, merge 2, ``depth`` blocks of hidden 64, learned position
    grid 16x16 (resampled per image), DeepStack mergers after the blocks in ``deepstack``; a ``layers``-layer text
    model (hidden 128), mrope_section [6, 5, 5] interleaved. Image mean/std 0.5 as in the real Qwen3-VL processor.
    A 512x512 image becomes 32x32 patches, 16x16 = 256 image tokens in the LLM (at ``max_side`` 256: 16x16 patches,
    64 image tokens)."""
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    tok, ids, text = qwen_parts()
    text["num_hidden_layers"] = layers
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [6, 5, 5],
                               "mrope_interleaved": True}
    vision = dict(depth=depth, hidden_size=64, intermediate_size=128, num_heads=2, out_hidden_size=TEXT["hidden_size"],
                  patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=256,
                  deepstack_visual_indexes=list(deepstack))
    config = Qwen3VLConfig(text_config=text, vision_config=vision, **ids)
    torch.manual_seed(seed)
    return save_vlm(path, Qwen3VLForConditionalGeneration(config), tok, qwen_image_processor(16, 0.5, max_side))
