"""The report's colour figures on scripted runs whose true answer is known: per-palette confusion, colour bias over
valid cells only, and every figure written as PNG and SVG of one canvas, hostile names shown as text; then figures
that tell the truth, read back from the canvas that was drawn (titles, markers, interval bars, legend entries against
drawn shapes, every text's box as the PNG draws it), and the probes' figures read back the same way."""

from __future__ import annotations

import re
from collections.abc import Callable
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.configs import ZERO_SHOT_SIZES
from drawing import canvas, raster
from g2m_base.untrusted import term
from leaderboard import front_figure, index_page
from probing.figures import probe as probe_figures
from probing.figures import sweep as sweep_figure
from report import figures
from report.report_page import _sections
from scoring.parsing import format_answer
from scoring.rescoring import patch_crossing
from scoring.rescoring.rescore import (
    NO_COLOUR,
    Cells,
    cell_outcomes,
    color_bias,
    confusion_by_palette,
    heatmaps,
    score_output,
)

SVG = "{http://www.w3.org/2000/svg}"


def _rows(num_colors: int, answer_of, grids: int = 40, n: int = 6, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(grids):
        target = rng.integers(0, num_colors, (n, n))
        out.append(score_output(f"zs-n{n:02d}-c{num_colors}-{k:04d}", answer_of(target, rng), target, num_colors))
    return out


def _with_missing_cells(target: np.ndarray, rng) -> str:
    """Every cell it writes is right; 40% of the rows are simply missing (unreadable, not a colour)."""
    n = len(target)
    return format_answer(target[: n - round(0.4 * n)])


def test_missing_cells_do_not_count_as_under_predicting_any_color():
    rows = _rows(5, _with_missing_cells)
    conf = confusion_by_palette(rows)[5]
    bias = color_bias(conf)
    assert bias["bias"] == pytest.approx([0.0] * 5, abs=1e-12)  # every valid cell was read right
    assert bias["rates"] == pytest.approx({"other value": 0.0, "missing": 2 / 6, "unparseable": 0.0})  # 2 of 6 rows
    old = conf[:, :5].sum(0) / conf.sum(1) - 1  # the pooled bar this replaces: every colour "under-predicted"
    assert np.all(old < -0.3)


def test_a_color_the_model_prefers_is_over_predicted_among_valid_cells():
    def likes_red(target, rng):
        pred = target.copy()
        pred[rng.random(target.shape) < 0.3] = 1
        return format_answer(pred)

    bias = color_bias(confusion_by_palette(_rows(3, likes_red))[3])
    assert bias["bias"][1] > 0.3 and bias["bias"][0] < -0.1 and bias["bias"][2] < -0.1
    assert bias["rates"] == {"other value": 0.0, "missing": 0.0, "unparseable": 0.0}


def test_each_palette_gets_its_own_confusion_and_a_value_outside_it_is_another_value():
    rand = lambda t, rng: format_answer(rng.integers(0, 10, t.shape))  # noqa: E731  (values past the palette)
    by_c = confusion_by_palette(_rows(3, rand) + _rows(10, rand, seed=1))
    assert sorted(by_c) == [3, 10] and by_c[3].shape == (3, 6) and by_c[10].shape == (10, 13)
    assert by_c[3][:, 4:].sum() == 0  # nothing missing, nothing unparseable
    share_invalid = by_c[3][:, 3].sum() / by_c[3].sum()
    assert 0.6 < share_invalid < 0.8  # 7 of 10 values are not C=3 colours
    rows = by_c[10] / by_c[10].sum(1, keepdims=True)
    assert np.allclose(rows[:, :10], 0.1, atol=0.05)  # uniform within the palette: no palette blocks


@pytest.mark.parametrize("answer", [
    "[[0, 1, 2], [2, 1, 0], [1, 1, 1]]",  # N x N, in the palette
    "[[0, 7, 2], [2, -1, 0], [1, 1, 99999999999999999999999]]",  # outside the palette, negative, past int64
    "[[0, 1], [2, 1, 0, 5]]",  # ragged and short: missing cells
    "[[9223372036854775807, 1, 2], [2, 1, 0], [1, 1, 1]]",  # int64's largest
    "no matrix",  # a parse failure: every cell unparseable
    "[[0, 1, 2], [2, 1",  # cut inside its second row: missing cells, not colours
])
def test_the_confusion_counts_each_cell_once_where_it_was_read(answer):
    target = np.array([[0, 1, 2], [2, 1, 0], [1, 2, 0]])
    row = score_output("zs-n03-c3-0000", answer, target, 3)
    conf = confusion_by_palette([row])[3]
    want = np.zeros((3, 6), dtype=np.int64)  # cell by cell, as a reader would count them
    read = row.score.matrix
    for r in range(3):
        for c in range(3):
            if row.score.parse_failed:
                column = 5
            elif r < len(read) and c < len(read[r]):
                v = read[r][c]
                column = v if 0 <= v < 3 else 3
            else:
                column = 4
            want[target[r, c], column] += 1
    assert conf.tolist() == want.tolist() and conf.dtype == np.int64 and conf.sum() == 9


def _figure_inputs():
    """Every report figure's input from scripted rows: palettes 3 and 5, right and partly missing answers."""
    rows = _rows(3, lambda t, rng: format_answer(t)) + _rows(5, _with_missing_cells)
    outcomes = cell_outcomes(rows)
    hms = heatmaps(outcomes)
    counts = {n: 80 for n in hms}
    conf = confusion_by_palette(rows)
    return outcomes, hms, counts, conf, {c: color_bias(m) for c, m in conf.items()}


def test_every_figure_is_png_and_svg_of_one_canvas(tmp_path):
    outcomes, hms, counts, conf, bias = _figure_inputs()
    names = [figures.heatmap_grid(hms, counts, tmp_path / "h.png", "title", 16),
             figures.confusion(conf, bias, tmp_path / "c.png", "title"),
             figures.alignment([patch_crossing.alignment(outcomes, p) for p in (14, 16)], tmp_path / "a.png",
                               "title"),
             figures.accuracy_vs_n(_tasks(False), tmp_path / "n.png", title="title")]
    for name in names:
        png, svg = tmp_path / name, (tmp_path / name).with_suffix(".svg")
        with Image.open(png) as im:
            im.load()
            assert im.format == "PNG" and im.mode == "RGB" and im.info["dpi"] == pytest.approx((150, 150), abs=0.02)
            pixels = np.asarray(im)
        root = ElementTree.parse(svg).getroot()  # well-formed XML
        w, h = (float(v) for v in root.get("viewBox").split()[2:])
        assert (w, h) == (pixels.shape[1], pixels.shape[0])  # one canvas, two drawings of it
        assert any(t.text.startswith("title") for t in root.iter(f"{SVG}text"))  # the title is in the figure
        assert (pixels < 100).all(axis=2).sum() > 500  # text and frames drawn in black: not a blank page


def test_a_figure_is_the_same_bytes_every_time(tmp_path):
    _, hms, counts, _, _ = _figure_inputs()
    for k in (1, 2):
        figures.heatmap_grid(hms, counts, tmp_path / f"{k}.png", "title", 16)
    assert (tmp_path / "1.png").read_bytes() == (tmp_path / "2.png").read_bytes()
    assert (tmp_path / "1.svg").read_bytes() == (tmp_path / "2.svg").read_bytes()


HOSTILE = ["<script>alert(1)</script> & \"'", "a\x1b[31mred\u202e", "$\\bad{$ \\frac", "]]><!--"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_in_a_title_is_text_in_the_svg_never_markup(tmp_path, name):
    figures.accuracy_vs_n(_tasks(True), tmp_path / "n.png", title=f"{term(name, 60)}: accuracy against grid size")
    raw = (tmp_path / "n.svg").read_text()
    assert "<script" not in raw and "<!--" not in raw and "\x1b" not in raw
    texts = [t.text or "" for t in ElementTree.parse(tmp_path / "n.svg").getroot().iter(f"{SVG}text")]
    assert f"{term(name, 60)}: accuracy against grid size" in texts  # shown as written, escapes and all


# --- figures that tell the truth: what is drawn, read back from the canvas ----------------------------------------

SIZES = (5, 8, 9, 16, 32, 64)


def _task(em: float, cell: float, n: int = 15) -> dict:
    """A task's summary with Wilson-like intervals wide enough to see (15 grids)."""
    return {"exact_match": em, "exact_match_ci": (max(0.0, em - 0.2), min(1.0, em + 0.25)),
            "cell_accuracy": cell, "cell_accuracy_ci": (max(0.0, cell - 0.03), min(1.0, cell + 0.03)), "n": n}


def _tasks(same: bool) -> dict:
    """Exact match 0 past N = 8 for every palette; cell accuracy equal across palettes when ``same``."""
    return {(n, c): _task(1.0 if n <= 8 else 0.0, 0.9 - 0.01 * n * (1 if same else c / 5))
            for n in SIZES for c in (3, 5, 10)}


def _labelled(fig, kind) -> dict[str, list]:
    """Label -> the shapes of ``kind`` on the canvas ``fig`` that carry it."""
    out: dict[str, list] = {}
    for shape in fig.shapes:
        if isinstance(shape, kind) and getattr(shape, "label", ""):
            out.setdefault(shape.label, []).append(shape)
    return out


def _overlaps(a, b) -> bool:
    """Boxes (x0, y0, x1, y1) that share some area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _apart(p: list, q: list) -> bool:
    """Two convex outlines (corners in order) that share no area: some edge's normal separates them."""
    for poly in (p, q):
        for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True):
            nx, ny = y1 - y0, x0 - x1
            a, b = [nx * x + ny * y for x, y in p], [nx * x + ny * y for x, y in q]
            if max(a) <= min(b) + 1e-6 or max(b) <= min(a) + 1e-6:
                return True
    return False


@pytest.mark.parametrize("same", [True, False])
def test_palettes_with_equal_curves_stay_apart_and_are_named(same):
    fig = figures.draw_accuracy_vs_n(_tasks(same), title="m: accuracy against grid size\npaper protocol (...)")
    markers = _labelled(fig, canvas.Marker)
    # exact match is equal for every palette: three marker shapes, each palette's points a little apart along N
    curves = {c: markers[f"C={c} end-to-end"] for c in (3, 5, 10)}
    assert len({m[0].shape for m in curves.values()}) == 3
    assert all(len(m) == 2 * len(SIZES) for m in curves.values())  # both panels
    xs = {c: tuple(round(m.x, 3) for m in ms) for c, ms in curves.items()}
    assert len(set(xs.values())) == 3 and all(min(x) > 0 for x in xs.values())
    texts = fig.texts()
    assert "C=3 and C=5 and C=10 have the same exact match" in texts
    assert ("C=3 and C=5 and C=10 have the same cell accuracy" in texts) is same
    assert "paper protocol (...)" in texts


def test_accuracy_intervals_are_capped_bars_per_point_not_a_band():
    fig = figures.draw_accuracy_vs_n(_tasks(True))
    assert not [s for s in fig.shapes if isinstance(s, canvas.Rect) and s.fill]  # no shaded band
    lines = _labelled(fig, canvas.Lines)
    bars, caps = lines["interval"], lines["cap"]
    assert len(bars) == 6 and all(len(b.points) == 2 * len(SIZES) for b in bars)  # one bar per point, 3 x 2 panels
    assert len(caps) == 6 and all(len(c.points) == 4 * len(SIZES) for c in caps)  # a cap at each end of each bar
    assert all(p[0] == q[0] for b in bars for p, q in zip(b.points[::2], b.points[1::2], strict=True))  # upright
    legend = [label.removeprefix("legend: ") for label in lines if label.startswith("legend: ")]
    drawn = set(lines) | set(_labelled(fig, canvas.Marker))
    assert len(legend) == 6 and all(text in drawn for text in legend)  # every entry is something on the axes


def test_a_point_without_an_interval_gets_no_bar_and_a_missing_value_breaks_its_line(tmp_path):
    """One grid has no interval (NaN, ``stats.bootstrap_mean``): that point gets no bar, the others keep theirs; a
    value that is missing breaks the line instead of drawing it to nowhere; both files stay well-formed."""
    tasks = _tasks(False)
    tasks[(8, 3)] = {**tasks[(8, 3)], "cell_accuracy_ci": (float("nan"), float("nan"))}
    tasks[(16, 5)] = {**tasks[(16, 5)], "cell_accuracy": float("nan")}
    fig = figures.draw_accuracy_vs_n(tasks)
    bars = {len(b.points) // 2 for b in _labelled(fig, canvas.Lines)["interval"]}
    assert bars == {len(SIZES), len(SIZES) - 1}
    c5 = [ln for ln in _labelled(fig, canvas.Lines)["C=5 end-to-end"]]
    assert sorted(len(ln.points) for ln in c5) == [2, 3, len(SIZES)]  # cell accuracy split at N = 16; exact whole
    figures.write(fig, tmp_path / "n.png")
    assert not re.search(r"\bnan\b", (tmp_path / "n.svg").read_text(), re.IGNORECASE)  # no coordinate is NaN
    ElementTree.parse(tmp_path / "n.svg")


def _every_figure() -> dict[str, Callable[[], object]]:
    """How to draw each figure of a full release's run (15 grid sizes, 3 palettes, 4 patch sizes, probes): a test
    draws only the one it checks."""
    rng = np.random.default_rng(0)
    hms = {n: rng.random((n, n)) for n in ZERO_SHOT_SIZES}
    counts = dict.fromkeys(hms, 300)
    conf = {c: rng.integers(0, 50, (c, c + len(NO_COLOUR))) for c in (3, 5, 10)}
    outcomes = {n: Cells(rng.random((300, n, n)) < hms[n], np.ones((300, n, n), bool), np.ones(300, bool))
                for n in ZERO_SHOT_SIZES}
    bias = {c: color_bias(m) for c, m in conf.items()}
    probes = {(3, "vision"): {n: 0.99 for n in (20, 32)}, (10, "llm layer 7"): {20: 0.9}}
    tasks = {(n, c): _task(0.0, 0.5) for n in ZERO_SHOT_SIZES for c in (3, 5, 10)}
    title = "model/name: {}\nG2M protocol".format
    sweep_title = "model/name on probe_n20_c3 (linear probe): where the grid is lost"
    curve = [{"step": s, "loss": 2 / s, "val_cell_accuracy": 0.5 + s / 2000} for s in range(50, 501, 50)]
    return {
        "accuracy": lambda: figures.draw_accuracy_vs_n(tasks, probes, title("accuracy")),
        "heatmaps": lambda: figures.draw_heatmap_grid(hms, counts, title("accuracy of each cell"), 16),
        "confusion": lambda: figures.draw_confusion(conf, bias, title("colour confusion")),
        "alignment": lambda: figures.draw_alignment([patch_crossing.alignment(outcomes, p) for p in (14, 16, 28, 32)],
                                                    title("patch alignment")),
        "sweep": lambda: sweep_figure.draw_sweep(_sweep_points(), sweep_title, 1 / 3,
                                                 {"cell_accuracy": 0.41, "source": "org/run"}),
        "curve": lambda: probe_figures.draw_curve(curve, 1 / 3, "enc vision cfg: probe training"),
        "probe heatmap": lambda: probe_figures.draw_heatmap(hms[20], "enc vision probe_n20_c3: test cell accuracy 0.5"),
    }


def _sweep_points() -> list[dict]:
    """A 12-block tower, its projector, a DeepStack stream and a 28-layer LLM, read-outs starred."""
    def point(stage, layer, a, readout=None):
        return {"point": f"{stage}.{layer}", "stage": stage, "layer": layer, "readout": readout,
                "feature_grid": [16, 16], "cell_accuracy": a, "cell_accuracy_ci": [a - 0.03, a + 0.02],
                "exact_match": a / 3}
    return [*(point("tower", i, 0.95, "vision" if i == 11 else None) for i in range(12)), point("projector", None, 0.9),
            point("deepstack", 1, 0.7), *(point("llm", i, 0.88 - 0.015 * i, "llm" if i == 27 else None)
                                          for i in range(28))]


@pytest.mark.parametrize("name", ["accuracy", "heatmaps", "confusion", "alignment", "sweep", "curve", "probe heatmap"])
def test_no_text_of_a_figure_runs_into_another_or_off_the_page(name):
    """Every label, tick label, title and legend entry of a full release's figures, as drawn: no two overlap (one
    panel's row label never runs into the panel to its left, a turned tick label never into the axis label), and
    each lies inside the figure."""
    fig = _every_figure()[name]()
    boxes = [(t.text, raster.corners(t)) for t in fig.shapes if isinstance(t, canvas.Text) and t.text.strip()]
    assert len(boxes) >= 20
    for text, box in boxes:
        assert all(0 <= x <= fig.width and 0 <= y <= fig.height for x, y in box), text
    for k, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[k + 1:]:
            assert _apart(box_a, box_b), (a, b)
    frames = [[(r.x, r.y), (r.x + r.w, r.y), (r.x + r.w, r.y + r.h), (r.x, r.y + r.h)] for r in fig.shapes
              if isinstance(r, canvas.Rect) and r.edge and not r.fill]
    assert frames
    for text, box in boxes:  # a text lies inside a panel (a bar's "n/a") or clear of it, never across its frame
        for f in frames:
            inside = all(f[0][0] <= x <= f[1][0] and f[0][1] <= y <= f[2][1] for x, y in box)
            assert inside or _apart(box, f), text


def test_no_correlation_over_an_empty_half():
    """At N = 9 with 16-px patches every cell but a few crosses by the largest share: the "more crossed" half is
    empty, so there is no difference and no r either (the table printed r = -0.036 beside a '-')."""
    rng = np.random.default_rng(1)
    res = patch_crossing.alignment({n: Cells(rng.random((5, n, n)) < 0.5, np.ones((5, n, n), bool), np.ones(5, bool))
                                    for n in (9, 10)}, 16)
    by_n = {r["grid_size"]: r for r in res["per_n"]}
    assert by_n[9]["more_crossed_accuracy"] is None and by_n[9]["difference"] is None
    assert by_n[9]["correlation"] is None
    assert by_n[10]["difference"] is not None and by_n[10]["correlation"] is not None  # both halves: both numbers
    report = {"patch_alignment": [res], "colour_bias": {}, "protocol": "g2m", "protocols": {}, "tasks": [],
              "digital_agnosia_gap": []}
    overall = {k: 0.5 for k in ("n", "exact_match", "cell_accuracy", "parse_failed", "truncated", "request_failed")}
    overall.update({f"{k}_ci": (0.4, 0.6) for k in ("exact_match", "cell_accuracy", "parse_failed", "truncated",
                                                     "request_failed")})
    section = next(s for s in _sections(report, {}, overall, type("O", (), {"input_size": 512.0})())
                   if s[0] == "Patch alignment")
    row9 = next(r for r in section[3] if r[1] == "9")
    assert row9[5:7] == ["-", "n/a"] and row9[8] == "-"  # more crossed, difference (no halves to compare), r


def _points(width: float, em: float = 0.0) -> list[dict]:
    return [{"point": f"p{i}", "stage": stage, "layer": layer, "readout": None, "feature_grid": [4, 4],
             "cell_accuracy": a, "cell_accuracy_ci": [a - width / 2, a + width / 2], "exact_match": em}
            for i, (stage, layer, a) in enumerate([("tower", 0, 0.95), ("tower", 1, 0.96), ("projector", None, 0.94),
                                                   ("llm", 0, 0.5), ("llm", 1, 0.35)])]


@pytest.mark.parametrize("width, interval_in_legend", [(0.004, False), (0.1, True)])
def test_the_sweep_legend_lists_only_what_can_be_seen(width, interval_in_legend):
    fig = sweep_figure.draw_sweep(_points(width, em=0.2), "enc on cfg: probe by depth", 1 / 3,
                                  {"cell_accuracy": 0.4, "source": "r"})
    lines, markers = _labelled(fig, canvas.Lines), _labelled(fig, canvas.Marker)
    legend = [label.removeprefix("legend: ") for label in lines if label.startswith("legend: ")]
    drawn = set(lines) | set(markers)
    assert all(text in drawn or text == "95% interval" and "interval" in drawn for text in legend), (legend, drawn)
    assert ("95% interval" in legend) is interval_in_legend
    assert ("interval" in lines) is interval_in_legend  # no bars hidden behind their markers
    assert any(t.startswith("probe cell accuracy") for t in legend) and "probe exact match" in legend
    frames = sorted((r for r in fig.shapes if isinstance(r, canvas.Rect) and r.edge and not r.fill), key=lambda r: r.y)
    cell, exact = frames  # one metric per panel: cell accuracy above, exact match below
    em = markers["probe exact match"]
    assert len(em) == 5 and all(exact.y < m.y < exact.y + exact.h for m in em)  # 0 is drawn above the axis line
    assert all(cell.y < m.y < cell.y + cell.h for m in markers[next(t for t in legend if t.startswith("probe cell"))])
    if interval_in_legend:
        assert len(lines["interval"][0].points) == 2 * 5  # intervals as a capped bar per point
    entries = [s for s in fig.shapes if isinstance(s, canvas.Lines) and s.label.startswith("legend: ")]
    assert min(y for e in entries for _, y in e.points) > exact.y + exact.h  # the legend is below both panels
    assert "probe cell accuracy" in fig.texts() and "probe exact match" in fig.texts()


def test_the_probe_curve_has_a_title_and_says_how_often_it_was_evaluated():
    history = [{"step": s, "loss": 1 / s, "val_cell_accuracy": a} for s, a in ((50, 0.6), (100, 0.9), (120, 0.85))]
    fig = probe_figures.draw_curve(history, 1 / 3, "enc vision cfg: probe training")
    texts = fig.texts()
    assert texts[0].startswith("enc vision cfg: probe training") and "3 validation evaluations, every 50 steps" in texts
    markers, lines = _labelled(fig, canvas.Marker), _labelled(fig, canvas.Lines)
    assert list(m for m in markers if m.startswith("kept")) == ["kept: step 100 (0.900)"]
    legend = [label.removeprefix("legend: ") for label in lines if label.startswith("legend: ")]
    assert set(legend) == {"validation cell accuracy", "kept: step 100 (0.900)", "chance (0.33)",
                           "training loss (batch)"}
    assert all(text in set(lines) | set(markers) for text in legend)
    frames = [r for r in fig.shapes if isinstance(r, canvas.Rect) and r.edge and not r.fill]
    assert len(frames) == 2  # the loss on its own axis
    assert len(probe_figures.draw_curve(history[:1], 1 / 3).texts()) > 5  # one evaluation still draws


def _board_row(name: str, cell: float, em_by_n: dict[int, float]) -> dict:
    by_n = {n: {"cell_accuracy": cell, "exact_match": em_by_n.get(n, 0.0)} for n in ZERO_SHOT_SIZES}
    return {"name": name, "kind": "submission", "views": {"all": {"overall": {"cell_accuracy": cell}, "by_n": by_n}}}


def test_the_front_figure_names_lines_drawn_on_one_another_and_gives_them_other_markers():
    rows = [_board_row("a", 1.0, {}), _board_row("b", 1.0, {}), _board_row("c", 0.5, {}), _board_row("d", 0.2, {})]
    f = front_figure.figure(rows, "all", "figure-all")
    assert "Drawn on one another (the same cell accuracy at every N): a and b." in f["caption"]
    assert "G2M protocol" in f["caption"]
    shapes = [line["marks"][0]["shape"] for line in f["lines"]]
    assert len(set(shapes)) == 4
    f = front_figure.figure(rows[1:], "all", "figure-all")
    assert "Drawn on one another" not in f["caption"]


def test_the_boards_sentence_on_exact_match_is_computed_from_its_rows():
    rows = [_board_row("oracle", 1.0, dict.fromkeys(ZERO_SHOT_SIZES, 1.0)), _board_row("m", 0.7, {9: 0.733})]
    assert index_page.exact_note(rows) == "past N = 8, the highest here is 1.000, oracle at N = 9"
    assert index_page.exact_note(rows[1:]) == "past N = 8, the highest here is 0.733, m at N = 9"
    assert index_page.exact_note([]) == ""


# --- panels with nothing to show say so; the sweep map at 2x, with its n and one metric per axis ---------------------

def _in(box: canvas.Rect, x: float) -> bool:
    return box.x <= x <= box.x + box.w


def _frames(fig) -> list:
    """The panels' frames (edge only), left to right, top to bottom."""
    return sorted((r for r in fig.shapes if isinstance(r, canvas.Rect) and r.edge and not r.fill),
                  key=lambda r: (r.y, r.x))


def test_an_exact_match_of_0_everywhere_is_said_not_drawn_as_intervals():
    """Every task's exact match 0 (Wilson intervals 0 to 0.43 at 6 grids): the exact match panel says so in words and
    draws no interval, no cap and no marker; the cell accuracy panel beside it is drawn as ever."""
    tasks = {(n, c): {**_task(0.0, 0.4), "exact_match_ci": (0.0, 0.43)} for n in SIZES for c in (3, 5, 10)}
    fig = figures.draw_accuracy_vs_n(tasks, title="m: accuracy against grid size")
    cell, exact = _frames(fig)[:2]
    assert cell.x < exact.x
    assert "exact match is 0 on every task" in fig.texts() and "(no grid transcribed whole)" in fig.texts()
    message = next(t for t in fig.shapes if isinstance(t, canvas.Text) and t.text == "exact match is 0 on every task")
    assert _in(exact, message.x) and exact.y < message.y < exact.y + exact.h  # centred in its panel
    lines = _labelled(fig, canvas.Lines)
    marks = [(ln, x) for key in ("interval", "cap") for ln in lines[key] for x, _ in ln.points]
    assert marks and not [x for _, x in marks if _in(exact, x)]  # no bar in the exact match panel
    assert all(_in(cell, x) for _, x in marks)  # the cell accuracy panel keeps its intervals
    markers = [m for ms in _labelled(fig, canvas.Marker).values() for m in ms]
    assert not [m for m in markers if _in(exact, m.x) and exact.y < m.y < exact.y + exact.h]
    assert not any("same exact match" in t for t in fig.texts())  # no note on curves that are not drawn
    assert "exact match" in fig.texts()  # the panel keeps its title


def test_a_figure_without_data_says_no_data():
    fig = figures.draw_accuracy_vs_n({}, title="m: accuracy against grid size")
    assert fig.texts().count("no data") == 2
    assert not [s for s in fig.shapes if isinstance(s, canvas.Marker)]
    assert not [s for s in fig.shapes if isinstance(s, canvas.Lines) and s.label.startswith("legend: ")]


def test_a_sweep_whose_exact_match_is_0_at_every_depth_says_so():
    fig = sweep_figure.draw_sweep(_points(0.1), "enc on cfg: probe by depth", 1 / 3, n=30)
    cell, exact = _frames(fig)[:2]
    assert sweep_figure.NO_EXACT in fig.texts()
    message = next(t for t in fig.shapes if isinstance(t, canvas.Text) and t.text == sweep_figure.NO_EXACT)
    assert exact.y < message.y < exact.y + exact.h
    markers = _labelled(fig, canvas.Marker)
    assert "probe exact match" not in markers and not any(ln.label == "probe exact match"
                                                          for ln in fig.shapes if isinstance(ln, canvas.Lines))
    legend = [s.label for s in fig.shapes if isinstance(s, canvas.Lines) and s.label.startswith("legend: ")]
    assert "legend: probe exact match" not in legend  # the legend names only what is drawn
    assert all(cell.y < m.y < cell.y + cell.h for ms in markers.values() for m in ms)


def test_the_sweep_map_is_drawn_at_2x_gives_n_and_names_one_metric_per_axis(tmp_path):
    fig = sweep_figure.draw_sweep(_points(0.1, em=0.2), "enc on cfg: probe by depth", 1 / 3, n=30)
    assert fig.zoom == 2
    assert any("n = 30 test grids" in t for t in fig.texts())
    labels = [t.text for t in fig.shapes if isinstance(t, canvas.Text) and t.rotation == 90]
    cell_label = [t for t in labels if "accuracy" in t or "match" in t]
    assert cell_label == ["probe cell accuracy", "probe exact match"]  # one metric per axis, each label one metric
    assert all(("cell accuracy" in t) != ("exact match" in t) for t in cell_label)
    names = sweep_figure.plot_sweep(_points(0.1, em=0.2), tmp_path / "sweep.png", "t", 1 / 3, n=30)
    assert names == ["sweep.png", "sweep.svg"]
    drawn = sweep_figure.draw_sweep(_points(0.1, em=0.2), "t", 1 / 3, n=30)
    with Image.open(tmp_path / "sweep.png") as im:
        assert im.size == (2 * drawn.width, 2 * drawn.height) and im.size[0] >= 1440  # device pixels: 2x
        assert round(im.info["dpi"][0]) == 300
    svg = ElementTree.parse(tmp_path / "sweep.svg").getroot()
    assert svg.get("viewBox") == f"0 0 {drawn.width} {drawn.height}"  # the SVG stays in the figure's pixels
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert any("n = 30 test grids" in (t or "") for t in texts) and "probe exact match" in texts


def test_without_n_the_sweep_counts_its_saved_test_predictions(tmp_path):
    points = _points(0.1, em=0.2)
    (tmp_path / "points" / points[0]["point"]).mkdir(parents=True)
    np.save(tmp_path / "points" / points[0]["point"] / "test_predictions.npy", np.zeros((17, 4, 4), np.uint8))
    sweep_figure.plot_sweep(points, tmp_path / "sweep.png", "t", 1 / 3)
    texts = [t.text or "" for t in ElementTree.parse(tmp_path / "sweep.svg").getroot().iter(f"{SVG}text")]
    assert any("n = 17 test grids" in t for t in texts)
    assert "number was not given" in sweep_figure.sample_line(points, None)
