"""DATASET_CARD.md agrees with the code: counts, palette, where the release lives."""

from __future__ import annotations

from helpers import REPO

from dataset_builder.configs import CONFIGS, PROBE_COLOURS, PROBE_SIZES, ZERO_SHOT_COLOURS, ZERO_SHOT_SIZES
from dataset_builder.spec import DATASET_REVISION, HUB_REPO_ID, PALETTE

CARD = (REPO / "DATASET_CARD.md").read_text()


def test_card_names_the_pinned_release():
    assert f'"{HUB_REPO_ID}"' in CARD and f'revision="{DATASET_REVISION}"' in CARD


def test_card_palette_table_is_the_palette():
    for c in PALETTE:
        assert f"| {c.value} | {c.name} | {', '.join(map(str, c.rgb))} |" in CARD


def test_card_counts_are_the_configs():
    total = sum(s.rows for c in CONFIGS for s in c.splits)
    assert f"{total:,} images in all" in CARD
    assert ", ".join(map(str, ZERO_SHOT_SIZES)) in CARD and ", ".join(map(str, PROBE_SIZES)) in CARD
    assert f"| {', '.join(map(str, ZERO_SHOT_COLOURS))} | 4,500" in CARD and f"| {', '.join(map(str, PROBE_COLOURS))} | 20,000" in CARD
    assert f"({len(CONFIGS) - 1} configs)" in CARD
