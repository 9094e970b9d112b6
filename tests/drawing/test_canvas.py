"""The figures' canvas: its PNG draws each shape where the shape says (turned text too, where ``corners`` says),
its SVG holds the same shapes as escaped XML, ticks are round numbers, dashes and colour maps are what they claim."""

from __future__ import annotations

import io
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from drawing import canvas, colours, raster, vector
from drawing.panel import Axes, nice_ticks, nothing_to_show, tick_labels

SVG = "{http://www.w3.org/2000/svg}"


def _pixels(c: canvas.Canvas) -> np.ndarray:
    with Image.open(io.BytesIO(raster.png(c))) as im:
        return np.asarray(im.convert("RGB")).astype(int)


@pytest.mark.parametrize(("rotation", "ha", "va"), [(0, "center", "baseline"), (90, "center", "baseline"),
                                                     (45, "right", "top"), (90, "left", "baseline"),
                                                     (0, "right", "center"), (30, "left", "top")])
def test_text_is_drawn_inside_the_box_corners_gives_it(rotation, ha, va):
    c = canvas.Canvas(3, 3)
    t = c.add(canvas.Text(225, 225, "Orange 10", 12, ha=ha, va=va, rotation=rotation))
    ink = np.argwhere((_pixels(c) < 128).all(axis=2))
    assert len(ink) > 100
    xs, ys = zip(*raster.corners(t), strict=True)
    assert min(xs) - 2 <= ink[:, 1].min() and ink[:, 1].max() <= max(xs) + 2
    assert min(ys) - 2 <= ink[:, 0].min() and ink[:, 0].max() <= max(ys) + 2
    # and the ink fills that box: the box is the text's, not a loose bound
    assert ink[:, 1].max() - ink[:, 1].min() >= 0.8 * (max(xs) - min(xs))


def test_shapes_land_on_their_pixels_in_their_colours():
    c = canvas.Canvas(2, 2)  # 300 x 300 px
    c.add(canvas.Rect(10, 20, 100, 50, fill="#4c72b0"))
    c.add(canvas.Lines(((150, 0), (150, 300)), "#c44e52", 2.0))
    c.add(canvas.Image(200, 200, 60, 60, np.full((3, 3, 3), (85, 168, 104), dtype=np.uint8)))
    px = _pixels(c)
    assert px.shape == (300, 300, 3)
    assert tuple(px[45, 60]) == (0x4C, 0x72, 0xB0) and tuple(px[5, 60]) == (255, 255, 255)
    assert tuple(px[100, 150]) == (0xC4, 0x4E, 0x52)
    assert tuple(px[230, 230]) == (85, 168, 104) and tuple(px[195, 230]) == (255, 255, 255)


def test_a_zoomed_canvas_is_the_same_drawing_at_twice_the_pixels():
    """``zoom=2``: the PNG has twice the pixels each way (a screen of two device pixels per CSS pixel), every shape
    where it is at 1x scaled by two, and the SVG stays in the figure's pixels."""
    def draw(zoom):
        c = canvas.Canvas(2, 2, zoom=zoom)  # 300 x 300 figure pixels
        c.add(canvas.Rect(10, 20, 100, 50, fill="#4c72b0"))
        c.add(canvas.Lines(((150, 0), (150, 300)), "#c44e52", 2.0))
        c.text(200, 250, "label", 10, colour="#000000")
        return c
    one, two = _pixels(draw(1)), _pixels(draw(2))
    assert one.shape == (300, 300, 3) and two.shape == (600, 600, 3)
    assert tuple(two[90, 120]) == (0x4C, 0x72, 0xB0) and tuple(two[10, 120]) == (255, 255, 255)
    assert tuple(two[200, 300]) == (0xC4, 0x4E, 0x52)
    ink = lambda px: np.argwhere((px < 128).all(axis=2))  # noqa: E731
    a, b = ink(one), ink(two)
    assert abs(b[:, 1].min() / 2 - a[:, 1].min()) <= 1 and abs(b[:, 1].max() / 2 - a[:, 1].max()) <= 1  # the label
    with Image.open(io.BytesIO(raster.png(draw(2)))) as im:
        assert round(im.info["dpi"][0]) == 2 * canvas.DPI
    assert ElementTree.fromstring(vector.svg(draw(2))).get("viewBox") == "0 0 300 300"


def test_a_panel_with_nothing_to_show_says_so_in_its_middle():
    c = canvas.Canvas(4, 3)
    ax = Axes(c, 0.5, 0.5, 3, 2, (0, 1), (0, 1))
    ax.message("exact match is 0 on every task\n(no grid transcribed whole)")
    texts = [s for s in c.shapes if isinstance(s, canvas.Text)]
    assert [t.text for t in texts] == ["exact match is 0 on every task", "(no grid transcribed whole)"]
    assert all(t.x == pytest.approx(ax.x0 + ax.w / 2) for t in texts)
    assert (texts[0].y + texts[1].y) / 2 == pytest.approx(ax.y0 + ax.h / 2)
    (box,) = [s for s in c.shapes if isinstance(s, canvas.Rect)]
    assert box.fill == "#ffffff" and ax.x0 < box.x and box.x + box.w < ax.x0 + ax.w  # behind it, inside the panel
    assert nothing_to_show([0.0, 0, float("nan")]) and nothing_to_show([]) and not nothing_to_show([0, 0.01])


def test_the_svg_holds_the_same_shapes_as_escaped_xml():
    c = canvas.Canvas(2, 1)
    c.add(canvas.Rect(1, 2, 3, 4, fill="#000000"))
    c.text(10, 10, "a <b> & 'c'\nsecond line", 8)
    c.add(canvas.Marker(5, 5, "^", 4, "#ffffff"))
    c.add(canvas.Lines(((0, 0), (1, 1), (2, 0)), "#000000", dash=(1, 2)))
    root = ElementTree.fromstring(vector.svg(c))
    assert root.get("viewBox") == "0 0 300 150" and root.get("width") == "144pt"
    assert [t.text for t in root.iter(f"{SVG}text")] == ["a <b> & 'c'", "second line"]
    assert len(list(root.iter(f"{SVG}polygon"))) == 1 and len(list(root.iter(f"{SVG}rect"))) == 2  # and the page
    (path,) = root.iter(f"{SVG}path")
    assert path.get("d") == "M0 0L1 1L2 0" and path.get("stroke-dasharray") == "2.08,4.17"


@pytest.mark.parametrize(("lo", "hi", "most", "ticks", "labels"), [
    (0.0, 1.0, 6, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]),
    (-0.25, 0.25, 7, [-0.2, -0.1, 0.0, 0.1, 0.2], ["-0.2", "-0.1", "0.0", "0.1", "0.2"]),
    (-0.1, 0.1, 7, [-0.1, -0.05, 0.0, 0.05, 0.1], ["-0.10", "-0.05", "0.00", "0.05", "0.10"]),
    (-1.05, 1.05, 7, [-1.0, -0.5, 0.0, 0.5, 1.0], ["-1.0", "-0.5", "0.0", "0.5", "1.0"]),
    (-0.6, 0.6, 5, [-0.5, -0.25, 0.0, 0.25, 0.5], ["-0.50", "-0.25", "0.00", "0.25", "0.50"]),
])
def test_ticks_are_round_numbers_written_with_the_digits_their_step_needs(lo, hi, most, ticks, labels):
    got = nice_ticks(lo, hi, most)
    assert got == pytest.approx(ticks) and tick_labels(got) == labels


def test_dashes_cut_a_line_into_pieces_of_the_pattern_across_its_corners():
    pieces = raster._dashed([(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)], (3.0, 1.0))
    lengths = [sum(abs(b[0] - a[0]) + abs(b[1] - a[1]) for a, b in zip(p, p[1:], strict=False)) for p in pieces]
    assert lengths == pytest.approx([3, 3, 3, 3, 3])  # 20 px: on 3, off 1, five times
    assert sum(pieces[2], ()) == pytest.approx((8, 0, 10, 0, 10, 1))  # the third turns the corner


def test_the_colour_maps_run_from_their_first_colour_to_their_last():
    assert colours.rgb_hex(colours.mapped(np.array(0.0), "viridis")) == "#440154"
    assert colours.rgb_hex(colours.mapped(np.array(1.0), "viridis")) == "#fde725"
    assert colours.rgb_hex(colours.mapped(np.array(1.0), "magma")) == "#fcfdbf"
    assert colours.mapped(np.array([np.nan, -1, 2]), "viridis").tolist() == [[68, 1, 84], [68, 1, 84], [253, 231, 37]]
