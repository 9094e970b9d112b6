"""The probes' figures, on the one drawing stack (``drawing``): a probe's per-cell heatmap and training curve
(``probe``), and a sweep's cell accuracy by depth, tower -> projector -> LLM, which the report and the board draw too
(``sweep``)."""
