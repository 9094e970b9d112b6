"""What a sweep is asked to do (``SweepSpec``): checked when it is made, so a bad flag fails before anything loads.

Its own module because the steps of the sweep that read it (``extract``, ``run``) would otherwise import each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dataset_builder.grids.configs import CONFIG_NAMES
from g2m_base.errors import UsageError
from probing.core.encoders import torch_dtype_of
from probing.core.probe import POOLED, TrainConfig
from probing.sweep.points import STAGES

#: The deepest stack of layers a config may claim (towers and LLMs have tens): more is a damaged or hostile config.
MAX_LAYERS = 10_000


@dataclass(frozen=True)
class SweepSpec:
    encoder: str
    config: str
    data: str | None = None
    out: str = "g2m-probes"
    cache_dir: str | None = None  # default OUT/cache
    points: tuple[str, ...] = STAGES
    stride: int = 1
    tower_readout: str = "vision"
    revision: str | None = None
    device: str = "cpu"
    device_map: str | None = None  # "auto": the model spread over every visible GPU by accelerate
    dtype: str = "float32"
    cache_dtype: str = "float16"
    batch_size: int = 16
    chunk_rows: int = 256
    train: TrainConfig = field(default_factory=TrainConfig)
    reference: dict | None = None  # the model's end-to-end scores at this N (from --run)
    drop_features: bool = False

    def __post_init__(self) -> None:
        if self.config not in CONFIG_NAMES or not self.config.startswith("probe_"):
            raise UsageError(f"unknown probing config {self.config!r}; choose one of "
                             f"{', '.join(n for n in CONFIG_NAMES if n.startswith('probe_'))}")
        if self.cache_dtype not in ("float16", "float32"):
            raise UsageError(f"--cache-dtype must be float16 or float32, got {self.cache_dtype!r}")
        for flag, value, top in (("--batch-size", self.batch_size, 1 << 16), ("--chunk-rows", self.chunk_rows, 1 << 24),
                                 ("--stride", self.stride, MAX_LAYERS)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise UsageError(f"{flag} must be an integer from 1 to {top:,}, got {value!r}")
        if len(set(self.points)) != len(self.points):
            raise UsageError(f"--points names a stage twice: {','.join(self.points)}")
        if self.device_map not in (None, "auto"):
            raise UsageError(f"--device-map takes only 'auto', got {self.device_map!r}")
        torch_dtype_of(self.dtype)

    @property
    def pool(self) -> str:
        return self.train.probe if self.train.probe in POOLED else "grid"
