"""``g2m eval --model hf-multimodal`` (lm-eval's in-process backend) on a tiny llava: the cost of lm-eval's
``gc.collect()`` after every batch, with the run's objects frozen (``gc.freeze``, as ``g2m eval`` runs it) and
without (lm-eval as it is), in one process, one run each.

    python benchmarks/bench_in_process.py [--rows-scale 0.02] [--batch-size 1]

Both runs answer the same rows with the same weights (greedy, 8 tokens); the answers must be identical, and the
ratio of the two wall times is printed. The build and the model are made first (not counted). "Without" puts back
what lm-eval does by making ``gc.freeze`` a no-op for that run.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _answers(run_dir: str) -> dict[str, str]:
    out = {}
    for path in sorted(Path(run_dir).glob("samples_*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out[row["doc"]["id"]] = row["filtered_resps"][0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-scale", type=float, default=0.02, help="share of zero_shot (0.02: 90 rows)")
    ap.add_argument("--batch-size", type=int, default=1)
    args = ap.parse_args()

    from dataset_builder.release.build import BuildParams, build
    from harness_tasks import EvalSpec, run_eval
    from tests.support.tiny_models import make_tiny_llava

    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-in-process-"))
    data = tmp / "data"
    build(data, "zero_shot", BuildParams(scale=args.rows_scale), progress=False)
    model = make_tiny_llava(tmp / "llava")

    def run(name: str) -> tuple[float, dict[str, str]]:
        t = time.perf_counter()
        res = run_eval(EvalSpec(model="hf-multimodal", model_args=f"pretrained={model},dtype=float32", device="cpu",
                                data=str(data), output=str(tmp / name), gen_kwargs="max_gen_toks=8",
                                batch_size=str(args.batch_size), resume=False, progress=False))
        return time.perf_counter() - t, _answers(res["output_dir"])

    run("warm-up")  # imports and first loads, not counted
    frozen, with_freeze = run("frozen")
    freeze = gc.freeze
    gc.freeze = lambda: None  # lm-eval as it is: every collection walks the whole heap
    try:
        walked, without = run("not-frozen")
    finally:
        gc.freeze = freeze
    assert with_freeze == without, "the freeze changed an answer"
    print(f"{len(with_freeze)} rows, batch {args.batch_size}: frozen {frozen:.1f} s, lm-eval as it is {walked:.1f} s, "
          f"{walked / frozen:.2f}x (identical answers)")


if __name__ == "__main__":
    main()
