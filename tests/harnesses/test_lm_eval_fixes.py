"""What ``g2m eval`` changes in lm-eval for torch (``harness_tasks/with_lm_eval/fixes.py``): a run whose process
loads no model (a baseline, a server's client) never imports torch or transformers, yet the seed lm-eval records
holds: torch gets it the moment it is imported during the run; where a model runs, the machine's description is
torch's own, as lm-eval writes it."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from tests.support.helpers import REPO

pytestmark = pytest.mark.slow  # child processes that import torch (3 s each)


def _child(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_a_baseline_run_imports_no_torch_and_records_the_seed(small_release, tmp_path):
    loaded = _child(
        "import sys\nfrom g2m_cli.main import main\n"
        f"sys.argv = ['g2m', 'eval', '--model', 'g2m-random', '--data', {str(small_release)!r}, '--out', "
        f"{str(tmp_path)!r}, '--limit', '1', '--quiet']\n"
        "rc = main()\nprint(rc, sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    assert loaded == "0 []"
    results = json.loads(open(glob.glob(str(tmp_path / "g2m-random" / "results_*.json"))[0]).read())
    assert results["config"]["torch_seed"] == 1234 and results["config"]["numpy_seed"] == 1234
    assert results["pretty_env_info"] == "N/A (no torch model ran in this process)"
    from importlib.metadata import version

    assert results["transformers_version"] == version("transformers") and results["lm_eval_version"] == "0.4.13"


@pytest.mark.parametrize("loaded_first", [False, True])
def test_torch_is_seeded_whether_loaded_before_or_during_the_run(loaded_first):
    """Seeded before the import (the hook) or after it (at once): the first draw is a fresh manual_seed's draw."""
    got = _child(
        ("import torch\n" if loaded_first else "")
        + "import sys\nfrom harness_tasks.with_lm_eval.fixes import lm_eval_fixes\n"
          "import lm_eval.evaluator as ev\n"
          "with lm_eval_fixes():\n"
          "    ev.set_torch_seed(7)\n"
          "    import torch\n"
          "    first = torch.rand(4).tolist()\n"
          "torch.manual_seed(7)\n"
          "hooks = [f for f in sys.meta_path if type(f).__name__ == '_SeedTorchOnImport']\n"
          "print(first == torch.rand(4).tolist(), ev.set_torch_seed.__module__, hooks)")
    assert got == "True lm_eval.utils []"  # seeded, lm-eval's own function back, no hook left behind


def test_a_pending_seed_is_dropped_when_the_run_ends_without_torch():
    got = _child(
        "import sys\nfrom harness_tasks.with_lm_eval.fixes import lm_eval_fixes\nimport lm_eval.evaluator as ev\n"
        "with lm_eval_fixes():\n    ev.set_torch_seed(7)\n"
        "import torch\nprint(torch.initial_seed() != 7, 'torch' in sys.modules)")
    assert got == "True True"  # torch imported after the run is not touched by it


def test_where_torch_is_loaded_the_description_is_torchs_own():
    import torch  # noqa: F401 - a model in this process

    from harness_tasks.with_lm_eval.fixes import add_env_info

    storage: dict = {}
    add_env_info(storage)
    assert storage["pretty_env_info"].startswith("PyTorch version: ") and set(storage) == {
        "pretty_env_info", "transformers_version", "lm_eval_version", "upper_git_hash"}
