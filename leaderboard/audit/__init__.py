"""Audits: the maintainers replay a keyed sample of a submission from the weights it names and record whether the
answers are the same (``g2m audit``, ``g2m leaderboard audit``); the board reads the signed records for its tiers."""
