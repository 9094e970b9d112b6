"""Matplotlib for figures written to files: the one place that picks the non-interactive backend, and writes a figure
as PNG (and SVG) with its layout solved once.

Probes and reports both draw with it; matplotlib is imported only when a figure is drawn (it is an optional
dependency, in the ``probing`` and ``report`` extras).
"""

from __future__ import annotations

from pathlib import Path

#: No creation date in an SVG (with ``pyplot()``'s fixed id salt, the same figure is the same bytes).
SVG_METADATA = {"Date": None}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend: files only, no display is needed or touched. SVG ids are salted
    with a constant rather than at random, so that a figure is the same bytes every time it is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "g2m"
    import matplotlib.pyplot as plt

    return plt


def write(fig, path: Path, dpi: float | None = None, svg: bool = True) -> None:
    """``fig`` written to ``path`` as PNG at ``dpi`` (default: the figure's), with ``svg`` beside it as SVG too, then
    closed.

    Its layout engine (``tight_layout()``'s or constrained layout) is run once, at the PNG's dpi, and then switched
    off: left to ``savefig``, every save draws the whole figure once more just to lay it out again, while measuring
    text and ticks is most of what a figure costs to draw. Both files get the layout the PNG would have had on its
    own."""
    dpi = dpi or fig.dpi
    engine = fig.get_layout_engine()
    if engine is not None:
        own = fig.dpi
        fig.set_dpi(dpi)
        try:
            engine.execute(fig)  # a no-op once tight_layout() has placed the axes
        finally:
            fig.set_dpi(own)
    fig.set_layout_engine(None)
    fig.savefig(path, dpi=dpi)
    if svg:
        fig.savefig(path.with_suffix(".svg"), metadata=SVG_METADATA)
    pyplot().close(fig)
