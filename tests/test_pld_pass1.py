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
