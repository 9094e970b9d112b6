"""What every probe run is asked (``ProbeSettings``): the fields and checks ``g2m probe`` (``ProbeSpec``) and
``g2m probe sweep`` (``SweepSpec``) share, checked when a spec is made, so a bad flag fails before anything loads."""

from __future__ import annotations

from dataclasses import dataclass, field

from dataset_builder.grids.configs import CONFIG_NAMES
from g2m_base.errors import UsageError
from g2m_base.flags import check_int
from probing.core.probe import POOLED, TrainConfig

#: How cached features may be stored.
CACHE_DTYPES = ("float16", "float32")
#: The most images one encoder batch may hold (``--batch-size``).
MAX_BATCH = 1 << 16


@dataclass(frozen=True)
class ProbeSettings:
    encoder: str
    config: str
    data: str | None = None
    out: str = "g2m-probes"
    revision: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    cache_dtype: str = "float16"
    batch_size: int = 16
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        if self.config not in CONFIG_NAMES or not self.config.startswith("probe_"):
            raise UsageError(f"unknown probing config {self.config!r}; choose one of "
                             f"{', '.join(n for n in CONFIG_NAMES if n.startswith('probe_'))}")
        if self.cache_dtype not in CACHE_DTYPES:
            raise UsageError(f"--cache-dtype must be {' or '.join(CACHE_DTYPES)}, got {self.cache_dtype!r}")
        check_int("--batch-size", self.batch_size, 1, MAX_BATCH)

    @property
    def pool(self) -> str:
        """How the encoder's grid is read: ``mean``/``cls`` for a pooled probe, else the patch ``grid``."""
        return self.train.probe if self.train.probe in POOLED else "grid"
