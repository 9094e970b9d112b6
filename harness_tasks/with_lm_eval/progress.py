"""The progress bar of ``g2m eval``: one over every answer, whose ETA is shown only once it means something.

tqdm's estimate after the first answer or two is the first answers' latency times the rest: the model's warm-up and
the largest grids (lm-eval sends the longest requests first) make it minutes for a run of seconds (a 40 s run's
first ETA read 28:20). So the rate and the ETA read "?" until ``eta_ready``: a tenth of the answers to generate, and
at least ``MIN_ANSWERS`` of them. Answers read from the cache count as done and never as a rate.
"""

from __future__ import annotations

from tqdm.auto import tqdm

#: Answers generated before any rate is shown.
MIN_ANSWERS = 5
#: tqdm's own layout with "?" for the time left and the rate.
HELD_BACK = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<?, ?{unit}/s{postfix}]"
#: The share of the answers to generate that must be in before the ETA is shown.
MIN_SHARE = 0.1


def eta_ready(generated: int, to_generate: int) -> bool:
    """An ETA from ``generated`` answers of ``to_generate`` (this run's, not the cache's) is worth showing."""
    return generated >= max(MIN_ANSWERS, MIN_SHARE * to_generate) or (0 < to_generate <= generated)


class AnswerBar(tqdm):
    """tqdm over the answers (``initial``: those the cache held), with rate and ETA held back until ``eta_ready``."""

    @property
    def format_dict(self):
        d = super().format_dict
        if not eta_ready(d["n"] - d.get("initial", 0), (d["total"] or 0) - d.get("initial", 0)):
            d["bar_format"] = HELD_BACK  # tqdm would compute a rate from n / elapsed even with rate=None
        return d
