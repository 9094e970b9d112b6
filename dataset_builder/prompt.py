"""The exact text a model is shown, and the canonical form of the answer it is asked to give.

The prompt is stored in every dataset row, so harnesses never rebuild it: this module is its only author.
``format_answer`` is the inverse of the harness parser (``harness_tasks.parsing.parse_matrix``); a round-trip test
holds the pair together.
"""

from __future__ import annotations

from collections.abc import Sequence

from .spec import colour_names

PROMPT_VERSION = 1


def build_prompt(grid_size: int, num_colours: int) -> str:
    """The instruction for one N x N grid with the first ``num_colours`` palette colours."""
    if not isinstance(grid_size, int) or grid_size < 1:
        raise ValueError(f"grid_size must be a positive integer, got {grid_size!r}")
    n = grid_size
    mapping = "\n".join(f"{name}: {value}" for value, name in enumerate(colour_names(num_colours)))
    return (
        "You are a meticulous assistant that transcribes images of coloured grids into numbers.\n"
        f"The image shows a {n}x{n} grid of coloured cells.\n"
        "Each colour stands for a number:\n"
        f"{mapping}\n"
        "Instructions:\n"
        "1. Go through the rows from the top row to the bottom row, and through each row from left to right.\n"
        "2. Write down the number of every cell's colour, using the mapping above.\n"
        f"3. Give exactly {n} rows, each with exactly {n} numbers.\n"
        "Reply with only a Python list of lists, one inner list per row, for example [[1, 0], [2, 1]] "
        "for a 2x2 grid. Do not use markdown and do not explain."
    )


def format_answer(matrix: Sequence[Sequence[int]]) -> str:
    """The canonical answer: a Python list of lists, e.g. ``[[0, 1], [2, 0]]``."""
    return "[" + ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in matrix) + "]"
