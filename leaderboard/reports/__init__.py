"""Reports: ``g2m report``'s tables, figures and files from one run (``report``, ``report_page``, ``figures``).
Imports ``runs``, ``rescoring`` and ``pages``."""
