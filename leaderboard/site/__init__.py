"""The static leaderboard site: the build (``build``), its rows and baselines (``rows``), the index page and board
(``index_page``, ``board.js``), each model's page (``model_page``), the front figure and the build cache. Imports
every room below it: ``submissions``, ``reports`` (figures), ``pages``, ``rescoring``."""
