"""``g2m probe``: load an encoder, cache its features for a probing config, train a probe, write the results.

Results go to ``OUT/<encoder>/<readout>/<config>/`` (``<readout>-<probe>`` for a probe other than ``conv``):
``result.json`` (scores, the per-cell heatmap, per-colour accuracy, the confusion matrix, and every setting needed to
reproduce the run), ``heatmap.png``, ``heatmap.npy`` and ``curve.png``. ``result.json`` has the format
``spec.PROBE_RESULT_FORMAT``, which the report and leaderboard read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from dataset_builder import __version__
from dataset_builder.grids.configs import get_config
from dataset_builder.grids.spec import PROBE_RESULT_FORMAT
from dataset_builder.release.provenance import library_versions
from dataset_builder.release.source import load_config, provenance
from g2m_base.errors import UsageError
from g2m_base.files import atomic_write_text, safe_name
from probing.core.encoders import READOUTS, check_encoder_name, load_encoder
from probing.core.features import cache_key, config_sha256, extract_split, native_grid, open_cache, save_npy
from probing.core.probe import FeatureSet, predict, score, train_probe
from probing.core.settings import ProbeSettings

VERSIONED = ("torch", "transformers", "numpy", "datasets")


@dataclass(frozen=True)
class ProbeSpec(ProbeSettings):
    """``g2m probe``: one read-out of one encoder, its features cached in ``cache_dir``."""

    readout: str = "vision"
    cache_dir: str = "g2m-probes/cache"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.readout not in READOUTS:
            raise UsageError(f"--readout must be one of {', '.join(READOUTS)}, got {self.readout!r}")


def run_probe(spec: ProbeSpec, progress: bool = True) -> dict:
    if not progress:  # --quiet: the libraries' bars too (datasets' split generation, transformers' weight loading)
        import datasets
        import transformers

        transformers.utils.logging.disable_progress_bar()
        datasets.disable_progress_bars()
    block = get_config(spec.config).splits[0].blocks[0]
    check_encoder_name(spec.encoder, spec.revision)  # a mistyped name fails at once, before the data is read
    # then the data: a missing folder, a build without this config or an unreachable Hub fails before any model loads
    data = {**provenance(spec.data), "config": spec.config}
    splits = {s: load_config(spec.config, s, spec.data) for s in ("train", "validation", "test")}
    pool = spec.pool
    encoder = load_encoder(spec.encoder, spec.readout, spec.revision, spec.device, spec.dtype, pool)
    encoder.describe_input(splits["train"][0]["image"])  # the processor's actual input, for the record
    key = cache_key(encoder, spec.revision, data, spec.config, spec.cache_dtype)
    folder = open_cache(spec.cache_dir, key)
    cached = {s: extract_split(encoder, ds, folder, s, spec.batch_size, spec.cache_dtype, progress, block.grid_size)
              for s, ds in splits.items()}
    device = torch.device(spec.device)
    sets = {s: FeatureSet(f, lab, device) for s, (f, lab) in cached.items()}
    dim = cached["train"][0].shape[-1]
    model, history = train_probe(sets["train"], sets["validation"], dim, block.num_colors, block.grid_size,
                                 spec.train, progress)
    pred = predict(model, sets["test"])
    test = score(pred, sets["test"].labels, block.num_colors)
    kind = spec.readout if spec.train.probe == "conv" else f"{spec.readout}-{spec.train.probe}"
    out = Path(spec.out) / safe_name(spec.encoder) / kind / spec.config
    out.mkdir(parents=True, exist_ok=True)
    save_npy(out / "heatmap.npy", test["heatmap"])
    save_npy(out / "test_predictions.npy", pred.cpu().numpy().astype(np.uint8))  # what a submission re-scores
    result = {
        "format": PROBE_RESULT_FORMAT,
        "encoder": {"name": spec.encoder, "revision": key["revision"], "config_sha256": config_sha256(spec.encoder),
                    "family": encoder.family, "readout": spec.readout,
                    "dtype": spec.dtype, "pool": pool, "feature_grid": native_grid(folder),
                    "stored_grid": list(cached["train"][0].shape[1:3]), "feature_dim": int(dim),
                    "image_processor": encoder.processor_info()},
        "config": spec.config, "grid_size": block.grid_size, "num_colors": block.num_colors,
        "data": data, "rows": {s: len(ds) for s, ds in splits.items()},
        "train": spec.train.to_json(), **history,
        "test": {"cell_accuracy": test["cell_accuracy"], "cell_accuracy_ci": test["cell_accuracy_ci"],
                 "exact_match": test["exact_match"], "exact_match_ci": test["exact_match_ci"],
                 "per_colour_accuracy": test["per_colour_accuracy"],
                 "heatmap": np.round(test["heatmap"], 4).tolist(), "confusion": test["confusion"].tolist()},
        "chance_cell_accuracy": 1 / block.num_colors,
        "encoder_calls": encoder.calls, "images_encoded": encoder.images_encoded, "cache": str(folder),
        "versions": {"grid2matrix": __version__, **library_versions(VERSIONED)},
    }
    atomic_write_text(out / "result.json", json.dumps(result, indent=1) + "\n")
    from probing.figures.probe import plot_curve, plot_heatmap

    plot_heatmap(test["heatmap"], out / "heatmap.png", f"{safe_name(spec.encoder)} {spec.readout} {spec.config}: "
                 f"test cell accuracy {test['cell_accuracy']:.3f}")
    plot_curve(history["history"], out / "curve.png", 1 / block.num_colors,
               f"{safe_name(spec.encoder)} {spec.readout} {spec.config}: probe training")
    result["output_dir"] = str(out)
    return result
