"""The single source of truth for what a G2M release *is*.

Everything that must agree between the builder, the harness tasks, the probes and the leaderboard lives here:
the palette, the outline colour, the image size, where the release is published and which revision the
harness pins. Nothing else in the repository may spell these values out again.
"""

from __future__ import annotations

from typing import NamedTuple

from g2m_base.flags import check_int


class Color(NamedTuple):
    value: int
    name: str
    rgb: tuple[int, int, int]


#: The palette of the paper, in value order. A grid with C colours uses values 0..C-1, i.e. the first C entries.
PALETTE: tuple[Color, ...] = (
    Color(0, "White", (255, 255, 255)),
    Color(1, "Red", (205, 78, 78)),
    Color(2, "Blue", (72, 105, 200)),
    Color(3, "Green", (85, 168, 104)),
    Color(4, "Orange", (221, 163, 85)),
    Color(5, "Purple", (153, 102, 204)),
    Color(6, "Yellow", (235, 215, 90)),
    Color(7, "Cyan", (100, 180, 190)),
    Color(8, "Pink", (215, 120, 155)),
    Color(9, "Brown", (160, 130, 110)),
)

#: Cell outlines are dark grey; it is palette index 10 in our PNGs (never a matrix value).
OUTLINE_RGB: tuple[int, int, int] = (60, 60, 60)
OUTLINE_INDEX = len(PALETTE)

#: The background is white, the same colour as value 0: only the outlines delimit white cells.
BACKGROUND_RGB: tuple[int, int, int] = PALETTE[0].rgb

MIN_COLORS = 3
#: The largest N the seed scheme can tell apart: a sample seed has two decimal digits for N.
MAX_GRID_SIZE = 99
MAX_COLORS = len(PALETTE)
#: The side of every release image, in pixels.
DEFAULT_RESOLUTION = 512

#: How a harness's prompt text marks where the image goes; multimodal backends replace it with the model's own token.
IMAGE_PLACEHOLDER = "<image>"

#: Patch sides (px) of common VLM encoders for the patch-alignment analysis: 14 (CLIP, InternViT), 16 (SigLIP,
#: Qwen3-VL), 28 and 32 (Qwen2-VL and Qwen3-VL after their 2x2 merger).
PATCH_SIZES: tuple[float, ...] = (14.0, 16.0, 28.0, 32.0)

#: File names inside a release folder.
MANIFEST_NAME = "manifest.json"
README_NAME = "README.md"
#: The Hub's benchmark file at a release's root: it makes the dataset repository a benchmark (``hub_card.eval_yaml``).
EVAL_YAML_NAME = "eval.yaml"
#: The Hub's task ids, one leaderboard on the Hub each: the ids ``eval.yaml`` declares and ``.eval_results`` files
#: report to. Each is a tag of the G2M tasks (``scoring.catalog.tags``) and a view G2M ranks on: every
#: zero_shot row, one palette size, or the lite set; the value reported is G2M's re-scored cell accuracy over it.
HUB_TASKS: dict[str, str] = {
    "g2m": "every zero_shot grid (the headline)",
    "g2m_c3": "the zero_shot grids with 3 colours",
    "g2m_c5": "the zero_shot grids with 5 colours",
    "g2m_c10": "the zero_shot grids with 10 colours",
    "g2m_lite": "the zero_shot grids of N <= 12 (the lite set)",
}
#: The config and split every Hub task reads.
HUB_TASK_CONFIG, HUB_TASK_SPLIT = "zero_shot", "test"

#: The format tag of ``g2m probe``'s result.json, which the report and the leaderboard read.
PROBE_RESULT_FORMAT = "g2m-probe-result/1"
#: The format tag of ``g2m probe sweep``'s sweep.json (one record per read-out point), which the report reads.
SWEEP_RESULT_FORMAT = "g2m-probe-sweep/1"
#: The most bytes a reader takes of each: a probe's result.json is a few kilobytes, a sweep's a few kB per point.
MAX_PROBE_RESULT_BYTES, MAX_SWEEP_BYTES = 1 << 20, 16 << 20

#: Where the release lives and which tag the harness loads by default.
HUB_REPO_ID = "grid2matrix/g2m"
DATASET_REVISION = "v1.0.0"
#: Seconds ``g2m push`` waits for a connection to the Hub, and for each answer, before giving up (``--timeout``).
HUB_TIMEOUT = 60.0
#: ``provenance.content_sha256`` of the release's zero_shot rows (what every leaderboard submission must have run on):
#: a run is labelled "the release" only when the data it read hashes to this.
#: ``tests/dataset_builder/test_provenance.py`` regenerates it from the seeds and from a local build.
RELEASE_CONTENT_SHA256 = "d0b5662c139bb806c7ea010a5e094ddd95e38f205a128bbe62204dfd0b1f81bd"
DATA_LICENSE = "cc-by-sa-4.0"

PAPER_ARXIV = "2604.09687"
PAPER_URL = f"https://arxiv.org/abs/{PAPER_ARXIV}"
PACKAGE_URL = "https://github.com/grid2matrix/grid2matrix"
#: Where leaderboard submissions are sent (a pull request adding the file under ``submissions/``); the site is built
#: from that folder with ``g2m leaderboard build``.
SUBMISSIONS_REPO_ID = "grid2matrix/g2m-submissions"
SUBMISSIONS_URL = f"https://huggingface.co/datasets/{SUBMISSIONS_REPO_ID}"


def color_names(num_colors: int) -> list[str]:
    """Names indexed by value for a grid with ``num_colors`` colours."""
    check_num_colors(num_colors)
    return [c.name for c in PALETTE[:num_colors]]


def check_num_colors(num_colors: int) -> None:
    check_int("num_colors", num_colors, MIN_COLORS, MAX_COLORS)


def cell_key(grid_size: int, num_colors: int) -> str:
    """``n09_c3``: the one spelling of an (N, C) cell in task names, hook names, categories and result keys."""
    return f"n{grid_size:02d}_c{num_colors}"


def check_grid_size(grid_size: int, maximum: int | None = None) -> None:
    """The one check of a grid size N: a positive integer (bools are not sizes), at most ``maximum`` if given."""
    check_int("grid_size", grid_size, 1, maximum)
