"""VLMEvalKit: G2M exported as its TSV (``export``); its prediction files are read by the run format
(``scoring.runs.vlmevalkit``). VLMEvalKit runs on its own."""
