"""The sweep's extraction step: the frozen VLM, hooked at every point still missing, one forward pass per batch of
images, each point's features written to its shard of the store (``probing.sweep.store``).

Apart from the run because it is the only step that loads weights: everything before it works from configs and
processor settings, and a rerun whose shards all exist never comes here (``extract`` returns before loading).
"""

from __future__ import annotations

import time

from tqdm.auto import tqdm

from g2m_base.errors import UsageError
from probing.core.encoders import torch_dtype_of
from probing.sweep import taps as chat  # the LLM's input
from probing.sweep.points import Point, TokenGrid, stored_shape
from probing.sweep.settings import SweepSpec
from probing.sweep.store import Dist, Store


def load_model(spec: SweepSpec, device: str, needs_llm: bool):
    """The VLM, frozen. With an LLM point: on ``device``, or spread by accelerate (``--device-map auto``); without
    one, the language model is dropped before anything moves to the device."""
    from transformers import AutoModelForImageTextToText

    kw = {"revision": spec.revision, "dtype": torch_dtype_of(spec.dtype)}
    if needs_llm:
        model = AutoModelForImageTextToText.from_pretrained(
            spec.encoder, device_map="auto" if spec.device_map == "auto" else {"": device}, **kw)
    else:
        model = AutoModelForImageTextToText.from_pretrained(spec.encoder, **kw)
        model.model.language_model = None
        model.lm_head = None
        model.to(device)
    return model.requires_grad_(False).eval()


def load_tokenizer(spec: SweepSpec, needs_llm: bool):
    """The tokenizer and its chat template, which the LLM points need to build the model's real input; a tower-only
    sweep goes on without one (``None``), since a checkpoint may ship its vision weights alone."""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(spec.encoder, revision=spec.revision)
        chat.ensure_chat_template(tok, spec.encoder, spec.revision)
        return tok
    except UsageError:
        if needs_llm:
            raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        if needs_llm:
            raise UsageError(f"cannot load the tokenizer of {spec.encoder} for the LLM points ({type(e).__name__}: "
                             f"{e}); sweep --points tower,projector without it") from None
    return None  # a tower-only sweep needs no text


def extract(spec: SweepSpec, store: Store, splits: dict, points: list[Point], grid: TokenGrid, tokenizer,
            image_processor, dist: Dist, device: str, grid_size: int, progress: bool) -> dict:
    """One forward pass per batch for every chunk of this rank that misses a point's shard. Returns what it did and
    cost (forward passes, images, seconds), which goes to ``costs.json``, never into ``sweep.json``."""
    from probing.sweep.taps import Taps

    names = [p.name for p in points]
    todo = [c for c in store.chunks() if store.missing(c, names)]
    dist.barrier()  # every rank has listed the work before anyone writes
    mine = dist.mine(todo)
    stats = {"forward_passes": 0, "images": 0, "seconds": 0.0}
    if not mine:
        return stats
    shapes = {p.name: stored_shape(p, grid_size, spec.pool) for p in points}
    model = load_model(spec, device, any(p.stage == "llm" for p in points))
    taps = Taps(model, grid, points, grid_size, spec.pool, spec.tower_readout, spec.cache_dtype,
                image_processor, tokenizer, torch_dtype_of(spec.dtype))
    bar = tqdm(total=sum(c.stop - c.start for c in mine), unit="img", desc="sweep features",
               disable=not progress or dist.rank != 0)
    start = time.perf_counter()
    try:
        for chunk in mine:
            missing = store.missing(chunk, names)
            store.begin(chunk, {n: shapes[n] for n in missing})
            ds = splits[chunk.split]
            for a in range(chunk.start, chunk.stop, spec.batch_size):
                rows = ds.select(range(a, min(chunk.stop, a + spec.batch_size)))
                images = [im.convert("RGB") for im in rows["image"]]
                got = taps.run(images, rows["prompt"] if taps.needs_llm else None)
                store.write(a - chunk.start, {n: got[n] for n in missing})
                bar.update(len(images))
            store.finish()
    finally:
        store.abandon()
        taps.close()
        bar.close()
    stats.update(forward_passes=taps.passes, images=taps.images, seconds=time.perf_counter() - start)
    return stats
