"""What ``g2m eval`` changes in lm-eval 0.4.13 for the duration of a run, and restores after (``lm_eval_fixes()``).

- **Noise.** lm-eval draws an unlabelled bar per task while it builds requests (45 of them for ``g2m``), warns once
  per task that uses ``custom_dataset`` kwargs, and runs ``git describe`` for its results, which prints "fatal: not a
  git repository" outside a checkout; ``datasets`` adds its own bars. The bars and the repeated warning are switched off
  (``g2m eval`` draws one bar
  for the run); git's stderr is swallowed (the hash is still recorded when there is one).
- **Speed.** Before writing the samples log, ``hash_dict_images`` walks every logged value one Python call at a time
  to replace images by their hashes: for G2M that is 5.5 million matrix and mask integers, 12 s of a 30 s run. The
  replacement gives the same result (images and bytes hashed the same way) but passes over lists that hold only
  plain values in one step, and shares them instead of copying them (lm-eval's copy doubled the 320,000 matrix and
  mask rows, about 50 MB, at the run's peak memory, when the samples are written).
- **No torch where no model runs.** lm-eval seeds torch and asks torch for a description of the machine
  (``get_pretty_env_info``: ``pip``, ``lscpu``, ``gcc`` and more as child processes) on every run, so a baseline or a
  server client, which runs no model in this process, paid 3 s to import torch and 2 s to describe it. Here torch is
  seeded when it is loaded (at once if it is, else the moment it is imported during the run, before anything can draw
  from it), so the recorded ``torch_seed`` holds either way; the description is taken once per process where torch is
  loaded, and is "N/A (no torch model ran in this process)" where it is not; ``transformers_version`` is read from the
  installed package's metadata, not by importing it.
- **One load.** Every task loads its dataset itself (``ConfigurableTask.download``): 45 ``datasets.load_dataset``
  calls on the same config, 0.1 s of CPU each, resolving the same data files each time. During a run a task whose
  path, config and ``dataset_kwargs`` were loaded already gets that ``DatasetDict`` (``one_load_per_dataset``;
  ``datasets`` objects are not changed in place: ``process_docs`` returns a new one).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.metadata
import importlib.util
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

_PLAIN = frozenset({int, float, str, bool, type(None)})


class _QuietCustomDataset(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "Custom kwargs can be passed" not in record.getMessage()


def git_commit_hash() -> str | None:
    """lm-eval's ``get_git_commit_hash`` without git's complaint on stderr outside a checkout."""
    try:
        out = subprocess.run(["git", "describe", "--always"], capture_output=True, text=True, timeout=10)  # noqa: S607
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def hash_dict_images(data_dict: dict) -> dict:
    """``lm_eval.utils.hash_dict_images``, with lists of plain values copied in one step."""
    from lm_eval.utils import convert_bytes_to_hash, convert_pil_to_hash
    from PIL import Image

    def value(v):
        t = type(v)
        if t in _PLAIN:
            return v
        if t is list:  # a list of plain values has nothing to replace: shared, not copied (it is only written out)
            return v if set(map(type, v)) <= _PLAIN else [value(x) for x in v]
        if isinstance(v, (bytes, bytearray)):
            return convert_bytes_to_hash(v)
        if isinstance(v, Image.Image):
            return convert_pil_to_hash(v)
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [value(x) for x in v]
        if isinstance(v, tuple):
            return tuple(value(x) for x in v)
        return v

    if not isinstance(data_dict, dict):
        raise TypeError("Input must be a dictionary")
    return {k: value(v) for k, v in data_dict.items()}


@contextlib.contextmanager
def one_load_per_dataset() -> Iterator[None]:
    """While it is open, ``ConfigurableTask.download`` loads each (path, config, kwargs) once and hands the same data
    to every task that asks for it again; a task with its own ``custom_dataset`` or extra arguments loads as before."""
    from lm_eval.api.task import ConfigurableTask

    download = ConfigurableTask.__dict__["download"]
    loaded = {}

    def shared(task, dataset_kwargs=None, **kwargs):
        if task.config.custom_dataset is not None or kwargs:
            return download(task, dataset_kwargs, **kwargs)
        key = (task.DATASET_PATH, task.DATASET_NAME, json.dumps(dataset_kwargs, sort_keys=True, default=repr))
        if key not in loaded:
            download(task, dataset_kwargs)
            loaded[key] = task.dataset
        task.dataset = loaded[key]
        return None

    ConfigurableTask.download = shared
    try:
        yield
    finally:
        ConfigurableTask.download = download


@contextlib.contextmanager
def quiet_datasets() -> Iterator[None]:
    """No ``datasets`` bars ("Generating test split", "Map", ...) while g2m runs: one bar per run is g2m's."""
    import datasets

    bars_were_on = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if bars_were_on:
            datasets.enable_progress_bars()


class _SeedTorchOnImport(importlib.abc.MetaPathFinder):
    """Seeds torch as its import finishes: lm-eval's seed, for a run whose process had not loaded torch when lm-eval
    set it (on ``sys.meta_path`` for the run's duration, and off it once torch is found)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        self.remove()
        spec = importlib.util.find_spec("torch")  # the usual finders, this one now off the path
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module) -> None:
                run(module)
                module.manual_seed(self.seed)

            spec.loader.exec_module = exec_module
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def seed_torch(seed: int, pending: list) -> None:
    """lm-eval's ``set_torch_seed``, without importing torch: seeded now if loaded, else when imported."""
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    else:
        hook = _SeedTorchOnImport(seed)
        sys.meta_path.insert(0, hook)
        pending.append(hook)


@functools.cache
def _torch_env_info() -> str:
    from torch.utils.collect_env import get_pretty_env_info

    return get_pretty_env_info()


def add_env_info(storage: dict) -> None:
    """lm-eval's ``add_env_info`` (the same keys), without loading torch or transformers to fill them in."""
    from lm_eval.loggers.utils import get_commit_from_path

    if "torch" in sys.modules:
        try:
            env = _torch_env_info()
        except Exception as err:  # noqa: BLE001 - lm-eval records the failure as the value, and so do we
            env = str(err)
    else:
        env = "N/A (no torch model ran in this process)"

    def installed(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "N/A"

    storage.update(pretty_env_info=env, transformers_version=installed("transformers"),
                   lm_eval_version=installed("lm_eval"),
                   upper_git_hash=get_commit_from_path(Path(os.getcwd(), "..")))


@contextlib.contextmanager
def lm_eval_fixes() -> Iterator[None]:
    import lm_eval.api.task as task_module
    import lm_eval.evaluator as evaluator_module

    log_filter = _QuietCustomDataset()
    logging.getLogger("lm_eval.api.task").addFilter(log_filter)
    pending: list[_SeedTorchOnImport] = []
    fixes = {"get_git_commit_hash": git_commit_hash, "hash_dict_images": hash_dict_images,
             "set_torch_seed": functools.partial(seed_torch, pending=pending), "add_env_info": add_env_info}
    saved = task_module.tqdm, {name: getattr(evaluator_module, name) for name in fixes}
    task_module.tqdm = functools.partial(saved[0], disable=True)
    for name, fix in fixes.items():
        setattr(evaluator_module, name, fix)
    try:
        with one_load_per_dataset():
            yield
    finally:
        task_module.tqdm = saved[0]
        for name, original in saved[1].items():
            setattr(evaluator_module, name, original)
        for hook in pending:
            hook.remove()
        logging.getLogger("lm_eval.api.task").removeFilter(log_filter)
