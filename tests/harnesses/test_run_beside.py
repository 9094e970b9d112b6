"""A rerun with other settings lands in a folder of its own; ``g2m eval`` then names the earlier runs of the same
model beside it, with the settings that named each."""

from __future__ import annotations

import json
from pathlib import Path

from harness_tasks.evaluation.run_key import beside


def _run(root: Path, name: str, settings: dict | None = None) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "results_2026-12-04T00-00-00.json").write_text(json.dumps({"g2m": {"settings": settings or {}}}))
    return folder


def test_the_earlier_runs_of_the_same_model_are_named_with_their_settings(tmp_path):
    plain = _run(tmp_path, "Org__M")
    tp = _run(tmp_path, "Org__M+1a2b3c4d", {"serve_args": ["--tensor-parallel-size", "2"]})
    _run(tmp_path, "Org__M2")  # another model whose name starts alike: not this one's
    (tmp_path / "Org__M+deadbeef").mkdir()  # a folder without results: no run
    assert beside(tp) == ["Org__M (the defaults)"]
    assert beside(plain) == ['Org__M+1a2b3c4d ({"serve_args": ["--tensor-parallel-size", "2"]})']
    assert beside(_run(tmp_path, "Other")) == []
