"""``RunnerLM.generate_until`` by its jobs (connect, dispatch, record): answers from the cache first, the rest from
the backend streamed or in blocks, failures never cached, the cache committed every ``chunk`` answers, a server
reached once and only when the cache cannot answer."""

from __future__ import annotations

import types

import pytest

pytest.importorskip("lm_eval")

from harness_tasks.with_lm_eval.resumable import RunnerLM  # noqa: E402
from scoring.replies import failed  # noqa: E402


def _req(text: str, **gen):
    return types.SimpleNamespace(args=(text, {"max_gen_toks": 8, **gen}), arguments=(text, {"max_gen_toks": 8, **gen}))


class Blocks:
    """A backend answering in blocks (``disable_tqdm`` understood)."""

    rank, world_size = 0, 1

    def __init__(self, fail=()):
        self.calls, self.fail = [], set(fail)

    def generate_until(self, requests, disable_tqdm=False):
        self.calls.append([r.args[0] for r in requests])
        return [failed("boom") if r.args[0] in self.fail else f"A:{r.args[0]}" for r in requests]


class Streams(Blocks):
    STREAMS_ANSWERS = True

    def generate_until(self, requests, on_answer=None):
        self.calls.append([r.args[0] for r in requests])
        answers = [f"S:{r.args[0]}" for r in requests]
        for j in reversed(range(len(answers) - 1)):  # out of order, and the last one only returned
            on_answer(j, answers[j])
        return answers


@pytest.mark.parametrize("backend", [Blocks, Streams])
def test_answers_come_from_the_cache_first_then_the_backend(tmp_path, backend):
    db = tmp_path / "cache.db"
    inner = backend()
    lm = RunnerLM(inner, db, chunk=2, progress=False)
    first = lm.generate_until([_req(t) for t in "abcde"])
    tag = "S" if backend is Streams else "A"
    assert [str(a) for a in first] == [f"{tag}:{t}" for t in "abcde"] and (lm.hits, lm.misses) == (0, 5)
    if backend is Blocks:
        assert inner.calls == [["a", "b"], ["c", "d"], ["e"]]  # blocks of chunk requests
    lm.close()
    again = RunnerLM(backend(), db, chunk=2, progress=False)
    assert [str(a) for a in again.generate_until([_req(t) for t in "abcdef"])] == [f"{tag}:{t}" for t in "abcdef"]
    assert (again.hits, again.misses) == (5, 1) and again.inner.calls == [["f"]]
    again.close()


def test_failures_are_counted_and_never_cached_and_sampled_requests_are_not_cached(tmp_path):
    db = tmp_path / "cache.db"
    lm = RunnerLM(Blocks(fail={"b"}), db, progress=False)
    lm.generate_until([_req("a"), _req("b"), _req("c", do_sample=True)])
    assert lm.failed == 1
    lm.close()
    again = RunnerLM(Blocks(), db, progress=False)
    again.generate_until([_req("a"), _req("b"), _req("c", do_sample=True)])
    assert again.inner.calls == [["b", "c"]] and again.hits == 1
    again.close()


def test_the_server_is_reached_once_and_only_when_the_cache_cannot_answer(tmp_path):
    db = tmp_path / "cache.db"
    RunnerLM(Blocks(), db, progress=False).generate_until([_req("a")])
    reached = []
    lm = RunnerLM(Blocks(), db, progress=False, connect=lambda: reached.append(1) or db)
    lm.generate_until([_req("a")])
    assert reached == [] and lm.inner.calls == []  # all cached: no server needed
    lm.generate_until([_req("a"), _req("b")])
    lm.generate_until([_req("c")])
    assert reached == [1] and lm.inner.calls == [["b"], ["c"]]
    other = tmp_path / "other.db"  # the server's key names another cache: it is read instead
    lm2 = RunnerLM(Blocks(), db, progress=False, connect=lambda: other)
    lm2.generate_until([_req("a")])
    assert lm2.inner.calls == [] and lm2.cache_db == str(db)
    lm2.generate_until([_req("z")])
    assert lm2.cache_db == str(other) and lm2.inner.calls == [["z"]]


def test_what_was_received_is_committed_when_the_backend_fails(tmp_path):
    db = tmp_path / "cache.db"

    class Dies(Blocks):
        def generate_until(self, requests, disable_tqdm=False):
            if len(self.calls) == 1:
                raise KeyboardInterrupt
            return super().generate_until(requests, disable_tqdm)

    with pytest.raises(KeyboardInterrupt):
        RunnerLM(Dies(), db, chunk=2, progress=False).generate_until([_req(t) for t in "abcd"])
    again = RunnerLM(Blocks(), db, chunk=2, progress=False)
    again.generate_until([_req(t) for t in "abcd"])
    assert again.inner.calls == [["c", "d"]]
    again.close()
