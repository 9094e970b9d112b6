"""Re-scoring: the release's truth regenerated from seeds, every output scored again with the harness's own scorer
(``rescore``), how cells cross an encoder's patch grid (``patch_crossing``), the Digital Agnosia gap (``gap``), and
a run read and scored as one (``load``, ``release``, ``run_scores``). Imports the run format (``scoring.runs``)."""
