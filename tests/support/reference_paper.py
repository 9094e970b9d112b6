"""The paper protocol's parser written the obvious way, from the rules (``shared/reference/authors-code-facts.md``):
Python's ``re`` with the lazy pattern, ``ast.literal_eval`` and ``numpy``. Quadratic on hostile text and it trusts
the standard library's literal reader, so it is for tests only: the shipped ``scoring.paper`` must agree with
it on any text it can finish."""

from __future__ import annotations

import ast
import re

import numpy as np

LIST_OF_LISTS = re.compile(r"\[\s*\[.*?\](?:\s*,\s*\[.*?\]\s*)*\]", re.S)


def parse(text: str, n: int):
    text = text.strip().replace("```python", "").replace("```", "").strip()
    m = LIST_OF_LISTS.search(text)
    if m:
        try:
            arr = np.array(ast.literal_eval(m.group()), dtype=int)
            if arr.shape == (n, n):
                return tuple(map(tuple, arr.tolist())), "literal"
        except Exception:  # noqa: BLE001 - any failure moves on, as the rules say
            pass
    if "ROW1=" in text:
        rows = []
        try:
            for i in range(1, n + 1):
                r = re.search(rf"ROW{i}=\[([0-9,\s\-]*)\]", text)
                if r is None:
                    break
                values = [int(x) for x in r.group(1).split(",") if x.strip()]
                if len(values) != n:
                    break
                rows.append(tuple(values))
        except ValueError:
            rows = []
        if len(rows) == n:
            return tuple(rows), "row_labels"
    runs = re.findall(r"\d+", text)
    if len(runs) == n * n:
        try:
            values = [int(r) for r in runs]
        except ValueError:
            return None, "none"
        return tuple(tuple(values[i * n:(i + 1) * n]) for i in range(n)), "digit_runs"
    return None, "none"
