"""The report's figures: accuracy against N, one grid of per-cell heatmaps, colour confusion per palette size, patch
alignment within each grid size, and probe against end-to-end (the Digital Agnosia gap).

Every figure has a title and labelled axes, and is written as PNG (150 dpi) and SVG side by side (``svg=False``: the
PNG alone, for a page that shows only the PNG); the functions return the PNG's file name.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dataset_builder.grids.render import cell_layout
from dataset_builder.grids.spec import DEFAULT_RESOLUTION, PALETTE
from g2m_base.plotting import pyplot as _plt
from g2m_base.untrusted import plot
from leaderboard.reports.layout import PANEL_LINE, TITLE_Y, place, titled, write

COLORS = {3: "#c44e52", 5: "#4c72b0", 10: "#55a868"}


MARKERS = {3: "o", 5: "s", 10: "^"}
#: Each palette's points sit a little apart along N (a factor 2**offset on the log axis), so equal values stay visible.
X_OFFSETS = {3: -0.06, 5: 0.0, 10: 0.06}


def coinciding(curves: dict[int, list[float]]) -> list[list[int]]:
    """Groups of palette sizes whose curves are equal at every grid size (each group sorted, two or more)."""
    groups: list[list[int]] = []
    for c in sorted(curves):
        for g in groups:
            if len(curves[g[0]]) == len(curves[c]) and np.allclose(curves[g[0]], curves[c], rtol=0, atol=1e-9):
                g.append(c)
                break
        else:
            groups.append([c])
    return [g for g in groups if len(g) > 1]


def _same_note(name: str, groups: list[list[int]]) -> str:
    return "; ".join(" and ".join(f"C={c}" for c in g) + f" have the same {name}" for g in groups)


def accuracy_vs_n(tasks: dict[tuple[int, int], dict], path: Path, probes: dict | None = None, title: str = "",
                  svg: bool = True) -> str:
    """``draw_accuracy_vs_n``, written to ``path`` (PNG) and beside it as SVG; returns the PNG's name."""
    return write(draw_accuracy_vs_n(tasks, probes, title), path, svg=svg)


def draw_accuracy_vs_n(tasks: dict[tuple[int, int], dict], probes: dict | None = None, title: str = ""):
    """Cell accuracy and exact match against N, one line per palette size, with the chance line 1/C.

    Each palette has its own marker and sits a little apart along N, its 95% intervals drawn as capped bars per point
    (a shaded band of several palettes reads as one solid bar); a panel names the palettes whose curves are equal.
    ``probes`` maps (C, readout) -> {N: probe cell accuracy}, drawn on the same axes (the Digital Agnosia gap).
    """
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    palettes = sorted({c for _, c in tasks})
    title_lines = 1
    for ax, key, name in zip(axes, ("cell_accuracy", "exact_match"), ("cell accuracy", "exact match"), strict=True):
        curves = {}
        for c in palettes:
            ns = sorted(n for n, cc in tasks if cc == c)
            vals = np.array([tasks[(n, c)][key] for n in ns])
            ci = np.array([tasks[(n, c)][f"{key}_ci"] for n in ns]).reshape(-1, 2)
            err = np.clip(np.stack([vals - ci[:, 0], ci[:, 1] - vals]), 0, None)
            xs = np.array(ns, dtype=float) * 2 ** X_OFFSETS.get(c, 0.0)
            ax.errorbar(xs, vals, yerr=err, marker=MARKERS.get(c, "D"), markersize=4.5, color=COLORS.get(c),
                        capsize=2.5, elinewidth=0.9, linewidth=1.2, label=f"C={c} end-to-end")
            curves[c] = list(vals)
            if key == "cell_accuracy":
                ax.axhline(1 / c, color=COLORS.get(c), linestyle=":", linewidth=1, label=f"chance 1/{c}")
        note = _same_note(name, coinciding(curves))
        title_lines = max(title_lines, 2 if note else 1)
        ax.set_title(f"{name} (bars: 95% intervals)" + (f"\n{note}" if note else ""), fontsize=8, y=TITLE_Y)
    for (c, readout), curve in sorted((probes or {}).items()):
        ns = sorted(curve)
        axes[0].plot(ns, [curve[n] for n in ns], marker="s", linestyle="--", color=COLORS.get(c),
                     label=plot(f"C={c} probe ({readout})", 80))  # the readout comes from a result file
    sizes = sorted({n for n, _ in tasks})
    for ax, name in zip(axes, ("cell accuracy", "exact match"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(n) for n in sizes], fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("grid size N")
        ax.set_ylabel(name)
        ax.set_ylim(-0.03, 1.03)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(4, len(labels)), frameon=False)
    fig, top = titled(fig, title or "Accuracy against grid size", PANEL_LINE * title_lines)
    # below the panels: tick labels and the axis label (0.5 in), then the legend's rows (0.17 in each)
    place(fig, left=0.67, right=0.15, top=top, bottom=0.62 + 0.17 * ((len(labels) + 3) // 4), wspace=0.66)
    return fig


def _cell_ticks(ax, n: int) -> None:
    """Label the axes in cells (1..N at cell centres), though the cells are drawn where they are in the image."""
    g = cell_layout(n)
    centres = np.asarray(g.centres, dtype=float) + 0.5
    picks = sorted({0, n // 2, n - 1} if n > 4 else set(range(n)))
    ax.set_xticks(centres[picks], [str(i + 1) for i in picks], fontsize=6)
    ax.set_yticks(centres[picks], [str(i + 1) for i in picks], fontsize=6)


def heatmap_grid(hms: dict[int, np.ndarray], counts: dict[int, int], path: Path, title: str,
                 patch: float | None = None, input_size: float = DEFAULT_RESOLUTION, cols: int = 5,
                 svg: bool = True) -> str:
    """``draw_heatmap_grid``, written to ``path`` (PNG) and beside it as SVG; returns the PNG's name."""
    return write(draw_heatmap_grid(hms, counts, title, patch, input_size, cols), path, svg=svg)


#: The heatmap grid's layout in inches, fixed: every panel holds the same things (a title, ticks 1..N in two-digit
#: numbers, "row" and "column"), so their room is known in advance, and no layout engine has to measure the text of
#: fifteen panels to find it (that was most of the figure's cost). Panel side; room left of a panel (its row label
#: and ticks), right of it, above it (its title), below it (ticks and column label); the colour bar's band on the
#: right; a line of the title; the margin around all.
_SIDE, _LEFT, _RIGHT, _ABOVE, _BELOW, _BAR, _LINE, _MARGIN = 2.0, 0.5, 0.12, 0.3, 0.42, 0.85, 0.2, 0.08


def draw_heatmap_grid(hms: dict[int, np.ndarray], counts: dict[int, int], title: str, patch: float | None = None,
                      input_size: float = DEFAULT_RESOLUTION, cols: int = 5):
    """Per-cell accuracy for every grid size in one compact grid, each cell drawn where it is in the release image,
    axes in cell rows and columns, with an optional patch grid. Each panel gets the room its labels need
    (``_SIDE`` and the rest), so that one panel's axis labels never run into the next panel."""
    plt = _plt()
    from matplotlib.collections import LineCollection  # matplotlib is optional: imported once a figure is drawn

    ns = sorted(hms)
    cols = max(1, min(cols, len(ns)))
    rows = max(1, math.ceil(len(ns) / cols))
    suffix = f"; white lines: {patch:g}-px patches at {input_size:g} px" if patch else ""
    top = _MARGIN + _LINE * (title + suffix).count("\n") + _LINE + 0.1  # the title's lines
    cell_w, cell_h = _LEFT + _SIDE + _RIGHT, _ABOVE + _SIDE + _BELOW
    width, height = _MARGIN * 2 + cols * cell_w + _BAR, top + rows * cell_h + _MARGIN
    fig = plt.figure(figsize=(width, height))
    side = DEFAULT_RESOLUTION
    mesh = None
    for i, n in enumerate(ns):
        r, c = divmod(i, cols)
        x0 = _MARGIN + c * cell_w + _LEFT
        y0 = height - top - r * cell_h - _ABOVE - _SIDE
        ax = fig.add_axes((x0 / width, y0 / height, _SIDE / width, _SIDE / height))
        b = np.asarray(cell_layout(n).bounds, dtype=float)
        mesh = ax.pcolormesh(b, b, hms[n], vmin=0, vmax=1, cmap="viridis", rasterized=True)  # small SVGs
        if patch:  # one collection of lines, not an artist per line: 15 panels of 32 px patches are ~1,000 lines
            edges = np.arange(0, side + 1e-9, patch * side / input_size)
            lines = [((x, 0), (x, side)) for x in edges] + [((0, y), (side, y)) for y in edges]
            ax.add_collection(LineCollection(lines, colors="white", linewidths=0.4, alpha=0.7))
        ax.set_xlim(0, side)
        ax.set_ylim(side, 0)
        ax.set_aspect("equal")
        _cell_ticks(ax, n)
        ax.set_title(f"N={n} ({counts.get(n, 0)} grids)", fontsize=8, y=TITLE_Y)
        ax.set_xlabel("column", fontsize=7)
        ax.set_ylabel("row", fontsize=7)
    if mesh is not None:
        bar_h = 0.8 * rows * cell_h - _ABOVE - _BELOW if rows > 1 else _SIDE
        bar_y = height - top - (rows * cell_h + bar_h) / 2
        cax = fig.add_axes(((_MARGIN + cols * cell_w + 0.15) / width, bar_y / height, 0.15 / width, bar_h / height))
        fig.colorbar(mesh, cax=cax, label="cell accuracy")
    fig.suptitle(title + suffix, fontsize=10, y=1 - _MARGIN / height, va="top")
    return fig


def confusion(by_palette: dict[int, np.ndarray], biases: dict[int, dict], path: Path, title: str,
              svg: bool = True) -> str:
    """``draw_confusion``, written to ``path`` (PNG) and beside it as SVG; returns the PNG's name."""
    return write(draw_confusion(by_palette, biases, title), path, svg=svg)


def draw_confusion(by_palette: dict[int, np.ndarray], biases: dict[int, dict], title: str):
    """Per palette size: the row-normalised confusion (with an "invalid" column), and each colour's over- or
    under-prediction among the cells read as a palette colour, with the invalid rate apart."""
    plt = _plt()
    cs = sorted(by_palette)
    fig, axes = plt.subplots(len(cs), 2, figsize=(11, 3.6 * len(cs)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.3, 1]})
    fig, top = titled(fig, title, PANEL_LINE)
    # placed before the colour bars take their share of the left panels; below each row: tick labels turned 45
    # degrees and the axis label, then the next row's title
    place(fig, left=0.9, right=0.2, top=top, bottom=0.8, wspace=0.75, hspace=0.95)
    for (ax_conf, ax_bar), c in zip(axes, cs, strict=True):
        conf = by_palette[c].astype(float)
        names = [PALETTE[i].name for i in range(c)]
        norm = conf / np.maximum(conf.sum(1, keepdims=True), 1)
        im = ax_conf.imshow(norm, vmin=0, vmax=1, cmap="magma")
        ax_conf.set_xticks(range(c + 1), [*names, "invalid"], rotation=45, fontsize=7)
        ax_conf.set_yticks(range(c), names, fontsize=7)
        ax_conf.set_xlabel("predicted")
        ax_conf.set_ylabel("true")
        ax_conf.set_title(f"C={c}: confusion (rows sum to 1)", fontsize=8, y=TITLE_Y)
        fig.colorbar(im, ax=ax_conf, label="share of the true colour's cells")
        bias = biases[c]
        values = [v if v is not None else 0.0 for v in bias["bias"]]
        ax_bar.bar(names, values, color=[np.array(PALETTE[i].rgb) / 255 for i in range(c)], edgecolor="black")
        ax_bar.axhline(0, color="black", linewidth=0.8)
        top = max(0.25, 1.15 * max(map(abs, values), default=0))  # noise of a few per mille must look like noise
        ax_bar.set_ylim(-top, top)
        ax_bar.set_ylabel("predicted / actual - 1")
        rate = bias["invalid_rate"]
        ax_bar.set_title(f"C={c}: over/under prediction (valid cells); invalid: "
                         f"{'-' if rate is None else f'{rate:.1%}'}", fontsize=8, y=TITLE_Y)
        ax_bar.tick_params(axis="x", rotation=45, labelsize=7)
    return fig


def alignment(results: list[dict], path: Path, title: str, svg: bool = True) -> str:
    """``draw_alignment``, written to ``path`` (PNG) and beside it as SVG; returns the PNG's name."""
    return write(draw_alignment(results, title), path, svg=svg)


def draw_alignment(results: list[dict], title: str):
    """Per patch size: within each grid size, the accuracy of the more-crossed half of the cells minus that of the
    less-crossed half (0: alignment does not matter), with its 95% interval over grids where there is one. A bar whose
    interval holds 0 is drawn pale: no effect beyond the grids' noise. Sizes where every cell crosses alike are marked
    n/a."""
    from leaderboard.rescoring.patch_crossing import reads_as_none

    plt = _plt()
    cols = min(2, len(results))
    rows = math.ceil(len(results) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 3.2 * rows), squeeze=False, sharey=True)
    ends = [abs(v) for res in results for r in res["per_n"] if r["difference"] is not None
            for v in (r["difference"], *(r.get("difference_ci") or ()))]
    lim = min(1.05, max(0.1, 1.15 * max(ends, default=0)))  # one scale for every panel, intervals included
    for ax, res in zip(axes.flat, results, strict=False):
        ns = [r["grid_size"] for r in res["per_n"]]
        diffs = [r["difference"] for r in res["per_n"]]
        cis = [r.get("difference_ci") for r in res["per_n"]]
        pos = np.arange(len(ns))
        colours = ["none" if d is None else "#c9d4e6" if reads_as_none(ci) else "#4c72b0"
                   for d, ci in zip(diffs, cis, strict=True)]
        ax.bar(pos, [d if d is not None else 0.0 for d in diffs], color=colours, edgecolor="black")
        shown = [k for k, (d, ci) in enumerate(zip(diffs, cis, strict=True)) if d is not None and ci is not None]
        if shown:
            err = np.array([[diffs[k] - cis[k][0], cis[k][1] - diffs[k]] for k in shown]).T.clip(0, None)
            ax.errorbar(pos[shown], [diffs[k] for k in shown], yerr=err, fmt="none", ecolor="black",
                        elinewidth=0.8, capsize=2)
        for k, d in enumerate(diffs):
            if d is None:
                ax.text(k, 0.02 * lim, "n/a", ha="center", va="bottom", fontsize=7, color="#777", rotation=90)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylim(-lim, lim)
        ax.set_xticks(pos, [str(n) for n in ns], fontsize=6)
        ax.set_xlabel("grid size N")
        ax.set_title(f"patch {res['patch']:g} px at {res['input_size']:g} px; {weighted_mean(res)}", fontsize=8,
                     y=TITLE_Y)
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    for row in axes:
        row[0].set_ylabel("more - less crossed\ncells' accuracy")
    fig, top = titled(fig, title + "\nbars: 95% intervals over grids; pale: the interval holds 0 (no effect "
                       "beyond noise)", PANEL_LINE)
    # left: a two-line axis label and tick labels; between rows: the upper row's ticks and axis label
    place(fig, left=1.0, right=0.15, top=top, bottom=0.55, wspace=0.25, hspace=0.75)
    return fig


def weighted_mean(res: dict) -> str:
    """The overall difference in words: its value, its interval, and whether it is any effect at all."""
    from leaderboard.rescoring.patch_crossing import in_words

    return f"weighted mean {in_words(res['difference'], res.get('difference_ci'))}"
