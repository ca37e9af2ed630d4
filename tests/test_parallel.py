"""The thread helper: order kept, no nested pools, and answers that do not depend on the
thread count (docs/latency.md, "Two cores")."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.core import _parallel
from shuffledp.pairs import blanket


def test_pmap_keeps_order_and_runs_on_threads(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_THREADS", "3")
    names = []

    def job(x):
        names.append(threading.current_thread().name)
        return x * x

    assert _parallel.pmap(job, range(40)) == [x * x for x in range(40)]
    assert any(n.startswith("shuffledp") for n in names)


def test_nested_pmap_runs_serially_inside_a_worker(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")

    def inner(x):
        return threading.current_thread().name

    def outer(x):
        return _parallel.pmap(inner, range(3))

    for names in _parallel.pmap(outer, range(4)):
        assert len(set(names)) == 1          # the inner map stayed on the worker's thread


def test_thread_count_from_environment(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    assert _parallel.threads() == 1
    assert _parallel.pmap(lambda x: threading.current_thread().name, range(3)) == \
        [threading.current_thread().name] * 3
    monkeypatch.setenv("SHUFFLEDP_THREADS", "two")
    with pytest.raises(ValueError, match="SHUFFLEDP_THREADS"):
        _parallel.threads()
    monkeypatch.delenv("SHUFFLEDP_THREADS")
    assert 1 <= _parallel.threads() <= _parallel.MAX_THREADS


def test_blanket_curve_does_not_depend_on_threads(monkeypatch):
    mech = sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    got = {}
    for k in ("1", "4"):
        monkeypatch.setenv("SHUFFLEDP_THREADS", k)
        sd.clear_caches()
        got[k] = blanket._fdp_cached(mech, 20_000, 1.0, 20, 20.0)
    assert np.array_equal(got["1"][0], got["4"][0])
    assert np.array_equal(got["1"][1], got["4"][1])
    assert np.all(got["1"][1] >= 0) and np.any(got["1"][1] > 0)


def test_a_forked_child_gets_its_own_pool(monkeypatch):
    """multiprocessing with the fork start method: the child inherits the pool object but
    not its threads; pmap there must still run (it used to wait forever)."""
    import multiprocessing as mp
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork start method on this platform")
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    assert _parallel.pmap(abs, [-1, -2, -3]) == [1, 2, 3]       # the parent's pool exists
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        res = pool.apply_async(_child_job)
        assert res.get(timeout=60) == [1, 4, 9]


def _child_job():
    return _parallel.pmap(lambda x: x * x, [1, 2, 3])


def test_blanket_victim_pairs_summed_side_by_side_give_the_same_delta(monkeypatch):
    """The leading victim pairs' exact sums run in parallel when threads are free; the
    maximum (and the pair it came from) is the same as one at a time."""
    mech = sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    pairs = blanket.blanket_pairs(sd.Shuffle(mech, n=50_000))
    got = {}
    for k in ("1", "4"):
        monkeypatch.setenv("SHUFFLEDP_THREADS", k)
        got[k] = [blanket._max_over_pairs(pairs, 50_000, e)[:2] for e in (0.001, 0.01, 0.03)]
    assert got["1"] == got["4"]
    assert all(v > 0 for v, _ in got["1"])


def test_the_caller_runs_the_first_job_and_takes_back_unstarted_ones(monkeypatch):
    """Two threads: the calling thread runs job 0 while the one pool worker takes job 1;
    job 2, which no worker has started when job 0 ends, runs on the calling thread too.
    Results in order; a pmap inside a job the caller runs stays serial on its thread."""
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    started = threading.Event()
    me = threading.current_thread().name

    def job(i):
        if i == 0:
            assert started.wait(timeout=30)      # job 1 is running on the worker
        elif i == 1:
            started.set()
            import time
            time.sleep(0.3)                      # keeps the worker busy past job 0
        inner = _parallel.pmap(lambda _: threading.current_thread().name, range(2))
        return i, threading.current_thread().name, inner

    got = _parallel.pmap(job, range(3))
    assert [g[0] for g in got] == [0, 1, 2]
    assert got[0][1] == me and got[2][1] == me
    assert got[1][1].startswith("shuffledp")
    for _, name, inner in got:
        assert inner == [name, name]
