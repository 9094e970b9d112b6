"""``g2m verify --sample K``: K rows per config regenerated from their seeds, every other row vouched for by its
file's sha256 alone, and a summary line that says exactly that."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dataset_builder.release.provenance import load_manifest
from dataset_builder.release.table import SHARD_METADATA_KEY, table_to_parquet_bytes
from dataset_builder.release.verify import planned_shards, verify
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # builds a release

SHARD = "zero_shot/test-00001-of-00002.parquet"  # rows 45..89 of zero_shot's 90
SAMPLED_IN_SHARD = 21  # zero_shot's 5 sampled rows are 0, 22, 44, 66 and 89: 66 is row 21 of this shard


@pytest.fixture
def release(tmp_path, small_release):
    out = tmp_path / "copy"
    shutil.copytree(small_release, out)
    return out


def _sampled(root, k: int) -> dict[str, set[int]]:
    """The rows ``--sample k`` must regenerate, worked out here from the plan: k spread evenly over each config."""
    by_config: dict[str, list] = {}
    for t in planned_shards(load_manifest(root)):
        by_config.setdefault(t.config, []).extend((t.relpath, r) for r in range(t.rows))
    out: dict[str, set[int]] = {}
    for rows in by_config.values():
        for j in np.linspace(0, len(rows) - 1, k):
            rel, r = rows[int(j)]
            out.setdefault(rel, set()).add(r)
    return out


def _change_matrix_cell(root, rel, row, rehash: bool) -> dict:
    """Change one matrix value of ``row`` (a careful forger also re-hashes the manifest)."""
    path = root / rel
    table = pq.read_table(path)
    meta = json.loads(pq.ParquetFile(path).metadata.metadata[SHARD_METADATA_KEY])
    records = table.to_pylist()
    records[row]["matrix"][0][0] = (records[row]["matrix"][0][0] + 1) % records[row]["num_colors"]
    data = table_to_parquet_bytes(pa.Table.from_pylist(records, schema=table.schema), meta)
    path.write_bytes(data)
    if rehash:
        m = json.loads((root / "manifest.json").read_text())
        m["files"][rel].update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        (root / "manifest.json").write_text(json.dumps(m))
    return records[row]


def test_the_summary_line_counts_what_was_regenerated_and_what_only_hashed(small_release):
    files = len(load_manifest(small_release)["files"])
    sampled = sum(len(v) for v in _sampled(small_release, 5).values())
    assert sampled == 10  # two configs, five rows each
    res = g2m("verify", str(small_release), "--quiet", "--sample", "5")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == (f"OK: {files} files hashed against the manifest; 10 of 490 rows (up to 5 per config) "
                                  "regenerated from their seeds and matched byte for byte, the other 480 checked by "
                                  "their files' hashes only")
    full = g2m("verify", str(small_release), "--quiet")
    assert full.stdout.strip() == (f"OK: {files} files hashed against the manifest; all 490 rows regenerated from "
                                   f"their "
                                   "seeds and matched byte for byte")


@pytest.mark.parametrize(("sample", "regenerated"), [(0, 0), (1, 2), (5, 10), (10_000, 490)])
def test_only_the_sampled_rows_are_regenerated(small_release, sample, regenerated):
    report = verify(small_release, sample=sample, workers=1, progress=False)
    assert report.ok and report.rows == 490 and report.regenerated == regenerated and report.decoded == 0


def test_the_sample_costs_less_than_the_full_check(small_release, monkeypatch):
    """Rows outside the sample are never generated: count the images the encoder is asked for."""
    import dataset_builder.grids.generate as generate

    made = []
    real = generate.encode_grid_png, generate.encode_grid_pngs
    monkeypatch.setattr(generate, "encode_grid_png", lambda m, *a: made.append(1) or real[0](m, *a))
    monkeypatch.setattr(generate, "encode_grid_pngs", lambda ms, *a: made.extend([1] * len(ms)) or real[1](ms, *a))
    assert verify(small_release, sample=5, workers=1, progress=False).ok
    assert len(made) == 10
    made.clear()
    assert verify(small_release, workers=1, progress=False).ok
    assert len(made) == 490


def test_a_changed_row_in_a_sampled_position_is_caught(release):
    assert SAMPLED_IN_SHARD in _sampled(release, 5)[SHARD]
    row = _change_matrix_cell(release, SHARD, SAMPLED_IN_SHARD, rehash=True)
    res = g2m("verify", str(release), "--quiet", "--sample", "5")
    assert res.returncode == 1
    assert res.stderr.strip().startswith(f"FAIL: {SHARD} row {SAMPLED_IN_SHARD} (id {row['id']}): matrix says")


def test_a_changed_row_outside_the_sample_with_a_forged_manifest_needs_the_full_check(release):
    """What --sample does not claim: a row outside it, re-hashed into the manifest, passes; the full check names it."""
    assert 3 not in _sampled(release, 5)[SHARD]
    row = _change_matrix_cell(release, SHARD, 3, rehash=True)
    sampled = verify(release, sample=5, workers=1, progress=False)
    assert sampled.ok and sampled.regenerated == 10
    assert verify(release, workers=1, progress=False).problems[0].startswith(f"{SHARD} row 3 (id {row['id']})")


def test_changed_bytes_in_a_shard_outside_the_sample_are_caught_by_the_hash(release):
    sampled = _sampled(release, 5)
    outside = [t.relpath for t in planned_shards(load_manifest(release)) if t.relpath not in sampled]
    assert outside, "the small release has shards without a sampled row"
    path = release / outside[0]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    res = g2m("verify", str(release), "--quiet", "--sample", "5")
    assert res.returncode == 1
    assert res.stderr.strip() == (f"FAIL: {outside[0]}: sha256 differs from the manifest (the file was changed after "
                                  f"the build)")
