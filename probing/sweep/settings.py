"""What a sweep is asked to do (``SweepSpec``): checked when it is made, so a bad flag fails before anything loads.

Its own module because the steps of the sweep that read it (``extract``, ``run``) would otherwise import each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from g2m_base.errors import UsageError
from g2m_base.flags import check_int
from probing.core.encoders import torch_dtype_of
from probing.core.settings import ProbeSettings
from probing.sweep.points import STAGES

#: The deepest stack of layers a config may claim (towers and LLMs have tens): more is a damaged or hostile config.
MAX_LAYERS = 10_000


@dataclass(frozen=True)
class SweepSpec(ProbeSettings):
    """``g2m probe sweep``: every read-out point of a VLM, its features kept in a sharded store."""

    cache_dir: str | None = None  # default OUT/cache
    points: tuple[str, ...] = STAGES
    stride: int = 1
    tower_readout: str = "vision"
    device_map: str | None = None  # "auto": the model spread over every visible GPU by accelerate
    chunk_rows: int = 256
    reference: dict | None = None  # the model's end-to-end scores at this N (from --run)
    drop_features: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("--chunk-rows", self.chunk_rows, 1, 1 << 24)
        check_int("--stride", self.stride, 1, MAX_LAYERS)
        if len(set(self.points)) != len(self.points):
            raise UsageError(f"--points names a stage twice: {','.join(self.points)}")
        if self.device_map not in (None, "auto"):
            raise UsageError(f"--device-map takes only 'auto', got {self.device_map!r}")
        torch_dtype_of(self.dtype)
