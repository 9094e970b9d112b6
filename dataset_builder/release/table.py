"""Row schema and the parquet encoding of a shard.

The columns are fixed by the release (others may be added later, never renamed). Parquet options follow what
``datasets`` itself writes for ``push_to_hub``: image bytes stored PLAIN and uncompressed (PNG is already deflated),
the other columns snappy with dictionaries, content-defined chunking so re-uploads deduplicate, a page index.
Row groups are small so that one row can be read without pulling a whole shard (the dataset viewer does this).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dataset_builder.grids.generate import SampleRun
from dataset_builder.grids.prompt import build_prompt
from dataset_builder.grids.spec import color_names
from g2m_base.bounded_json import loads

#: The release schema in ``datasets``' own serialisation. It is spelled out (rather than taken from
#: ``Features(...).to_dict()``) so that the parquet bytes do not depend on the installed ``datasets`` version, and so
#: that build workers need not import ``datasets`` at all; a test holds it equal to ``datasets``' own rendering.
FEATURES_DICT: dict = {
    "id": {"dtype": "string", "_type": "Value"},
    "image": {"mode": "RGB", "_type": "Image"},
    "grid_size": {"dtype": "int32", "_type": "Value"},
    "num_colors": {"dtype": "int32", "_type": "Value"},
    "colors": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "matrix": {"feature": {"feature": {"dtype": "int8", "_type": "Value"}, "_type": "List"}, "_type": "List"},
    "prompt": {"dtype": "string", "_type": "Value"},
    "seed": {"dtype": "int64", "_type": "Value"},
}
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
        ("grid_size", pa.int32()),
        ("num_colors", pa.int32()),
        ("colors", pa.list_(pa.string())),
        ("matrix", pa.list_(pa.list_(pa.int8()))),
        ("prompt", pa.string()),
        ("seed", pa.int64()),
    ],
    metadata={b"huggingface": json.dumps({"info": {"features": FEATURES_DICT}}).encode()},
)


def features():
    """The release schema as ``datasets.Features`` (imported lazily: ``datasets`` is slow to import)."""
    import datasets

    return datasets.Features.from_dict(FEATURES_DICT)


COLUMNS = tuple(FEATURES_DICT)
ROW_GROUP_SIZE = 500
SHARD_METADATA_KEY = b"g2m_shard"
NUM_BYTES_KEY = b"g2m_num_bytes"
CDC_OPTIONS = {"min_chunk_size": 256 * 1024, "max_chunk_size": 1024 * 1024, "norm_level": 0}


def runs_to_table(runs: Sequence[SampleRun]) -> pa.Table:
    """Arrow table of the rows of ``runs`` (a shard: at least one), built column-wise: no Python object per matrix
    cell, and the colours and prompt made once per run (they depend only on N and C)."""
    sizes = np.concatenate([np.full(len(r), r.block.grid_size, np.int32) for r in runs])
    flat = np.concatenate([r.matrices.reshape(-1) for r in runs])
    inner_offsets = np.concatenate([[0], np.cumsum(np.repeat(sizes, sizes))]).astype(np.int32)
    outer_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    rows = pa.ListArray.from_arrays(pa.array(inner_offsets), pa.array(flat, pa.int8()))
    matrix = pa.ListArray.from_arrays(pa.array(outer_offsets), rows)
    pngs = [png for r in runs for png in r.pngs]
    image = pa.StructArray.from_arrays([pa.array(pngs, pa.binary()), pa.nulls(len(pngs), pa.string())],
                                       names=["bytes", "path"])
    colors: list[list[str]] = []
    prompts: list[str] = []
    for r in runs:
        colors += [color_names(r.block.num_colors)] * len(r)
        prompts += [build_prompt(r.block.grid_size, r.block.num_colors)] * len(r)
    arrays = [
        pa.array([i for r in runs for i in r.ids], pa.string()),
        image,
        pa.array(sizes, pa.int32()),
        pa.array(np.concatenate([np.full(len(r), r.block.num_colors, np.int32) for r in runs]), pa.int32()),
        pa.array(colors, pa.list_(pa.string())),
        matrix.cast(SCHEMA.field("matrix").type),
        pa.array(prompts, pa.string()),
        pa.array([s for r in runs for s in r.seeds], pa.int64()),
    ]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def _column_options() -> dict:
    compression, dictionary, encoding = {}, [], {}
    for path in SCHEMA_LEAVES:
        if path.startswith("image."):
            compression[path] = "none"
            encoding[path] = "PLAIN"
        else:
            compression[path] = "snappy"
            dictionary.append(path)
    return {"compression": compression, "use_dictionary": dictionary, "column_encoding": encoding}


def _leaves(name: str, t: pa.DataType) -> list[str]:
    if pa.types.is_struct(t):
        return [leaf for f in t for leaf in _leaves(f"{name}.{f.name}", f.type)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _leaves(f"{name}.list.element", t.value_type)
    return [name]


SCHEMA_LEAVES = [leaf for f in SCHEMA for leaf in _leaves(f.name, f.type)]


def table_to_parquet_bytes(table: pa.Table, shard_metadata: dict) -> bytes:
    """Serialise a shard; ``shard_metadata`` is stored in the footer so a resumed build can recognise the shard.

    The footer also keeps the in-memory size of the table as built (``dataset_info`` reports it): a table read back
    from parquet can have other buffer sizes, and the README must not depend on whether a shard was resumed.
    """
    buf = pa.BufferOutputStream()  # Arrow's own buffer: no Python call per write
    writer = pq.ParquetWriter(
        buf,
        SCHEMA,
        write_page_index=True,
        use_content_defined_chunking=CDC_OPTIONS,
        **_column_options(),
    )
    writer.write_table(table, row_group_size=ROW_GROUP_SIZE)
    writer.add_key_value_metadata(
        {
            "content_defined_chunking": json.dumps(CDC_OPTIONS),
            SHARD_METADATA_KEY.decode(): json.dumps(shard_metadata, sort_keys=True),
            NUM_BYTES_KEY.decode(): str(table.nbytes),
        }
    )
    writer.close()
    return buf.getvalue().to_pybytes()


def read_shard_metadata(path) -> tuple[int, dict | None, int]:
    """(row count, our footer metadata or None, in-memory size); raises on a file that is not readable parquet."""
    meta = pq.ParquetFile(path).metadata
    kv = meta.metadata or {}
    raw = kv.get(SHARD_METADATA_KEY)
    return meta.num_rows, (loads(raw, f"{path}: footer metadata") if raw else None), int(kv.get(NUM_BYTES_KEY, b"0"))
