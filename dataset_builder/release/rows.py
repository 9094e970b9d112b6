"""The row layers of ``g2m verify`` (see ``verify``): a stored row against the row its seed regenerates, byte for
byte on the fast path, and pixel by pixel where the bytes differ (a copy re-encoded elsewhere is told apart from an
edit). ``check_shard`` is one worker's job: one shard, every row or a sample of them."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from dataset_builder.grids.generate import make_image, make_matrix, make_sample
from dataset_builder.grids.prompt import build_prompt
from dataset_builder.grids.render import decode_indices, image_to_indices, render_indices
from dataset_builder.grids.spec import color_names
from dataset_builder.release.build import ShardTask
from dataset_builder.release.table import SCHEMA


def _row_problem(task: ShardTask, row: dict, expected_block, index: int, regenerate: bool) -> str | None:
    seed = expected_block.seed(index)
    want_id = expected_block.sample_id(index)
    if row["id"] != want_id:
        return f"id is {row['id']!r} where the plan has {want_id!r}"
    n, c = expected_block.grid_size, expected_block.num_colors
    if row["seed"] != seed or row["grid_size"] != n or row["num_colors"] != c:
        return (f"seed/grid_size/num_colors are {row['seed']}/{row['grid_size']}/{row['num_colors']}, expected "
                f"{seed}/{n}/{c}")
    if row["colors"] != color_names(c):
        return "colors column differs from the palette"
    if row["prompt"] != build_prompt(n, c):
        return "prompt differs from the one this package writes"
    png = (row.get("image") or {}).get("bytes") or b""
    try:
        with Image.open(io.BytesIO(png)) as im:
            if im.format != "PNG":
                return f"image is {im.format}, not PNG"
            idx = image_to_indices(im)
    except Exception as e:  # any undecodable image is a finding, never a crash
        return f"image does not decode: {e}"
    res = task.render.resolution
    if idx.shape != (res, res):
        return f"image is {idx.shape[1]}x{idx.shape[0]}, expected {res}x{res}"
    try:
        stored = np.asarray(row["matrix"], dtype=np.int16)
    except (TypeError, ValueError):
        return "matrix is ragged"
    if stored.shape != (n, n):
        return f"matrix is {stored.shape}, expected ({n}, {n})"
    seen = decode_indices(idx, n, task.render.outline)
    if (seen < 0).any():
        r, col = map(int, np.argwhere(seen < 0)[0])
        return f"cell ({r}, {col}) shows no palette colour at its centre"
    if (seen != stored).any():
        r, col = map(int, np.argwhere(seen != stored)[0])
        return f"matrix says {stored[r, col]} at cell ({r}, {col}) but the image shows {seen[r, col]}"
    diff = np.argwhere(render_indices(seen, res, task.render.outline) != idx)
    if diff.size:
        y, x = map(int, diff[0])
        return f"pixel (x={x}, y={y}) differs from the rendering of the grid ({len(diff)} pixels differ)"
    if regenerate:
        if (make_matrix(seed, n, c) != stored).any():
            return f"matrix differs from the one seed {seed} generates"
        if make_image(stored.astype(np.int8), task.render) != png:
            return (f"PNG bytes differ from the ones seed {seed} generates (the pixels are the same: the image was "
                    "re-encoded)")
    return None


class _Columns:
    """A shard's columns as the fast path reads them: Python lists for the small ones, the PNG bytes, and every
    matrix as a slice of one flat int8 array (``matrix(k)``: None unless row k holds an N x N matrix)."""

    def __init__(self, table: pa.Table) -> None:
        def col(name: str) -> pa.Array:
            return table.column(name).combine_chunks()

        self.ids, self.seeds = col("id").to_pylist(), col("seed").to_pylist()
        self.sizes, self.colors = col("grid_size").to_pylist(), col("num_colors").to_pylist()
        self.palettes, self.prompts = col("colors").to_pylist(), col("prompt").to_pylist()
        image = col("image")
        png = image.flatten()[image.type.get_field_index("bytes")]
        self.pngs = png.to_pylist()
        matrix = col("matrix")
        rows = matrix.values
        self.outer = matrix.offsets.to_numpy()
        self.inner = rows.offsets.to_numpy()
        self.cells = rows.values.to_numpy(zero_copy_only=False)
        self.whole = all(a.null_count == 0 for a in (image, png, matrix, rows, rows.values))

    def matrix(self, k: int, n: int) -> np.ndarray | None:
        first, last = int(self.outer[k]), int(self.outer[k + 1])
        if last - first != n:
            return None
        starts = self.inner[first:last + 1]
        if n and not (np.diff(starts) == n).all():
            return None
        return self.cells[starts[0]:starts[0] + n * n].reshape(n, n)


def _matches_its_seed(cols: _Columns, k: int, block, index: int, want: np.ndarray, want_png: bytes,
                      texts: dict) -> bool:
    """Row k is exactly what its seed generates (``want``, ``want_png``: the seed's matrix and image), PNG bytes
    included: the fast path, no decoding."""
    seed, n, c = block.seed(index), block.grid_size, block.num_colors
    if (cols.ids[k] != block.sample_id(index) or cols.seeds[k] != seed or cols.sizes[k] != n
            or cols.colors[k] != c):
        return False
    if (n, c) not in texts:
        texts[(n, c)] = (color_names(c), build_prompt(n, c))
    palette, prompt = texts[(n, c)]
    if cols.palettes[k] != palette or cols.prompts[k] != prompt:
        return False
    stored = cols.matrix(k, n)
    return stored is not None and np.array_equal(stored, want) and cols.pngs[k] == want_png


def check_shard(task: ShardTask, root: str, rows: frozenset[int] | None) -> tuple[int, int, str | None]:
    """(rows regenerated, rows decoded, first problem) for one shard: every row (``rows`` None, generated in one
    batch as the build does) or only the row numbers in ``rows``, each generated alone."""
    path = Path(root) / task.relpath
    try:
        table = pq.read_table(path, use_threads=False)  # one worker per core already
    except Exception as e:
        return 0, 0, f"{task.relpath}: not a readable parquet file ({e})"
    if not table.schema.remove_metadata().equals(SCHEMA.remove_metadata()):
        return 0, 0, f"{task.relpath}: columns or types differ from the release schema"
    if table.num_rows != task.rows:
        return 0, 0, f"{task.relpath}: {table.num_rows} rows, the plan has {task.rows}"
    expected = [(b, i) for b, start, stop in task.runs for i in range(start, stop)]
    if rows is None:
        runs = task.generate()  # what the build made: every matrix and PNG, the same batched work
        wants = zip(range(len(expected)), (m for run in runs for m in run.matrices),
                    (png for run in runs for png in run.pngs), strict=True)
        whole = _Columns(table)
        picked = ((k, whole, k, m, png) for k, m, png in wants)
    else:  # a few rows: only they are generated, and only their columns read out of the table
        samples = ((k, make_sample(*expected[k], task.render)) for k in sorted(rows))
        picked = ((k, _Columns(table.slice(k, 1)), 0, s.matrix, s.png) for k, s in samples)
    texts: dict = {}
    regenerated = decoded = 0
    for k, cols, at, want, want_png in picked:
        block, i = expected[k]
        regenerated += 1
        if cols.whole and _matches_its_seed(cols, at, block, i, want, want_png, texts):
            continue
        decoded += 1
        row = table.slice(k, 1).to_pylist()[0]
        why = _row_problem(task, row, block, i, regenerate=True)
        if why:
            return regenerated, decoded, f"{task.relpath} row {k} (id {row.get('id')}): {why}"
    return regenerated, decoded, None
