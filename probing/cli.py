"""``g2m probe``: thin argument parsing over ``probing.experiment``."""

from __future__ import annotations

import argparse

from g2m_base.flags import add_data, add_out, add_quiet
from g2m_base.untrusted import term


def _probe(args: argparse.Namespace) -> int:
    from probing.experiment import ProbeSpec, run_probe
    from probing.probe import TrainConfig

    train = TrainConfig(probe=args.probe, steps=args.steps, batch_size=args.train_batch_size, sampling=args.sampling,
                        lr=args.lr, eval_every=args.eval_every, patience=args.patience, seed=args.seed)
    spec = ProbeSpec(encoder=args.encoder, config=args.config, readout=args.readout, revision=args.revision,
                     data=args.data, out=args.out, cache_dir=args.cache_dir or f"{args.out}/cache", device=args.device,
                     dtype=args.dtype, cache_dtype=args.cache_dtype, batch_size=args.batch_size, train=train)
    res = run_probe(spec, progress=not args.quiet)
    t = res["test"]
    print(f"{term(args.encoder)} [{args.readout}] on {args.config}: test cell accuracy {t['cell_accuracy']:.4f}, "
          f"exact match {t['exact_match']:.4f} (chance {res['chance_cell_accuracy']:.3f}; best step "
          f"{res['best']['step']}, encoder passes {res['encoder_calls']})\nresults: {term(res['output_dir'])}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="probe a frozen vision encoder on a probe_n{N}_c{C} config",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       description="Cache a frozen encoder's patch features for a probing config once, then train "
                                   "the authors' spatial probe on them. Offline in a minute: see the README's "
                                   "probing example (scripts/make_tiny_encoder.py).")
    p.add_argument("--encoder", required=True, help="model folder or Hub id (Qwen2/2.5/3-VL, InternVL-HF, SigLIP, CLIP)")
    p.add_argument("--config", required=True, help="probing config, e.g. probe_n32_c3")
    p.add_argument("--readout", default="vision", choices=["vision", "vision_raw", "projector"],
                   help="patch tokens before the merger/projector (vision; for Qwen after its merger's norm, as the "
                        "authors read them), Qwen's before that norm (vision_raw), or after the merger (projector)")
    p.add_argument("--revision", default=None, help="model revision on the Hub")
    add_data(p)
    add_out(p, "results folder", default="g2m-probes")
    p.add_argument("--cache-dir", default=None, help="feature cache (default: OUT/cache)")
    p.add_argument("--device", default="cpu", help="e.g. cuda or cuda:1")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"], help="encoder dtype")
    p.add_argument("--cache-dtype", default="float16", choices=["float16", "float32"], help="feature cache dtype")
    p.add_argument("--batch-size", type=int, default=16, help="images per encoder pass")
    p.add_argument("--probe", default="conv", choices=["conv", "linear"], help="the authors' conv probe, or one 1x1 conv")
    p.add_argument("--steps", type=int, default=5000, help="training steps (the authors'); ~2 h on a CPU at N=32")
    p.add_argument("--train-batch-size", type=int, default=32, help="probe training batch (the authors': 32)")
    p.add_argument("--sampling", default="epochs", choices=["epochs", "replacement"],
                   help="shuffled epochs (the authors') or random batches drawn with replacement")
    p.add_argument("--lr", type=float, default=5e-4, help="AdamW learning rate")
    p.add_argument("--eval-every", type=int, default=500, help="validation every this many steps")
    p.add_argument("--patience", type=int, default=3, help="stop after this many validations without improvement")
    p.add_argument("--seed", type=int, default=0, help="probe initialisation and batch order")
    add_quiet(p)
    p.set_defaults(func=_probe, extra="probing")
