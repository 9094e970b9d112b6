"""G2M in evaluation harnesses: the answer format and its parser, one score per answer (G2M's protocol and the
paper's), the lm-eval task folder and two reference models.

The parser and the scoring (``parsing``, ``paper``, ``metrics``, ``scoring``, ``baselines``) need no harness at all;
lm-eval is imported only by the modules that drive it (``evaluate``, ``models``, ``chat``, ``runner``,
``lm_eval_fixes``, ``validate``). ``serve`` starts a ``vllm serve`` for a run; ``dryrun`` prices one.
``from harness_tasks import score_answer`` is the public entry point for scoring any text.
"""

from pathlib import Path

TASK_DIR = Path(__file__).resolve().parent / "tasks"

__all__ = ["TASK_DIR", "AnswerScore", "score_answer"]


def __getattr__(name: str):  # scoring imports numpy: load it only when asked for
    if name in ("score_answer", "AnswerScore"):
        from harness_tasks.answers import score as scoring

        return getattr(scoring, name)
    raise AttributeError(f"module 'harness_tasks' has no attribute {name!r}")
