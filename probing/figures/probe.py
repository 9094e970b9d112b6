"""One probe's pictures: its per-cell test accuracy where each cell is in the grid, and its training curve."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from drawing.canvas import DPI, Canvas, Image, Marker
from drawing.colours import mapped
from drawing.files import write
from drawing.panel import Axes, colour_bar, figure_title, legend, nice_ticks, tick_labels, title_room

ACCURACY, KEPT, LOSS, CHANCE = "#4c72b0", "#c44e52", "#dd8452", "#808080"
DASHED = (3.7, 1.6)


def _title(text: str, width_in: float) -> str:
    """``text`` wrapped to the figure (10-point text, about 13 characters an inch): a long title wraps, never cut."""
    return "\n".join(textwrap.wrap(text, max(20, int(width_in * 13)))) or " "


def cell_ticks(n: int) -> tuple[list[float], list[str]]:
    """Ticks at cell centres in cell units, counted from 1: the first, last, middle and quarters."""
    picks = sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1})
    return [t + 0.5 for t in picks], [str(t + 1) for t in picks]


def draw_heatmap(heatmap: np.ndarray, title: str) -> Canvas:
    """The probe's test accuracy of every cell (row 1 at the top, as in the image), one colour bar from 0 to 1."""
    hm = np.asarray(heatmap, dtype=float)
    n = hm.shape[0]
    heading, side = _title(title, 5.0), 3.3
    top = title_room(heading) + 0.05
    canvas = Canvas(5.2, top + side + 0.62)
    figure_title(canvas, heading, size=8)
    ax = Axes(canvas, 0.75, top, side, side, (0, n), (0, n), yflip=True)
    pixels = max(1, round(ax.w / max(n, 1)))
    rgb = mapped(np.nan_to_num(hm, nan=0.0), "viridis")
    rgb[np.isnan(hm)] = 255  # a cell never seen in the test split: blank
    canvas.add(Image(ax.x0, ax.y0, ax.w, ax.h, np.repeat(np.repeat(rgb, pixels, 0), pixels, 1)))
    ax.frame()
    centres, labels = cell_ticks(n)
    ax.xticks(centres, labels, size=8)
    ax.yticks(centres, labels, size=8)
    ax.xlabel("column", size=8)
    ax.ylabel("row", size=8)
    colour_bar(canvas, 0.75 + side + 0.2, top, 0.15, side, "viridis", "cell accuracy", size=8)
    return canvas


def plot_heatmap(heatmap: np.ndarray, path: Path, title: str) -> None:
    """``draw_heatmap`` written to ``path`` (PNG only: a probe's folder is looked at, not printed)."""
    write(draw_heatmap(heatmap, title), path, svg=False)


def draw_curve(history: list[dict], chance: float, title: str = "") -> Canvas:
    """Validation cell accuracy at each evaluation, the kept (first best) one ringed, and the training loss at the
    same steps in a panel of its own (one metric per axis). A probe is evaluated every ``eval_every`` steps, so a
    short run has few points: the title says how many and how often, rather than leaving three dots to look like a
    curve cut short."""
    steps = [h["step"] for h in history]
    val = [h["val_cell_accuracy"] for h in history]
    losses = [h.get("loss", np.nan) for h in history]
    has_loss = any(np.isfinite(v) for v in losses)
    every = f"every {steps[0]} steps" if len(steps) > 1 else "once"
    heading = (_title(title or "probe training", 4.8) + f"\n{len(steps)} validation evaluation"
               f"{'s' if len(steps) != 1 else ''}, {every}")
    canvas = Canvas(5.0, 5.3 if has_loss else 3.9)
    top = figure_title(canvas, heading, size=8) + 0.12
    lo, hi = (min(steps), max(steps)) if steps else (0, 1)
    pad = 0.05 * (hi - lo)
    xlim = (lo - pad, hi + pad) if hi > lo else (0, 2 * max(hi, 1))  # one evaluation: its step mid-axis
    xt = nice_ticks(*xlim, 7)
    panel_h = 1.9 if has_loss else 2.2
    ax = Axes(canvas, 0.75, top, 4.05, panel_h, xlim, (0, 1.02))
    entries = [("validation cell accuracy", {"colour": ACCURACY, "marker": "o"})]
    if history:
        k = max(range(len(val)), key=lambda i: (val[i], -i))  # the first best: the one training keeps
        label = f"kept: step {steps[k]} ({val[k]:.3f})"
        canvas.add(Marker(float(ax.x(steps[k])), float(ax.y(val[k])), "o", 11, KEPT, label=label))  # a ring behind
        entries.append((label, {"colour": KEPT, "marker": "o", "width": 0.01}))
    ax.hline(chance, CHANCE, 1.0, DASHED, label=f"chance ({chance:.2f})")
    entries.append((f"chance ({chance:.2f})", {"colour": CHANCE, "dash": DASHED, "width": 1.0}))
    ax.curve(steps, val, ACCURACY, marker="o", label="validation cell accuracy")
    ax.frame()
    ax.xticks(xt, [f"{t:g}" for t in xt], size=8)
    yt = nice_ticks(0, 1, 6)
    ax.yticks(yt, tick_labels(yt), size=8)
    ax.ylabel("validation\ncell accuracy", size=8)
    bottom = ax
    if has_loss:
        peak = max(float(np.nanmax(losses)), 1e-9)
        lt = nice_ticks(0, peak, 4)
        loss_ax = Axes(canvas, 0.75, top + panel_h + 0.45, 4.05, 1.15, xlim, (0, max(peak, lt[-1]) * 1.05))
        loss_ax.curve(steps, losses, LOSS, width=1.0, marker="o", size=3, label="training loss (batch)")
        loss_ax.frame()
        loss_ax.xticks(xt, [f"{t:g}" for t in xt], size=8)
        loss_ax.yticks(lt, tick_labels(lt), size=8)
        loss_ax.ylabel("training loss\n(batch)", size=8)
        entries.append(("training loss (batch)", {"colour": LOSS, "marker": "o"}))
        bottom = loss_ax
    bottom.xlabel("step", size=8)
    legend(canvas, entries, canvas.width / 2, bottom.y0 + bottom.h + bottom.below + 0.3 * DPI, ncol=2)
    return canvas


def plot_curve(history: list[dict], path: Path, chance: float, title: str = "") -> None:
    """``draw_curve`` written to ``path`` (PNG only)."""
    write(draw_curve(history, chance, title), path, svg=False)

