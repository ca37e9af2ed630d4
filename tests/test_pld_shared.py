"""The one-entry PLD route shares work between a pair's two directions and its grids, and
between the ε evaluations of one tilt: every shared array must be the one the stand-alone
computation forms (bit for bit), so that no answer moves."""

import math

import numpy as np
import pytest

from shuffledp.compose import composition as comp
from shuffledp.numerics import pld_fft as pf


def _pair(seed, size, zeros=False, far=False):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(size, 0.7))
    q = rng.dirichlet(np.full(size, 0.7))
    if far:                                   # a far-low atom of negligible Q-mass
        q[0] = 1e-70
    if zeros:
        p[1] = 0.0
        q[2] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(p), np.log(q)


@pytest.mark.parametrize("seed,size,zeros,far", [(0, 7, False, False), (1, 300, False, True),
                                                 (2, 5000, False, False), (3, 50, True, False),
                                                 (4, 2000, True, True)])
def test_shared_pair_arrays_give_the_standalone_lattices(seed, size, zeros, far):
    la, lb = _pair(seed, size, zeros, far)
    pair = pf.LossPair(la, lb)
    assert pair.shared is not zeros
    for flip, (a, b) in ((False, (la, lb)), (True, (lb, la))):
        assert pair.loss_moments(flip) == pf.loss_moments(a, b)
        assert pair.auto_step(flip) == pf.auto_step(a, b)
        for d in (None, 1e-3, 0.05):
            got, want = pair.lattice(flip, d, 1e-9), pf.loss_lattice(a, b, d, 1e-9)
            assert (got.lo, got.inf, got.d) == (want.lo, want.inf, want.d)
            assert np.array_equal(got.q, want.q)


def _window_sum_reference(tilt, eps, top_max):
    """``_Tilt._window_sum`` as first written: every array formed per ε."""
    d = tilt.lat.d
    k = int(np.searchsorted(tilt.s, eps / d, side="right"))
    if k >= tilt.s.size:
        return None
    s = tilt.s[k:]
    lw = tilt.log_scale + tilt.slope * s
    if float(lw.max()) > top_max:
        return math.inf, math.inf, 0, math.inf, math.inf
    g = -np.expm1(np.minimum(eps - s * d, 0.0))
    keep = lw > -700.0
    w = np.exp(lw[keep]) * g[keep]
    main = float(np.sum(w * tilt.Q[k:][keep]))
    l2 = math.sqrt(float(np.sum(w * w)))
    wr = 8.0 * pf._U * (4.0 + float(np.max(np.abs(lw))) + abs(eps) + float(s[-1]) * d)
    return (main, l2, int(lw.size - np.count_nonzero(keep)),
            float(np.max(w)) if w.size else 0.0, wr)


@pytest.mark.parametrize("T,centre_frac", [(3, 0.5), (200, 0.8), (5000, 0.3), (5000, 1.5)])
def test_window_sum_with_per_tilt_weights_is_the_per_eps_formula(T, centre_frac):
    la, lb = _pair(11, 40)
    lat = pf.loss_lattice(la, lb, 2e-3)
    mu = float(np.sum(np.exp(lb + (la - lb)) * (la - lb)))
    tilt = pf._Tilt(lat, T, T * mu * centre_frac / lat.d)
    d = lat.d
    for eps in np.linspace(d * (tilt.s_lo - 1), d * (tilt.s_hi + 2), 23):
        for top in (300.0, 600.0):
            assert tilt._window_sum(float(eps), top) == _window_sum_reference(tilt, float(eps), top)


@pytest.mark.parametrize("symmetric", [False, True])
def test_pld_epsilon_reuses_moments_for_its_finer_grid(symmetric):
    """A weakly amplified pair takes the finer grid too (``_finer_step``); the steps it
    chooses come from the moments the default grid already computed, and the answer is
    the smaller certified one."""
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    val, det = comp.pld_epsilon(np.log(p), np.log(q), 5, 1e-6, symmetric=symmetric)
    assert "default_grid_value" in det and val <= det["default_grid_value"]
    pair = pf.LossPair(np.log(p), np.log(q))
    fine = comp._finer_step(pair, 5, symmetric)
    assert fine is not None and fine == det["discretization"]


def test_read_only_atoms_keep_their_grids_across_questions():
    """The same read-only atom arrays (a bound view's cached pair, asked again with other
    rounds and δ) reuse their moments and lattices: the answers are those of a fresh
    computation on writeable copies, which are never kept."""
    la, lb = _pair(21, 3000)
    la.setflags(write=False)
    lb.setflags(write=False)
    for T, delta in ((10, 1e-6), (1000, 1e-9), (10, 1e-6), (3, 1e-3)):
        for sym in (False, True):
            got = comp.pld_epsilon(la, lb, T, delta, 1e-12, symmetric=sym)
            want = comp.pld_epsilon(la.copy(), lb.copy(), T, delta, 1e-12, symmetric=sym)
            assert got[0] == want[0]
    store = comp._pair_store(la, lb)
    assert store is not None and store["checked"] and store["lattices"]
    assert all(not lat.q.flags.writeable for lat in store["lattices"].values())
    assert comp._pair_store(la.copy(), lb.copy()) is None          # writeable: not kept
    # bad atoms are refused every time, not only the first
    bad = np.full(3, 0.5)
    bad.setflags(write=False)
    for _ in range(2):
        with pytest.raises(ValueError, match="logp"):
            comp.pld_epsilon(bad, bad, 3, 1e-6)


def test_clear_caches_empties_the_kept_grids():
    import shuffledp as sd
    la, lb = _pair(22, 50)
    la.setflags(write=False)
    lb.setflags(write=False)
    comp.pld_epsilon(la, lb, 5, 1e-6)
    assert comp._PAIR_STORES
    sd.clear_caches()
    assert not comp._PAIR_STORES


def test_a_read_only_view_of_a_writeable_array_is_not_kept():
    la, lb = _pair(23, 40)
    va, vb = la.view(), lb.view()
    va.setflags(write=False)
    vb.setflags(write=False)
    assert comp._pair_store(va, vb) is None
    first = comp.pld_epsilon(va, vb, 4, 1e-6)[0]
    la[:] = lb                                   # the views change with their bases
    assert comp.pld_epsilon(va, vb, 4, 1e-6)[0] < first
