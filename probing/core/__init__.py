"""The single-point probe (``g2m probe``): read a frozen encoder at one point, cache its features once, train the
authors' spatial probe on them, score and plot it. The sweep builds on these parts; nothing here knows the sweep."""
