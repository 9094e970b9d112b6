"""``key=value,key=value`` model arguments (lm-eval's ``--model_args`` spelling), parsed and joined in one place.

Every harness and the leaderboard meet these strings: lm-eval and lmms-eval take them as they are, inspect takes a
dict, a run records them, and a run's name comes from the checkpoint they name. Pieces are kept verbatim and in
order, so a string that goes through ``ModelArgs`` unchanged comes out byte-identical (the resume key hashes it).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The keys that name the checkpoint, in the order a run's name is looked for.
NAME_KEYS = ("pretrained", "model", "path")


@dataclass(frozen=True)
class ModelArgs:
    """Parsed model arguments: ``pieces`` as written (``key=value``, or a bare word a backend may accept)."""

    pieces: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | dict | ModelArgs | None) -> ModelArgs:
        if isinstance(text, ModelArgs):
            return text
        if isinstance(text, dict):
            return cls(tuple(f"{k}={v}" for k, v in text.items()))
        return cls(tuple(p for p in (text or "").split(",") if p.strip()))

    @staticmethod
    def _key(piece: str) -> str | None:
        key, sep, _ = piece.partition("=")
        return key.strip() if sep else None

    def keys(self) -> set[str]:
        return {k for k in map(self._key, self.pieces) if k}

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of the first ``key=`` piece (as written), else ``default``."""
        for piece in self.pieces:
            if self._key(piece) == key:
                return piece.partition("=")[2]
        return default

    def without(self, *keys: str) -> ModelArgs:
        return ModelArgs(tuple(p for p in self.pieces if self._key(p) not in keys))

    def with_defaults(self, **defaults: object) -> ModelArgs:
        """These arguments plus each default the user did not set (``None`` defaults are skipped)."""
        have = self.keys()
        extra = tuple(f"{k}={v}" for k, v in defaults.items() if v is not None and k not in have)
        return ModelArgs(self.pieces + extra)

    def as_dict(self) -> dict[str, str]:
        return {k: p.partition("=")[2] for p in self.pieces if (k := self._key(p))}

    def name(self, backend: str, keys: tuple[str, ...] = NAME_KEYS) -> str:
        """What a run is called: the first checkpoint named by one of ``keys``, else the backend."""
        for piece in self.pieces:
            if self._key(piece) in keys and piece.partition("=")[2]:
                return piece.partition("=")[2]
        return backend

    def __str__(self) -> str:
        return ",".join(self.pieces)


def model_name(backend: str, model_args: str | dict | ModelArgs | None) -> str:
    """What a run is called: the checkpoint in ``model_args`` (pretrained=, model=, path=), else the backend."""
    return ModelArgs.parse(model_args).name(backend)
