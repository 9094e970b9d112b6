"""Reading runs: an lm-eval output folder or a VLMEvalKit prediction file (read by ``harness_tasks.with_vlmevalkit``)
as one ``Run``: finding it (``find``), reading its samples (``samples``), checking them against the release
(``release``), and putting it together (``load``). Imports only ``rescoring`` (the release's truth)."""
