"""Pictures people would rather look at than read: the probe's per-cell accuracy heatmap and its training curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from g2m_base.plotting import pyplot


def plot_heatmap(heatmap: np.ndarray, path: Path, title: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.5), dpi=120)
    im = ax.imshow(heatmap, vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
    n = heatmap.shape[0]
    ticks = sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1})  # whole cells, counted from 1
    ax.set_xticks(ticks, [str(t + 1) for t in ticks])
    ax.set_yticks(ticks, [str(t + 1) for t in ticks])
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    fig.colorbar(im, ax=ax, label="cell accuracy")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_curve(history: list[dict], path: Path, chance: float) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    steps = [h["step"] for h in history]
    ax.plot(steps, [h["val_cell_accuracy"] for h in history], marker="o", label="validation")
    ax.axhline(chance, color="grey", linestyle="--", label=f"chance ({chance:.2f})")
    ax.set_xlabel("step")
    ax.set_ylabel("cell accuracy")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
