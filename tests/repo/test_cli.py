"""Bad arguments get one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import re

import pytest

from tests.support.helpers import g2m, g2m_here

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "--out", "{tmp}/a", "--configs", "zero_shot,nope"], "unknown config 'nope'"),
        (["build", "--out", "{tmp}/a", "--configs", "probe_n99*"], "unknown config 'probe_n99*'"),
        (["build", "--out", "{tmp}/a", "--scale", "0"], "--scale must be in (0, 1]"),
        (["build", "--out", "{tmp}/a", "--scale", "1.5"], "--scale must be in (0, 1]"),
        (["build", "--out", "{tmp}/a", "--scale", "abc"], "--scale must be a number"),
        (["build", "--out", "{tmp}/file/sub", "--scale", "0.01", "--configs", "zero_shot"], "cannot write to"),
        (["build", "--out", "{tmp}/a", "--resolution", "32", "--configs", "zero_shot"],
         "a 48x48 grid does not fit in 32x32 pixels"),
        (["build", "--out", "{tmp}/a", "--workers", "0"], "--workers must be an integer of at least 1, got 0"),
        (["verify", "{tmp}/nothing"], "manifest.json is missing"),
        (["verify", "{tmp}/file"], "manifest.json is missing"),
        (["push", "{tmp}/nothing", "--repo-id", "org/x", "--dry-run"], "manifest.json is missing"),
        # a flag the command does not know: refused by that command (its usage), with the closest flag it has
        (["eval", "--taks", "g2m"], "g2m eval: error: did you mean --tasks? unrecognized arguments: --taks g2m"),
        (["leaderboard", "build", "{tmp}", "--out", "{tmp}/s", "--quiett"], "g2m leaderboard build: error: "
                                                                        "did you mean --quiet? unrecognized "
                                                                        "arguments: --quiett"),
        (["report", "{tmp}", "stray"], "g2m report: error: unrecognized arguments: stray"),
    ],
)
def test_bad_arguments_give_one_line_and_a_non_zero_exit(tmp_path, args, message):
    """In ``g2m``'s own ``main`` (a traceback would escape it and fail the test); ``--help`` below runs the command
    as a child."""
    (tmp_path / "file").write_text("a regular file")
    res = g2m_here(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.returncode != 0
    lines = [line for line in res.stderr.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1, res.stderr
    assert message in lines[0]
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "a" / "manifest.json").exists()


def test_a_folder_with_someone_elses_manifest_is_not_touched(tmp_path):
    (tmp_path / "manifest.json").write_text('{"name": "something else"}')
    res = g2m("build", "--out", str(tmp_path), "--configs", "zero_shot", "--scale", "0.01", "--quiet")
    assert res.returncode == 2 and "is not a g2m manifest" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".g2m-build.lock", "manifest.json"]


def test_help_lists_every_command_and_version_names_the_package():
    from dataset_builder import __version__
    from g2m_cli.main import make_parser

    res = g2m("--help")
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout.startswith("usage: g2m [-h] [--version] COMMAND ...\n")
    (sub,) = [a for a in make_parser()._actions if a.dest == "command"]
    listed = re.findall(r"^    (\S+)", res.stdout.split("positional arguments:")[1].split("options:")[0], re.M)
    assert listed == list(sub.choices) and {"build", "eval", "probe", "report", "leaderboard"} <= set(listed)
    version = g2m("--version")
    assert (version.returncode, version.stdout, version.stderr) == (0, f"grid2matrix {__version__}\n", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["probe", "--encoder", "{tmp}/none", "--config", "zero_shot"], "unknown probing config 'zero_shot'"),
        (["probe", "--encoder", "{tmp}/none", "--config", "probe_n32_c3", "--data", "{tmp}/missing"], "does not exist"),
        (["probe", "--encoder", "{tmp}/none", "--config", "probe_n32_c3", "--steps", "0"],
         "--steps must be an integer from 1 to"),
    ],
)
def test_bad_probe_arguments_give_one_line(tmp_path, args, message):
    res = g2m_here(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


def test_leaderboard_and_submit_errors(tmp_path):
    res = g2m("leaderboard", "build", str(tmp_path / "none"), "--out", str(tmp_path / "site"))
    assert res.returncode == 2 and "is not a folder of submissions" in res.stderr
    res = g2m("submit", str(tmp_path))
    assert res.returncode == 2 and "holds no lm-eval results" in res.stderr
    res = g2m("validate", str(tmp_path / "missing.json"))
    assert res.returncode == 1 and "REJECTED" in res.stderr and "is not a file" in res.stderr


def test_a_mistyped_backend_or_a_missing_checkpoint_folder_is_named(small_release, tmp_path):
    common = ["--data", str(small_release), "--tasks", "g2m_n03_c3", "--out", str(tmp_path), "--quiet"]
    typo = g2m("eval", "--model", "g2m-oracl", *common)
    assert typo.returncode == 2 and typo.stderr.strip().splitlines()[-1] == (
        "g2m: error: lm-eval has no backend 'g2m-oracl'; did you mean g2m-oracle? the ones that read images: "
        "hf-multimodal, vllm-vlm, g2m-chat, g2m-oracle, g2m-random (or --base-url / --serve for a server)")
    gone = g2m("eval", "--model", "hf-multimodal", "--model-args", "pretrained=/no/such/folder", *common)
    assert gone.returncode == 2
    assert "pretrained=/no/such/folder: no folder /no/such/folder here (it does not exist)" in gone.stderr


def test_report_reads_a_results_file_as_that_run(random_run, tmp_path):
    """``g2m report RUN/results_<date>.json`` is that run of the folder, as ``--run`` names it."""
    (results,) = random_run.glob("results_*.json")
    res = g2m("report", str(results), "--out", str(tmp_path / "report"))
    assert res.returncode == 0, res.stderr
    assert f"read the run {results.name} in {random_run}" in res.stdout
