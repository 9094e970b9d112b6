"""Running the board on the Hub: submissions arrive as pull requests on the submissions dataset
(``spec.SUBMISSIONS_REPO_ID``), are checked and answered (``sync``), audited where this machine can, built into the
site and published to a static Space (``publish``); ``cycle`` does all of it for a scheduled job. Also here: a model's
``.eval_results`` file for the Hub (``eval_results``). What the Hub's own leaderboard reports is a section of the
board (``leaderboard.hub_entries``), read while the site is built."""
