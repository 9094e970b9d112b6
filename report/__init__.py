"""``g2m report``: the tables, figures and files of one run (``report``, ``report_page``), its probes and sweeps
(``probes``), and the figures it shares with the board's model pages (``figures``). Imports the run format and the
re-scoring (``scoring``), the drawing stack, the viewer and the submission's probe sections."""
