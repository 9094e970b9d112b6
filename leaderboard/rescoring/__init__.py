"""Re-scoring: the release's truth regenerated from seeds, every output scored again with the harness's own scorer
(``rescore``), and how cells cross an encoder's patch grid (``patch_crossing``). Imports no other room."""
