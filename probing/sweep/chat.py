"""What the LLM sees at its read-out points: the G2M prompt of the row, with its image, in the model's chat template.

One user turn holds the image, then the row's ``prompt`` (the text every harness sends, written by
``dataset_builder.prompt``: the grid size, the colour mapping and the answer format), and the template's generation
prompt follows (``add_generation_prompt=True``), exactly as a chat request of ``g2m eval`` reaches the model. The
template is the model's own (the tokenizer's, else the checkpoint's ``chat_template.jinja`` / ``chat_template.json``).

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

import torch

from probing.core.encoders import QWEN, EncoderError
from probing.sweep.points import TokenGrid

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
