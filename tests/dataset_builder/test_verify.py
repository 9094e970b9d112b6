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
from PIL import Image

from dataset_builder.release.table import SHARD_METADATA_KEY, table_to_parquet_bytes
from dataset_builder.release.verify import verify
from tests.support.helpers import g2m
from tests.support.reference_png import encode_palette_png

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
        m["files"][rel].update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
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
    assert report.problems == [f"{SHARD} row 3 (id {row['id']}): pixel (x=300, y=511) differs from the rendering of "
                               f"the grid (1 pixels differ)"]


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
    res = g2m("verify", str(release), "--quiet")  # every row: row 5 is outside any small sample
    assert res.returncode == 1
    assert res.stderr.strip().startswith(f"FAIL: {SHARD} row 5 (id {row['id']})")
    ok = g2m("verify", str(release.parent.parent / "missing"), "--quiet")
    assert ok.returncode == 2 and "manifest.json is missing" in ok.stderr


def _rehash(root, rel):
    m = json.loads((root / "manifest.json").read_text())
    data = (root / rel).read_bytes()
    m["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (root / "manifest.json").write_text(json.dumps(m))
    return m


def test_a_readme_redirected_to_other_rows_is_caught_even_with_a_forged_manifest(release):
    import datasets

    # the attack: other rows in a new file of the config folder, the README pointed at it, every hash updated
    other = pq.read_table(release / SHARD).slice(0, 3)
    pq.write_table(other, release / "zero_shot" / "swap.parquet")
    readme = (release / "README.md").read_text().replace("path: zero_shot/test-*", "path: zero_shot/swap.parquet")
    readme = readme.replace("num_examples: 90", "num_examples: 3")
    (release / "README.md").write_text(readme)
    m = _rehash(release, "README.md")
    m["files"]["zero_shot/swap.parquet"] = {
        "sha256": hashlib.sha256((release / "zero_shot/swap.parquet").read_bytes()).hexdigest()}
    (release / "manifest.json").write_text(json.dumps(m))
    assert len(datasets.load_dataset(str(release), "zero_shot", split="test")) == 3  # what a user would get
    problems = verify(release, progress=False).problems
    assert problems == ["manifest: lists zero_shot/swap.parquet, which is not one of the files this build plans"]
    del m["files"]["zero_shot/swap.parquet"]  # listed or not, the file and the README are named
    (release / "manifest.json").write_text(json.dumps(m))
    assert verify(release, progress=False).problems == [
        "zero_shot/swap.parquet: not in the manifest (an extra file in the release folder)"]
    (release / "zero_shot" / "swap.parquet").unlink()
    assert "README.md: config zero_shot points at zero_shot/swap.parquet" in verify(release, progress=False).problems[0]


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("list: int8", "list: int16"),  # other features
    lambda t: t.replace("configs:\n",
                        "configs:\n- config_name: extra\n  data_files:\n  - split: test\n    path: '*/*'\n"),
    lambda t: t.replace("  default: true\n", ""),
])
def test_any_other_change_to_what_load_dataset_reads_is_caught(release, edit):
    (release / "README.md").write_text(edit((release / "README.md").read_text()))
    _rehash(release, "README.md")
    problems = verify(release, progress=False).problems
    assert problems and problems[0].startswith("README.md:"), problems


@pytest.mark.parametrize("path", ["../outside.parquet", "/etc/hostname", "zero_shot/../../x", "a\\b"])
def test_manifest_paths_outside_the_folder_are_refused_before_anything_is_read(release, path):
    m = json.loads((release / "manifest.json").read_text())
    m["files"][path] = {"sha256": "0" * 64}
    (release / "manifest.json").write_text(json.dumps(m))
    assert verify(release,
                  progress=False).problems == [f"manifest: {path!r} is not a plain path inside the release folder"]


def test_links_and_stray_files_are_named(release):
    (release / "notes.txt").write_text("hi")
    (release / ".hidden-lock").write_text("ignored")
    assert verify(release,
                  progress=False).problems == ["notes.txt: not in the manifest (an extra file in the release folder)"]
    (release / "notes.txt").unlink()
    target = release / SHARD
    moved = release.parent / "elsewhere.parquet"
    target.rename(moved)
    target.symlink_to(moved)
    assert verify(release, progress=False).problems == [f"{SHARD}: a symbolic link; a release holds only regular files"]


@pytest.mark.parametrize("change", [
    lambda m: m.update(configs=["zero_shot"]),
    lambda m: m.update(files=[]),
    lambda m: m["params"].pop("render"),
    lambda m: m["configs"]["zero_shot"]["test"].update(rows="many"),
])
def test_a_malformed_manifest_is_one_line(release, change):
    m = json.loads((release / "manifest.json").read_text())
    change(m)
    (release / "manifest.json").write_text(json.dumps(m))
    res = g2m("verify", str(release), "--quiet")
    assert res.returncode in (1, 2) and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_yaml_bomb_in_the_readme_is_refused_without_expanding_it(release):
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + k)}: &{chr(98 + k)} [*{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}]\n"
        for k in range(20)
    ) + "configs: *u\n---\n"
    (release / "README.md").write_text(bomb)
    _rehash(release, "README.md")
    (problem,) = verify(release, progress=False).problems
    assert problem.startswith("README.md: its front matter does not read") and "aliases" in problem


def test_a_deeply_nested_manifest_is_one_line(release):
    (release / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    res = g2m("verify", str(release), "--quiet")
    assert res.returncode == 2 and "not a readable manifest" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(("change", "problem"), [
    (lambda m: m["files"][SHARD].update(size="big"), f"{SHARD}: the manifest gives its size as 'big'"),
    (lambda m: m["files"][SHARD].update(size=m["files"][SHARD]["size"] + 1), f"{SHARD}: the manifest gives its size"),
    (lambda m: m["files"][SHARD].update(rows=-5), f"{SHARD}: the manifest gives '-5' rows, the build plans"),
    (lambda m: m["configs"]["zero_shot"]["test"].update(rows=-5), "manifest: zero_shot/test gives '-5' rows"),
])
def test_sizes_and_row_counts_in_the_manifest_must_be_the_real_ones(release, change, problem):
    m = json.loads((release / "manifest.json").read_text())
    change(m)
    (release / "manifest.json").write_text(json.dumps(m))
    problems = verify(release, progress=False).problems
    assert len(problems) == 1 and problems[0].startswith(problem), problems


@pytest.mark.parametrize(("front", "reason"), [
    ("x: " + "[" * 100_000 + "]" * 100_000, "nested more than 32 levels deep"),  # PyYAML alone: minutes
    ("configs: []\nconfigs: []", "the key 'configs' is written twice"),  # parsers disagree on which one wins
    ("- a list\n- not a mapping", "its front matter is list, not a mapping"),
])
def test_a_hostile_readme_front_matter_is_named_at_once(release, front, reason):
    (release / "README.md").write_text(f"---\n{front}\n---\n# card\n")
    _rehash(release, "README.md")
    (problem,) = verify(release, progress=False).problems
    assert problem.startswith("README.md:") and reason in problem, problem
