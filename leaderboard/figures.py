"""The report's figures (matplotlib, written as PNG): accuracy against N, per-cell heatmaps with a patch grid,
colour confusion, patch alignment, and probe against end-to-end (the Digital Agnosia gap)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dataset_builder.plotting import pyplot as _plt
from dataset_builder.render import geometry
from dataset_builder.spec import DEFAULT_RESOLUTION, PALETTE

COLOURS = {3: "#c44e52", 5: "#4c72b0", 10: "#55a868"}


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path.name


def accuracy_vs_n(tasks: dict[tuple[int, int], dict], path: Path, probes: dict | None = None) -> str:
    """Cell accuracy and exact match against N, one line per palette size, with the chance line 1/C.

    ``probes`` maps (C, readout) -> {N: probe cell accuracy}, drawn on the same axes (the Digital Agnosia gap).
    """
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for c in sorted({c for _, c in tasks}):
        ns = sorted(n for n, cc in tasks if cc == c)
        col = COLOURS.get(c)
        for ax, key in zip(axes, ("cell_accuracy", "exact_match"), strict=True):
            vals = [tasks[(n, c)][key] for n in ns]
            lo = [tasks[(n, c)][f"{key}_ci"][0] for n in ns]
            hi = [tasks[(n, c)][f"{key}_ci"][1] for n in ns]
            ax.plot(ns, vals, marker="o", color=col, label=f"C={c} end-to-end")
            ax.fill_between(ns, lo, hi, color=col, alpha=0.15)
        axes[0].axhline(1 / c, color=col, linestyle=":", linewidth=1, label=f"chance 1/{c}")
    for (c, readout), curve in sorted((probes or {}).items()):
        ns = sorted(curve)
        axes[0].plot(ns, [curve[n] for n in ns], marker="s", linestyle="--", color=COLOURS.get(c),
                     label=f"C={c} probe ({readout})")
    for ax, title in zip(axes, ("cell accuracy", "exact match"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({n for n, _ in tasks}))
        ax.set_xticklabels([str(n) for n in sorted({n for n, _ in tasks})], fontsize=7)
        ax.set_xlabel("grid size N")
        ax.set_ylabel(title)
        ax.set_ylim(-0.02, 1.02)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(4, len(labels)), frameon=False)
    fig.tight_layout(rect=(0, 0.06 * ((len(labels) + 3) // 4), 1, 1))
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path.name


def heatmap(hm: np.ndarray, path: Path, title: str, patch: float | None = None,
            input_size: float = DEFAULT_RESOLUTION) -> str:
    """Per-cell accuracy drawn where the cells really are in the release image, with an optional patch grid."""
    plt = _plt()
    n = hm.shape[0]
    side = DEFAULT_RESOLUTION
    b = np.asarray(geometry(n).bounds, dtype=float)
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    mesh = ax.pcolormesh(b, b, hm, vmin=0, vmax=1, cmap="viridis")
    if patch:
        step = patch * side / input_size
        for x in np.arange(0, side + 1e-9, step):
            ax.axvline(x, color="white", linewidth=0.6, alpha=0.8)
            ax.axhline(x, color="white", linewidth=0.6, alpha=0.8)
    ax.set_xlim(0, side)
    ax.set_ylim(side, 0)
    ax.set_aspect("equal")
    ax.set_title(title + (f" (patch grid {patch:g} px at {input_size:g} px)" if patch else ""), fontsize=8)
    fig.colorbar(mesh, ax=ax, label="cell accuracy")
    return _save(fig, path)


def confusion(conf: np.ndarray, path: Path) -> str:
    """Row-normalised colour confusion, and how often each colour is predicted relative to how often it occurs."""
    plt = _plt()
    used = [i for i in range(conf.shape[0]) if conf[i].sum() > 0]
    names = [PALETTE[i].name for i in used]
    rows = conf[used][:, [*used, conf.shape[1] - 1]].astype(float)
    norm = rows / np.maximum(rows.sum(1, keepdims=True), 1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.3, 1]})
    im = axes[0].imshow(norm, vmin=0, vmax=1, cmap="magma")
    axes[0].set_xticks(range(len(used) + 1), [*names, "invalid"], rotation=45, fontsize=7)
    axes[0].set_yticks(range(len(used)), names, fontsize=7)
    axes[0].set_xlabel("predicted")
    axes[0].set_ylabel("true")
    fig.colorbar(im, ax=axes[0], label="share of the true colour's cells")
    predicted = conf[:, used].sum(0).astype(float)
    actual = conf[used].sum(1).astype(float)
    ratio = predicted / np.maximum(actual, 1) - 1
    axes[1].bar(names, ratio, color=[np.array(PALETTE[i].rgb) / 255 for i in used], edgecolor="black")
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set_ylabel("over (+) / under (-) prediction")
    axes[1].tick_params(axis="x", rotation=45, labelsize=7)
    return _save(fig, path)


def alignment(results: list[dict], path: Path) -> str:
    """Cell accuracy by the share of the cell that crosses patch boundaries, one line per patch size."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for res in results:
        pts = [(k, b["cell_accuracy"]) for k, b in enumerate(res["bins"]) if b["cell_accuracy"] is not None]
        corr = res["correlation"]
        ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o",
                label=f"patch {res['patch']:g} px" + (f" (r = {corr:+.2f})" if corr is not None else ""))
    if results:
        ax.set_xticks(range(len(results[0]["bins"])), [b["bin"] for b in results[0]["bins"]], fontsize=7)
    ax.set_xlabel("share of the cell outside its dominant patch")
    ax.set_ylabel("cell accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    return _save(fig, path)
