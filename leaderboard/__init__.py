"""The board: the static leaderboard site. The build (``build``), its rows and baselines (``rows``, ``baseline_store``),
the index page and its table (``index_page``, ``board.js``), each model's page (``model_page``), the gap board, the
front figure and the build cache (``cache``: re-scored submissions, signed with the audit's key). Every number on it is
re-scored from the outputs, never taken from a submission; it reads the audit's records (``audit.records``) and draws
with the report's figures and the sample viewer."""
