"""The blanket's curve-to-pair steps computed with fewer passes give the same floats as the
code they replace (frozen copies below), and the pair is kept per curve."""

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import blanket as B


def _point_masses_loop(g, t, sm):
    """The point-by-point loop of ``_point_masses`` before session 18 (frozen copy)."""
    m = g.size
    dt = np.diff(t)
    ds = np.diff(sm) / dt
    is_r = g[1:] <= 0.0
    cross = (g[:-1] < 0.0) & ~is_r
    if np.any(cross):
        h_left = sm[:-1][cross] - np.expm1(g[:-1][cross])
        ds[cross] = (sm[1:][cross] - h_left) / dt[cross]
    q = np.empty(m)
    for i in range(m):
        if i == 0:
            left_r, left = True, 0.0
        else:
            left_r, left = bool(is_r[i - 1]), ds[i - 1]
        if i == m - 1:
            right_r, right = False, 0.0
        else:
            right_r, right = bool(is_r[i]), ds[i]
        if left_r == right_r:
            q[i] = right - left
        else:
            q[i] = right + 1.0 - left
    return q


def _hull_masses_loop(grid, small):
    keep = np.arange(grid.size)
    t = np.exp(grid)
    while True:
        q = _point_masses_loop(grid[keep], t[keep], small[keep])
        bad = np.flatnonzero(q[1:-1] < 0.0) + 1
        if bad.size == 0:
            break
        keep = np.delete(keep, bad[np.argmin(q[bad])])
    return grid[keep], np.maximum(q, 0.0)


@pytest.mark.parametrize("seed", range(6))
def test_point_masses_same_floats_as_the_loop(seed):
    rng = np.random.default_rng(seed)
    for m in (1, 2, 3, 7, 40):
        g = np.sort(rng.normal(0.0, 2.0, m))
        if seed % 2:
            g = g[g != 0.0] if m > 3 else g
        sm = np.abs(rng.normal(0.0, 1e-3, g.size))
        t = np.exp(g)
        a = B._point_masses(g, t, sm)
        b = _point_masses_loop(g, t, sm)
        assert a.tobytes() == b.tobytes()


def test_hull_of_a_real_curve_same_floats_and_kept():
    mech = sd.RandomizedResponse(7.5, 4)
    grid, small = B._fdp_cached(mech, 3000, 1.0, 30, B.CURVE_NU)
    g1, q1 = B._hull_masses(grid, small)
    g2, q2 = _hull_masses_loop(grid, small)
    assert g1.tobytes() == g2.tobytes() and q1.tobytes() == q2.tobytes()
    # a crossing segment (the hull drops ε = 0) and the mixed R/H forms
    keep = np.flatnonzero(grid != 0.0)
    g1, q1 = B._hull_masses(grid[keep], small[keep])
    g2, q2 = _hull_masses_loop(grid[keep], small[keep])
    assert g1.tobytes() == g2.tobytes() and q1.tobytes() == q2.tobytes()
    # the pair is computed once per curve and handed out read-only
    a = B._fdp(mech, 3000, 1.0, 30)
    b = B._fdp(mech, 3000, 1.0, 30)
    assert all(x is y for x, y in zip(a, b))
    with pytest.raises(ValueError):
        a[1][0] = 0.0


def test_deferred_steps_wait_for_the_others_and_keep_each_generator_s_values():
    from shuffledp.numerics import run_steps, run_steps_many

    calls = []

    def gen(k):
        x = k
        for _ in range(k):                       # k cheap steps, then one deferred one
            x = yield ("inc", x)
        y = yield ("slow", x)
        return (yield ("inc", y))

    runners = {"inc": lambda xs: [x + 1 for x in xs],
               "slow": lambda xs: calls.append(len(xs)) or [10 * x for x in xs]}
    want = [run_steps(gen(k), runners) for k in range(6)]
    calls.clear()
    got = run_steps_many([gen(k) for k in range(6)], runners, defer=("slow",))
    assert got == want == [20 * k + 1 for k in range(6)]
    assert calls == [6]                          # one call with every generator's piece
    calls.clear()
    assert run_steps_many([gen(k) for k in range(6)], runners) == want
    assert len(calls) > 1                        # not deferred: one call per round
    with pytest.raises(KeyError):
        run_steps_many([gen(2)], {"inc": runners["inc"]})


@pytest.mark.parametrize("kind", ["fft", "sparse"])
def test_heavy_sums_of_a_curve_run_in_one_call(monkeypatch, kind):
    """A far-atom law's curve: every point's sum (the sparse enumeration, or with it
    turned off the FFT) reaches the thread pool in one map."""
    from shuffledp.pairs import iid

    if kind == "fft":
        monkeypatch.setattr(iid, "SPARSE_MEAN", 0.0)
    sizes = []
    run = iid._STEPS[kind]
    monkeypatch.setitem(iid._STEPS, kind, lambda jobs: sizes.append(len(jobs)) or run(jobs))
    B._fdp_cached.cache_clear()
    grid, _ = B._fdp_cached(sd.RandomizedResponse(7.5592, 4), 3666, 1.0, 20, 20.0)
    B._fdp_cached.cache_clear()
    assert sizes == [int(np.sum(np.abs(grid) < grid.max()))]


def test_sparse_sums_threaded_or_not_give_the_same_curve(monkeypatch):
    from shuffledp.pairs import iid

    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    curves = []
    for lim in (0.0, float("inf")):               # on the pool / one after the other
        monkeypatch.setattr(iid, "_SPARSE_THREADED", lim)
        B._fdp_cached.cache_clear()
        curves.append(B._fdp_cached(sd.RandomizedResponse(7.5592, 4), 3666, 1.0, 20, 20.0)[1])
    B._fdp_cached.cache_clear()
    assert curves[0].tobytes() == curves[1].tobytes()
