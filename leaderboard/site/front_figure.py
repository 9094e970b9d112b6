"""The leaderboard's front-page figure: cell accuracy against grid size N, one line per ranked model, with the chance
line 1/C of each palette in view (the paper's headline picture, for every submission).

One static SVG per palette tab, written into the page when the site is built (no plotting library in the browser,
nothing fetched). The ten best models of the tab are drawn; every other ranked model is listed under them, and ticking
its box draws its line too (a few lines of script toggle what is already in the SVG). Lines follow the board's order
and colours follow rank, so the legend reads like the table above it. Drawn in a 1,000 x 430 box and scaled to the
page: at 1,100 px, beside the legend, its labels are about 12 px high. Every name is escaped: it is a submission's text.
"""

from __future__ import annotations

import math

from dataset_builder.configs import ZERO_SHOT_COLORS, ZERO_SHOT_SIZES
from g2m_base.untrusted import esc

TOP = 10  # lines drawn before any box is ticked
#: Ten colours told apart in print and by most colour-blind readers (Tableau 10); models past them cycle with dashes.
LINE_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
               "#bab0ac")
BASELINE_COLOR = "#666666"
W, H = 1000, 430
LEFT, RIGHT, TOP_PAD, BOTTOM = 70, 18, 16, 58

STYLE = """
.fig{display:flex;flex-wrap:wrap;gap:.5rem 1.2rem;align-items:flex-start;margin:1rem 0}
.fig svg{flex:1 1 640px;max-width:1000px;height:auto;font-family:inherit}
.fig svg text{font-size:16px;fill:#333}.fig .grid{stroke:#e6e6e6}.fig .axis{stroke:#555}
.fig .chance{stroke:#888;stroke-dasharray:2 4}.fig g.line polyline{fill:none;stroke-width:2.2}
.fig g.line[data-hidden]{display:none}.fig figcaption{flex-basis:100%;font-size:.85rem;color:#555}
.fig .legend{flex:0 1 260px;font-size:.85rem;line-height:1.5}.fig .legend label{display:block;white-space:nowrap;
overflow:hidden;text-overflow:ellipsis;max-width:260px;cursor:pointer}.fig .swatch{display:inline-block;width:1.6em;
height:0;border-top:3px solid;vertical-align:middle;margin:0 .35em}
"""

SCRIPT = """
document.querySelectorAll('.fig input[data-line]').forEach(function (box) {
  box.addEventListener('change', function () {
    var line = document.getElementById(box.getAttribute('data-line'));
    if (box.checked) { line.removeAttribute('data-hidden'); } else { line.setAttribute('data-hidden', ''); }
  });
});
"""


def _x(n: int) -> float:
    lo, hi = math.log2(ZERO_SHOT_SIZES[0]), math.log2(ZERO_SHOT_SIZES[-1])
    return LEFT + (math.log2(n) - lo) / (hi - lo) * (W - LEFT - RIGHT)


def _y(v: float) -> float:
    return TOP_PAD + (1 - v) * (H - TOP_PAD - BOTTOM)


def _style(rank: int, baseline: bool) -> tuple[str, str]:
    """(colour, dash pattern) of the line at ``rank`` (0 = best): baselines grey and dashed, others by rank."""
    if baseline:
        return BASELINE_COLOR, "6 4"
    return LINE_COLORS[rank % len(LINE_COLORS)], "" if rank < len(LINE_COLORS) else "8 3 2 3"


def _axes(view: str) -> list[str]:
    out = []
    for k in range(6):
        v = k / 5
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{_y(v):.1f}" y2="{_y(v):.1f}"/>'
                   f'<text x="{LEFT - 8}" y="{_y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    for n in ZERO_SHOT_SIZES:
        out.append(f'<line class="axis" x1="{_x(n):.1f}" x2="{_x(n):.1f}" y1="{H - BOTTOM}" y2="{H - BOTTOM + 5}"/>'
                   f'<text x="{_x(n):.1f}" y="{H - BOTTOM + 22}" text-anchor="middle">{n}</text>')
    out.append(f'<line class="axis" x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}"/>'
               f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP_PAD}" y2="{H - BOTTOM}"/>'
               f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">grid size N (log scale)</text>'
               f'<text transform="translate(18 {(TOP_PAD + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">'
               "cell accuracy</text>")
    for c in ZERO_SHOT_COLORS if view == "all" else (int(view[1:]),):
        y = _y(1 / c)
        out.append(f'<line class="chance" data-chance="{c}" x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text x="{LEFT + 6}" y="{y - 5:.1f}" style="fill:#777">chance 1/{c}</text>')
    return out


def figure(rows: list[dict], view: str, fig_id: str) -> str:
    """The figure for one palette tab: ``rows`` are the ranked rows (each with ``views[view]``: overall and by_n
    summaries), drawn best first by the view's cell accuracy, as the board ranks them."""
    ranked = sorted(rows, key=lambda r: -r["views"][view]["overall"]["cell_accuracy"])
    lines, legend = [], []
    for rank, r in enumerate(ranked):
        baseline = r["kind"] == "baseline"
        color, dash = _style(rank, baseline)
        by_n = r["views"][view]["by_n"]
        points = [(n, by_n[n]["cell_accuracy"]) for n in ZERO_SHOT_SIZES
                  if n in by_n and not math.isnan(by_n[n]["cell_accuracy"])]
        line_id = f"{fig_id}-line-{rank}"
        shown = rank < TOP
        name = esc(r["name"])
        coords = " ".join(f"{_x(n):.1f},{_y(v):.1f}" for n, v in points)
        marks = "".join(f'<circle cx="{_x(n):.1f}" cy="{_y(v):.1f}" r="2.6" fill="{color}"/>' for n, v in points)
        lines.append(f'<g class="line" id="{line_id}" data-model="{name}" data-rank="{rank + 1}"'
                     f'{"" if shown else " data-hidden"}><title>{name}</title>'
                     f'<polyline points="{coords}" stroke="{color}"'
                     f'{f" stroke-dasharray={chr(34)}{dash}{chr(34)}" if dash else ""}/>{marks}</g>')
        overall = r["views"][view]["overall"]["cell_accuracy"]
        legend.append(f'<label title="{name}"><input type="checkbox" data-line="{line_id}"'
                      f'{" checked" if shown else ""}><span class="swatch" style="border-color:{color}'
                      f'{";border-top-style:dashed" if dash else ""}"></span>{rank + 1}. {name} '
                      f'<span class="muted">{overall:.3f}</span></label>')
    more = len(legend) - TOP
    legend_html = "".join(legend[:TOP]) + (
        f"<details><summary>{more} more model{'s' if more > 1 else ''} (tick to draw)</summary>"
        + "".join(legend[TOP:]) + "</details>" if more > 0 else "")
    svg = (f'<svg viewBox="0 0 {W} {H}" role="img" aria-labelledby="{fig_id}-cap" '
           f'xmlns="http://www.w3.org/2000/svg">{"".join(_axes(view))}{"".join(reversed(lines))}</svg>')
    caption = ("Cell accuracy against grid size, one line per ranked model (the ten best drawn; tick a name to draw "
               "it or hide it), re-scored from the raw outputs; dotted: chance, 1/C.")
    return (f'<figure class="fig" id="{fig_id}">{svg}<div class="legend">{legend_html}</div>'
            f'<figcaption id="{fig_id}-cap">{caption}</figcaption></figure>')
