"""The sparse engine of the certified i.i.d. sums (``pairs.iid._sparse_sum``): a law with an
atom at 0 and a few light, far atoms (the privacy blanket of k-RR at large ε0 with a few
thousand users) summed over the counts of its non-zero atoms instead of a lattice and an
FFT. Checked against the exact sum in 40-digit mpmath, with a sabotaged variant that falls
below it, and against the FFT engine (never above it)."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import blanket, iid


def _exact(v, p, n, m):
    """E[(G_1 + … + G_n)_+] in 40-digit arithmetic, over every count vector of the non-zero
    atoms with total ≤ m (the rest is below 1e-40 of it for the laws below)."""
    with mp.workdps(40):
        z = [i for i in range(len(v)) if v[i] == 0.0]
        nz = [i for i in range(len(v)) if v[i] != 0.0]
        lp0 = mp.log(sum(mp.mpf(float(p[i])) for i in z))
        vs = [mp.mpf(float(v[i])) for i in nz]
        lps = [mp.log(mp.mpf(float(p[i]))) for i in nz]
        lnf = mp.loggamma(n + 1)
        tot = mp.mpf(0)
        for k in itertools.product(range(m + 1), repeat=len(nz)):
            K = sum(k)
            s = sum(ki * vi for ki, vi in zip(k, vs))
            if K > m or s <= 0:
                continue
            lw = (lnf - mp.loggamma(n - K + 1) - sum(mp.loggamma(ki + 1) for ki in k)
                  + sum(ki * lp for ki, lp in zip(k, lps)) + (n - K) * lp0)
            tot += mp.exp(lw) * s
        return tot


def _law(eps, eps0=7.6622, n=1077):
    pairs = blanket._pairs_cached(sd.RandomizedResponse(eps0, 4), 1.0)
    return blanket._pair_atoms(pairs, eps, eps < 0)[0]


@pytest.mark.parametrize("eps", [-7.4, -5.6, 0.0, 0.02, 1.5, 6.75, 7.42])
def test_sparse_sum_is_a_tight_upper_bound_on_the_exact_sum(eps):
    n = 1077
    vals, probs, err = _law(eps)
    got = iid.positive_part(vals, probs, n, value_err=err, nu=20.0)
    assert got.details["method"] == "sparse"
    exact = _exact(vals, probs, n, got.details["max_count"] + 10)
    assert mp.mpf(got.upper) >= exact
    assert mp.mpf(got.upper) <= exact * (1 + mp.mpf("1e-8"))


def test_sabotaged_sparse_sum_falls_below_the_exact_sum(monkeypatch):
    """The check above has the power to see a wrong-direction error: the atoms moved DOWN
    by 1e-6 of their size (instead of up by their rounding) give a value below it."""
    n = 1077
    vals, probs, err = _law(6.75)
    exact = _exact(vals, probs, n, 42)
    monkeypatch.setattr(iid, "_moved_up", lambda v, e: v - 1e-6 * np.abs(v))
    got = iid.positive_part(vals, probs, n, value_err=err, nu=20.0)
    assert got.details["method"] == "sparse"
    assert mp.mpf(got.upper) < exact


def test_sparse_sum_is_never_above_the_fft_engine():
    """On the lattice (a spread larger in convex order) the FFT's value is higher: by up to
    6x at the curve's far points of 4-RR at ε0 = 7.56, n = 3666."""
    n = 3666
    pairs = blanket._pairs_cached(sd.RandomizedResponse(7.5592, 4), 1.0)
    grid, top = blanket._eps_grid(pairs, n, 12)
    for e in grid:
        if abs(e) >= top:
            continue
        vals, probs, err = blanket._pair_atoms(pairs, float(e), bool(e < 0))[0]
        got = iid.positive_part(vals, probs, n, value_err=err, nu=20.0)
        fft = iid.positive_part(vals, probs, n, value_err=err, nu=20.0, split=False)
        assert got.details["method"] == "sparse" and "method" not in fft.details
        assert got.upper <= fft.upper


def test_which_laws_take_the_sparse_engine():
    vals, probs, err = _law(1.0)
    v, p = iid._prep(vals, probs, err)
    assert iid._sparse_first(v, p, 1077, 20.0, 7.0)
    # too many non-zero draws on average
    assert not iid._sparse_first(v, p, int(iid.SPARSE_MEAN / float(np.sum(p[v != 0])) + 2),
                                 20.0, 7.0)
    # a smooth law (a 3×3 matrix's blanket) is not sparse
    pairs = blanket._pairs_cached(sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3],
                                                 [0.25, 0.25, 0.5]]), 1.0)
    v, p = iid._prep(*blanket._pair_atoms(pairs, 0.3, False)[0])
    assert not iid._sparse_first(v, p, 5000, 20.0, 7.0)
    # no atom at 0
    assert not iid._sparse_first(np.array([1.0, -2.0]), np.array([0.5, 0.5]), 5000, 20.0, 7.0)


def test_the_tail_past_the_counts_is_charged(monkeypatch):
    """Cut short at 3 non-zero draws (the tail allowed to be anything), the enumerated part
    is below the exact sum and the Chernoff tail bound is what lifts the value above it."""
    n = 1077
    vals, probs, err = _law(0.02)
    v, p = iid._prep(vals, probs, err)
    monkeypatch.setattr(iid, "_SPARSE_TAIL", math.inf)
    short = iid._sparse_sum(v, p, n, m=3)
    assert short.details["max_count"] == 3
    exact = _exact(vals, probs, n, 40)
    assert mp.mpf(short.details["main"]) < exact
    assert mp.mpf(short.upper) >= exact


@pytest.mark.parametrize("bounds,m", [((), 5), ((7,), 3), ((2, 5), 4), ((6, 6), 20), ((3, 1, 2), 4)])
def test_head_vectors_are_every_vector_in_the_box_once_in_order(bounds, m):
    k, tot = iid._head_vectors(bounds, m)
    want = [c for c in itertools.product(*(range(b + 1) for b in bounds)) if sum(c) <= m]
    assert list(map(tuple, k.T.tolist())) == want
    assert tot.tolist() == [sum(c) for c in want]


def test_count_tail_bounds_the_binomial_tail():
    from scipy import stats
    for n, p, b in [(1000, 0.002, 10), (1000, 0.002, 30), (20896, 0.0018, 90), (50, 0.3, 40)]:
        exact = stats.binom.sf(b - 1, n - 1, p)
        assert exact <= iid._count_tail(n, p, b) <= max(1e3 * exact, 1e-300)
    assert iid._count_tail(100, 0.5, 10) == 1.0 and iid._count_tail(10, 0.1, 10) == 0.0


@pytest.mark.parametrize("n", [40, 300])
def test_a_positive_likeliest_atom_is_summed_from_the_end(n):
    """The closed sum over the last (likeliest) atom, mirrored for a positive value: a
    law whose likeliest non-zero atom is positive, against 40-digit mpmath."""
    vals = np.array([0.0, 0.7, -2.3, 1.1])
    probs = np.array([0.0, 0.004, 0.006, 0.01])
    probs[0] = 1.0 - probs[1:].sum()
    v, p = iid._prep(vals, probs, None)
    got = iid._sparse_sum(v, p, n)
    assert got is not None and got.details["method"] == "sparse"
    exact = _exact(vals, probs, n, got.details["max_count"] + 12)
    assert exact <= mp.mpf(got.upper) <= exact * (1 + mp.mpf("1e-9"))


def test_a_law_of_one_non_zero_atom():
    n = 500
    vals, probs = np.array([0.0, 3.0]), np.array([0.99, 0.01])
    v, p = iid._prep(vals, probs, None)
    got = iid._sparse_sum(v, p, n)
    exact = 3.0 * n * 0.01                         # S ≥ 0 always: E S_+ = E S
    assert exact <= got.upper <= exact * (1 + 1e-9)


@pytest.mark.parametrize("eps", [-3.0, 0.4, 5.5])
def test_boxed_heads_of_a_100_rr_law_against_the_full_enumeration(eps):
    """100-RR at ε0 = 6.98 (the victim pair's two atoms are rare, the 98 others' atom is
    not): the heads' boxes bind; against ``exact_positive_part`` (every count vector,
    float64) at n = 200."""
    n = 200
    pairs = blanket._pairs_cached(sd.RandomizedResponse(6.9793, 100), 1.0)
    vals, probs, err = blanket._pair_atoms(pairs, eps, eps < 0)[0]
    v, p = iid._prep(vals, probs, err)
    got = iid._sparse_sum(v, p, n)
    assert got is not None
    exact = iid.exact_positive_part(vals, probs, n)
    assert exact * (1 - 1e-12) <= got.upper <= exact * (1 + 1e-8)


def test_a_sparse_curve_keeps_its_far_tails_in_the_pld_pair():
    """The exact far points of a sparse curve are small; charging them as infinite loss in
    every round (the lattice curves' tail rule) raised a composed answer. Here every hull
    atom is kept and nothing is charged."""
    mech, n = sd.RandomizedResponse(6.1046, 3), 11094
    assert blanket._sparse_curve(mech, n, 1.0)
    assert not blanket._sparse_curve(sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3],
                                                     [0.25, 0.25, 0.5]]), 10000, 1.0)
    assert not blanket._sparse_curve(sd.RandomizedResponse(1.0, 4), 2000, 1.0)
    g, _, _, _ = blanket._fdp(mech, n, 1.0)
    lp, lq, dropped = blanket.BlanketPair(mech, n).pld_atoms()
    assert dropped == 0.0
    assert lp.size >= g.size                      # (plus, possibly, the mass-filling atom)
