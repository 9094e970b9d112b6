"""Pictures people would rather look at than read: the probe's per-cell accuracy heatmap, its training curve, and a
sweep's cell accuracy by depth (tower -> projector -> LLM), which the report draws too."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from g2m_base.plotting import pyplot, write
from g2m_base.untrusted import plot


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
    write(fig, path, svg=False)


def plot_curve(history: list[dict], path: Path, chance: float, title: str = "") -> None:
    """``draw_curve`` written to ``path``."""
    write(draw_curve(history, chance, title), path, svg=False)


def draw_curve(history: list[dict], chance: float, title: str = ""):
    """Validation cell accuracy at each evaluation, the kept (best) one ringed, and the training loss at the same steps
    on its own axis. A probe is evaluated every ``eval_every`` steps, so a short run has few points: the title says
    how many and how often, rather than leaving three dots to look like a curve cut short."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=120, layout="constrained")
    steps = [h["step"] for h in history]
    val = [h["val_cell_accuracy"] for h in history]
    ax.plot(steps, val, marker="o", label="validation cell accuracy")
    if history:
        k = max(range(len(val)), key=lambda i: (val[i], -i))  # the first best: the one training keeps
        ax.plot([steps[k]], [val[k]], marker="o", markersize=11, markerfacecolor="none", markeredgecolor="#c44e52",
                linestyle="none", label=f"kept: step {steps[k]} ({val[k]:.3f})")
    ax.axhline(chance, color="grey", linestyle="--", label=f"chance ({chance:.2f})")
    if any("loss" in h for h in history):
        loss_ax = ax.twinx()
        loss_ax.plot(steps, [h.get("loss", np.nan) for h in history], marker=".", color="#dd8452", linewidth=1)
        loss_ax.set_ylabel("training loss (batch)", color="#dd8452", fontsize=8)
        loss_ax.tick_params(axis="y", labelsize=7, colors="#dd8452")
        loss_ax.set_ylim(bottom=0)
    ax.set_xlabel("step")
    ax.set_ylabel("cell accuracy")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=7)
    every = f"every {steps[0]} steps" if len(steps) > 1 else "once"
    ax.set_title(plot(title or "probe training", 90) + f"\n{len(steps)} validation evaluation"
                 f"{'s' if len(steps) != 1 else ''}, {every}", fontsize=8)
    return fig


STAGE_LABELS = {"tower": "vision tower", "projector": "projector", "llm": "LLM (image positions)"}
STAGE_TINTS = {"tower": "#eef3fb", "projector": "#fbf3e6", "llm": "#eef8ef"}


#: An interval shorter than this (in accuracy, on the 0..1.1 axis about 3 px at the page's size) hides behind its
#: marker: such intervals are said in the accuracy's legend entry instead of getting an entry of their own.
VISIBLE_INTERVAL = 0.02


def plot_sweep(points: list[dict], path: Path, title: str, chance: float, reference: dict | None = None) -> list[str]:
    """``draw_sweep`` written as PNG to ``path`` and as SVG beside it; returns both names."""
    plt = pyplot()
    plt.rcParams["svg.hashsalt"] = "g2m-sweep"  # the same sweep draws the same SVG bytes
    write(draw_sweep(points, title, chance, reference), path)
    return [path.name, path.with_suffix(".svg").name]


def draw_sweep(points: list[dict], title: str, chance: float, reference: dict | None = None):
    """Cell accuracy by depth, tower -> projector -> LLM on one axis: each point's test cell accuracy with its 95%
    interval (a capped bar per point) and exact match (crosses), the stages shaded and divided, chance (1/C) dashed,
    and with ``reference`` the model's own end-to-end cell accuracy at this N: the gap, layer by layer. The legend
    sits below the axes, so it never covers a point, and lists only what can be seen."""
    plt = pyplot()
    streams = [p for p in points if p["stage"] == "deepstack"]  # drawn apart, where they enter the LLM
    points = [p for p in points if p["stage"] != "deepstack"]
    x = np.arange(len(points))
    acc = np.array([p["cell_accuracy"] for p in points])
    lo = np.array([(p.get("cell_accuracy_ci") or [a, a])[0] for p, a in zip(points, acc, strict=True)])
    hi = np.array([(p.get("cell_accuracy_ci") or [a, a])[1] for p, a in zip(points, acc, strict=True)])
    fig, ax = plt.subplots(figsize=(max(6.0, min(16.0, 0.16 * len(points) + 4)), 4.8), dpi=120, layout="constrained")
    for stage in STAGE_LABELS:
        idx = [i for i, p in enumerate(points) if p["stage"] == stage]
        if idx:
            ax.axvspan(idx[0] - 0.5, idx[-1] + 0.5, color=STAGE_TINTS[stage], zorder=0)
            grid = points[idx[0]].get("feature_grid")
            label = STAGE_LABELS[stage] + (f"\n{grid[0]}x{grid[1]} tokens" if grid else "")
            ax.text((idx[0] + idx[-1]) / 2, 1.035, label, ha="center", va="bottom", fontsize=8)
            if idx[0] > 0:
                ax.axvline(idx[0] - 0.5, color="#555555", linestyle="--", linewidth=0.9)
    visible = bool(len(points)) and float(np.max(hi - lo)) >= VISIBLE_INTERVAL
    ax.errorbar(x, acc, yerr=np.clip(np.stack([acc - lo, hi - acc]), 0, None), fmt="none", ecolor="#4c72b0",
                elinewidth=0.9, capsize=2.5, alpha=0.8, label="95% interval" if visible else None)
    ax.plot(x, acc, marker="o", markersize=3.5, color="#4c72b0",
            label="probe cell accuracy" + ("" if visible else " (95% intervals within the markers)"))
    ax.plot(x, [p["exact_match"] for p in points], linestyle=":", marker="x", markersize=3.5, color="#55a868",
            label="probe exact match")
    for i, p in enumerate(points):
        if p.get("readout"):
            ax.plot([i], [p["cell_accuracy"]], marker="*", markersize=11, color="#dd8452", zorder=5,
                    label="the authors' read-outs (g2m probe)" if i == min(j for j, q in enumerate(points)
                                                                         if q.get("readout")) else None)
    for k, p in enumerate(streams):
        at = [i for i, q in enumerate(points) if q["stage"] == "llm" and q["layer"] == p["layer"]]
        proj = [i for i, q in enumerate(points) if q["stage"] == "projector"]
        xi = at[0] if at else (proj[0] + 0.5 if proj else len(points) - 0.5)
        ax.plot([xi], [p["cell_accuracy"]], marker="D", markersize=7, color="#8172b3", linestyle="none", zorder=6,
                label="DeepStack stream, where it enters the LLM" if k == 0 else None)
        ax.annotate(f"DS{p['layer']}", (xi, p["cell_accuracy"]), textcoords="offset points", xytext=(5, 4), fontsize=7,
                    color="#8172b3")
    ax.axhline(chance, color="grey", linestyle="--", linewidth=1, label=f"chance (1/C = {chance:.2f})")
    if reference:
        ax.axhline(reference["cell_accuracy"], color="#c44e52", linewidth=1.6,
                   label=f"end-to-end answer: {reference['cell_accuracy']:.3f} "
                         f"({plot(reference.get('source', 'run'), 40)})")
    ticks = [i for i, p in enumerate(points) if p["layer"] is None or len(points) <= 40 or p["layer"] % 5 == 0
             or i in (0, len(points) - 1)]
    ax.set_xticks(ticks, ["P" if points[i]["layer"] is None else str(points[i]["layer"]) for i in ticks], fontsize=7)
    ax.set_xlim(-0.5, len(points) - 0.5)
    ax.set_ylim(-0.04, 1.1)  # an exact match of 0 is drawn above the axis line, not on it
    ax.spines["top"].set_visible(False)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("depth: vision block -> projector (P) -> LLM decoder layer")
    ax.set_ylabel("test cell accuracy / exact match")
    width = int(fig.get_figwidth() * 16)  # characters of 9-point text across the figure: a long title wraps, never cut
    ax.set_title("\n".join(textwrap.wrap(plot(title, 140), width)), fontsize=9, pad=26)
    fig.legend(loc="outside lower center", ncol=2, fontsize=7, frameon=False)  # 3 columns run past a 6-inch figure
    return fig
