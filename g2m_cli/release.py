"""``g2m build``, ``g2m verify`` and ``g2m push``: thin argument parsing over the builder, the verifier and the push.

Integers are parsed here and checked by the library that uses them (``--workers``: ``g2m_base.workers.check_workers``;
``--resolution``: ``RenderOptions``; ``--rows-per-shard``: ``BuildParams``), so each has one check and one message."""

from __future__ import annotations

import argparse
import sys

from dataset_builder.grids.configs import ROWS_PER_SHARD
from dataset_builder.grids.spec import DEFAULT_RESOLUTION, HUB_TIMEOUT
from g2m_base.flags import add_out, add_quiet, add_timeout
from g2m_base.untrusted import term


def _scale(text: str) -> float:
    """A number; its range is checked by the builder (``configs.check_scale``)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--scale must be a number in (0, 1], got {text!r}") from None


def _cmd_build(args: argparse.Namespace) -> int:
    from dataset_builder.grids.generate import RenderOptions
    from dataset_builder.release.build import BuildParams, build

    render = RenderOptions(resolution=args.resolution, outline=not args.no_outline)
    params = BuildParams(scale=args.scale, render=render, rows_per_shard=args.rows_per_shard)
    manifest = build(args.out, args.configs, params, workers=args.workers, progress=not args.quiet)
    rows = sum(s["rows"] for c in manifest["configs"].values() for s in c.values())
    print(f"built {len(manifest['configs'])} configs, {rows:,} rows in {term(args.out)}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from dataset_builder.release.verify import verify

    report = verify(args.dir, sample=args.sample, workers=args.workers, progress=not args.quiet)
    if report.ok:
        print(report.summary())
        return 0
    print(f"FAIL: {term(report.problems[0], 2000)}", file=sys.stderr)
    return 1


def _cmd_push(args: argparse.Namespace) -> int:
    from dataset_builder.release.push import push

    plan = push(args.dir, args.repo_id, revision=args.revision, private=args.private, dry_run=args.dry_run,
                timeout=args.timeout, workers=args.workers)
    print(("dry run (verified, nothing contacted): " if args.dry_run else "done: ") + plan.describe())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build a release folder (parquet shards, README, manifest)",
                       description="Generate the G2M configs from their seeds into a release folder: parquet shards "
                                   "of PNG images and matrices, a dataset card and a manifest of every file's hash. "
                                   "The same arguments give byte-identical files on any machine; an interrupted "
                                   "build resumes.")
    add_out(p, "output folder (created; an interrupted build there is resumed)", required=True)
    p.add_argument("--configs", default=None, help="comma-separated config names or globs (default: all)")
    p.add_argument("--scale", type=_scale, default=1.0, help="keep this fraction of every block, in (0, 1]")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--resolution", type=int, default=DEFAULT_RESOLUTION,
                   help=f"image side in pixels (release: {DEFAULT_RESOLUTION})")
    p.add_argument("--no-outline", action="store_true", help="draw cells without outlines (not the release)")
    p.add_argument("--rows-per-shard", type=int, default=ROWS_PER_SHARD, help=argparse.SUPPRESS)
    add_quiet(p)
    p.set_defaults(func=_cmd_build, extra=None)

    p = sub.add_parser("verify", help="check hashes, pixels and seeds of a release folder",
                       description="Check a release folder against its manifest (every file's hash, nothing extra, "
                                   "missing or linked) and regenerate its rows from their seeds, pixel for pixel.")
    p.add_argument("dir", help="the release folder (g2m build --out DIR, or a download of the release)")
    p.add_argument("--sample", type=int, default=None,
                   help="regenerate only K rows per config from their seeds; the others are checked by their files' "
                   "hashes only (default: every row)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    add_quiet(p)
    p.set_defaults(func=_cmd_verify, extra=None)

    p = sub.add_parser("push", help="upload a verified release to the Hugging Face Hub and tag it",
                       description="Verify a release folder, upload it to a dataset repository on the Hugging Face "
                                   "Hub and tag the commit; a push cut off half-way tags nothing and is resumed by "
                                   "the same command.")
    p.add_argument("dir", help="the release folder to upload (it is verified first)")
    p.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repository")
    p.add_argument("--revision", default=None, help="tag to create for this release, e.g. v1.0.0")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.add_argument("--dry-run", action="store_true", help="verify the folder and show what would be uploaded; "
                                                          "contact nothing")
    add_timeout(p, HUB_TIMEOUT)
    p.add_argument("--workers", type=int, default=None, help="worker processes for the verify that runs "
                                                                       "first (default: all cores)")
    p.set_defaults(func=_cmd_push, extra=None)
