"""The release's content hash: pinned in the package, reproduced from the seeds and from a local build, recorded by
every run, and the only thing that makes a submission "the release"."""

from __future__ import annotations

import gzip
import json

import pytest

from dataset_builder.grids.generate import RenderOptions
from dataset_builder.grids.spec import RELEASE_CONTENT_SHA256
from dataset_builder.release.build import BuildParams, build
from dataset_builder.release.provenance import dataset_content_sha256, generated_content_sha256
from harness_tasks.evaluate import EvalSpec, run_eval
from submission.submission import LOCAL, RELEASE, validate, write_submission
from tests.support.helpers import submission_doc, write_file
from tests.support.lazy import lazy

datasets = lazy("datasets")  # imported by the first test that uses it, not when collected

pytestmark = pytest.mark.slow  # builds and hashes the whole zero_shot config


@pytest.fixture(scope="module")
def full_zero_shot(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "g2m"
    build(out, "zero_shot", workers=2, progress=False)
    return out


def test_the_pinned_hash_is_what_the_seeds_generate():
    assert generated_content_sha256("zero_shot") == RELEASE_CONTENT_SHA256


def test_a_full_local_build_reads_back_to_the_pinned_hash(full_zero_shot):
    ds = datasets.load_dataset(str(full_zero_shot), "zero_shot", split="test")
    assert dataset_content_sha256(ds) == RELEASE_CONTENT_SHA256
    assert dataset_content_sha256(ds.shuffle(seed=1)) == RELEASE_CONTENT_SHA256  # row order does not matter


def test_a_run_on_another_full_build_is_never_labelled_the_release(full_zero_shot, tmp_path):
    other = tmp_path / "lowres"
    build(other, "zero_shot", BuildParams(render=RenderOptions(resolution=256, outline=False)), workers=2,
          progress=False)
    runs = {}
    for name, data in (("release", full_zero_shot), ("lowres", other)):
        res = run_eval(EvalSpec(model="g2m-oracle", tasks=("g2m_n03_c3",), data=str(data), limit=1,
                                output=str(tmp_path / name)))
        runs[name] = res
    assert runs["release"]["g2m"]["data"]["content_sha256"] == RELEASE_CONTENT_SHA256
    assert runs["lowres"]["g2m"]["data"]["content_sha256"] != RELEASE_CONTENT_SHA256
    for name, want in (("release", RELEASE), ("lowres", LOCAL)):
        path = write_submission(runs[name]["output_dir"], tmp_path / f"{name}.json.gz", allow_partial=True,
                                model_info={"id": "org/oracle-run"})  # a baseline's own name is refused
        meta = json.loads(gzip.decompress(path.read_bytes()))["metadata"]
        full = submission_doc()
        full["metadata"] = meta  # every id answered, with this run's provenance
        v = validate(write_file(tmp_path, full, f"{name}-full.json"))
        assert v.ok and v.data == want, (name, v.warnings)
