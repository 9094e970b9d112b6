"""The trained head a probe section carries for each headline read-out, and the recipe its features are read with:
what an audit needs to replay the section's predictions from the named checkpoint (``audit.probe_replay``).

A head is the probe's weights as safetensors, base64'd (float weights barely deflate, so there is no zlib to bomb).
``validate`` checks each one without torch and without loading it: a bounded header, exactly the tensors and shapes
the recipe's probe kind has for the read-out's feature width and the config's N and C, float32 and finite
(``probing.core.heads``). Caps: ``MAX_HEAD_BYTES`` a head (a conv head over an 8,192-wide read-out is about 17 MB),
``MAX_HEADS_BYTES`` a submission; a head past them is left out (``head: null``, with why), and its read-out is
re-scored but not replayable. A section made before heads were saved has none: re-scored, never replayed.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from g2m_base.bounded_json import Rejected
from g2m_base.errors import UsageError
from g2m_base.untrusted import check_value, term

MAX_HEAD_BYTES = 24 << 20
MAX_HEADS_BYTES = 40 << 20
HEAD_ENCODING = "safetensors/base64"
#: What a replay needs of each read-out beside its head: where in the model it is read and what shape it has.
READOUT_FIELDS = ("stage", "layer", "feature_dim", "stored_grid")


def pack(sweep: dict, folder: Path, readouts: list[dict], budget: list[int]) -> dict:
    """The section's recipe, with each read-out in ``readouts`` given its head from ``folder/points/<point>`` and its
    replay fields from the sweep's point records; ``budget`` ([bytes left]) is shared by a submission's sections."""
    from probing.sweep.replay import recipe_of

    records = {q["point"]: q for q in sweep["points"]}
    for ro in readouts:
        q = records.get(ro["point"], {})
        ro.update({f: q.get(f) for f in READOUT_FIELDS})
        path = folder / "points" / ro["point"] / "head.safetensors"
        size = path.stat().st_size if path.is_file() else None
        if size is None:
            ro.update(head=None, head_omitted="no head.safetensors (a sweep made before heads were saved)")
        elif size > min(MAX_HEAD_BYTES, budget[0]):
            ro.update(head=None, head_omitted=f"{size:,} bytes, over the {min(MAX_HEAD_BYTES, budget[0]):,} left")
        else:
            budget[0] -= size
            ro["head"] = {"encoding": HEAD_ENCODING, "bytes": size,
                          "data": base64.b64encode(path.read_bytes()).decode("ascii")}
    return recipe_of(sweep)


def _recipe(recipe: object, where: str) -> dict:
    if not isinstance(recipe, dict):
        raise Rejected(f"{where}.recipe must be an object")
    def lines_joined(v: object) -> object:  # a prompt's line breaks are its own; any other control is refused
        if isinstance(v, str):
            return v.replace("\n", " ").replace("\t", " ")
        if isinstance(v, dict):
            return {k: lines_joined(x) for k, x in v.items()}
        return [lines_joined(x) for x in v] if isinstance(v, list) else v

    try:
        check_value(lines_joined(recipe), f"{where}.recipe")
    except UsageError as e:
        raise Rejected(str(e)) from None
    return recipe


def _grid(value: object, n: int) -> bool:
    return (isinstance(value, list) and len(value) == 2 and all(type(v) is int and 1 <= v <= max(n, 64)
                                                                  for v in value))


def check(sec: dict, n: int, c: int, where: str, budget: list[int]) -> dict[str, bool]:
    """Which read-outs of a section can be replayed: each head present is checked (size, base64, safetensors
    layout against the recipe's probe for that read-out), and a hostile one refuses the submission in one line."""
    from probing.core.heads import head_shapes, parse_head

    readouts = sec["readouts"]
    if not any(isinstance(ro, dict) and ro.get("head") is not None for ro in readouts):
        return {ro["point"]: False for ro in readouts}
    recipe = _recipe(sec.get("recipe"), where)
    out = {}
    for k, ro in enumerate(readouts):
        rw = f"{where}.readouts[{k}]"
        head = ro.get("head")
        if head is None:
            out[ro["point"]] = False
            continue
        if not isinstance(head, dict) or head.get("encoding") != HEAD_ENCODING or not isinstance(head.get("data"), str):
            raise Rejected(f"{rw}.head must be null or an object with encoding {HEAD_ENCODING!r} and its data")
        if len(head["data"]) > 4 * ((min(MAX_HEAD_BYTES, budget[0]) + 2) // 3):
            raise Rejected(f"{rw}.head is over {min(MAX_HEAD_BYTES, budget[0]):,} bytes (the heads of a submission "
                           f"hold at most {MAX_HEADS_BYTES:,})")
        try:
            data = base64.b64decode(head["data"], validate=True)
        except (binascii.Error, ValueError):
            raise Rejected(f"{rw}.head is not base64") from None
        budget[0] -= len(data)
        dim, grid = ro.get("feature_dim"), ro.get("stored_grid")
        if type(dim) is not int or not 1 <= dim <= 65_536 or not _grid(grid, n):
            raise Rejected(f"{rw}: a head needs the read-out's feature_dim (1 to 65,536) and stored_grid ([h, w])")
        try:
            parse_head(data, head_shapes(str(recipe.get("probe")), dim, n, c, recipe.get("hidden")))
        except (ValueError, TypeError) as e:
            raise Rejected(f"{rw}.head: {term(str(e), 200)}") from None
        out[ro["point"]] = True
    return out
