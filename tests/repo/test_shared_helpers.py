"""The helpers each shared fact has as its one home: the bounded-number check every option uses (one message form),
the atomic write every writer that must not leave half a file uses, and the run layout every reader finds runs by."""

from __future__ import annotations

import json
import os

import pytest

from g2m_base.errors import BuildError, UsageError
from g2m_base.files import TEMP_MARK, atomic_open, atomic_write_text, durable_replace
from g2m_base.flags import check_int, check_number
from scoring.runs.layout import (
    newest_results,
    results_date,
    results_files,
    results_name,
    run_files,
    run_folders,
    samples_name,
)

#: (value, low, high, the refusal's message, or None when the value passes)
INTS = [
    (1, 1, 10, None), (10, 1, 10, None), (0, 0, None, None), (10**30, 1, None, None),
    (0, 1, 10, "--n must be an integer from 1 to 10, got 0"),
    (11, 1, 10, "--n must be an integer from 1 to 10, got 11"),
    (-1, 0, None, "--n must be an integer of at least 0, got -1"),
    (0, 1, 1 << 16, "--n must be an integer from 1 to 65,536, got 0"),
    (True, 0, 10, "--n must be an integer from 0 to 10, got True"),  # a bool is not a number of anything
    (2.0, 1, 10, "--n must be an integer from 1 to 10, got 2.0"),
    ("2", 1, 10, "--n must be an integer from 1 to 10, got '2'"),
    (None, 1, None, "--n must be an integer of at least 1, got None"),
    ("x" * 100, 1, 10, "--n must be an integer from 1 to 10, got '" + "x" * 36 + "..."),  # a hostile value is cut short
]


@pytest.mark.parametrize(("value", "low", "high", "message"), INTS)
def test_check_int_passes_integers_in_bounds_and_refuses_the_rest_in_one_form(value, low, high, message):
    if message is None:
        assert check_int("--n", value, low, high) == value
        return
    with pytest.raises(UsageError) as e:
        check_int("--n", value, low, high)
    assert str(e.value) == message


def test_check_int_raises_the_callers_error_type():
    class Mine(UsageError):
        pass

    with pytest.raises(Mine, match="--stride must be an integer of at least 1, got 0"):
        check_int("--stride", 0, 1, error=Mine)
    with pytest.raises(ValueError):  # UsageError is a ValueError: library callers catch it the usual way
        check_int("chunk", 0, 1)


#: (value, low, high, low_open, high_open, message or None)
NUMBERS = [
    (5e-4, 0, 10, True, False, None), (10, 0, 10, True, False, None), (0, 0, 1, False, True, None),
    (0, 0, 10, True, False, "--lr must be a finite number in (0, 10], got 0"),
    (1.0, 0, 1, False, True, "--lr must be a finite number in [0, 1), got 1.0"),
    (float("nan"), 0, 10, False, False, "--lr must be a finite number in [0, 10], got nan"),
    (float("inf"), 0, 10, False, False, "--lr must be a finite number in [0, 10], got inf"),
    (False, 0, 10, False, False, "--lr must be a finite number in [0, 10], got False"),
    ("1", 0, 10, False, False, "--lr must be a finite number in [0, 10], got '1'"),
    (2e6, 0, 1e6, True, False, "--lr must be a finite number in (0, 1e+06], got 2000000.0"),
    (0, 0, 100_000, True, False, "--lr must be a finite number in (0, 100,000], got 0"),
]


@pytest.mark.parametrize(("value", "low", "high", "low_open", "high_open", "message"), NUMBERS)
def test_check_number_passes_finite_numbers_in_the_interval(value, low, high, low_open, high_open, message):
    if message is None:
        assert check_number("--lr", value, low, high, low_open, high_open) == value
        return
    with pytest.raises(UsageError) as e:
        check_number("--lr", value, low, high, low_open, high_open)
    assert str(e.value) == message


class Boom(Exception):
    pass


def _temps(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or TEMP_MARK in p.name)


#: (mode, what the block writes, the open() keywords, the bytes the file then holds)
WRITES = [
    ("wb", b"\x00\x01bytes", {}, b"\x00\x01bytes"),
    ("w", "a,b\r\nc,d\n", {"newline": ""}, b"a,b\r\nc,d\n"),
    ("w", "caf\u00e9\n", {"encoding": "utf-8"}, "caf\u00e9\n".encode()),
]


@pytest.mark.parametrize(("mode", "data", "kwargs", "on_disk"), WRITES)
def test_atomic_open_writes_the_whole_file_and_leaves_no_temp(tmp_path, mode, data, kwargs, on_disk):
    path = tmp_path / "sub" / "out.csv"  # the folder is made
    with atomic_open(path, mode, **kwargs) as f:
        f.write(data)
        assert not path.exists()  # nothing is there until the block ends
    assert path.read_bytes() == on_disk and _temps(path.parent) == []


@pytest.mark.parametrize("old", [None, b"the old file"])
@pytest.mark.parametrize("tmp_name", [None, ".out.csv.partial"])
def test_an_exception_in_the_block_leaves_the_old_file_or_none_and_no_temp(tmp_path, old, tmp_name):
    path = tmp_path / "out.csv"
    if old is not None:
        path.write_bytes(old)
    with pytest.raises(Boom), atomic_open(path, "wb", tmp_path / tmp_name if tmp_name else None) as f:
        f.write(b"half a fi")
        raise Boom
    assert (path.read_bytes() if path.exists() else None) == old
    assert _temps(tmp_path) == []


def test_a_named_temp_file_is_the_one_written_and_renamed(tmp_path):
    path, tmp = tmp_path / "x.tsv", tmp_path / ".x.tsv.partial"
    with atomic_open(path, "w", tmp, encoding="utf-8") as f:
        f.write("a\tb\n")
        assert tmp.exists() and not path.exists()
    assert path.read_text() == "a\tb\n" and not tmp.exists()


def test_a_failed_write_is_one_line_naming_the_file_and_no_temp_is_left(tmp_path):
    path = tmp_path / "out.json"
    with pytest.raises(OSError) as e, atomic_open(path, "wb") as f:
        f.write(b"x")
        raise OSError(28, "No space left on device")
    assert str(e.value) == f"could not write {path}: No space left on device" and _temps(tmp_path) == []
    assert not path.exists()


def test_only_a_regular_file_is_replaced(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(BuildError, match="is not a regular file"), atomic_open(tmp_path / "d") as f:
        f.write(b"x")
    assert (tmp_path / "d").is_dir() and _temps(tmp_path) == []


def test_durable_replace_renames_over_the_target(tmp_path):
    tmp, path = tmp_path / ".a.partial", tmp_path / "a"
    tmp.write_bytes(b"new")
    path.write_bytes(b"old")
    durable_replace(tmp, path)
    assert path.read_bytes() == b"new" and not tmp.exists()


def test_durable_replace_forces_the_file_and_then_its_folder_to_disk(tmp_path, monkeypatch):
    """The rename is an entry of the folder: without the folder's fsync a power cut may lose it (the docstring's
    promise). Which objects were fsynced is read from the real descriptors (``os.fstat``), in order."""
    import stat

    synced, real = [], os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    (tmp_path / "t").write_bytes(b"new")
    durable_replace(tmp_path / "t", tmp_path / "f")
    assert synced == ["file", "folder"] and (tmp_path / "f").read_bytes() == b"new"


def test_the_run_layout_lists_only_well_named_results_files(tmp_path):
    run = tmp_path / "model"
    run.mkdir()
    for name in ("results_2024-01-02.json", "results_2024-01-01.json", "results_.json", "results_x.json.bak",
                 samples_name("g2m_n09_c3", "2024-01-01")):
        (run / name).write_text("{}")
    assert [p.name for p in results_files(run)] == ["results_2024-01-01.json", "results_2024-01-02.json"]
    assert newest_results(run).name == results_name("2024-01-02") and results_date(newest_results(run)) == "2024-01-02"
    assert results_date(run / "results_.json") is None and newest_results(tmp_path / "none") is None
    assert sorted(p.name for p in run_files(run)) == ["results_2024-01-01.json", "results_2024-01-02.json",
                                                      "samples_g2m_n09_c3_2024-01-01.jsonl"]
    assert run_folders(run) == [run] and run_folders(tmp_path) == [run]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "results_.json").write_text("{}")  # not a results file: not a run
    assert run_folders(tmp_path) == [run] and run_folders(tmp_path / "missing") == []


def test_atomic_write_text_still_writes_json_whole(tmp_path):
    atomic_write_text(tmp_path / "r.json", json.dumps({"a": 1}))
    assert json.loads((tmp_path / "r.json").read_text()) == {"a": 1} and os.listdir(tmp_path) == ["r.json"]
