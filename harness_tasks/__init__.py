"""G2M in evaluation harnesses: the answer format and its parser, one score per answer, the lm-eval task folder and
two reference models.

The parser and the scoring (``parsing``, ``metrics``, ``scoring``, ``baselines``) need no harness at all; lm-eval is
imported only by the modules that drive it (``evaluate``, ``models``, ``resume``, ``validate``).
"""

from pathlib import Path

TASK_DIR = Path(__file__).resolve().parent / "tasks"
