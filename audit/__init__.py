"""Audits: the maintainers replay a keyed sample of a submission from the weights it names and record whether the
answers are the same (``g2m audit``, ``g2m leaderboard audit``): the replay (``replay``, ``honour``, ``probe_replay``),
the verdict, the records and the tiers they give (``records``) and the key that signs them (``key``). The board reads
the records for its tiers."""
