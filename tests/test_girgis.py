"""Girgis et al. bounds (spec/girgis.md) against the brute-force oracle and against
independent mpmath evaluations of the spec formulas written here, not in the library.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest

import oracle
import shuffledp as sd
from shuffledp.bounds import girgis as g

mp.mp.dps = 50


# ----- independent evaluations of the spec formulas (girgis.md §1, §2, §4) ---------------

def mp_ub1(eps0, n, lam):
    """girgis.md §1 term by term in mpmath (floored n̄)."""
    e = mp.e ** mp.mpf(eps0)
    nb = mp.floor(mp.mpf(n - 1) / (2 * e)) + 1
    s = 1 + mp.binomial(lam, 2) * (e - 1) ** 2 / (nb * e)
    K = (e ** 2 - 1) ** 2 / (2 * e ** 2 * nb)
    for i in range(3, lam + 1):
        s += mp.binomial(lam, i) * i * mp.gamma(mp.mpf(i) / 2) * K ** (mp.mpf(i) / 2)
    s += mp.e ** (mp.mpf(eps0) * lam - mp.mpf(n - 1) / (8 * e))
    return mp.log(s) / (lam - 1)


def mp_ub2(eps0, n, lam):
    e = mp.e ** mp.mpf(eps0)
    nb = mp.floor(mp.mpf(n - 1) / (2 * e)) + 1
    return mp.log(mp.e ** (mp.mpf(lam) ** 2 * (e - 1) ** 2 / nb)
                  + mp.e ** (mp.mpf(eps0) * lam - mp.mpf(n - 1) / (8 * e))) / (lam - 1)


@functools.lru_cache(maxsize=None)
def _mp_pmf_window(eps0, n, lo, hi, dps):
    """[(m, Pr[Bin(n, q) = m], r(m))] for m in [lo, hi], by the ratio recurrence."""
    with mp.workdps(dps):
        e = mp.e ** mp.mpf(eps0)
        q = 1 / (e + 1)
        p = 1 - q
        c = (e ** 2 - 1) / (n * e)
        mean = n * q
        pm = mp.e ** (mp.loggamma(n + 1) - mp.loggamma(lo + 1) - mp.loggamma(n - lo + 1)
                      + lo * mp.log(q) + (n - lo) * mp.log(p))
        out = []
        for m in range(lo, hi + 1):
            out.append((m, pm, 1 + c * (m - mean)))
            pm = pm * (n - m) / (m + 1) * q / p
        return tuple(out)


def mp_lower(eps0, n, lam, direction, dps=40):
    """girgis.md §4: 1/(λ−1) log E_{m~Bin(n,q)}[r(m)^a], a = λ (forward) or 1 − λ (reverse).

    The binomial pmf is built by the ratio recurrence in mpmath over a window: the whole
    support for n ≤ 2000, else mean ± (14 sd + 4λ + 50) plus [0, 200] for the reverse
    direction (its second bump at m = 0). The window's edge terms are checked to be
    negligible (< 1e-30 of the total), so the truncation is far below 1e-15 relative.
    """
    with mp.workdps(dps):
        q = 1 / (mp.e ** mp.mpf(eps0) + 1)
        mean = float(n * q)
        sdv = math.sqrt(float(n * q * (1 - q)))
        a = mp.mpf(lam) if direction == "forward" else 1 - mp.mpf(lam)
        if n <= 2000:
            ranges = [(0, n)]
        else:
            w = 14 * sdv + 4 * lam + 50
            lo, hi = max(0, int(mean - w)), min(n, int(mean + w))
            ranges = [(lo, hi)] + ([(0, min(200, lo - 1))] if direction == "reverse" and lo > 0 else [])
        total = mp.mpf(0)
        edges = []
        for lo, hi in ranges:
            terms = [pm * r ** a for _, pm, r in _mp_pmf_window(eps0, n, lo, hi, dps)]
            edges += [(lo, terms[0]), (hi, terms[-1])]
            total += mp.fsum(terms)
        for m, t in edges:
            if m not in (0, n):
                assert t < mp.mpf(10) ** -30 * total, ("reference window too narrow", m)
        return mp.log(total) / (mp.mpf(lam) - 1)


# ----- anchors and degenerate cases ----------------------------------------------------

def test_ub1_anchor():
    # spec/girgis.md §1 and validation.md: ε0 = 0.5, n = 1000, λ = 2 → 8.4206e−4.
    # mp_ub1(0.5, 1000, 2) = 0.000842064…  (n̄ = 303)
    assert float(mp_ub1(0.5, 1000, 2)) == pytest.approx(8.4206e-4, abs=5e-9)
    assert g.ub1(0.5, 1000, [2])[0] == pytest.approx(8.4206e-4, abs=5e-9)
    c = sd.rdp(sd.Shuffle(sd.LDP(0.5), n=1000), [2], bound="girgis-ub1")
    assert c.values[0] == pytest.approx(8.4206e-4, abs=5e-9) and c.kind == "upper"


def test_ub1_can_exceed_eps0_as_spec_says():
    # girgis.md §1: ε0 = 5, n = 1000, λ = 2 → 9.16 (the trivial bound is its own line).
    assert g.ub1(5.0, 1000, [2])[0] == pytest.approx(9.16, abs=0.005)
    assert float(mp_ub1(5.0, 1000, 2)) == pytest.approx(9.16, abs=0.005)


def test_reverse_direction_example():
    # girgis.md §4: ε0 = 3, n = 200, λ = 16: forward 0.436, reverse 2.352.
    assert g.lower(3.0, 200, [16], "forward")[0] == pytest.approx(0.436, abs=5e-4)
    assert g.lower(3.0, 200, [16], "reverse")[0] == pytest.approx(2.352, abs=5e-4)


@pytest.mark.parametrize("fn", [g.ub1, g.ub2, g.lower])
def test_eps0_zero_gives_zero(fn):
    assert np.all(fn(0.0, 1000, [2, 3, 64]) == 0.0)
    for b in ("girgis-ub1", "girgis-ub2", "girgis-lower"):
        assert np.all(sd.rdp(sd.Shuffle(sd.LDP(0.0), n=50), [2, 5], bound=b).values == 0.0)


def test_lower_lambda2_closed_form():
    # girgis.md §4: at λ = 2 the forward value is log(1 + (e^ε0 − 1)²/(n e^ε0)).
    for eps0, n in [(0.5, 1000), (2.0, 10**5), (4.0, 10**6)]:
        ref = math.log1p(math.expm1(eps0) ** 2 / (n * math.exp(eps0)))
        assert g.lower(eps0, n, [2], "forward")[0] == pytest.approx(ref, rel=1e-12)


# ----- brute-force oracle (validation.md "Oracles" 1) ----------------------------------------

def _random_ldp_matrix(rng, k, B):
    m = rng.uniform(0.15, 1.0, size=(k, B))
    m /= m.sum(axis=1, keepdims=True)
    eps0 = float(np.max(np.log(m.max(axis=0)) - np.log(m.min(axis=0))))
    return m, eps0


@pytest.mark.parametrize("seed", range(8))
def test_upper_bounds_dominate_exact_renyi_random_randomizers(seed):
    rng = np.random.default_rng(1000 + seed)
    k, B = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    M, eps0 = _random_ldp_matrix(rng, k, B)
    n = int(rng.integers(2, 7))
    orders = [2, 3, 4]
    proto = sd.Shuffle(sd.Randomizer(M.tolist()), n=n)
    ub1 = sd.rdp(proto, orders, bound="girgis-ub1").values
    ub2 = sd.rdp(proto, orders, bound="girgis-ub2").values
    assert np.allclose(ub1, g.ub1(eps0, n, orders), rtol=1e-9)
    for _ in range(3):   # random neighbouring datasets, both directions
        others = list(rng.integers(0, k, size=n - 1))
        x0, x1 = rng.choice(k, size=2, replace=False)
        P = oracle.shuffled(M, [int(x0)] + others)
        Q = oracle.shuffled(M, [int(x1)] + others)
        for j, lam in enumerate(orders):
            exact = max(oracle.renyi(P, Q, lam), oracle.renyi(Q, P, lam))
            assert ub1[j] >= exact and ub2[j] >= exact, (seed, lam, ub1[j], ub2[j], exact)


@pytest.mark.parametrize("eps0,n", [(0.7, 3), (1.5, 4), (3.0, 3)])
def test_upper_bounds_dominate_worst_case_rr(eps0, n):
    R = oracle.rr_matrix(eps0, 3)
    for lam in (2, 3, 4):
        worst, _ = oracle.worst_renyi(R, n, lam)
        assert g.ub1(eps0, n, [lam])[0] >= worst
        assert g.ub2(eps0, n, [lam])[0] >= worst


@pytest.mark.parametrize("eps0", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_lower_equals_oracle_on_its_instance(eps0, n):
    R = oracle.rr_matrix(eps0, 2)
    P0 = oracle.shuffled(R, [0] * n)
    P1 = oracle.shuffled(R, [0] * (n - 1) + [1])
    orders = [2, 3, 4, 9]
    fwd = g.lower(eps0, n, orders, "forward")
    rev = g.lower(eps0, n, orders, "reverse")
    mx = sd.rdp(sd.Shuffle(sd.RandomizedResponse(eps0), n=n), orders, bound="girgis-lower")
    assert mx.kind == "lower"
    for j, lam in enumerate(orders):
        f, r = oracle.renyi(P1, P0, lam), oracle.renyi(P0, P1, lam)
        assert fwd[j] == pytest.approx(float(f), rel=1e-12)
        assert rev[j] == pytest.approx(float(r), rel=1e-12)
        assert mx.values[j] == pytest.approx(float(max(f, r)), rel=1e-12)


def test_lower_delta_equals_oracle_on_its_instance():
    eps0, n = 1.0, 5
    R = oracle.rr_matrix(eps0, 2)
    P0 = oracle.shuffled(R, [0] * n)
    P1 = oracle.shuffled(R, [0] * (n - 1) + [1])
    for eps in (0.0, 0.2, 0.5):
        ref = max(oracle.hockey(P0, P1, eps), oracle.hockey(P1, P0, eps))
        assert g.lower_delta(eps0, n, eps) == pytest.approx(float(ref), rel=1e-12)


# ----- lower bound at large n vs 40-digit mpmath -----------------------------------------------

@pytest.mark.parametrize("eps0,n", [(0.5, 1000), (3.0, 1000), (0.5, 10**6), (2.0, 10**6)])
def test_lower_matches_40_digit_mpmath(eps0, n):
    orders = [2, 16, 64]
    for direction in ("forward", "reverse"):
        ours = g.lower(eps0, n, orders, direction)
        for j, lam in enumerate(orders):
            ref = float(mp_lower(eps0, n, lam, direction))
            assert ours[j] == pytest.approx(ref, rel=1e-12), (direction, lam, ours[j], ref)


def test_lower_large_order_extreme_eps0_stays_below_eps0():
    # The reverse direction at ε0 = 20, λ = 4096 came out above ε0 (impossible: the
    # shuffled output is ε0-DP, so D_λ ≤ ε0) because 1 + c(m − nq) lost its relative
    # precision near m = 0; and above λ ≈ 700 the sum overflowed to +inf.
    for eps0, n in [(20.0, 1000), (20.0, 1), (0.5, 1), (1.0, 1000)]:
        v = g.lower(eps0, n, [2, 512, 4096])
        assert np.all(np.isfinite(v)) and np.all(v <= eps0), (eps0, n, v)
    ref = float(mp_lower(20.0, 1000, 512, "reverse", dps=60))
    assert g.lower(20.0, 1000, [512], "reverse")[0] == pytest.approx(ref, rel=1e-12)


def test_lower_huge_n_extreme_eps0_is_fast_and_finite():
    # n = 1e9, ε0 = 20: the window heuristic used to be scaled by e^ε0 and the widening
    # jumped straight to the full support [0, n] (out of memory). Mean here is n q ≈ 2.
    v = g.lower(20.0, 10**9, [2, 64, 4096])
    assert np.all(np.isfinite(v)) and np.all(v <= 20.0) and np.all(np.diff(v) >= 0)
    ref = float(mp_lower(20.0, 10**9, 64, "forward"))
    assert g.lower(20.0, 10**9, [64], "forward")[0] == pytest.approx(ref, rel=1e-12)


# ----- the must-show grid (issue #3) ---------------------------------------------------

_GRID_EPS0 = [0.5, 1.0, 2.0, 5.0]
_GRID_N = [10**3, 10**4, 10**5, 10**6]
_GRID_LAM = [2, 3, 8, 32, 64]


@pytest.mark.parametrize("eps0", _GRID_EPS0)
@pytest.mark.parametrize("n", _GRID_N)
def test_grid_ub1_ub2_match_independent_evaluation(eps0, n):
    u1 = g.ub1(eps0, n, _GRID_LAM)
    u2 = g.ub2(eps0, n, _GRID_LAM)
    for j, lam in enumerate(_GRID_LAM):
        r1, r2 = mp_ub1(eps0, n, lam), mp_ub2(eps0, n, lam)
        assert u1[j] == pytest.approx(float(r1), rel=1e-9)
        assert u2[j] == pytest.approx(float(r2), rel=1e-9)
        # Upper bounds are rounded up: never below the exact formula value.
        assert u1[j] >= r1 and u2[j] >= r2
        # girgis.md §2: UB2 is never tighter than UB1 on this range.
        assert u2[j] >= u1[j]


@pytest.mark.parametrize("eps0", _GRID_EPS0)
@pytest.mark.parametrize("n", [10**3, 10**4])
def test_grid_lower_matches_independent_evaluation(eps0, n):
    orders = [2, 8, 64]
    ours = sd.rdp(sd.Shuffle(sd.RandomizedResponse(eps0), n=n), orders, bound="girgis-lower").values
    for j, lam in enumerate(orders):
        ref = max(mp_lower(eps0, n, lam, "forward", dps=30), mp_lower(eps0, n, lam, "reverse", dps=30))
        assert ours[j] == pytest.approx(float(ref), rel=1e-9)


@pytest.mark.parametrize("eps0,n", [(1.0, 10**5), (5.0, 10**6)])
def test_grid_lower_large_n(eps0, n):
    orders = [2, 64]
    ours = g.lower(eps0, n, orders)
    for j, lam in enumerate(orders):
        ref = max(mp_lower(eps0, n, lam, "forward", dps=30), mp_lower(eps0, n, lam, "reverse", dps=30))
        assert ours[j] == pytest.approx(float(ref), rel=1e-9)


def test_lower_below_upper_on_grid():
    for eps0 in _GRID_EPS0:
        for n in _GRID_N:
            lo = g.lower(eps0, n, _GRID_LAM)
            assert np.all(lo <= g.ub1(eps0, n, _GRID_LAM))
            assert np.all(lo <= np.minimum(eps0, np.array(_GRID_LAM) * eps0 ** 2 / 2) * (1 + 1e-12))


def test_ub1_large_orders_match_mpmath():
    # Orders up to several thousand must work (girgis.md §1): the truncated sum with its
    # geometric tail agrees with the full mpmath sum.
    for eps0, n, lam in [(0.5, 10**6, 3000), (1.0, 10**5, 1000)]:
        with mp.workdps(30):
            ref = mp_ub1(eps0, n, lam)
        got = g.ub1(eps0, n, [lam])[0]
        assert got >= ref and got == pytest.approx(float(ref), rel=1e-9)


def test_simplified_is_estimate_and_respects_its_condition():
    eps0, n = 0.5, 10**6
    top = g.simplified_max_order(eps0, n)
    assert top ** 4 * math.exp(5 * eps0) < n / 9 <= (top + 1) ** 4 * math.exp(5 * eps0)
    lams = list(range(2, top + 1))
    assert np.all(g.simplified(eps0, n, lams) >= g.ub1(eps0, n, lams))   # girgis.md §3
    with pytest.raises(sd.NotApplicableError, match="lambda"):
        g.simplified(eps0, n, [top + 1])
    r = sd.epsilon(sd.Shuffle(sd.LDP(eps0), n=n), 1e-6, lower=True)
    assert r.bound != "girgis-simplified"
    assert [c.kind for c in r.candidates if c.bound == "girgis-simplified"] == ["estimate"]
