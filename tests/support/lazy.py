"""A module bound to a test file's global name but imported on first use.

Every xdist worker collects (imports) every test file, so a ``import torch`` at the top of one file costs each worker
seconds before its first test, whatever tests it is then given; the fast lane pays it in full. A file that binds
``torch = lazy("torch")`` imports torch only when one of its tests touches it. Nothing is put in ``sys.modules``
early: libraries that look there to see whether torch is loaded see the truth.
"""

from __future__ import annotations

import importlib


class _Lazy:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith(("__", "_mock")):  # pytest's collection probes every global (``__test__``, ``_mock_name``)
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy(name: str):
    """``name``'s module on first attribute access (``torch.zeros``, ``datasets.load_dataset``)."""
    return _Lazy(name)
