"""The run format, in one home: what a run folder holds (``layout``), how a harness driver writes it (``write``,
``score_table``), how a run names its model (``model_args``), VLMEvalKit's export and prediction files
(``vlmevalkit``), and how a run is read back (``find``, ``samples``, ``run``, ``identity``). Below both ``probing``
and every room after the score, so each reads runs directly (``scoring.rescoring.load`` re-scores one)."""
