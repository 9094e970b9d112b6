"""Matplotlib for figures written to files: the one place that picks the non-interactive backend.

Probes and reports both draw with it; matplotlib is imported only when a figure is drawn (it is an optional
dependency, in the ``probing`` and ``report`` extras).
"""

from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend: files only, no display is needed or touched. SVG ids are salted
    with a constant rather than at random, so that a figure is the same bytes every time it is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "g2m"
    import matplotlib.pyplot as plt

    return plt
