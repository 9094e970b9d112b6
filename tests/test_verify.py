"""g2m verify catches tampering at every layer and names the first bad row."""

from __future__ import annotations

import hashlib
import io
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import g2m
from PIL import Image

from dataset_builder.png import encode_palette_png
from dataset_builder.table import SHARD_METADATA_KEY, table_to_parquet_bytes
from dataset_builder.verify import verify

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes

SHARD = "zero_shot/test-00001-of-00002.parquet"  # rows 45..89 of zero_shot


@pytest.fixture
def release(tmp_path, small_release):
    out = tmp_path / "copy"
    shutil.copytree(small_release, out)
    return out


def _rewrite_row(root, rel, row, column, value, update_manifest):
    path = root / rel
    table = pq.read_table(path)
    meta = json.loads(pq.ParquetFile(path).metadata.metadata[SHARD_METADATA_KEY])
    rows = table.to_pylist()
    rows[row][column] = value
    new = pa.Table.from_pylist(rows, schema=table.schema)
    data = table_to_parquet_bytes(new, meta)
    path.write_bytes(data)
    if update_manifest:  # a careful forger also fixes the hash
        m = json.loads((root / "manifest.json").read_text())
        m["files"][rel]["sha256"] = hashlib.sha256(data).hexdigest()
        (root / "manifest.json").write_text(json.dumps(m))
    return rows[row]


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im).copy()


def test_a_clean_release_verifies(small_release):
    report = verify(small_release, workers=2, progress=False)
    assert report.ok, report.problems
    assert report.rows == report.regenerated == 490


def test_one_changed_pixel_is_caught_by_the_hash(release):
    row = pq.read_table(release / SHARD).to_pylist()[3]
    idx = _pixels(row["image"]["bytes"])
    idx[0, 0] = 1  # a corner pixel on the outline
    _rewrite_row(release, SHARD, 3, "image", {"bytes": encode_palette_png(idx), "path": None}, update_manifest=False)
    report = verify(release, workers=1, progress=False)
    assert not report.ok and report.problems[0].startswith(f"{SHARD}: sha256 differs")


def test_one_changed_pixel_is_caught_even_when_the_manifest_is_forged(release):
    row = pq.read_table(release / SHARD).to_pylist()[3]
    idx = _pixels(row["image"]["bytes"])
    idx[511, 300] = 2  # the last outline row, far from any cell centre
    _rewrite_row(release, SHARD, 3, "image", {"bytes": encode_palette_png(idx), "path": None}, update_manifest=True)
    report = verify(release, workers=1, progress=False)
    assert report.problems == [f"{SHARD} row 3 (id {row['id']}): pixel (x=300, y=511) differs from the rendering of the grid (1 pixels differ)"]


def test_one_changed_matrix_value_is_caught(release):
    row = pq.read_table(release / SHARD).to_pylist()[5]
    matrix = row["matrix"]
    matrix[1][2] = (matrix[1][2] + 1) % row["num_colors"]
    _rewrite_row(release, SHARD, 5, "matrix", matrix, update_manifest=True)
    report = verify(release, workers=2, progress=False)
    assert len(report.problems) == 1
    assert f"row 5 (id {row['id']}): matrix says {matrix[1][2]} at cell (1, 2)" in report.problems[0]


def test_a_re_encoded_image_with_the_same_pixels_is_caught_by_regeneration(release):
    row = pq.read_table(release / SHARD).to_pylist()[0]
    with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
        buf = io.BytesIO()
        im.convert("RGB").save(buf, "PNG")  # same pixels, other bytes
    _rewrite_row(release, SHARD, 0, "image", {"bytes": buf.getvalue(), "path": None}, update_manifest=True)
    assert "PNG bytes differ" in verify(release, workers=1, progress=False).problems[0]
    assert verify(release, sample=0, workers=1, progress=False).ok  # pixels alone cannot tell


def test_a_jpeg_is_refused(release):
    row = pq.read_table(release / SHARD).to_pylist()[0]
    with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
        buf = io.BytesIO()
        im.convert("RGB").save(buf, "JPEG", quality=100)
    _rewrite_row(release, SHARD, 0, "image", {"bytes": buf.getvalue(), "path": None}, update_manifest=True)
    assert "image is JPEG, not PNG" in verify(release, workers=1, progress=False).problems[0]


def test_an_extra_data_file_and_a_missing_file_are_named(release):
    shutil.copy(release / SHARD, release / "zero_shot" / "test-extra.parquet")
    assert "zero_shot/test-extra.parquet: not in the manifest" in verify(release, progress=False).problems[0]
    (release / "zero_shot" / "test-extra.parquet").unlink()
    (release / SHARD).unlink()
    assert verify(release, progress=False).problems[0] == f"{SHARD}: listed in the manifest but missing"


def test_the_cli_exits_non_zero_and_names_the_bad_row(release):
    row = pq.read_table(release / SHARD).to_pylist()[5]
    matrix = row["matrix"]
    matrix[0][0] = (matrix[0][0] + 1) % row["num_colors"]
    _rewrite_row(release, SHARD, 5, "matrix", matrix, update_manifest=True)
    res = g2m("verify", str(release), "--quiet", "--sample", "3")
    assert res.returncode == 1
    assert res.stderr.strip().startswith(f"FAIL: {SHARD} row 5 (id {row['id']})")
    ok = g2m("verify", str(release.parent.parent / "missing"), "--quiet")
    assert ok.returncode == 2 and "manifest.json is missing" in ok.stderr
