"""Probe results in a submission (``g2m submit RUN --probes DIR``), and their re-scoring by ``validate``.

The Digital Agnosia gap is the distance between what a model's internals hold about the grid (a probe) and what its
answers say (the outputs). Both halves are re-scored: a submission's ``probes`` holds one section per ``g2m probe
sweep`` (or ``g2m probe`` result) of the run's own model (``scoring.runs.identity``; a probe of another model is
refused), and each section carries, for its headline read-outs (the last vision block, the projector, each DeepStack
stream, the best and the last LLM layers of a sweep; the read-out of a ``g2m probe``), the probe's predicted cell
for every row of the probing config's test split. ``validate`` regenerates the truth of those rows from their seeds
and re-computes cell accuracy and exact match; the numbers written in the file are ignored. The sweep's per-point
summary rides beside them as submitted (``points``), so the board can draw the whole map and mark which of its
points were re-scored.

Encoding (``ENCODING``): the rows are the test split's ids ``<config>-test-00000`` onwards, ``count`` of them (the
release's 10,000, or a local build's scaled count), so no row can be missing or repeated without the count saying
so. A read-out's cells, row by row and each grid in row-major order, are stored as (prediction - truth) mod C, one
byte each, deflated and base64'd: a good probe is mostly zeros and costs a fraction of a bit per cell, a probe at
chance about log2(C) bits. ``validate`` inflates each read-out with a hard cap (exactly count x N x N bytes, so a
deflate bomb costs nothing) and refuses a value outside the palette.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from pathlib import Path

import numpy as np

from dataset_builder.grids.configs import CONFIG_NAMES, get_config
from dataset_builder.grids.spec import SWEEP_RESULT_FORMAT
from g2m_base.bounded_json import Rejected
from g2m_base.stats import bootstrap_mean, wilson
from g2m_base.untrusted import term
from scoring.rescoring.rescore import Truth, truth_matrix
from scoring.runs import identity
from submission import probe_heads
from submission.run_metadata import public_value

ENCODING = "residual-mod-c/uint8/zlib/base64"
MAX_SECTIONS = 16
MAX_READOUTS = 12
MAX_POINTS = 1024  # a sweep of every layer of the deepest models has a few hundred
POINT_FIELDS = ("point", "stage", "layer", "readout", "cell_accuracy", "cell_accuracy_ci", "exact_match")
ROLES = ("last vision block", "projector", "deepstack", "best LLM layer", "last LLM layer", "probe read-out")


def test_truth(config: str, count: int) -> np.ndarray:
    """(count, N, N) uint8: the first ``count`` test rows of a probing config, regenerated from their seeds."""
    block = get_config(config).split("test").blocks[0]
    return np.stack([truth_matrix(Truth(block.sample_id(i), block.grid_size, block.num_colors, block.seed(i)))
                     for i in range(count)]).astype(np.uint8)


def expected_rows(config: str, scale: float) -> int:
    return (get_config(config).scaled(scale).split("test").rows if scale != 1.0
            else get_config(config).split("test").rows)


def encode(pred: np.ndarray, truth: np.ndarray, num_colors: int) -> str:
    residual = (pred.astype(np.int16) - truth.astype(np.int16)) % num_colors
    return base64.b64encode(zlib.compress(residual.astype(np.uint8).tobytes(), 9)).decode("ascii")


def decode(text: object, truth: np.ndarray, num_colors: int, where: str) -> np.ndarray:
    """The predicted cells, (count, N, N), or ``Rejected`` in one line naming ``where``."""
    size = truth.size
    if not isinstance(text, str) or len(text) > 2 * size + 1024:  # deflate never grows data by half
        raise Rejected(f"{where}: cells must be a base64 string of at most {2 * size + 1024:,} characters")
    try:
        packed = base64.b64decode(text, validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, size + 1)
    except (binascii.Error, ValueError, zlib.error) as e:
        raise Rejected(f"{where}: cells are not {ENCODING} ({type(e).__name__})") from None
    if len(raw) != size or not inflater.eof or inflater.unconsumed_tail:
        held = f"more than {size:,}" if len(raw) > size else f"{len(raw):,}"
        raise Rejected(f"{where}: cells hold {held} values, not {size:,} (rows x N x N)")
    residual = np.frombuffer(raw, dtype=np.uint8).reshape(truth.shape)
    if int(residual.max(initial=0)) >= num_colors:
        raise Rejected(f"{where}: a cell value outside the palette of {num_colors} colours")
    return ((truth.astype(np.int16) + residual) % num_colors).astype(np.uint8)


def _headline(points: list[dict]) -> list[tuple[str, str]]:
    """(point, role) of the read-outs a sweep section carries predictions for, in depth order, each once."""
    tower = [q for q in points if q["stage"] == "tower"]
    llm = [q for q in points if q["stage"] == "llm"]
    picks = []
    if tower:
        picks.append((max(tower, key=lambda q: q["layer"])["point"], "last vision block"))
    picks += [(q["point"], "projector" if q["stage"] == "projector" else "deepstack") for q in points
              if q["stage"] in ("projector", "deepstack")]
    if llm:
        picks.append((max(llm, key=lambda q: q["cell_accuracy"])["point"], "best LLM layer"))
        picks.append((max(llm, key=lambda q: q["layer"])["point"], "last LLM layer"))
    seen: set[str] = set()
    return [(p, r) for p, r in picks if not (p in seen or seen.add(p))]


def data_scale(data: dict) -> float:
    params = data.get("build_params") if isinstance(data.get("build_params"), dict) else {}
    scale = params.get("scale", 1.0) if data.get("revision") is None else 1.0
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise Rejected(f"data scale must be a number in (0, 1], got {term(repr(scale), 40)}")
    return float(scale)


def _section(kind: str, record: dict, model: dict, run_model: str, readouts: list[tuple[str, str, Path]],
             points: list[dict]) -> dict:
    config, n, c = record["config"], record["grid_size"], record["num_colors"]
    scale = data_scale(record.get("data") or {})
    count = expected_rows(config, scale)
    truth = test_truth(config, count)
    out = []
    for point, role, path in readouts:
        try:
            pred = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            raise Rejected(f"{path.parent}: no test_predictions.npy (made before probes saved their predictions); "
                           "run the probe again to write it") from None
        if pred.shape != truth.shape:
            raise Rejected(f"{path}: predictions of shape {pred.shape}, not the {truth.shape} of {config}'s test rows")
        claimed = next((q["cell_accuracy"] for q in points if q["point"] == point), None)
        if claimed is not None and abs(float((pred == truth).mean()) - claimed) > 1e-6:
            raise Rejected(f"{path}: the predictions do not give the probe's own cell accuracy against the seeds' "
                           f"truth ({float((pred == truth).mean()):.4f} against {claimed:.4f}): not in id order?")
        out.append({"point": point, "role": role, "cells": encode(pred, truth, c)})
    return {"kind": kind, "model": {**{k: model.get(k) for k in ("revision", "config_sha256", "family")},
                                    "name": run_model, "probed_as": public_value(model.get("name"))},
            "config": config, "grid_size": n, "num_colors": c, "data": record.get("data"),
            "rows": {"split": "test", "first": 0, "count": count}, "encoding": ENCODING, "readouts": out,
            "points": [{k: q.get(k) for k in POINT_FIELDS} for q in points]}


def collect(folder: str | Path, run, model_id: str | None = None) -> list[dict]:
    """One section per sweep and per ``g2m probe`` result below ``folder``, each of the run's model (identity rule:
    another model's probe is refused in one line naming both), named ``model_id`` (the submission's, default the
    run's); a sweep's sections carry their heads and recipe (``probe_heads``), so an audit can replay them."""
    from dataset_builder.grids.spec import MAX_PROBE_RESULT_BYTES, MAX_SWEEP_BYTES, PROBE_RESULT_FORMAT
    from g2m_base.bounded_json import read_json

    found = []
    for path in sorted(Path(folder).rglob("*.json")):
        if path.name not in ("sweep.json", "result.json") or "points" in path.parts[-3:-1]:
            continue
        try:
            cap = MAX_SWEEP_BYTES if path.name == "sweep.json" else MAX_PROBE_RESULT_BYTES
            r = read_json(path, cap, "probe result")
        except Rejected:
            continue
        if isinstance(r, dict) and r.get("format") in (SWEEP_RESULT_FORMAT, PROBE_RESULT_FORMAT):
            found.append((path, r))
    if not found:
        raise Rejected(f"no g2m probe sweep (sweep.json) or g2m probe (result.json) results under {folder}")
    identity.other_models(identity.of_run(run), {str(p): r.get("model") or r.get("encoder") or {} for p, r in found},
                          False, str(folder))
    sections, budget, name = [], [probe_heads.MAX_HEADS_BYTES], model_id or run.model
    for path, r in found:
        if r["format"] == SWEEP_RESULT_FORMAT:
            points = r["points"]
            readouts = [(p, role, path.parent / "points" / p / "test_predictions.npy") for p, role in _headline(points)]
            sections.append(_section("sweep", r, r["model"], name, readouts, points))
            sections[-1]["recipe"] = probe_heads.pack(r, path.parent, sections[-1]["readouts"], budget)
        else:
            point = {"point": r["encoder"]["readout"], "stage": "probe", "layer": None,
                     "readout": r["encoder"]["readout"],
                     **{k: r["test"].get(k) for k in ("cell_accuracy", "cell_accuracy_ci", "exact_match")}}
            sections.append(_section("probe", r, r["encoder"], name,
                                     [(point["point"], "probe read-out", path.parent / "test_predictions.npy")],
                                     [point]))
    if len(sections) > MAX_SECTIONS:
        raise Rejected(f"{len(sections)} probe results under {folder}; a submission holds at most {MAX_SECTIONS}")
    return sections


def rescored_sweep(path: str | Path, record: dict) -> dict:
    """One sweep on disk (``path``, its ``sweep.json``, read as ``record``) re-scored exactly as ``validate`` re-scores
    it once ``g2m submit --probes`` has added it: ``g2m report`` shows these numbers, so that a report and the board
    give the same gap. ``Rejected`` when its predictions are not there (a sweep made before they were
    saved) or do not fit."""
    name = str(record["model"]["name"])
    points = record["points"]
    readouts = [(p, role, Path(path).parent / "points" / p / "test_predictions.npy") for p, role in _headline(points)]
    return rescore([_section("sweep", record, record["model"], name, readouts, points)], name)[0]


def _number(v: object, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise Rejected(f"{where} must be a number from 0 to 1")
    return float(v)


def _points(points: object, where: str) -> list[dict]:
    """The sweep's per-point summary as submitted: plain, bounded, in range (shown as submitted, never ranked)."""
    if not isinstance(points, list) or not 1 <= len(points) <= MAX_POINTS:
        raise Rejected(f"{where}.points must be a list of 1 to {MAX_POINTS} points")
    out = []
    for k, q in enumerate(points):
        w = f"{where}.points[{k}]"
        if not isinstance(q, dict) or not isinstance(q.get("point"), str) or len(q["point"]) > 40:
            raise Rejected(f"{w} must be an object with a point name of at most 40 characters")
        if q.get("stage") not in ("tower", "projector", "deepstack", "llm", "probe"):
            raise Rejected(f"{w}.stage must be tower, projector, deepstack, llm or probe")
        layer = q.get("layer")
        if not (layer is None or (type(layer) is int and 0 <= layer <= 10_000)):
            raise Rejected(f"{w}.layer must be null or a layer number")
        ci = q.get("cell_accuracy_ci")
        out.append({"point": q["point"], "stage": q["stage"], "layer": layer,
                    "cell_accuracy": _number(q.get("cell_accuracy"), f"{w}.cell_accuracy"),
                    "cell_accuracy_ci": [_number(v, f"{w}.cell_accuracy_ci") for v in ci]
                    if isinstance(ci, list) and len(ci) == 2 else None,
                    "exact_match": _number(q.get("exact_match"), f"{w}.exact_match")})
    return out


def _identity(model: dict, meta: dict, where: str) -> dict:
    """The probed checkpoint, revision and ``config.json`` sha256 a section records, refused in one line when they
    contradict the submission's own (``metadata.model``: the revision of its model args, and the config hash
    ``g2m submit`` recorded): the same identity rule ``g2m submit --probes`` applies, applied by the board."""
    def sha(v: object) -> str | None:
        return v if isinstance(v, str) and len(v) == 64 else None

    rev = model.get("revision")  # as ``identity.of_probe`` reads it; nothing on this machine is looked at
    rev = rev if isinstance(rev, str) and rev and not rev.startswith("local:") and rev != "main" else None
    mine = identity.ModelId(str(meta.get("id")), meta.get("revision") or None, sha(meta.get(identity.CONFIG_HASH_KEY)))
    probe = identity.ModelId(str(meta.get("id")), rev, sha(model.get(identity.CONFIG_HASH_KEY)))
    why = identity.difference(mine, probe)
    if why:
        raise Rejected(f"{where} is a probe of {term(str(model.get('probed_as') or meta.get('id')), 80)} at "
                       f"{term(str(probe), 120)}, not of the submission's model {term(str(mine), 120)} ({why})")
    return {"checkpoint": term(str(model.get("probed_as") or meta.get("id")), 200),
            "revision": term(str(model["revision"]), 80) if isinstance(model.get("revision"), str) else None,
            "config_sha256": sha(model.get(identity.CONFIG_HASH_KEY))}


def rescore(sections: object, model_id: str, meta: dict | None = None) -> list[dict]:
    """Check every probe section of a submission and re-score its read-outs against the seeds' truth; written numbers
    are ignored. ``meta``: the submission's ``metadata.model``, whose revision and config hash a section must not
    contradict. Any hostile section is ``Rejected`` in one line."""
    if not isinstance(sections, list) or not 1 <= len(sections) <= MAX_SECTIONS:
        raise Rejected(f"probes must be a list of 1 to {MAX_SECTIONS} sections")
    out, budget = [], [probe_heads.MAX_HEADS_BYTES]
    for i, sec in enumerate(sections):
        w = f"probes[{i}]"
        if not isinstance(sec, dict):
            raise Rejected(f"{w} must be an object")
        config = sec.get("config")
        if not isinstance(config, str) or config not in CONFIG_NAMES or not config.startswith("probe_"):
            raise Rejected(f"{w}.config must be a probing config (probe_nNN_cC), got {term(repr(config), 40)}")
        model = sec.get("model")
        if not isinstance(model, dict) or model.get("name") != model_id:
            name = model.get("name") if isinstance(model, dict) else None
            raise Rejected(f"{w} is a probe of {term(repr(name), 80)}, not of the submission's model "
                           f"{term(model_id, 80)}")
        ident = _identity(model, meta or {"id": model_id}, w)
        if sec.get("encoding") != ENCODING:
            raise Rejected(f"{w}.encoding must be {ENCODING!r}")
        block = get_config(config).split("test").blocks[0]
        n, c = block.grid_size, block.num_colors
        scale = data_scale(sec.get("data") if isinstance(sec.get("data"), dict) else {})
        count = expected_rows(config, scale)
        rows = sec.get("rows")
        if not isinstance(rows, dict) or rows.get("split") != "test" or rows.get("first") != 0 \
                or type(rows.get("count")) is not int or rows["count"] != count:
            got = rows.get("count") if isinstance(rows, dict) else None
            raise Rejected(f"{w}.rows must be every test row of {config} once (split test, first 0, count {count:,} "
                           f"at scale {scale:g}); got {term(repr(got), 40)}")
        readouts = sec.get("readouts")
        if not isinstance(readouts, list) or not 1 <= len(readouts) <= MAX_READOUTS:
            raise Rejected(f"{w}.readouts must be a list of 1 to {MAX_READOUTS} read-outs")
        points = _points(sec.get("points"), w)
        names = {q["point"] for q in points}
        truth = test_truth(config, count)
        scored, seen = [], set()
        for k, ro in enumerate(readouts):
            rw = f"{w}.readouts[{k}]"
            if not isinstance(ro, dict) or ro.get("point") not in names or ro.get("role") not in ROLES:
                raise Rejected(f"{rw} must name one of the section's points and a role ({', '.join(ROLES)})")
            if ro["point"] in seen:
                raise Rejected(f"{rw}: point {ro['point']} appears more than once")
            seen.add(ro["point"])
            correct = decode(ro.get("cells"), truth, c, rw) == truth
            per_row = correct.reshape(count, -1)
            exact = int(per_row.all(1).sum())
            scored.append({"point": ro["point"], "role": ro["role"], "cell_accuracy": float(correct.mean()),
                           "cell_accuracy_ci": list(bootstrap_mean(per_row.mean(1).astype(np.float64))),
                           "exact_match": exact / count, "exact_match_ci": list(wilson(exact, count))})
        replayable = probe_heads.check(sec, n, c, w, budget)
        for r in scored:
            r["replayable"] = replayable.get(r["point"], False)
        best = max(scored, key=lambda r: r["cell_accuracy"])
        out.append({"kind": "sweep" if sec.get("kind") == "sweep" else "probe", "config": config, "grid_size": n,
                    "num_colors": c, "rows": count, "scale": scale, "readouts": scored, "best": best,
                    "points": points, "probed_as": term(str(model.get("probed_as") or model_id), 200), **ident})
    return out
