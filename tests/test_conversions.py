"""RDP machinery (spec/accounting.md §1–2): conversion formulas, real orders, composition,
and the order search against an independent integer-order optimum."""

from __future__ import annotations

import importlib
import math

import mpmath as mp
import numpy as np
import pytest

import oracle
import shuffledp as sd
from shuffledp.bounds import girgis as g

# The RDP machinery lives in shuffledp.compose.conversions (sd.rdp is the accountant function).
rdp = importlib.import_module("shuffledp.compose.conversions")


def cks_eps(lam, r, delta):
    """accounting.md §1, written out: ε_RDP + log(1 − 1/λ) − (log δ + log λ)/(λ − 1)."""
    return r + math.log(1 - 1 / lam) - (math.log(delta) + math.log(lam)) / (lam - 1)


def cks_delta(lam, r, eps):
    """exp((λ−1)(ε_RDP − ε))/(λ − 1) · (1 − 1/λ)^λ, capped at 1 (in logs: no overflow)."""
    logd = (lam - 1) * (r - eps) - math.log(lam - 1) + lam * math.log(1 - 1 / lam)
    return math.exp(min(logd, 0.0))


@pytest.mark.parametrize("lam", [1.5, 2, 3, 10, 77.5, 1000])
@pytest.mark.parametrize("r", [1e-6, 0.01, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.01])
def test_eps_from_rdp_matches_formula(lam, r, delta):
    got = rdp.eps_from_rdp([lam], [r], delta)[0]
    ref = cks_eps(lam, r, delta)
    if delta ** 2 >= 1 - math.exp(-r):     # the KL shortcut: ε = 0
        assert got == 0.0
    else:
        assert got == pytest.approx(max(ref, 0.0), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("lam", [1.5, 2, 3, 10, 1000])
@pytest.mark.parametrize("r", [1e-6, 0.01, 0.5, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 5.0])
def test_delta_from_rdp_matches_formula(lam, r, eps):
    got = rdp.delta_from_rdp([lam], [r], eps)[0]
    ref = min(1.0, math.sqrt(1 - math.exp(-r)), cks_delta(lam, r, eps))
    assert got == pytest.approx(ref, rel=1e-12)


def test_kl_shortcut_gives_zero_for_large_delta():
    # δ² ≥ 1 − e^{−ε_RDP}: ε = 0 (dp_accounting's rule).
    r = 1e-4
    d = math.sqrt(-math.expm1(-r)) * 1.0001
    assert rdp.eps_from_rdp([2.0], [r], d)[0] == 0.0
    assert rdp.eps_from_rdp([2.0], [r], d * 0.99)[0] > 0.0


@pytest.mark.parametrize("eps0,n,T", [(0.5, 10**4, 1), (1.0, 10**5, 10), (2.0, 10**5, 100)])
def test_delta_of_epsilon_is_at_most_delta(eps0, n, T):
    fn = lambda o: g.ub1(eps0, n, o)
    for delta in (1e-9, 1e-6, 1e-3):
        e = rdp.search_epsilon(fn, delta, T).value
        d = rdp.search_delta(fn, e, T).value
        assert d <= delta * (1 + 1e-9), (delta, e, d)
    # And through the accountant.
    p = sd.Shuffle(sd.LDP(eps0), n=n)
    e = sd.epsilon(p, 1e-6, rounds=T, bound="girgis-ub1").epsilon
    assert sd.delta(p, e, rounds=T, bound="girgis-ub1").delta <= 1e-6 * (1 + 1e-9)


def test_chord_exact_at_integers_and_above_a_convex_curve():
    # Gaussian λ/(2σ²): (λ − 1) ε(λ) is convex, so the chord lies on or above it.
    sigma = 3.0
    ints = np.arange(2, 20)
    vals = ints / (2 * sigma ** 2)
    assert np.array_equal(rdp.at_real_orders(ints, vals, ints.astype(float)), vals)
    lam = np.linspace(2.0, 19.0, 171)
    chord = rdp.at_real_orders(ints, vals, lam)
    assert np.all(chord >= lam / (2 * sigma ** 2) * (1 - 1e-15))
    # Sparse grid: the chord between non-adjacent orders is still valid (and looser).
    sparse = np.array([2, 5, 19])
    c2 = rdp.at_real_orders(sparse, sparse / (2 * sigma ** 2), lam)
    assert np.all(c2 >= chord * (1 - 1e-15))
    # (1, 2) takes ε(2); beyond the evaluated range: +inf.
    assert rdp.at_real_orders(ints, vals, [1.5])[0] == vals[0]
    assert rdp.at_real_orders(ints, vals, [25.0])[0] == math.inf


def test_chord_above_exact_binary_rr_rdp_at_real_orders():
    # The exact RDP of a concrete shuffled binary RR pair (oracle) at real orders.
    eps0, n = 1.0, 4
    R = oracle.rr_matrix(eps0, 2)
    P = oracle.shuffled(R, [0] * (n - 1) + [1])
    Q = oracle.shuffled(R, [0] * n)
    ints = np.arange(2, 9)
    vals = np.array([float(oracle.renyi(P, Q, int(l))) for l in ints])
    for lam in (1.3, 2.5, 3.25, 4.9, 7.01):
        exact = float(oracle.renyi(P, Q, mp.mpf(lam)))
        assert rdp.at_real_orders(ints, vals, [lam])[0] >= exact
    # Through a bound: sd.rdp at real orders is the chord of the bound's integer values.
    p = sd.Shuffle(sd.LDP(eps0), n=100)
    c = sd.rdp(p, [2.5, 3.0], bound="girgis-ub1").values
    u = g.ub1(eps0, 100, [2, 3])
    assert c[1] == u[1]
    assert c[0] == pytest.approx((0.5 * 1 * u[0] + 0.5 * 2 * u[1]) / 1.5, rel=1e-14)


def test_t_rounds_scale_exactly():
    p = sd.Shuffle(sd.LDP(1.0), n=5000)
    orders = [2, 3.5, 10, 64]
    one = sd.rdp(p, orders, bound="girgis-ub1")
    for T in (1, 7, 1000):
        cT = sd.rdp(p, orders, rounds=T, bound="girgis-ub1")
        assert np.array_equal(cT.values, T * one.values) and cT.rounds == T
    # The search composes by T·f: same as searching T·f for one round.
    f = lambda o: g.ub1(1.0, 5000, o)
    a = rdp.search_epsilon(f, 1e-6, rounds=10)
    b = rdp.search_epsilon(lambda o: 10 * f(o), 1e-6, rounds=1)
    assert a.value == b.value and a.order == b.order


# ----- must-show: order search vs the best integer order in [2, 256] ---------------------

def best_integer_order(eps0, n, T, delta, top=256):
    lams = np.arange(2, top + 1)
    vals = g.ub1(eps0, n, lams)             # UB1 itself is checked in test_girgis.py
    eps = [cks_eps(int(l), T * float(v), delta) for l, v in zip(lams, vals)]
    j = int(np.argmin(eps))
    return max(eps[j], 0.0), int(lams[j])


@pytest.mark.parametrize("eps0,n", [(0.5, 10**4), (1.0, 10**5), (0.5, 10**6), (2.0, 10**6)])
@pytest.mark.parametrize("T", [1, 10, 100, 1000])
def test_epsilon_after_T_rounds_vs_best_integer_order(eps0, n, T):
    delta = 1e-6
    r = sd.epsilon(sd.Shuffle(sd.LDP(eps0), n=n), delta, rounds=T, bound="girgis-ub1")
    ref, lam_star = best_integer_order(eps0, n, T, delta)
    det = r.candidates[0].details
    assert r.bound == "girgis-ub1" and r.kind == "upper" and r.composition == "rdp"
    assert "order" in det and "order_limit_hit" in det and det["order_limit_hit"] is False
    # Never above the integer-order optimum (allowing only the 1e-12 rounding-up slack).
    assert r.epsilon <= ref * (1 + 1e-11), (r.epsilon, ref)
    if 2 < lam_star < 256:
        assert r.epsilon >= ref * (1 - 1e-3), (r.epsilon, ref)
        assert abs(det["order"] - lam_star) <= 1.0 + 1e-9
    else:
        assert det["order"] >= 255   # the search went past 256


def test_higher_orders_help_single_round_at_1e6():
    # issue #3: n = 1e6, ε0 = 0.5, T = 1, δ = 1e-6: ≤ 0.0038 vs ~0.0287 at orders ≤ 256.
    ref, lam_star = best_integer_order(0.5, 10**6, 1, 1e-6)
    assert lam_star == 256 and ref == pytest.approx(0.0287, abs=5e-4)
    r = sd.epsilon(sd.Shuffle(sd.LDP(0.5), n=10**6), 1e-6, bound="girgis-ub1")
    det = r.candidates[0].details
    assert r.epsilon <= 0.0038
    assert det["order"] > 1000 and det["order_limit_hit"] is False
    assert det["max_order_evaluated"] >= det["order"]


def test_order_limit_hit_is_reported():
    # Capping the search below the optimum must say so.
    f = lambda o: g.ub1(0.5, 10**6, o)
    c = rdp.search_epsilon(f, 1e-6, max_order=300)
    assert c.limit_hit and c.max_order == 300
    c = rdp.search_epsilon(f, 1e-6)
    assert not c.limit_hit and c.order < 0.95 * c.max_order
