"""Where a figure's parts go, and how it is written: fixed margins in inches rather than a layout engine, and one
write of PNG (and SVG) per figure. The report's figures and the board's model pages share it."""

from __future__ import annotations

from pathlib import Path

from g2m_base import plotting

DPI = 150
#: Panel titles sit at the top of their axes, where matplotlib would put them anyway (no ticks or offset text above
#: the axes here); saying so spares every draw measuring each panel's y axis again to find that out.
TITLE_Y = 1.0


def write(fig, path: Path, svg: bool = True) -> str:
    """``fig`` written to ``path`` (PNG at ``DPI``) and, with ``svg``, beside it as SVG, laid out once
    (``plotting.write``); returns the PNG's name."""
    plotting.write(fig, path, DPI, svg=svg)
    return path.name


#: Inches of one line of a figure's title (fontsize 10) and of a panel's title (fontsize 8), with their spacing.
TITLE_LINE, PANEL_LINE = 0.19, 0.15


def place(fig, left: float, right: float, top: float, bottom: float, wspace: float = 0.0,
           hspace: float = 0.0) -> None:
    """The panels' margins and gaps in inches, fixed: each figure knows what sits around its panels (tick labels,
    axis labels, titles of a known number of lines), so no layout engine has to measure every text of the figure
    to find room for it (``tight_layout()`` cost each figure about as much as drawing it)."""
    width, height = fig.get_size_inches()
    rows, cols = fig.axes[0].get_subplotspec().get_gridspec().get_geometry()
    panel_w = (width - left - right - (cols - 1) * wspace) / cols
    panel_h = (height - top - bottom - (rows - 1) * hspace) / rows
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height,
                        wspace=wspace / panel_w, hspace=hspace / panel_h)


def titled(fig, title: str, top: float = 0.0):
    """``title`` over the figure, ``top`` inches below the figure's edge being the room of the panels' titles."""
    lines = title.count("\n") + 1
    fig.suptitle(title, fontsize=10, y=1 - 0.08 / fig.get_size_inches()[1], va="top")
    return fig, 0.08 + TITLE_LINE * lines + 0.08 + top
