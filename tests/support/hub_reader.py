"""Read a dataset the way a user does and print what it holds, as JSON (run as a script, in a fresh process, so that
``HF_ENDPOINT`` is set before ``huggingface_hub`` is imported).

``python tests/support/hub_reader.py SOURCE [REVISION]``: SOURCE is a Hub id (read through ``HF_ENDPOINT``) or a local
folder. For every config ``get_dataset_config_names`` lists and every split, the number of rows and a sha256 over
every row in order (every column, the PNG bytes as stored), read with ``load_dataset`` and again with
``streaming=True``.
"""

from __future__ import annotations

import hashlib
import json
import sys


def _digest(rows) -> tuple[int, str]:
    h, n = hashlib.sha256(), 0
    for row in rows:
        image = row.pop("image")
        h.update(hashlib.sha256(image["bytes"]).digest())
        h.update(json.dumps(row, sort_keys=True).encode())
        n += 1
    return n, h.hexdigest()


def main(source: str, revision: str | None) -> dict:
    import datasets

    configs = datasets.get_dataset_config_names(source, revision=revision)
    out: dict = {"configs": configs, "splits": {}}
    for config in configs:
        loaded = datasets.load_dataset(source, config, revision=revision)
        streamed = datasets.load_dataset(source, config, revision=revision, streaming=True)
        for split in loaded:
            raw = loaded[split].cast_column("image", datasets.Image(decode=False))
            stream = streamed[split].cast_column("image", datasets.Image(decode=False))
            n, sha = _digest(iter(raw))
            ns, stream_sha = _digest(iter(stream))
            out["splits"][f"{config}/{split}"] = {"rows": n, "sha256": sha, "streamed_rows": ns,
                                                  "streamed_sha256": stream_sha}
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
