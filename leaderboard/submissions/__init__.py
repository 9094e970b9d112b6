"""Submissions: the file ``g2m submit`` writes and ``g2m validate`` checks and re-scores (``submission``), and what
it says about the model (``model_info``). Imports ``runs`` and ``rescoring``."""
