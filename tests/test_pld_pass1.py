"""A large pair's loss moments and lattice read from one first pass over its atoms
(``pld_fft._pass1``), its blocks on two threads, and the lattice's spread with the second
half's indices formed on the other thread: every value must be the float the stand-alone
functions form (``loss_moments``, ``loss_lattice``), with one thread or two, so that no
answer moves (docs/latency.md, "The PLD lattice's passes (session 19)")."""

import numpy as np
import pytest

from shuffledp.numerics import pld_fft as pf


def _pair(seed, size, far=False, p_zero=False):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(size, 0.6))
    q = rng.dirichlet(np.full(size, 0.6))
    if far:                                   # far-low atoms of negligible Q-mass
        q[:3] = 1e-70
    with np.errstate(divide="ignore"):
        la, lb = np.log(p), np.log(q)
    if p_zero:                                # finite logs whose exponential is 0
        la[7] = -800.0
    return la, lb


@pytest.mark.parametrize("n", [1, 8, 129, 1000, 4097, 70_001, 300_000, 1_000_003])
def test_leaves_are_the_pairwise_sums_blocks(n):
    """Summing the leaves' np.sum in ``_pairwise_sum``'s order is numpy's own sum."""
    rng = np.random.default_rng(n)
    a = rng.random(n) * np.exp(8.0 * rng.normal(size=n))
    leaves = pf._leaves(n)
    assert leaves[0][0] == 0 and leaves[-1][1] == n
    assert all(e0 == s1 for (_, e0), (s1, _) in zip(leaves, leaves[1:]))
    sums = {s: np.sum(a[s:e]) for s, e in leaves}
    assert pf._pairwise_sum(n, lambda s, e: sums[s]) == float(np.sum(a))
    halves = pf._halves(leaves)
    assert sum(halves, []) == leaves


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("block", [128, 1000, 1 << 16])
@pytest.mark.parametrize("seed,size,far,p_zero", [(1, 3, False, False), (2, 5000, True, False),
                                                  (3, 60_000, False, False),
                                                  (4, 200_001, True, False),
                                                  (5, 20_000, False, True)])
def test_pass1_moments_and_lattice_are_the_standalone_ones(monkeypatch, threads, block, seed,
                                                          size, far, p_zero):
    monkeypatch.setenv("SHUFFLEDP_THREADS", str(threads))
    monkeypatch.setattr(pf, "_BLOCK", block)
    monkeypatch.setattr(pf, "_PASS_THREADED", 1)
    la, lb = _pair(seed, size, far, p_zero)
    for flip, (a, b) in ((False, (la, lb)), (True, (lb, la))):
        pair = pf.LossPair(la, lb)
        assert pair.shared
        got = pair.lattice(flip, None, 1e-11)        # the lattice first: through _pass1
        assert flip in pair._pass1
        assert pair.loss_moments(flip) == pf.loss_moments(a, b)
        want = pf.loss_lattice(a, b, None, 1e-11)
        assert (got.lo, got.inf, got.d) == (want.lo, want.inf, want.d)
        assert got.q.size == want.q.size and np.array_equal(got.q, want.q)
        for d in (2.7 * got.d, 1e-3):                  # other grids reuse the first pass
            got, want = pair.lattice(flip, d, 1e-11), pf.loss_lattice(a, b, d, 1e-11)
            assert (got.lo, got.inf, got.d) == (want.lo, want.inf, want.d)
            assert np.array_equal(got.q, want.q)


@pytest.mark.parametrize("threads", [1, 2])
def test_pass1_for_a_given_step_only(monkeypatch, threads):
    """A lattice asked at a given step first: the first pass without the moments."""
    monkeypatch.setenv("SHUFFLEDP_THREADS", str(threads))
    monkeypatch.setattr(pf, "_BLOCK", 512)
    monkeypatch.setattr(pf, "_PASS_THREADED", 1)
    la, lb = _pair(8, 9000, far=True)
    pair = pf.LossPair(la, lb)
    got, want = pair.lattice(True, 2e-3, 0.0), pf.loss_lattice(lb, la, 2e-3, 0.0)
    assert not pair._pass1[True].tot_sums
    assert (got.lo, got.inf) == (want.lo, want.inf) and np.array_equal(got.q, want.q)
    assert pair.loss_moments(True) == pf.loss_moments(lb, la)


def test_pass1_on_a_clone_pair():
    """A real dominating pair (many atoms in one bin after another)."""
    from shuffledp.pairs import clone as cp
    la, lb, tail = cp.pair_pld_atoms(cp.fmt23_pair(1.0, 20_000), 150_000)
    pf_block = pf._BLOCK
    try:
        pf._BLOCK = 4096
        pair = pf.LossPair(la, lb)
        assert la.size >= 10 * pf._BLOCK
        old = pf._PASS_THREADED
        pf._PASS_THREADED = 1
        try:
            got = pair.lattice(False, None, tail)
        finally:
            pf._PASS_THREADED = old
        want = pf.loss_lattice(la, lb, None, tail)
    finally:
        pf._BLOCK = pf_block
    assert (got.lo, got.inf) == (want.lo, want.inf)
    assert np.array_equal(got.q, want.q)


@pytest.mark.parametrize("n", [1 << 17, 200_003, 700_001])
def test_window_terms_on_two_threads_are_the_whole_array_ones(monkeypatch, n):
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    rng = np.random.default_rng(n)
    d = 1e-4
    sd = (np.arange(n) + 1000.0) * d
    ew = np.exp(rng.normal(size=n) * 30.0 - 20.0)
    Q = rng.random(n) * np.exp(-5.0 * rng.random(n))
    for eps in (0.0, 0.1 + sd[n // 3], sd[-1] + 1.0):
        w = np.subtract(eps, sd)
        np.minimum(w, 0.0, out=w)
        np.expm1(w, out=w)
        np.negative(w, out=w)
        np.multiply(ew, w, out=w)
        want = (float(np.sum(w * Q)), float(np.sum(w * w)), float(np.max(w)))
        assert pf._window_terms_threaded(eps, sd, ew, Q) == want


@pytest.mark.parametrize("T", [3000, 10**6])
def test_composed_epsilon_the_same_on_one_thread_and_two(monkeypatch, T):
    """A long window (the threaded window sums) gives the same ε and details."""
    rng = np.random.default_rng(12)
    p = rng.dirichlet(np.full(400, 0.6))
    q = p * np.exp(0.01 * rng.normal(size=400))
    la, lb = np.log(p), np.log(q / q.sum())
    lat = pf.loss_lattice(la, lb)
    out = []
    calls = []
    threaded = pf._window_terms_threaded
    monkeypatch.setattr(pf, "_window_terms_threaded",
                        lambda *a: calls.append(1) or threaded(*a))
    for threads, cut in (("1", 1 << 17), ("2", 1 << 12)):
        monkeypatch.setenv("SHUFFLEDP_THREADS", threads)
        monkeypatch.setattr(pf, "_WINDOW_THREADED", cut)
        out.append(pf.composed_epsilon(lat, T, 1e-9))
        assert bool(calls) is (threads == "2")
    assert out[0] == out[1]
    assert out[0][1]["fft_length"] > 1 << 13


@pytest.mark.parametrize("spread,T,wide", [(0.01, 20_000, False), (3.0, 300, True)])
def test_steer_on_two_threads_is_the_one_thread_form(monkeypatch, spread, T, wide):
    """Both forms of the fast δ: from the suffix sums, and (a window wider than ~650 in
    loss) summed directly from the weights."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(300, 0.6))
    q = p * np.exp(spread * rng.normal(size=300))
    la, lb = np.log(p), np.log(q / q.sum())
    lat = pf.loss_lattice(la, lb, 3e-3 if wide else None)
    mu = float(np.sum(p * (la - lb)))
    tilt = pf._Tilt(lat, T, T * mu / lat.d)
    assert tilt.s.size > 1 << 13
    d = tilt.lat.d
    assert bool(d * (tilt.s[-1] - tilt.s[0]) > 650.0) == wide
    lo = d * (tilt.s_lo - 1)
    got = []
    for threads, cut in (("1", 1 << 30), ("2", 1 << 12)):
        monkeypatch.setenv("SHUFFLEDP_THREADS", threads)
        monkeypatch.setattr(pf, "_WINDOW_THREADED", cut)
        fast = tilt.steer(lo)
        got.append([(fast(float(e)), fast.slope(float(e)))
                    for e in np.linspace(lo, d * tilt.s_hi, 41)])
    assert got[0] == got[1]


def test_hidden_pld_atoms_on_two_threads_are_the_one_thread_ones(monkeypatch):
    """The check-in pair's PLD atoms: the light ones dropped and their mass charged, the
    two arrays copied on two threads, every value the one-thread one."""
    import math
    from shuffledp.pairs import hidden as sp
    eps0 = 3.0
    hp = sp.hidden_pair(200_000, math.exp(-eps0) * 0.999, log_odds=eps0,
                        kappa=math.exp(-eps0), rate=0.1, c_gamma=0.999)
    out = []
    for threads, cut in (("1", 1 << 40), ("2", 1)):
        monkeypatch.setenv("SHUFFLEDP_THREADS", threads)
        monkeypatch.setattr(sp, "_PLD_THREADED", cut)
        out.append(sp.hidden_pld_atoms(hp))
    logp, logq, _, _ = sp.hidden_atoms(hp)
    light = (logp < math.log(sp._PLD_DROP)) & (logq < math.log(sp._PLD_DROP))
    assert 0 < int(light.sum()) < light.size          # some atoms are dropped
    assert out[0][0].tobytes() == out[1][0].tobytes() == logp[~light].tobytes()
    assert out[0][1].tobytes() == out[1][1].tobytes() == logq[~light].tobytes()
    assert out[0][2] == out[1][2] > float(np.exp(logp[light]).sum())


def _run_reference(lw, cut):
    idx = np.flatnonzero(lw > cut)
    return (int(idx[0]), int(idx[-1]) + 1) if idx.size else (0, 0)


@pytest.mark.parametrize("slope", [3e-3, -3e-3, 1e-9, -2.5, 0.0])
@pytest.mark.parametrize("c", [-2000.0, -700.0, -700.0 + 1e-13, -650.0, 0.0, 400.0])
def test_run_above_is_the_scan(slope, c):
    """The run of tilted log weights above −700 by binary search: the scan's run."""
    for s_lo, size in ((-5000, 20_000), (-3, 7), (10**12, 1000), (0, 1)):
        s = np.arange(float(s_lo), float(s_lo + size))
        lw = c + slope * s
        got = pf._run_above(lw, -700.0, slope)
        if slope == 0.0:
            assert got is None
        else:
            assert got == _run_reference(lw, -700.0)


@pytest.mark.parametrize("s_lo,size", [(0, 1), (-7, 100), (-(3 * 10**11), 583_200),
                                       (2**51 - 10, 8)])
def test_float_range_is_the_int_range_converted(s_lo, size):
    got = np.arange(float(s_lo), float(s_lo + size))
    want = np.arange(s_lo, s_lo + size, dtype=np.int64).astype(float)
    assert got.size == want.size and got.tobytes() == want.tobytes()
