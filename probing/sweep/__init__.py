"""The layer sweep (``g2m probe sweep``): one probe per read-out point, from the first vision block to the LLM's last
layer, with the probe, cache and scores of ``probing.core``. The plan (``points``, ``plan``), the hooks and the chat
input that feed the LLM points (``taps``, ``chat``), the feature store (``store``), the run (``run``) and its outputs
(``report``)."""
