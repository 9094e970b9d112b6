"""The exact text a model is shown.

The prompt is stored in every dataset row, so harnesses never rebuild it: this module is its only author. The answer
format it asks for is written and read by ``scoring.parsing`` (``format_answer`` / ``parse_matrix``); a test
holds the prompt's example equal to ``format_answer`` of the same matrix.
"""

from __future__ import annotations

from dataset_builder.grids.spec import check_grid_size, color_names

PROMPT_VERSION = 1


def build_prompt(grid_size: int, num_colors: int) -> str:
    """The instruction for one N x N grid with the first ``num_colours`` palette colours."""
    check_grid_size(grid_size)
    n = grid_size
    mapping = "\n".join(f"{name}: {value}" for value, name in enumerate(color_names(num_colors)))
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
