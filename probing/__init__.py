"""Probing frozen VLM vision encoders on the G2M probing splits (8k/2k/10k), with features cached once.

Two rooms: ``probing.core`` probes one read-out point (``g2m probe``); ``probing.sweep`` probes every layer
(``g2m probe sweep``) with the core's probe, cache and scores. The sweep imports the core, never the reverse.
``cli`` parses both commands; ``tiny`` builds the offline models both are tried on."""
