"""Submissions: the file ``g2m submit`` writes and ``g2m validate`` checks and re-scores (``submission``), and what
it says about the model (``model_info``, ``run_metadata``), its records, coverage and probe sections and heads.
Imports the run format and the re-scoring (``scoring``), ``probing`` and the harnesses' public API."""
