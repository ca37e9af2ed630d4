"""The check-in hidden pair's kernels on two threads (session 17) give exactly the floats of
one thread: the two CDF bounds of ``_checkin_binned`` (certified series, ranking runs, the
one-block lattice's incomplete betas), the atoms split into two runs of slices, and the
quick Rényi curve's orders in two halves. Thresholds are lowered so that the small cases
here take the threaded paths; every comparison is bit for bit (a changed last bit of a
dominating cell moved answers both ways, tests/test_hidden_same_floats.py).
"""

import math

import numpy as np
import pytest

from shuffledp.bounds import sampled as sb
from shuffledp.numerics import binomial as nb
from shuffledp.pairs import hidden as sp


def _pair(n, rate, eps0):
    p = math.exp(-eps0) * 0.999
    return sp.hidden_pair(n, p, log_odds=eps0, kappa=math.exp(-eps0), rate=rate,
                          c_gamma=0.999)


def _clear():
    sp.hidden_cells.cache_clear()
    sp.hidden_atoms.cache_clear()


def _run(monkeypatch, threads, fn):
    monkeypatch.setenv("SHUFFLEDP_THREADS", str(threads))
    _clear()
    try:
        return fn()
    finally:
        _clear()


@pytest.fixture
def low_thresholds(monkeypatch):
    monkeypatch.setattr(sp, "_PAIR_THREADED_US", 0.0)
    monkeypatch.setattr(sp, "_ATOMS_THREADED", 0)
    monkeypatch.setattr(sp, "_ATOMS_PER_SLICE", 0)
    monkeypatch.setattr(sb, "_QUICK_THREADED", 0)


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _cells(cl):
    return (cl.c, cl.alpha, cl.beta, cl.gamma, cl.w, cl.zero, cl.worst)


@pytest.mark.parametrize("n, rate, eps0, budget, ranking", [
    (2_000_000, 0.1, 4.0, sp.ATOM_BUDGET, False),        # certified series, several blocks
    (3_000_000, 0.9, 0.7, 80_000, False),
    (150_000_000, 0.331, 6.8, 80_000, sp.SAMPLED),       # ranking runs from betainc starts
    (10**10, 0.443, 6.0, 80_000, sp.SAMPLED),            # one block: the rows' lattice
    (200_000, 0.05, 3.0, 80_000, sp.SAMPLED),            # bdtr (one thread) / short runs
])
def test_cells_and_atoms_two_threads_same_floats(monkeypatch, low_thresholds, n, rate, eps0,
                                                 budget, ranking):
    hp = _pair(n, rate, eps0)

    def both():
        cl = sp.hidden_cells(hp, budget, ranking)
        return _cells(cl), sp.hidden_atoms(hp, budget, ranking)

    one = _run(monkeypatch, 1, both)
    two = _run(monkeypatch, 2, both)
    assert _same(one, two)
    assert one[1][0].size > 0


def test_pmap_really_used(monkeypatch, low_thresholds):
    """The threaded paths are taken (a job count per pmap call) and still agree."""
    calls = []
    real = sp.pmap

    def counting(fn, items):
        items = list(items)
        calls.append(len(items))
        return real(fn, items)

    monkeypatch.setattr(sp, "pmap", counting)
    hp = _pair(2_000_000, 0.1, 4.0)
    two = _run(monkeypatch, 2, lambda: sp.hidden_atoms(hp, sp.ATOM_BUDGET, False))
    assert calls and all(c == 2 for c in calls) and len(calls) >= 2   # CDF pair, atoms
    one = _run(monkeypatch, 1, lambda: sp.hidden_atoms(hp, sp.ATOM_BUDGET, False))
    assert _same(one, two)


def test_quick_rdp_two_threads_same_floats(monkeypatch, low_thresholds):
    hp = _pair(150_000_000, 0.331, 6.8)
    atoms = _run(monkeypatch, 1, lambda: sp.hidden_atoms(hp, 80_000, sp.SAMPLED))
    for orders in (sb._SEARCH_ORDERS, sb._SEARCH_ORDERS[5:12], sb._SEARCH_ORDERS[:2]):
        one = _run(monkeypatch, 1, lambda: sb._quick_rdp(*atoms, orders))
        two = _run(monkeypatch, 2, lambda: sb._quick_rdp(*atoms, orders))
        assert _same(one, two)
        assert np.all(np.isfinite(one))


def test_best_eps0_two_threads_same(monkeypatch, low_thresholds):
    args = (20_000_000, 2.0, 0.1, None, 1e-8, 30)

    def best():
        sb._best_eps0.cache_clear()
        return sb._best_eps0(*args)

    assert _run(monkeypatch, 1, best) == _run(monkeypatch, 2, best)


def test_row_cumsum_is_cumsum_along_rows():
    rng = np.random.default_rng(7)
    for shape in ((3, 5), (2, sp._ROW_CUMSUM_MIN), (4, 3000), (1, 10_000), (0, 300)):
        x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-300, 300, shape)
        ref = np.cumsum(x, axis=1)
        assert _same(sp._row_cumsum(x), ref)
        out = np.empty((shape[0], shape[1] + 1))
        got = sp._row_cumsum(x, out=out[:, 1:])
        assert _same(np.ascontiguousarray(got), ref)


def test_tail_series_rows_are_sequential_products():
    """The series' row-by-row products are each row's own sequential chain: an entry's
    bounds do not depend on the other entries sharing its pass."""
    n, p = 4.0e8, 0.3
    sd = math.sqrt(n * p * (1.0 - p))
    k = np.floor(n * p + np.array([-13.0, -6.0, -1.0, 0.0, 2.0]) * sd)
    down = k <= n * p
    edge = np.where(down, k, k + 1.0)
    lo, hi = nb._tail_series_many(edge, n, p, down)
    for i in range(edge.size):
        l1, h1 = nb._tail_series_many(edge[i:i + 1], n, p, down[i:i + 1])
        assert l1[0] == lo[i] and h1[0] == hi[i]
    assert np.all(lo <= hi) and np.all(hi <= 1.0) and np.all(lo > 0.0)
