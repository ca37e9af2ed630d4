"""Approximate-DP composition: KOV15 (both statements), the δ split, PLD, route wiring.

Every expected value here is computed independently of the code under test:

* KOV15: the k-fold product of binary randomized response (pure ε-DP) is the worst case
  (KOV15 Thm 3.3); its exact δ(ε) is enumerated below over the number of "flips" in
  mpmath; with δ1 > 0 the canonical 4-atom pair is multiplied out with ``oracle.product``.
* PLD: exact hockey-sticks of small pairs and of their T-fold products (``oracle``).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import oracle
import shuffledp as sd
from shuffledp.accounting.select import bound_answer, routes_of
from shuffledp.core.views import DeltaAt, EpsilonAt
from shuffledp.compose import composition as comp
from shuffledp.bounds.base import Bound
from shuffledp.core.errors import NotApplicableError

mp.mp.dps = 50


# ----------------------------------------------------------------------------------------
# Independent references
# ----------------------------------------------------------------------------------------

def rr_product_delta(eps1, k, eps):
    """Exact H_{e^eps}(RR^k || RR'^k) for binary RR(eps1), by the number j of flips."""
    e1 = mp.mpf(repr(float(eps1)))
    a = mp.e ** e1 / (1 + mp.e ** e1)
    b = 1 - a
    t = mp.e ** mp.mpf(repr(float(eps)))
    total = mp.mpf(0)
    for j in range(k + 1):
        p = a ** (k - j) * b ** j          # P^k of one outcome with j flips
        q = a ** j * b ** (k - j)          # Q^k of that outcome
        d = p - t * q
        if d > 0:
            total += mp.binomial(k, j) * d
    return total


def canonical_pair(eps1, delta1):
    """KOV15's canonical (ε, δ) pair as oracle dicts (4 atoms)."""
    e1 = mp.mpf(repr(float(eps1)))
    d = mp.mpf(repr(float(delta1)))
    a = mp.e ** e1 / (1 + mp.e ** e1)
    P = {0: d, 1: (1 - d) * a, 2: (1 - d) * (1 - a), 3: mp.mpf(0)}
    Q = {0: mp.mpf(0), 1: (1 - d) * (1 - a), 2: (1 - d) * a, 3: d}
    return P, Q


def power(P, Q, T):
    PT, QT = P, Q
    for _ in range(T - 1):
        PT, QT = oracle.product(PT, P), oracle.product(QT, Q)
    return PT, QT


def both_ways(P, Q, eps):
    return max(oracle.hockey(P, Q, eps), oracle.hockey(Q, P, eps))


# ----------------------------------------------------------------------------------------
# KOV15 optimal homogeneous
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps1", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("k", [1, 2, 3, 6, 10])
def test_kov15_pure_matches_rr_product(eps1, k):
    grid = [(k - 2 * i) * eps1 for i in range(k // 2 + 1)]
    between = [g - 0.37 * eps1 for g in grid if g - 0.37 * eps1 > 0]
    for eps in grid + between + [0.0]:
        exact = float(rr_product_delta(eps1, k, eps))
        got = comp.kov15_delta(eps1, 0.0, k, eps)
        assert got >= exact - 1e-40, (eps, got, exact)   # 1e-40: mpmath noise at exact zeros
        # a few ulps of ε are charged at the kinks so that no live term is dropped
        assert got <= exact * (1 + 1e-9) + 1e-14 * k * eps1, (eps, got, exact)


@pytest.mark.parametrize("eps1,delta1,k", [(0.5, 1e-3, 3), (1.2, 0.02, 4), (0.2, 1e-6, 5)])
def test_kov15_approx_matches_canonical_product(eps1, delta1, k):
    PT, QT = power(*canonical_pair(eps1, delta1), k)
    eps_i, d_i = comp.kov15_points(eps1, delta1, k)
    for eps in list(eps_i) + [0.1, 0.77 * k * eps1]:
        exact = float(oracle.hockey(PT, QT, eps))
        got = comp.kov15_delta(eps1, delta1, k, eps)
        assert exact <= got <= exact * (1 + 1e-9) + 1e-15
    # the theorem's own statement (δ_i at ε_i, summed as written) agrees
    for e, d in zip(eps_i, d_i):
        exact = float(oracle.hockey(PT, QT, e))
        assert exact <= d <= exact * (1 + 1e-9) + 1e-15


def test_kov15_denominator_is_one_plus_exp():
    # k = 2, i = 1: δ_1 = (e^{2ε} − 1)/(1 + e^ε)^2 (with (1 − e^ε)^2 it would exceed 1).
    eps1 = 1.0
    expected = (math.exp(2) - 1) / (1 + math.e) ** 2
    eps_i, d_i = comp.kov15_points(eps1, 0.0, 2)
    assert eps_i[1] == 0.0
    assert d_i[1] == pytest.approx(expected, rel=1e-12)
    assert d_i[1] >= expected


@pytest.mark.parametrize("eps1,delta1,k,delta", [
    (0.5, 0.0, 10, 1e-6), (1.0, 1e-8, 10, 1e-5), (0.1, 1e-9, 1000, 1e-5),
    (2.0, 1e-7, 50, 1e-3), (0.01, 1e-12, 100_000, 1e-5)])
def test_kov15_inverse_is_certified(eps1, delta1, k, delta):
    e = comp.kov15_epsilon(eps1, delta1, k, delta)
    assert math.isfinite(e) and 0.0 <= e <= k * eps1 * (1 + 1e-9)
    assert comp.kov15_delta(eps1, delta1, k, e) <= delta
    if e > 1e-6:   # and it is not needlessly loose
        assert comp.kov15_delta(eps1, delta1, k, e * (1 - 1e-6)) > delta


def _plain_threshold(eps1, delta1, k, delta):
    """The certified threshold by plain bisection on kov15_delta over [0, kε1] (no steer)."""
    from shuffledp.numerics import bisect_certified
    return bisect_certified(lambda e: comp.kov15_delta(eps1, delta1, k, e) <= delta, 0.0,
                            k * eps1 * (1 + 1e-9) + 1e-12, want="smallest", xtol=1e-16,
                            rtol=1e-15)


def test_kov15_steered_root_matches_plain_bisection():
    # The steered search (prefix sums between breakpoints, then a bracket of ±1e-12) must
    # land on the same certified threshold as a plain bisection, over a spread of (ε1, k,
    # δ, δ1) that includes many live terms, one live term and huge k·ε1.
    rng = np.random.default_rng(7)
    steered = 0
    for _ in range(150):
        eps1 = float(10 ** rng.uniform(-4, 1.5))
        k = int(10 ** rng.uniform(0, 5))
        delta = float(10 ** rng.uniform(-14, -1))
        delta1 = 0.0 if rng.random() < 0.5 else float(delta / k * rng.uniform(0, 0.99))
        e = comp.kov15_epsilon(eps1, delta1, k, delta)
        if not math.isfinite(e) or e == 0.0:
            continue
        ref = _plain_threshold(eps1, delta1, k, delta)
        assert comp.kov15_delta(eps1, delta1, k, e) <= delta
        assert ref <= e <= ref * (1 + 2e-11) + 2e-13
        ls = math.log1p(-delta) - k * math.log1p(-delta1)
        s = comp._kov_steer(eps1, k, -math.expm1(ls))
        steered += s is not None and abs(s - ref) <= 1e-9 * ref
    assert steered >= 100        # the steer is what normally answers

def test_kov15_infeasible_and_degenerate():
    # the rounds' own δ exceeds the target: no finite ε
    assert comp.kov15_epsilon(1.0, 1e-3, 100, 1e-4) == math.inf
    # ε1 = 0: nothing leaks beyond the per-round δ
    assert comp.kov15_delta(0.0, 0.0, 50, 0.0) == 0.0
    assert comp.kov15_epsilon(0.0, 0.0, 50, 1e-9) == 0.0
    assert comp.kov15_delta(3.0, 0.0, 100_000, 1.0) == 1.0   # no NaN at huge exponents
    assert comp.kov15_delta(20.0, 0.0, 100_000, 1e6) >= 0.0


# ----------------------------------------------------------------------------------------
# KOV15 closed form
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps1,delta1,k,delta", [
    (0.5, 0.0, 10, 1e-6), (0.1, 1e-9, 1000, 1e-5), (1.0, 1e-8, 30, 1e-4),
    (0.01, 1e-12, 100_000, 1e-5), (3.0, 0.0, 5, 0.1)])
def test_closed_form_not_below_optimal(eps1, delta1, k, delta):
    closed, which = comp.kov15_closed_epsilon(eps1, delta1, k, delta)
    opt = comp.kov15_epsilon(eps1, delta1, k, delta)
    assert which in ("sum", "sqrt-log", "sqrt-log-e")
    assert closed >= opt
    # the inverse of the closed form is certified and also above the optimal δ
    for eps in (0.3 * k * eps1, closed):
        dc, _ = comp.kov15_closed_delta(eps1, delta1, k, eps)
        assert dc >= comp.kov15_delta(eps1, delta1, k, eps) * (1 - 1e-12)
    dc, _ = comp.kov15_closed_delta(eps1, delta1, k, closed)
    assert dc <= delta * (1 + 1e-9)


def test_closed_form_formula_by_hand():
    # k = 100, ε = 0.1, δ1 = 0, δ = 1e-5: the sqrt-log expression, written out here.
    k, e, d = 100, 0.1, 1e-5
    mu = k * (math.exp(e) - 1) * e / (math.exp(e) + 1)
    third = mu + math.sqrt(2 * k * e * e * math.log(1 / d))
    second = mu + math.sqrt(2 * k * e * e * math.log(math.e + math.sqrt(k * e * e) / d))
    got, which = comp.kov15_closed_epsilon(e, 0.0, k, d)
    assert got == pytest.approx(min(third, second, k * e), rel=1e-9)
    assert got >= min(third, second, k * e)


# ----------------------------------------------------------------------------------------
# The split
# ----------------------------------------------------------------------------------------

def rr_curve(e0):
    """Single-round curve of a pure e0-DP output: δ(ε) = (e^e0 − e^ε)/(e^e0 + 1)."""
    s = math.exp(e0) / (math.exp(e0) + 1)
    return (lambda d: max(0.0, e0 + math.log1p(-d / s)) if d < s else 0.0,
            lambda e: 0.0 if e >= e0 else -math.expm1(e - e0) * s)


def gaussian_curve(sigma):
    """Analytic Gaussian mechanism curve (Balle–Wang 2018), sensitivity 1."""
    from scipy import optimize, stats

    def d_of(e):
        return float(stats.norm.cdf(0.5 / sigma - e * sigma)
                     - math.exp(e) * stats.norm.cdf(-0.5 / sigma - e * sigma))

    def e_of(d):
        if d_of(0.0) <= d:
            return 0.0
        return optimize.brentq(lambda e: d_of(e) - d, 0.0, 200.0, xtol=1e-14) + 1e-12
    return e_of, d_of


@pytest.mark.parametrize("curve,T,delta", [
    (rr_curve(1.0), 10, 1e-6), (rr_curve(0.2), 200, 1e-6),
    (gaussian_curve(3.0), 20, 1e-5), (gaussian_curve(10.0), 500, 1e-6)])
def test_optimised_split_never_worse_than_seed_split(curve, T, delta):
    e_of, d_of = curve
    best, results = comp.compose_epsilon(e_of, T, delta)
    d1 = delta / (2 * T)
    seed_opt = comp.kov15_epsilon(e_of(d1), d1, T, delta)
    seed_closed, _ = comp.kov15_closed_epsilon(e_of(d1), d1, T, delta)
    by = {r.statement: r for r in results}
    assert by["kov15-optimal"].value <= seed_opt
    assert by["kov15-closed"].value <= seed_closed
    assert best.value == min(r.value for r in results)
    assert by["kov15-closed"].value >= by["kov15-optimal"].value * (1 - 1e-9)
    # the reported split reproduces the value
    o = by["kov15-optimal"]
    assert comp.kov15_epsilon(e_of(o.delta_round), o.delta_round, T, delta) == pytest.approx(o.value)


@pytest.mark.parametrize("curve,T,delta,eps_max", [
    (rr_curve(1.0), 10, 1e-6, 1.0), (gaussian_curve(3.0), 20, 1e-5, 40.0)])
def test_delta_of_epsilon_of_delta(curve, T, delta, eps_max):
    e_of, d_of = curve
    best, _ = comp.compose_epsilon(e_of, T, delta, pure_eps=eps_max if d_of(eps_max) == 0 else None)
    back, _ = comp.compose_delta(d_of, T, best.value, eps_max=eps_max)
    assert back.value <= delta * (1 + 1e-6)
    # and the split it reports is honest, whichever statement won: re-evaluating that
    # statement at the reported per-round (ε, δ) gives the reported total δ
    o = back
    assert o.statement in ("kov15-optimal", "kov15-closed")
    if o.statement == "kov15-optimal":
        again = comp.kov15_delta(o.eps_round, o.delta_round, T, best.value)
    else:
        again, _ = comp.kov15_closed_delta(o.eps_round, o.delta_round, T, best.value)
    assert again == pytest.approx(o.value, rel=1e-9)
    assert o.delta_round == pytest.approx(d_of(o.eps_round), rel=1e-9, abs=1e-300)


# ----------------------------------------------------------------------------------------
# PLD
# ----------------------------------------------------------------------------------------

needs_pld = pytest.mark.skipif(comp.pld_unavailable_reason() is not None,
                               reason="dp-accounting (the pld extra) is not installed")

PAIR_P = [0.5, 0.3, 0.15, 0.05]
PAIR_Q = [0.2, 0.3, 0.25, 0.25]


def mp_pair():
    return ({i: mp.mpf(repr(x)) for i, x in enumerate(PAIR_P)},
            {i: mp.mpf(repr(x)) for i, x in enumerate(PAIR_Q)})


def exact_eps(P, Q, delta):
    """Smallest ε with both hockey-sticks ≤ δ, by mpmath bisection."""
    lo, hi = mp.mpf(0), mp.mpf(20)
    if both_ways(P, Q, 0) <= delta:
        return 0.0
    for _ in range(45):                  # 20/2^45 < 1e-12, far below the grid step
        mid = (lo + hi) / 2
        if both_ways(P, Q, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return float(hi)


@needs_pld
def test_pld_single_round_equals_exact():
    P, Q = mp_pair()
    lp, lq = np.log(PAIR_P), np.log(PAIR_Q)
    d = 1e-4
    for eps in (0.0, 0.1, 0.5, 0.9, 1.3):
        got, det = comp.pld_delta(lp, lq, 1, eps, discretization=d)
        exact = float(both_ways(P, Q, eps))
        assert got >= exact
        # each loss is spread onto its two neighbouring grid points (at most one step)
        assert got <= float(both_ways(P, Q, eps - d)) + 2e-12
    for delta in (1e-3, 0.05, 0.2):
        got, det = comp.pld_epsilon(lp, lq, 1, delta, discretization=d)
        exact = exact_eps(P, Q, delta)
        assert exact <= got <= exact + d + 1e-9
        assert det["discretization"] == pytest.approx(d)
        assert det["variance_added_per_round"] == pytest.approx(d * d / 4)


@pytest.mark.parametrize("T", [2, 3, 5])   # 3: sparse path in dp_accounting, 5: dense (FFT)
@needs_pld
def test_pld_composition_dominates_exact_product(T):
    P, Q = mp_pair()
    PT, QT = power(P, Q, T)
    lp, lq = np.log(PAIR_P), np.log(PAIR_Q)
    d = 1e-4
    for eps in (0.2, 1.0, 2.5):
        got, _ = comp.pld_delta(lp, lq, T, eps, discretization=d)
        exact = float(both_ways(PT, QT, eps))
        assert got >= exact
        assert got <= float(both_ways(PT, QT, eps - T * d)) + 1e-10
    got, _ = comp.pld_epsilon(lp, lq, T, 1e-2, discretization=d)
    assert both_ways(PT, QT, got) <= 1e-2
    if T <= 3:      # the mpmath bisection over 4^T outcomes is slow beyond that
        exact = exact_eps(PT, QT, 1e-2)
        assert exact <= got <= exact + T * d + 1e-9


@needs_pld
def test_pld_counts_matter():
    lp, lq = np.log(PAIR_P), np.log(PAIR_Q)
    one, _ = comp.pld_delta(lp, lq, 1, 0.5)
    two, _ = comp.pld_delta(lp, lq, 2, 0.5)
    ten, _ = comp.pld_delta(lp, lq, 10, 0.5)
    # exact values: 0.1703 (T=1), 0.3038 (T=2)
    assert two > one + 0.1 and ten > two + 0.1
    e1, _ = comp.pld_epsilon(lp, lq, 1, 1e-3)
    e4, _ = comp.pld_epsilon(lp, lq, 4, 1e-3)
    assert e4 > e1 + 0.5


@needs_pld
def test_pld_randomized_response_counts_through_our_path():
    # binary RR(ε0) as atoms: T rounds must match the exact RR^T product (the flip count
    # enumeration above) — dp_accounting's own RR constructor is never used.
    e0, T = 0.8, 6
    a = math.exp(e0) / (1 + math.exp(e0))
    lp, lq = np.log([a, 1 - a]), np.log([1 - a, a])
    for eps in (0.5, 1.7, 3.3):
        got, _ = comp.pld_delta(lp, lq, T, eps, discretization=1e-5)
        exact = float(rr_product_delta(e0, T, eps))
        assert exact <= got <= exact + 1e-3


@needs_pld
def test_pld_tail_mass_and_infinite_loss():
    lp, lq = np.log(PAIR_P), np.log(PAIR_Q)
    base, _ = comp.pld_delta(lp, lq, 3, 2.0)
    tau = 1e-4
    withtail, det = comp.pld_delta(lp, lq, 3, 2.0, extra_delta=tau)
    assert withtail >= base + (1 - (1 - tau) ** 3) * (1 - 1e-6) * 0.999
    assert det["tail_per_round"] == tau
    # an atom with Q = 0 is infinite loss; P-mass missing from the list too
    lp2 = np.log([0.5, 0.3, 0.2])
    lq2 = np.array([math.log(0.6), math.log(0.4), -math.inf])
    d, _ = comp.pld_delta(lp2, lq2, 1, 5.0)
    assert d >= 0.2
    e, det = comp.pld_epsilon(lp2, lq2, 2, 0.1)
    assert e == math.inf and "infinite" in det["reason"]
    lp3 = np.log([0.5, 0.3])            # 0.2 of P not listed
    lq3 = np.log([0.5, 0.3])
    d, _ = comp.pld_delta(lp3, lq3, 1, 0.0)
    assert d >= 0.2


def test_pld_without_dp_accounting(monkeypatch):
    # The upper route composes its atoms in pld_fft (numpy only): it stays available
    # without dp-accounting; the optimistic PLD of lower bounds needs it.
    monkeypatch.setattr(comp, "pld_unavailable_reason", lambda: "dp-accounting missing (test)")
    val, _ = comp.pld_delta(np.log(PAIR_P), np.log(PAIR_Q), 2, 0.5)
    assert 0.0 < val <= 1.0
    b = _PairBound()
    assert "pld" in routes_of(b, PROTO, 3)
    with pytest.raises(NotApplicableError, match="missing"):
        comp.pld_delta_lower(np.log(PAIR_P), np.log(PAIR_Q), 2, 0.5)


# ----------------------------------------------------------------------------------------
# Route wiring
# ----------------------------------------------------------------------------------------

class _PairBound(Bound):
    """An unregistered upper bound whose single round is the small pair above."""

    id = "test-pair"
    kind = "upper"

    def check(self, proto):
        return None

    def valid_for(self, proto):
        return "test"

    def pld_atoms(self, proto):
        return np.log(PAIR_P), np.log(PAIR_Q), 0.0

    def delta_one(self, proto, eps):
        return float(both_ways(*mp_pair(), eps)) * (1 + 1e-12)

    def eps_hi(self, proto):
        return math.log(0.25 / 0.05) + 1e-9


class _LowerPair(_PairBound):
    id = "test-lower"
    kind = "lower"


PROTO = sd.Shuffle(sd.LDP(1.0), n=10_000)


@needs_pld
def test_routes_offered():
    triv = sd.bounds.get("trivial")
    assert "kov15" not in routes_of(triv, PROTO, 1) and "kov15" in routes_of(triv, PROTO, 2)
    assert "kov15" not in routes_of(sd.bounds.get("girgis-lower"), PROTO, 5)
    assert routes_of(_PairBound(), PROTO, 1) == ["none", "pld"]
    assert routes_of(_PairBound(), PROTO, 4) == ["kov15", "pld"]
    # composition theorems give upper bounds only
    assert routes_of(_LowerPair(), PROTO, 4) == []


def test_trivial_kov15_beats_rdp_at_moderate_T():
    triv = sd.bounds.get("trivial")
    for T in (10, 50):
        o = bound_answer(triv, PROTO, EpsilonAt(1e-6), T)
        assert o.composition == "kov15"
        assert o.details["routes"]["kov15"] < o.details["routes"]["rdp"]
        assert set(o.details["statements"]) == {"kov15-optimal", "kov15-closed"}
        # never above T·ε0 (pure composition) and never below the exact RR^T value
        assert o.value <= T * 1.0 * (1 + 1e-9)
        assert float(rr_product_delta(1.0, T, o.value)) <= 1e-6
    r = sd.epsilon(PROTO, delta=1e-6, rounds=10, bound="trivial", composition="kov15")
    assert r.composition == "kov15" and r.kind == "upper"
    rd = sd.delta(PROTO, epsilon=5.0, rounds=10, bound="trivial", composition="kov15")
    assert rd.delta <= 1.0 and float(rr_product_delta(1.0, 10, 5.0)) <= rd.delta


@needs_pld
def test_pair_bound_routes_agree_with_exact():
    b = _PairBound()
    P, Q = mp_pair()
    o1 = bound_answer(b, PROTO, EpsilonAt(0.05), 1)
    assert set(o1.details["routes"]) == {"none", "pld"}
    assert o1.details["routes"]["none"] <= o1.details["routes"]["pld"] <= \
        o1.details["routes"]["none"] + 2e-4
    T = 3
    PT, QT = power(P, Q, T)
    o = bound_answer(b, PROTO, EpsilonAt(0.05), T)
    assert o.composition == "pld"                     # PLD beats KOV15 on a known pair
    assert o.details["routes"]["kov15"] >= o.details["routes"]["pld"]
    assert both_ways(PT, QT, o.value) <= 0.05
    od = bound_answer(b, PROTO, DeltaAt(1.0), T)
    assert od.value >= float(both_ways(PT, QT, 1.0))


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,name", [
    (lambda: comp.kov15_delta(-1.0, 0.0, 3, 1.0), "eps_round"),
    (lambda: comp.kov15_delta(float("nan"), 0.0, 3, 1.0), "eps_round"),
    (lambda: comp.kov15_delta(1.0, 1.0, 3, 1.0), "delta_round"),
    (lambda: comp.kov15_delta(1.0, 0.0, 0, 1.0), "rounds"),
    (lambda: comp.kov15_delta(1.0, 0.0, 2.5, 1.0), "rounds"),
    (lambda: comp.kov15_delta(1.0, 0.0, 3, -0.1), "epsilon"),
    (lambda: comp.kov15_epsilon(1.0, 0.0, 3, 0.0), "delta"),
    (lambda: comp.kov15_closed_epsilon(1.0, 0.0, 3, 1.5), "delta"),
    (lambda: comp.compose_epsilon(lambda d: 1.0, 0, 1e-6), "rounds"),
    (lambda: comp.compose_epsilon(lambda d: 1.0, 3, float("nan")), "delta"),
    (lambda: comp.compose_delta(lambda e: 0.0, 3, 1.0, eps_max=0.0), "eps_max"),
    (lambda: comp.pld_delta([0.0], [0.0, -1.0], 1, 0.1), "logp"),
    (lambda: comp.pld_delta([0.5], [0.0], 1, 0.1), "logp"),
    (lambda: comp.pld_delta([float("nan")], [0.0], 1, 0.1), "logp"),
    (lambda: comp.pld_delta([0.0], [0.0], 0, 0.1), "rounds"),
    (lambda: comp.pld_epsilon([0.0], [0.0], 1, 0.0), "delta"),
    (lambda: comp.pld_epsilon([0.0], [0.0], 1, 0.1, extra_delta=-1e-3), "extra_delta"),
    (lambda: comp.pld_epsilon([0.0], [0.0], 1, 0.1, discretization=0.0), "discretization"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_nan_from_curve_is_an_error_not_a_value():
    with pytest.raises(ArithmeticError):
        comp.compose_epsilon(lambda d: float("nan"), 3, 1e-6)


@pytest.mark.parametrize("T", [2, 3])
def test_symmetric_pld_is_one_direction_and_still_dominates(T):
    """``symmetric=True`` composes P‖Q only: for a pair whose swap maps P to Q (a clone
    pair, written out here for n = 4 in mpmath), the value is at or below the two-direction
    one and still at or above the exact T-fold δ of both directions."""
    P, Q = oracle.clone_pair_law(4, mp.mpf("0.45"), mp.mpf("0.7"))
    keys = sorted(P)
    # the swap (zeros, ones) -> (ones, zeros) maps P to Q
    assert all(abs(P[k] - Q[k[::-1]]) < mp.mpf(10) ** -25 for k in keys)
    Pl, Ql = [P[k] for k in keys], [Q[k] for k in keys]
    lp = np.array([float(mp.log(x)) for x in Pl])
    lq = np.array([float(mp.log(x)) for x in Ql])
    for eps in (0.1, 0.5, 1.2):
        one, _ = comp.pld_delta(lp, lq, T, eps, symmetric=True)
        two, _ = comp.pld_delta(lp, lq, T, eps)
        exact = max(oracle.product_hockey(Pl, Ql, T, eps), oracle.product_hockey(Ql, Pl, T, eps))
        assert float(exact) <= one <= two
    e1, _ = comp.pld_epsilon(lp, lq, T, 1e-3, symmetric=True)
    e2, _ = comp.pld_epsilon(lp, lq, T, 1e-3)
    assert e1 <= e2


def test_clone_and_hidden_pld_atoms_are_symmetric():
    """The promise behind ``pld_symmetric``: the atoms handed to PLD by the clone-pair and
    hidden-pair bounds are closed under swapping P and Q (to rounding)."""
    from shuffledp.pairs import clone as cp
    from shuffledp.pairs import hidden as sp
    from shuffledp.pairs.trimmed import trimmed_hidden

    def closed(lp, lq):
        a, b = np.lexsort((lq, lp)), np.lexsort((lp, lq))
        return np.allclose(np.stack([lp[a], lq[a]]), np.stack([lq[b], lp[b]]),
                           rtol=0, atol=1e-9)

    lp, lq, _ = cp.pair_pld_atoms(cp.fmt20_pair(1.0, 10**5))
    assert closed(lp, lq)
    hp, _ = trimmed_hidden(10**6, 2.0, 4.0, rate=0.1)
    lp, lq, _ = sp.hidden_pld_atoms(hp)
    assert closed(lp, lq)
    assert sd.bounds.get("fmt23").pld_symmetric and not getattr(
        sd.bounds.get("blanket"), "pld_symmetric", False)
