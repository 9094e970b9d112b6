"""``g2m probe`` and ``g2m probe sweep``: thin argument parsing over ``probing.core.experiment`` and ``probing.sweep``.

``g2m probe --encoder E --config C`` probes one read-out point, as it always has; ``g2m probe sweep --encoder E
--config C`` probes every point from the first vision block to the LLM's last layer. ``--run RUN_DIR`` is read by
the run format's own reader (``scoring.rescoring.run_scores.sweep_reference``), below probing.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from g2m_base.errors import UsageError
from g2m_base.flags import HelpFormatter, add_data, add_out, add_quiet, check_number
from g2m_base.untrusted import term

#: The most memory one GPU may be said to have (--gpu-gb): a thousand times today's largest is a typo.
MAX_GPU_GB = 100_000


def _train_config(args: argparse.Namespace):
    from probing.core.probe import TrainConfig

    return TrainConfig(probe=args.probe, steps=args.steps, batch_size=args.train_batch_size, sampling=args.sampling,
                       lr=args.lr, eval_every=args.eval_every, patience=args.patience, hidden=args.hidden,
                       seed=args.seed)


def _probe(args: argparse.Namespace) -> int:
    from probing.core.experiment import ProbeSpec, run_probe

    if not args.encoder or not args.config:
        raise UsageError("g2m probe needs --encoder and --config (or, for every layer at once: g2m probe sweep ...)")
    spec = ProbeSpec(encoder=args.encoder, config=args.config, readout=args.readout, revision=args.revision,
                     data=args.data, out=args.out, cache_dir=args.cache_dir or f"{args.out}/cache", device=args.device,
                     dtype=args.dtype, cache_dtype=args.cache_dtype, batch_size=args.batch_size,
                     train=_train_config(args))
    res = run_probe(spec, progress=not args.quiet)
    t = res["test"]
    print(f"{term(args.encoder)} [{args.readout}] on {args.config}: test cell accuracy {t['cell_accuracy']:.4f}, "
          f"exact match {t['exact_match']:.4f} (chance {res['chance_cell_accuracy']:.3f}; best step "
          f"{res['best']['step']}, encoder passes {res['encoder_calls']})\nresults: {term(res['output_dir'])}")
    return 0


def _points(text: str) -> tuple[str, ...]:
    """``--points`` as stages, each named once: ``tower,tower`` is a typo for some other list, never a request."""
    from probing.sweep.points import parse_stages

    named = [s.strip() for s in text.split(",") if s.strip()]
    if len(set(named)) != len(named):
        raise UsageError(f"--points names a stage twice: {text!r}")
    return parse_stages(text)


def _gpu_gb(value: float) -> float:
    return check_number("--gpu-gb", value, 0, MAX_GPU_GB, low_open=True)


def _sweep(args: argparse.Namespace) -> int:
    from probing.sweep.run import SweepSpec

    gpu_gb = _gpu_gb(args.gpu_gb)
    spec = SweepSpec(encoder=args.encoder, config=args.config, data=args.data, out=args.out, cache_dir=args.cache_dir,
                     points=_points(args.points), stride=args.stride, tower_readout=args.tower_readout,
                     revision=args.revision, device=args.device, device_map=args.device_map, dtype=args.dtype,
                     cache_dtype=args.cache_dtype, batch_size=args.batch_size, chunk_rows=args.chunk_rows,
                     train=_train_config(args), drop_features=args.drop_features)
    if args.dry_run:
        from probing.sweep.plan import format_plan, plan_sweep

        print(format_plan(plan_sweep(spec, gpu_gb)))
        return 0
    if args.run:
        from dataset_builder.grids.configs import get_config
        from scoring.rescoring.run_scores import sweep_reference

        block = get_config(args.config).splits[0].blocks[0]
        # the identity rule: a line from another model's answers is refused unless asked for, and then named
        probed = {"name": args.encoder, "revision": args.revision}
        spec = replace(spec, reference=sweep_reference(args.run, block.grid_size, block.num_colors, probed,
                                                       args.compare_other_models))
    from probing.sweep.report import summary
    from probing.sweep.run import run_sweep

    res = run_sweep(spec, progress=not args.quiet)
    if "output_dir" in res:  # rank 0 of a data-parallel run (the others return quietly)
        print(summary(res))
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--revision", default=None, help="model revision on the Hub")
    add_data(p)
    add_out(p, "results folder", default="g2m-probes")
    p.add_argument("--cache-dir", default=None, help="feature cache (default: OUT/cache)")
    p.add_argument("--device", default="cpu", help="e.g. cuda or cuda:1")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"], help="model dtype")
    p.add_argument("--cache-dtype", default="float16", choices=["float16", "float32"], help="feature cache dtype")
    p.add_argument("--batch-size", type=int, default=16, help="images per forward pass")
    p.add_argument("--probe", default="conv", choices=["conv", "linear", "mean", "cls"],
                   help="the authors' conv probe; one 1x1 conv (linear); or the authors' pooled probes: the mean of "
                        "the tokens (mean) or the CLS token, the first token where there is none (cls), then one "
                        "linear layer to every cell")
    p.add_argument("--steps", type=int, default=5000, help="training steps (the authors'); ~2 h on a CPU at N=32")
    p.add_argument("--train-batch-size", type=int, default=32, help="probe training batch (the authors': 32)")
    p.add_argument("--sampling", default="epochs", choices=["epochs", "replacement"],
                   help="shuffled epochs (the authors') or random batches drawn with replacement")
    p.add_argument("--lr", type=float, default=5e-4, help="AdamW learning rate")
    p.add_argument("--eval-every", type=int, default=500, help="validation every this many steps")
    p.add_argument("--patience", type=int, default=3, help="stop after this many validations without improvement")
    p.add_argument("--hidden", type=int, default=512,
                   help="width of the conv probe's hidden layer (the authors': 512; the other probes have none)")
    p.add_argument("--seed", type=int, default=0, help="probe initialisation and batch order")
    add_quiet(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="probe a frozen vision encoder on a probe_n{N}_c{C} config (sweep: every layer)",
                       formatter_class=HelpFormatter,
                       description="Cache a frozen encoder's patch features for a probing config once, then train "
                                   "the authors' spatial probe on them. Offline on a CPU: see docs/probing.md's "
                                   "first example (scripts/make_tiny_encoder.py). `g2m probe sweep --help`: one "
                                   "probe per layer, from the vision tower through the projector into the LLM.")
    p.add_argument("--encoder", default=None, help="model folder or Hub id (Qwen2/2.5/3-VL, InternVL-HF, SigLIP, CLIP)")
    p.add_argument("--config", default=None, help="probing config, e.g. probe_n32_c3")
    p.add_argument("--readout", default="vision", choices=["vision", "vision_raw", "projector"],
                   help="patch tokens before the merger/projector (vision; for Qwen after its merger's norm, as the "
                        "authors read them), Qwen's before that norm (vision_raw), or after the merger (projector)")
    _common(p)
    p.set_defaults(func=_probe, extra="probing")
    sweeps = p.add_subparsers(dest="probe_command", metavar="{sweep}")
    s = sweeps.add_parser("sweep", help="one probe per layer: vision tower -> projector -> LLM",
                          formatter_class=HelpFormatter,
                          description="Probe every vision block, the projector and every LLM layer (at the image "
                                      "positions, the model shown the G2M prompt in its chat template) from one "
                                      "forward pass per image; write sweep.json and sweep.png. Resumable: rerun the "
                                      "same command. Data-parallel under torchrun / accelerate launch. Offline in a "
                                      "minute: scripts/make_tiny_vlm.py (docs/probing.md).")
    s.add_argument("--encoder", required=True, help="a Qwen2/2.5/3-VL or InternVL (HF format) folder or Hub id")
    s.add_argument("--config", required=True, help="probing config, e.g. probe_n32_c10")
    s.add_argument("--points", default="tower,projector,llm", help="stages to probe, comma-separated")
    s.add_argument("--stride", type=int, default=1, help="every K-th layer of each stage, plus its first and last")
    s.add_argument("--tower-readout", default="vision", choices=["vision", "vision_raw"],
                   help="each vision block through the merger's per-token norm, as the authors read the tower "
                        "(vision), or Qwen's raw residual stream (vision_raw)")
    s.add_argument("--device-map", default=None, choices=["auto"],
                   help="spread a model too large for one GPU over every visible GPU (accelerate)")
    s.add_argument("--chunk-rows", type=int, default=256, help="rows per feature shard: the unit of resumption")
    s.add_argument("--run", default=None, metavar="RUN_DIR",
                   help="a harness run of the same model: its end-to-end cell accuracy at this N is drawn as a line")
    s.add_argument("--compare-other-models", action="store_true",
                   help="draw --run's line even when its model is not --encoder's (refused otherwise); both are named")
    s.add_argument("--drop-features", action="store_true", help="delete the feature shards once every probe is done")
    s.add_argument("--dry-run", action="store_true",
                   help="print the plan (points, passes, disk, memory, compute) from the config alone; load nothing")
    s.add_argument("--gpu-gb", type=float, default=80.0, help="GPU memory assumed by --dry-run")
    _common(s)
    s.set_defaults(func=_sweep, extra="probing")
