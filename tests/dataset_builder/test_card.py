"""DATASET_CARD.md agrees with the code: counts, palette, where the release lives."""

from __future__ import annotations

import json

import pytest

from dataset_builder.grids.configs import (
    CONFIG_NAMES,
    CONFIGS,
    PROBE_COLORS,
    PROBE_SIZES,
    ZERO_SHOT_COLORS,
    ZERO_SHOT_SIZES,
    get_config,
)
from dataset_builder.grids.prompt import PROMPT_VERSION
from dataset_builder.grids.spec import DATASET_REVISION, HUB_REPO_ID, PACKAGE_URL, PALETTE, PAPER_URL
from dataset_builder.release import hub_card
from tests.support.helpers import REPO

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
    assert f"| {', '.join(map(str, ZERO_SHOT_COLORS))} | 4,500" in CARD and (f"| {', '.join(map(str, PROBE_COLORS))} | "
                                                                             f"20,000") in CARD
    assert f"({len(CONFIGS) - 1} configs)" in CARD


def _full_card(names) -> str:
    """The README a full build of ``names`` writes (stats from the configs; sizes do not matter to the metadata)."""
    from dataset_builder.grids.configs import get_config
    from dataset_builder.release.build import BuildParams
    from dataset_builder.release.card import render_readme

    specs = [get_config(n) for n in names]
    stats = {(c.name, s.name): {"rows": s.rows, "num_bytes": 1, "size": 1} for c in specs for s in c.splits}
    return render_readme(specs, stats, BuildParams().to_json())


def _front(readme: str) -> dict:
    import yaml

    return yaml.safe_load(readme.split("---\n")[1])


@pytest.mark.parametrize(("names", "size"), [
    ([c.name for c in CONFIGS], "100K<n<1M"),  # the full release: 324,500 rows
    (["zero_shot"], "1K<n<10K"),  # a zero_shot-only build: 4,500 rows
    (["probe_n32_c3"], "10K<n<100K"),
])
def test_every_build_gets_a_card_the_hub_accepts(names, size):
    front = _front(_full_card(names))
    assert hub_card.problems(front, rows=sum(s.rows for n in names for s in get_config(n).splits)) == []
    assert front["size_categories"] == [size]
    assert {"image-text-to-text"} <= set(front["task_categories"]) and front["source_datasets"] == ["original"]
    assert front["annotations_creators"] == ["machine-generated"]


def test_configs_are_listed_in_release_order():
    front = _front(_full_card([c.name for c in CONFIGS]))
    assert [c["config_name"] for c in front["configs"]] == list(CONFIG_NAMES)
    assert [c["config_name"] for c in front["dataset_info"]] == list(CONFIG_NAMES)
    assert CONFIG_NAMES.index("probe_n20_c3") < CONFIG_NAMES.index("probe_n20_c10")


@pytest.mark.slow
def test_a_partial_build_has_a_valid_card(small_release):
    import datasets

    front = _front((small_release / "README.md").read_text())
    assert hub_card.problems(front, rows=490) == [] and front["size_categories"] == ["n<1K"]
    assert datasets.get_dataset_config_names(str(small_release)) == ["zero_shot", "probe_n20_c3"]
    manifest = json.loads((small_release / "manifest.json").read_text())
    assert manifest["generator"]["prompt_version"] == PROMPT_VERSION


def test_a_build_card_names_the_prompt_version():
    assert f"prompt version {PROMPT_VERSION})" in _full_card(["zero_shot"]).split("## This build", 1)[1]


@pytest.mark.parametrize(("front", "problem"), [
    ({"size_categories": ["n<100K"]}, "'n<100K' is not a value the Hub knows"),
    ({"license": "cc-by-sa"}, "license: 'cc-by-sa'"),
    ({"task_categories": ["grid-transcription"]}, "task_categories: 'grid-transcription'"),
    ({"source_datasets": ["synthetic"]}, "source_datasets: 'synthetic'"),
    ({"language": ["english"]}, "language: 'english'"),
    ({"configs": [{"config_name": "a", "default": True}, {"config_name": "b", "default": True}]}, "at most one"),
    ({"tags": "x"}, "tags must be a list"),
])
def test_the_offline_rules_refuse_what_the_hub_refuses(front, problem):
    assert any(problem in p for p in hub_card.problems(front)), hub_card.problems(front)


@pytest.mark.parametrize(("rows", "size"), [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (324_500, "100K<n<1M"),
                                            (1_000_000, "1M<n<10M"), (10**13, "n>1T")])
def test_size_categories_follow_the_real_row_count(rows, size):
    assert hub_card.size_category(rows) == size


def test_card_links_the_paper_and_the_package():
    assert PAPER_URL in CARD and PACKAGE_URL in CARD
    for section in ("## Uses", "Out-of-scope use", "Personal and sensitive information", "## Dataset Card Authors",
                    "## Dataset Card Contact"):
        assert section in CARD, section
