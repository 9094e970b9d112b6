"""Which model a run and a probe are of, and whether they are the same one: the Digital Agnosia gap compares what a
model's internals hold with what its answers say, so a probe of another model gives a number that means nothing.

A run names its model by the checkpoint in its model args (``pretrained=``, ``model=``; else the backend); a probe or
a sweep by ``--encoder`` and the revision it recorded (a Hub revision, or ``local:<hash>`` of a local folder's
files), and, since this check exists, the sha256 of the model's ``config.json``. Two are the same model when they
name the same checkpoint (a local folder by its resolved path, a Hub id as written) and, where both are known, the
same revision and the same config. Nothing here loads a model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

#: What a probe's ``config.json`` hash is recorded as (``probing`` writes it; ``runs`` reads it).
CONFIG_HASH_KEY = "config_sha256"


@dataclass(frozen=True)
class ModelId:
    name: str  # as the record names it
    revision: str | None = None  # a Hub revision; a local folder's "local:<hash>" is not comparable across tools
    config_sha256: str | None = None

    @property
    def key(self) -> str:
        """The checkpoint: a local folder (that still exists) by its resolved path, a Hub id as written."""
        p = Path(self.name).expanduser()
        return str(p.resolve()) if p.is_dir() else self.name.strip().rstrip("/")

    def __str__(self) -> str:
        return self.name + (f"@{self.revision}" if self.revision else "")


def config_sha256(name: str) -> str | None:
    """The sha256 of ``config.json`` in a local model folder, or None (a Hub id, a missing folder)."""
    p = Path(name).expanduser() / "config.json"
    try:
        return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
    except OSError:
        return None


def of_run(run) -> ModelId:
    """The model of a run: its checkpoint, the ``revision=`` of its model args, and the hash of its config where
    the checkpoint is a local folder this machine can read."""
    from scoring.runs.model_args import ModelArgs

    args = ModelArgs.parse((run.results.get("config") or {}).get("model_args"))
    name = run.model
    return ModelId(name, args.get("revision") or None, config_sha256(name))


def of_probe(model: dict) -> ModelId:
    """The model of a probe (``result.json``'s ``encoder``) or a sweep (``sweep.json``'s ``model``)."""
    revision = model.get("revision")
    revision = str(revision) if revision and not str(revision).startswith("local:") and revision != "main" else None
    config = model.get(CONFIG_HASH_KEY)
    return ModelId(str(model.get("name")), revision, str(config) if config else config_sha256(str(model.get("name"))))


def difference(run: ModelId, probe: ModelId) -> str | None:
    """Why the two are not the same model, or None when they are."""
    if run.key != probe.key:
        return "another checkpoint"
    if run.revision and probe.revision and run.revision != probe.revision:
        return f"revision {run.revision} against {probe.revision}"
    if run.config_sha256 and probe.config_sha256 and run.config_sha256 != probe.config_sha256:
        return f"another config.json ({run.config_sha256[:12]} against {probe.config_sha256[:12]})"
    return None


def other_models(run: ModelId, probes: dict[str, dict], allow: bool, where: str) -> dict[str, str]:
    """label -> "probe of X, answers of Y" for each probe (label -> its model record) of another model than the
    run's. Unless ``allow`` (``--compare-other-models``), any such probe is refused in one line naming both."""
    from g2m_base.errors import UsageError

    out = {}
    for label, record in probes.items():
        probe = of_probe(record)
        why = difference(run, probe)
        if why and not allow:
            raise UsageError(f"{where}: {label} is a probe of {probe}, not of the run's model {run} ({why}); a gap "
                             "between two models says nothing about either: probe the run's model, or pass "
                             "--compare-other-models to compare them anyway")
        if why:
            out[label] = f"probe of {probe}, answers of {run}"
    return out
