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
- **One load.** Every task loads its dataset itself (``ConfigurableTask.download``): 45 ``datasets.load_dataset``
  calls on the same config, 0.1 s of CPU each, resolving the same data files each time. During a run a task whose
  path, config and ``dataset_kwargs`` were loaded already gets that ``DatasetDict`` (``one_load_per_dataset``;
  ``datasets`` objects are not changed in place: ``process_docs`` returns a new one).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import subprocess
from collections.abc import Iterator

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


@contextlib.contextmanager
def lm_eval_fixes() -> Iterator[None]:
    import lm_eval.api.task as task_module
    import lm_eval.evaluator as evaluator_module

    log_filter = _QuietCustomDataset()
    logging.getLogger("lm_eval.api.task").addFilter(log_filter)
    saved = task_module.tqdm, evaluator_module.get_git_commit_hash, evaluator_module.hash_dict_images
    task_module.tqdm = functools.partial(saved[0], disable=True)
    evaluator_module.get_git_commit_hash = git_commit_hash
    evaluator_module.hash_dict_images = hash_dict_images
    try:
        with one_load_per_dataset():
            yield
    finally:
        task_module.tqdm, evaluator_module.get_git_commit_hash, evaluator_module.hash_dict_images = saved
        logging.getLogger("lm_eval.api.task").removeFilter(log_filter)
