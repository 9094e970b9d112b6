"""Reports, validated submissions and the static leaderboard: every number is re-scored, never trusted."""
