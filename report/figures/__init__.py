"""The figures of a report and of a board's model page: accuracy against N, per-cell heatmaps, colour confusion,
patch alignment. Each ``draw_*`` gives a ``Canvas`` (shapes in pixels, which tests read back); each writer below
writes it (``drawing.files.write``) as PNG (150 dpi) and, unless ``svg=False``, as SVG beside it, and returns the
PNG's file name.

They are drawn by the canvas, like every figure of ours (the probes' too, ``probing.figures``): these figures are the
same few kinds of shapes every time, and a plotting library spent most of the scoring commands' CPU time laying out
and drawing their text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dataset_builder.grids.spec import DEFAULT_RESOLUTION
from drawing.files import write
from report.figures.accuracy import draw_accuracy_vs_n
from report.figures.alignment import draw_alignment
from report.figures.confusion import draw_confusion
from report.figures.heatmaps import draw_heatmap_grid


def accuracy_vs_n(tasks: dict[tuple[int, int], dict], path: Path, probes: dict | None = None, title: str = "",
                  svg: bool = True) -> str:
    """``draw_accuracy_vs_n`` written to ``path``."""
    return write(draw_accuracy_vs_n(tasks, probes, title), path, svg)


def heatmap_grid(hms: dict[int, np.ndarray], counts: dict[int, int], path: Path, title: str,
                 patch: float | None = None, input_size: float = DEFAULT_RESOLUTION, cols: int = 5,
                 svg: bool = True) -> str:
    """``draw_heatmap_grid`` written to ``path``."""
    return write(draw_heatmap_grid(hms, counts, title, patch, input_size, cols), path, svg)


def confusion(by_palette: dict[int, np.ndarray], biases: dict[int, dict], path: Path, title: str,
              svg: bool = True) -> str:
    """``draw_confusion`` written to ``path``."""
    return write(draw_confusion(by_palette, biases, title), path, svg)


def alignment(results: list[dict], path: Path, title: str, svg: bool = True) -> str:
    """``draw_alignment`` written to ``path``."""
    return write(draw_alignment(results, title), path, svg)
