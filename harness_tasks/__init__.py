"""G2M in evaluation harnesses, in rooms by trade:

- The answer core (the task catalog, the parsers, the metrics, ``score_answer``) is ``scoring``, a package of its
  own under both this one and the leaderboard.
- ``serving``: talking to an OpenAI-compatible server (``g2m-chat``, endpoints) and starting one (``launcher``).
- ``evaluation``: what every harness run shares: settings resolved once, the rows and their provenance, the task
  YAML blocks, the run files ``g2m report`` reads, the score table, ``--dry-run``.
- ``with_lm_eval``, ``with_lmms_eval``, ``with_inspect``: one folder per harness, each with its task generator and
  its ``driver`` (``with_lm_eval`` also has its fixes, resumable runner, reference models and CLI).
- ``with_vlmevalkit``: VLMEvalKit's files (export and prediction reader); VLMEvalKit runs on its own.
- ``evaluate`` (``g2m eval``: settings, one driver, results) and ``cli`` sit on top.

The public API, for code outside this package: ``score_answer``/``AnswerScore``, ``ModelArgs`` and ``model_name`` here
(with ``NAME_KEYS`` and ``TRANSPORT_ARGS``: which model arguments name the checkpoint and which reach a server),
``BASELINES`` (the built-in reference models),
``run_eval``/``EvalSpec``/``CHAT`` (``g2m eval`` as a library: the leaderboard's audit replays a submission through
it, by the same paths a user's run took), and ``with_vlmevalkit`` for VLMEvalKit's files; ``TASK_DIR`` is the
installed lm-eval task folder. The leaderboard imports nothing else (``tests/repo/test_architecture.py``): never a
runner's, a server's or a harness's own modules.
"""

from pathlib import Path

TASK_DIR = Path(__file__).resolve().parent / "lm_eval_tasks"

__all__ = ["BASELINES", "CHAT", "NAME_KEYS", "TASK_DIR", "TRANSPORT_ARGS", "AnswerScore", "EvalSpec", "ModelArgs",
           "model_name", "run_eval", "score_answer"]

_LAZY = {  # each loaded only when asked for: scoring imports numpy
    "score_answer": "scoring.score",
    "AnswerScore": "scoring.score",
    "model_name": "scoring.runs.model_args",
    "ModelArgs": "scoring.runs.model_args",
    "run_eval": "harness_tasks.evaluate",
    "EvalSpec": "harness_tasks.evaluate",
    "CHAT": "harness_tasks.evaluate",
    "BASELINES": "harness_tasks.evaluation.settings",  # the built-in reference models' names (reserved on the board)
    "NAME_KEYS": "scoring.runs.model_args",  # the model arguments that name the checkpoint
    "TRANSPORT_ARGS": "harness_tasks.evaluation.run_key",  # those that say how a server is reached
}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        module = import_module(_LAZY[name])
        return getattr(module, name)
    raise AttributeError(f"module 'harness_tasks' has no attribute {name!r}")
