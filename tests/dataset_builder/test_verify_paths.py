"""``g2m verify``'s two paths: rows that match their regeneration byte for byte are never decoded; any other row is
decoded and checked pixel by pixel, and a copy re-encoded elsewhere (same pixels, other bytes) is named as such."""

from __future__ import annotations

import hashlib
import io
import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from dataset_builder.release.table import SHARD_METADATA_KEY, table_to_parquet_bytes
from dataset_builder.release.verify import verify
from tests.support.helpers import g2m

pytestmark = pytest.mark.slow  # builds releases

SHARD = "zero_shot/test-00001-of-00002.parquet"


@pytest.fixture
def release(tmp_path, small_release):
    out = tmp_path / "copy"
    shutil.copytree(small_release, out)
    return out


def _re_encode(root, rel, rows) -> list[dict]:
    """Re-encode the images of ``rows`` with PIL (the same pixels, other bytes), the manifest updated to match."""
    path = root / rel
    table = pq.read_table(path)
    meta = json.loads(pq.ParquetFile(path).metadata.metadata[SHARD_METADATA_KEY])
    records = table.to_pylist()
    for k in rows:
        with Image.open(io.BytesIO(records[k]["image"]["bytes"])) as im:
            buf = io.BytesIO()
            im.convert("RGB").save(buf, "PNG")
        records[k]["image"] = {"bytes": buf.getvalue(), "path": None}
    data = table_to_parquet_bytes(pa.Table.from_pylist(records, schema=table.schema), meta)
    path.write_bytes(data)
    m = json.loads((root / "manifest.json").read_text())
    m["files"][rel].update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    (root / "manifest.json").write_text(json.dumps(m))
    return records


@pytest.mark.parametrize("workers", [1, 2])
def test_an_untouched_release_is_checked_byte_for_byte_without_decoding(small_release, workers):
    report = verify(small_release, workers=workers, progress=False)
    assert report.ok and report.rows == report.regenerated == 490 and report.decoded == 0


def test_a_re_encoded_copy_is_decoded_and_named_as_re_encoded(release):
    records = _re_encode(release, SHARD, range(45))  # every row of the shard
    report = verify(release, workers=2, progress=False)
    assert report.problems == [f"{SHARD} row 0 (id {records[0]['id']}): PNG bytes differ from the ones seed "
                               f"{records[0]['seed']} generates (the pixels are the same: the image was re-encoded)"]
    assert report.decoded == 1  # the first re-encoded row is reported; the shard stops there


def test_with_an_empty_sample_a_re_encoded_copy_passes_on_its_hashes_alone(release):
    """--sample 0 claims only the hashes: the re-hashed copy passes, and no row is said to be regenerated."""
    _re_encode(release, SHARD, [2, 7, 30])
    report = verify(release, sample=0, workers=1, progress=False)
    assert report.ok and report.rows == 490 and report.regenerated == 0 and report.decoded == 0


@pytest.mark.parametrize(("row", "caught"), [(21, True), (4, False)])  # --sample 5: zero_shot row 66 is row 21 here
def test_the_cli_holds_sampled_rows_to_their_seeds_and_names_a_re_encoded_one(release, row, caught):
    records = _re_encode(release, SHARD, [row])
    res = g2m("verify", str(release), "--quiet", "--sample", "5")
    if caught:
        assert res.returncode == 1
        assert res.stderr.strip() == (f"FAIL: {SHARD} row {row} (id {records[row]['id']}): PNG bytes differ from the "
                                      f"ones seed {records[row]['seed']} generates (the pixels are the same: the image "
                                      "was re-encoded)")
    else:
        assert res.returncode == 0, res.stderr
        assert "10 of 490 rows (up to 5 per config) regenerated" in res.stdout
        assert "the other 480 checked by their files' hashes only" in res.stdout
