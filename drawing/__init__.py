"""The one drawing stack: a figure is a ``Canvas`` of frozen shapes (``canvas``), drawn as PNG by Pillow (``raster``)
and as SVG through the page engine (``vector``), with panels, ticks and colour bars (``panel``) and colour maps
(``colours``); and the page engine itself (``html``: the one Jinja2 environment, autoescape on, the page frame and
table templates every page extends). Imports only ``g2m_base``."""
