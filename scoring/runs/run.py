"""What a run is once read: its samples (each with the text the model wrote and the target the release holds for its
id), the results record beside them, and the errors a folder that is not a usable run gives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from g2m_base.errors import G2MError
from scoring.runs.layout import results_name
from scoring.runs.model_args import model_name
from scoring.score import REQUEST_FAILED


class RunError(G2MError, ValueError):
    """The folder is not a usable lm-eval run of the G2M tasks."""


class NoResults(RunError):
    """The folder holds no lm-eval results at all (it may be a VLMEvalKit outputs folder)."""


@dataclass
class Sample:
    id: str
    grid_size: int
    num_colors: int
    target: np.ndarray
    output: str
    protocol: str = "g2m"  # the protocol of the task that produced it: g2m_n09_c3 or g2m_paper_n09_c3
    finish_reason: str | None = None  # what the backend reported (doc.g2m.finish_reason), when it did

    @property
    def request_failed(self) -> bool:
        """No answer came for this sample (the request failed after its retries): it has no output to score."""
        return self.finish_reason == REQUEST_FAILED


@dataclass
class Run:
    folder: Path
    results_path: Path
    results: dict
    samples: list[Sample]
    incomplete: tuple[str, ...] = ()  # what the run recorded but its files do not hold (read with allow_partial)
    #: Rows whose text the file that carried them cut (a VLMEvalKit .xlsx cell at Excel's 32,767 characters):
    #: (id, characters kept). They are not samples: the model's answer is not in the file, so nothing is scored.
    cut: list[tuple[str, int]] = field(default_factory=list)
    others: tuple[str, ...] = ()  # the dates of the other runs in the same folder (results_<date>.json)

    def which(self) -> str:
        """One line naming the run read and, when the folder holds others, that it does and how to choose."""
        line = f"read the run {self.results_path.name} in {self.folder}"
        if not self.others:
            return line
        shown = ", ".join(self.others[-5:]) + (f" and {len(self.others) - 5} more" if len(self.others) > 5 else "")
        newest = " (the newest)" if self.results_path.name > results_name(self.others[-1]) else ""
        return (f"{line}{newest}; the folder holds {len(self.others)} other run(s) ({shown}): "
                "choose one with --run DATE")

    @property
    def harness(self) -> str:
        return str((self.results.get("g2m") or {}).get("harness") or "lm-eval")

    @property
    def model(self) -> str:
        cfg = self.results.get("config", {})
        return model_name(str(cfg.get("model", self.folder.name)), cfg.get("model_args"))
