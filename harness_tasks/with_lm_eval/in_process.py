"""lm-eval's in-process ``hf-multimodal`` backend, saying why each answer stopped, as a server does.

A server reports ``finish_reason``: "length" when the answer used its whole token budget without reaching an end
(vLLM: ``max_tokens`` generated, the last one not a stop). lm-eval's ``hf-multimodal`` returns the text only, so
``truncated`` could only be guessed from it (an open bracket at the end), and the same tokens scored 1.0 served and
0.0 or 0.5 in-process. ``HFMultimodalFinish`` decides it from the tokens, by the server's rule: an answer is
"length" when it generated its whole budget and neither an end-of-sequence token nor a stop string ended it, else
"stop". So both paths give one ``truncated`` for the same tokens.

lm-eval's own generation loop is used as it is, with the objects alive when it starts frozen (``gc.freeze``): it calls
``gc.collect()`` after every batch, and a full collection walks every object of the process (transformers, torch,
the run's documents), about 0.2 s a batch even in a process of its own: ``benchmarks/bench_in_process.py``, 90 rows
of a tiny llava at one row a batch, 22.3 s as lm-eval runs it, 4.3 s frozen (5.2x, the same answers). Frozen, each
collection walks only what was made since. Two of its steps are wrapped: ``_model_multimodal_generate`` (the
generated token ids of a batch, with its budget) records each row's finish reason, and the cache hook, which lm-eval
calls once per row with that row's context right after, hands it to the request whose context it is (matched by
object identity: the loop passes each request's own context string through).

Without torchvision, ``AutoProcessor`` cannot build a Qwen-VL or InternVL processor: it builds the video half too, and
the video processors need torchvision (PyPI's build is a CUDA one, and beside a CPU torch it fails to import). G2M
sends images only, so ``_create_tokenizer`` then builds the model's own processor class without its video half: the
same image processor (``AutoImageProcessor``, as ``g2m probe`` loads it), tokenizer, chat template and the settings
of its ``processor_config.json`` (InternVL's image tokens a tile, without which the prompt holds 256 a tile whatever
the model makes), and says so in one line.
"""

from __future__ import annotations

import gc
import inspect
import sys
from collections import defaultdict, deque

from lm_eval.models.hf_vlms import HFMultimodalLM

from g2m_base.errors import UsageError
from scoring.replies import GenText, finish_reasons


class HFMultimodalFinish(HFMultimodalLM):
    """``hf-multimodal`` whose answers carry ``finish_reason`` ("length" or "stop"), decided from the tokens, and
    whose processor needs no torchvision."""

    def _create_tokenizer(self, pretrained, tokenizer, revision="main", trust_remote_code=False, **kwargs) -> None:
        try:
            return super()._create_tokenizer(pretrained, tokenizer, revision=revision,
                                             trust_remote_code=trust_remote_code, **kwargs)
        except (ImportError, ValueError) as e:  # InternVL's video processor says it with a ValueError
            if tokenizer or "torchvision" not in str(e).lower():
                raise
        name = pretrained if isinstance(pretrained, str) else self.model.name_or_path
        self.processor = image_only_processor(name, revision, trust_remote_code, self.pixels)
        self.tokenizer = self.processor.tokenizer
        print(f"g2m: torchvision is not installed: {type(self.processor).__name__} built without its video half, "
              f"images through {type(self.processor.image_processor).__name__}", file=sys.stderr)
        return None

    def tok_batch_multimodal_encode(self, strings, images, padding_side="left", left_truncate_len=None,
                                    truncation=False):
        """The batch's prompts, whole: lm-eval would cut a prompt from the left to fit ``max_length - max_gen_toks``
        (the image's tokens first), so a budget past the model's context is refused in one line instead of a cut
        prompt scored as an answer to the grid (or, at a budget past the context itself, an IndexError)."""
        out = super().tok_batch_multimodal_encode(strings, images, padding_side=padding_side, left_truncate_len=None,
                                                  truncation=truncation)
        if left_truncate_len is not None:
            width = int(out["input_ids"].shape[1])
            if width > left_truncate_len:
                budget = self.max_length - left_truncate_len
                raise UsageError(f"a prompt of {width} tokens and an answer budget of {budget:,} do not fit "
                                 f"{self.max_length:,} tokens, the model's context: choose --tasks that fit, or a "
                                 "smaller budget with --gen-kwargs max_gen_toks=K (answers cut there are truncated)")
        return out

    def _eos_ids(self) -> set[int]:
        ids = set()
        for value in (getattr(getattr(self.model, "generation_config", None), "eos_token_id", None),
                      getattr(self.tokenizer, "eos_token_id", None)):
            ids.update(v for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, int))
        return ids

    def _model_multimodal_generate(self, inputs, max_length, stop, **generation_kwargs):
        out = super()._model_multimodal_generate(inputs, max_length, stop, **generation_kwargs)
        width = inputs["input_ids"].shape[1]
        self._finishes.extend(finish_reasons(out[:, width:].tolist(), max_length - width, self._eos_ids(),
                                             [s for s in stop or [] if s], self.tok_decode))
        return out

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        self._finishes: deque[str] = deque()
        waiting: dict[int, deque[int]] = defaultdict(deque)
        for i, request in enumerate(requests):
            waiting[id(request.args[0])].append(i)
        reasons: list[str | None] = [None] * len(requests)
        hook, finishes = self.cache_hook, self._finishes

        class Hook:  # lm-eval calls it once per answered row, in the order the rows were generated
            def add_partial(self, attr, req, res):
                queue = waiting.get(id(req[0]))
                if queue and finishes:
                    reasons[queue.popleft()] = finishes.popleft()
                hook.add_partial(attr, req, res)

        self.cache_hook = Hook()
        # lm-eval collects garbage after every batch: only what the batch made, not the run's whole heap (a caller
        # that froze objects itself keeps them frozen: only what this loop froze is thawed)
        freezing = gc.get_freeze_count() == 0
        if freezing:
            gc.freeze()
        try:
            texts = super().generate_until(requests, disable_tqdm=disable_tqdm)
        finally:
            if freezing:
                gc.unfreeze()
            self.cache_hook = hook
        return [GenText(text, reason) for text, reason in zip(texts, reasons, strict=True)]


def image_only_processor(name: str, revision: str | None, trust_remote_code: bool, pixels: dict):
    """The checkpoint's processor class, built from its image processor, tokenizer and chat template alone (its
    ``video_processor`` left out of the attributes it requires), so it loads without torchvision."""
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES, processor_class_from_name

    config = transformers.AutoConfig.from_pretrained(name, revision=revision, trust_remote_code=trust_remote_code)
    base = processor_class_from_name(PROCESSOR_MAPPING_NAMES.get(config.model_type, ""))
    if base is None:
        raise ImportError(f"{name}: {config.model_type} has no processor class to build without torchvision")

    class ImagesOnly(base):
        @classmethod
        def get_attributes(cls):
            return [a for a in super().get_attributes() if a != "video_processor"]

    ImagesOnly.__name__ = ImagesOnly.__qualname__ = base.__name__
    images = transformers.AutoImageProcessor.from_pretrained(name, revision=revision,
                                                             trust_remote_code=trust_remote_code, **pixels)
    tok = transformers.AutoTokenizer.from_pretrained(name, revision=revision, trust_remote_code=trust_remote_code)
    # the processor's own settings, as AutoProcessor would pass them (InternVL's ``image_seq_length``: image tokens a
    # tile, 256 unless the checkpoint says otherwise), so the prompt holds as many image tokens as the model makes
    # features; the parts themselves are built above
    saved, _ = base.get_processor_dict(name, revision=revision)
    accepted = set(inspect.signature(base.__init__).parameters) - {"self", "image_processor", "tokenizer",
                                                                    "video_processor", "chat_template"}
    settings = {k: v for k, v in saved.items() if k in accepted}
    return ImagesOnly(images, tok, None, chat_template=saved.get("chat_template") or tok.chat_template, **settings)
