"""A trained probe head as bytes: its exact tensor names and shapes, and a bounded reader of its safetensors file.

A sweep keeps each point's head (``points/<point>/head.safetensors``) so that its predictions can be replayed: the
same head applied to the same checkpoint's features must give the same cells. The board checks a submitted head
before anyone runs it, on machines without torch, so this module uses numpy and the standard library only; the torch
half (``save_head``, ``load_head``) is in ``probing.core.probe``.

``parse_head`` trusts nothing in the file: the header is read only within ``MAX_HEAD_HEADER_BYTES`` and through the
strict JSON reader, every tensor must be one this probe has, of its exact shape and dtype, laid end to end over the
data with no gap, overlap or trailing byte, and every weight finite. Each refusal is one line saying why.
"""

from __future__ import annotations

import math

import numpy as np

from g2m_base.bounded_json import Rejected, loads

HEAD_FORMAT = "g2m-probe-head/1"
#: The file a sweep keeps each point's head in, beside its ``result.json``.
HEAD_FILE = "head.safetensors"
#: A head's header lists a few tensors (nine for the conv probe): a few hundred bytes, with room to spare.
MAX_HEAD_HEADER_BYTES = 64 << 10
#: The probe kinds (``probing.core.probe`` uses these, so the kinds a head can have and the kinds a sweep trains are one
#: list), and those that read one pooled vector per image rather than the patch grid.
PROBES = ("conv", "linear", "mean", "cls")
POOLED = ("mean", "cls")
#: Bytes per value of each dtype a head may hold: float32 weights, and BatchNorm's int64 step counter.
_ITEMSIZE = {"F32": 4, "I64": 8}
_COUNTER = "num_batches_tracked"
_ENTRY_KEYS = {"dtype", "shape", "data_offsets"}


def head_shapes(kind: str, dim: int, grid_size: int, num_colors: int, hidden: int) -> dict[str, tuple[int, ...]]:
    """The ``state_dict`` of ``SpatialProbe(dim, num_colors, grid_size, kind, hidden)``, name -> shape, worked out
    without torch (a test checks it against the real module). A kind or size no probe has is ``Rejected`` (a
    ValueError): the board calls this with a submission's numbers."""
    for name, value in (("dim", dim), ("grid_size", grid_size), ("num_colors", num_colors), ("hidden", hidden)):
        if not _is_int(value) or value < 1:
            raise Rejected(f"probe head: {name} must be a positive integer, got {value!r}")
    if kind == "conv":
        return {"head.0.weight": (hidden, dim, 1, 1), "head.0.bias": (hidden,),
                "head.1.weight": (hidden,), "head.1.bias": (hidden,), "head.1.running_mean": (hidden,),
                "head.1.running_var": (hidden,), f"head.1.{_COUNTER}": (),
                "head.3.weight": (num_colors, hidden, 1, 1), "head.3.bias": (num_colors,)}
    if kind == "linear":
        return {"head.weight": (num_colors, dim, 1, 1), "head.bias": (num_colors,)}
    if kind in POOLED:
        cells = grid_size * grid_size * num_colors
        return {"head.weight": (cells, dim), "head.bias": (cells,)}
    raise Rejected(f"probe head: unknown probe kind {str(kind)[:40]!r}; one of {', '.join(PROBES)}")


def _dtype_of(name: str) -> str:
    return "I64" if name.rsplit(".", 1)[-1] == _COUNTER else "F32"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _header(data: bytes) -> dict:
    """The header's JSON object, read within the cap and the buffer."""
    if not isinstance(data, bytes | bytearray):
        raise Rejected(f"probe head: bytes expected, got {type(data).__name__}")
    if len(data) < 8:
        raise Rejected(f"probe head: {len(data)} bytes, shorter than the 8-byte header length")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEAD_HEADER_BYTES:
        raise Rejected(f"probe head: header of {size:,} bytes, over the {MAX_HEAD_HEADER_BYTES:,}-byte limit")
    if 8 + size > len(data):
        raise Rejected(f"probe head: header of {size:,} bytes runs past the end of the {len(data):,}-byte head")
    header = loads(bytes(data[8 : 8 + size]), "probe head header")
    if not isinstance(header, dict):
        raise Rejected(f"probe head: the header is a JSON {type(header).__name__}, not an object")
    return header


def parse_head(data: bytes, expected: dict[str, tuple[int, ...]]) -> None:
    """Refuse (``Rejected``, a ValueError, one line) anything but a safetensors file holding exactly the tensors
    ``expected`` names, at those shapes, float32 (int64 for BatchNorm's counter), contiguous, whole and finite."""
    header = _header(data)
    meta = header.pop("__metadata__", None)
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise Rejected("probe head: __metadata__ must be an object of strings")
    missing, extra = sorted(set(expected) - set(header)), sorted(set(header) - set(expected))
    if missing or extra:
        what = [f"missing {', '.join(missing)[:120]}"] * bool(missing) + [
            f"unexpected {', '.join(map(repr, extra))[:120]}"] * bool(extra)
        raise Rejected(f"probe head: tensors {'; '.join(what)}")
    spans = []
    for name, shape in expected.items():
        entry = header[name]
        if not isinstance(entry, dict) or set(entry) != _ENTRY_KEYS:
            raise Rejected(f"probe head: {name} must be an object of {', '.join(sorted(_ENTRY_KEYS))}")
        want = _dtype_of(name)
        if entry["dtype"] != want:
            raise Rejected(f"probe head: {name} is {str(entry['dtype'])[:20]!r}, not {want}")
        got = entry["shape"]
        if not isinstance(got, list) or not all(_is_int(d) for d in got) or tuple(got) != tuple(shape):
            raise Rejected(f"probe head: {name} has shape {str(got)[:60]}, not {list(shape)}")
        offsets = entry["data_offsets"]
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)):
            raise Rejected(f"probe head: {name} data_offsets must be two integers")
        start, stop = offsets
        if stop - start != math.prod(shape) * _ITEMSIZE[want]:
            raise Rejected(f"probe head: {name} spans {stop - start:,} bytes, not the "
                           f"{math.prod(shape) * _ITEMSIZE[want]:,} its shape needs")
        spans.append((start, stop, name))
    body = len(data) - 8 - int.from_bytes(data[:8], "little")
    at = 0
    for start, stop, name in sorted(spans):
        if start != at:
            raise Rejected(f"probe head: {name} starts at byte {start:,} of the data, not {at:,} (a gap or overlap)")
        at = stop
    if at != body:
        raise Rejected(f"probe head: the tensors cover {at:,} bytes of data, the file holds {body:,}")
    base = 8 + int.from_bytes(data[:8], "little")
    for start, stop, name in spans:
        if _dtype_of(name) == "F32":
            values = np.frombuffer(data, dtype="<f4", count=(stop - start) // 4, offset=base + start)
            if not np.isfinite(values).all():
                raise Rejected(f"probe head: {name} holds a value that is not finite")
