"""Tests of the generic clone-pair kernels (src/shuffledp/pairs/clone/).

Independent evaluations are written here from spec/clones.md §1, §2, §6 in mpmath; they
share no code with the library. Expected values come from the spec (public anchors) or
from those independent evaluations, never from the code under test.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import shuffledp as sd
from shuffledp.pairs import clone as cp
from shuffledp.pairs.clone import rdp_points, rdp_series, renyi

import oracle


# ---------------------------------------------------------------------------------------
# Independent mpmath evaluation (spec §1, §2, §6), 40 digits
# ---------------------------------------------------------------------------------------
_SLICE_CACHE = {}


def _mp_pair_slices(n, p, alpha, sds=9):
    """[(Pr[C = c], [Bin(c, 1/2)(x) for x = 0..c])] over c in mean ± sds·sd, in mpmath.

    Dropped mass of C is < 1e-18 relative to anything compared here.
    """
    key = (n, str(p), sds)
    if key in _SLICE_CACHE:
        return _SLICE_CACHE[key]
    m = n - 1
    p = mp.mpf(p)
    mean, sd = m * p, mp.sqrt(m * p * (1 - p))
    lo, hi = max(0, int(mean - sds * sd - 5)), min(m, int(mean + sds * sd + 5))
    out = []
    for c in range(lo, hi + 1):
        wc = mp.binomial(m, c) * p ** c * (1 - p) ** (m - c)
        b = [mp.mpf(1) / mp.mpf(2) ** c]
        for x in range(c):
            b.append(b[-1] * (c - x) / (x + 1))
        out.append((wc, b))
    _SLICE_CACHE[key] = out
    return out


def _mp_conditional(b, alpha):
    """P(x|c), Q(x|c) for x = 0..c+1 from Bin(c, 1/2) pmf list b (spec §1 slices)."""
    c = len(b) - 1
    u = [mp.mpf(0)] + b            # Bin(c,1/2)(x-1)
    v = b + [mp.mpf(0)]            # Bin(c,1/2)(x)
    P = [alpha * u[x] + (1 - alpha) * v[x] for x in range(c + 2)]
    Q = [(1 - alpha) * u[x] + alpha * v[x] for x in range(c + 2)]
    return P, Q


def mp_delta(n, p, eps0, eps, sds=10):
    mp.mp.dps = 40
    alpha = mp.e ** eps0 / (mp.e ** eps0 + 1)
    E = mp.e ** mp.mpf(eps)
    tot = mp.mpf(0)
    for wc, b in _mp_pair_slices(n, p, alpha, sds):
        P, Q = _mp_conditional(b, alpha)
        tot += wc * mp.fsum(max(mp.mpf(0), P[x] - E * Q[x]) for x in range(len(P)))
    return tot


def mp_rdp(n, p, eps0, orders, sds=10):
    mp.mp.dps = 40
    alpha = mp.e ** eps0 / (mp.e ** eps0 + 1)
    sums = {lam: mp.mpf(0) for lam in orders}
    for wc, b in _mp_pair_slices(n, p, alpha, sds):
        P, Q = _mp_conditional(b, alpha)
        for lam in orders:
            sums[lam] += wc * mp.fsum(P[x] * ((P[x] / Q[x]) ** (lam - 1) - 1)
                                      for x in range(len(P)) if P[x] > 0)
    return {lam: mp.log1p(sums[lam]) / (lam - 1) for lam in orders}


# ---------------------------------------------------------------------------------------
# Public anchors (spec/clones.md §2)
# ---------------------------------------------------------------------------------------
def test_anchor_fmt20_n1e5_eps0_4():
    e = cp.pair_epsilon(cp.fmt20_pair(4.0, 100_000), 1e-6)
    assert 0.16754 <= e <= 0.17279            # authors' README interval
    assert abs(e - 0.169770) < 5e-7            # exact value of the pair (spec)


@pytest.mark.parametrize("eps0,fmt20,fmt23", [(1.0, 0.05301, 0.04321), (4.0, 0.6009, 0.4108)])
def test_anchor_fmt20_to_fmt23_n1e4(eps0, fmt20, fmt23):
    e20 = cp.pair_epsilon(cp.fmt20_pair(eps0, 10_000), 1e-6)
    e23 = cp.pair_epsilon(cp.fmt23_pair(eps0, 10_000), 1e-6)
    assert abs(e20 - fmt20) <= 0.6 * 10 ** -(len(str(fmt20)) - 2)
    assert abs(e23 - fmt23) <= 0.6 * 10 ** -(len(str(fmt23)) - 2)
    assert e23 < e20


# ---------------------------------------------------------------------------------------
# High precision (validation.md oracle 2)
# ---------------------------------------------------------------------------------------
CASES = [("fmt20", 10_000, 4.0), ("fmt23", 300, 1.0)]


@pytest.mark.parametrize("which,n,eps0", CASES)
def test_delta_matches_mpmath(which, n, eps0):
    pair = cp.fmt20_pair(eps0, n) if which == "fmt20" else cp.fmt23_pair(eps0, n)
    p = mp.e ** -eps0 if which == "fmt20" else 2 / (mp.e ** eps0 + 1)
    for eps in (0.1 * eps0,):
        ours = cp.pair_delta(pair, eps)
        ref = mp_delta(n, p, eps0, eps)
        assert ours >= ref * (1 - 1e-13)                  # upper bound
        assert ours <= ref * (1 + 1e-9)                   # and tight


@pytest.mark.parametrize("which,n,eps0", CASES)
def test_epsilon_certified_against_mpmath(which, n, eps0):
    delta = 1e-6
    pair = cp.fmt20_pair(eps0, n) if which == "fmt20" else cp.fmt23_pair(eps0, n)
    p = mp.e ** -eps0 if which == "fmt20" else 2 / (mp.e ** eps0 + 1)
    e = cp.pair_epsilon(pair, delta)
    assert mp_delta(n, p, eps0, e) <= delta               # certified side
    assert mp_delta(n, p, eps0, e - 2e-9) > delta         # within 2e-9 of the true root


@pytest.mark.parametrize("which,n,eps0", CASES)
def test_rdp_matches_mpmath(which, n, eps0):
    orders = [2, 4, 8, 16, 32]
    pair = cp.fmt20_pair(eps0, n) if which == "fmt20" else cp.fmt23_pair(eps0, n)
    p = mp.e ** -eps0 if which == "fmt20" else 2 / (mp.e ** eps0 + 1)
    ours = cp.pair_rdp(pair, orders)
    ref = mp_rdp(n, p, eps0, orders)
    for lam, o in zip(orders, ours):
        r = float(ref[lam])
        assert o >= r * (1 - 1e-13)
        assert abs(o - r) <= 1e-8 * r


def test_rdp_leading_order_sanity():
    # spec §6 leading order (a sanity check, not a bound): FMT23 D ≈ λ(e^ε0−1)²/((e^ε0+1)(n−1)).
    n, eps0 = 100_000, 1.0
    lam = np.array([2, 4, 8])
    approx = lam * math.expm1(eps0) ** 2 / ((math.exp(eps0) + 1) * (n - 1))
    got = cp.pair_rdp(cp.fmt23_pair(eps0, n), lam)
    assert np.all(np.abs(got / approx - 1) < 0.05)


# ---------------------------------------------------------------------------------------
# Brute force (validation.md oracle 1)
# ---------------------------------------------------------------------------------------
def _rr(eps0, k):
    return oracle.rr_matrix(eps0, k)


@pytest.mark.parametrize("k,n,eps0", [(2, 6, 1.0), (3, 4, 0.7), (5, 3, 1.2)])
def test_fmt23_pair_dominates_brute_force_rr(k, n, eps0):
    R = _rr(eps0, k)
    for eps in ((0.0, 0.2, 0.5) if k < 5 else (0.3,)):
        worst, _ = oracle.worst_delta(R, n, eps)
        assert cp.pair_delta(cp.fmt23_pair(eps0, n), eps) >= float(worst) * (1 - 1e-12)
        assert cp.pair_delta(cp.fmt20_pair(eps0, n), eps) >= float(worst) * (1 - 1e-12)
    for lam in ((2, 3) if k < 5 else (2,)):
        worst, _ = oracle.worst_renyi(R, n, lam)
        assert cp.pair_rdp(cp.fmt23_pair(eps0, n), [lam])[0] >= float(worst) * (1 - 1e-12)


def _random_ldp_matrix(rng, k, m):
    return rng.uniform(0.2, 1.0, size=(k, m)) / 1.0


@pytest.mark.parametrize("seed,k,m,n", [(1, 3, 3, 4), (2, 3, 3, 4), (3, 4, 4, 3), (4, 4, 4, 3)])
def test_specific_and_fmt20_pairs_dominate_random_randomizers(seed, k, m, n):
    rng = np.random.default_rng(seed)
    M = rng.uniform(0.1, 1.0, size=(k, m))
    M /= M.sum(axis=1, keepdims=True)
    eps0 = float(np.max(np.log(M.max(axis=0)) - np.log(M.min(axis=0))))
    Rlist = M.tolist()
    from shuffledp import Randomizer
    spec = cp.specific_pair(Randomizer(Rlist), n)
    inside = cp.in_stronger_class(M, eps0)
    for eps in (0.0, 0.3 * eps0, 0.6 * eps0):
        worst, _ = oracle.worst_delta(Rlist, n, eps)
        assert cp.pair_delta(cp.fmt20_pair(eps0, n), eps) >= float(worst) * (1 - 1e-12)
        assert cp.pair_delta(spec, eps) >= float(worst) * (1 - 1e-12)
        if inside:
            assert cp.pair_delta(cp.fmt23_pair(eps0, n), eps) >= float(worst) * (1 - 1e-12)
    worst2, _ = oracle.worst_renyi(Rlist, n, 2)
    assert cp.pair_rdp(spec, [2])[0] >= float(worst2) * (1 - 1e-12)


def test_specific_p_in_range_and_krr_exact():
    for k in (2, 3, 5):
        p = cp.specific_p(np.array(oracle.rr_matrix(1.3, k)))
        assert abs(p - 2 / (math.exp(1.3) + 1)) < 1e-14
    # Unary encoding with domain 3 is outside S(ε0) (spec §4): ratio reaches e^-ε0/2-ish.
    rng = np.random.default_rng(0)
    for _ in range(20):
        M = rng.uniform(0.1, 1.0, size=(4, 3))
        M /= M.sum(axis=1, keepdims=True)
        eps0 = float(np.max(np.log(M.max(axis=0)) - np.log(M.min(axis=0))))
        p = cp.specific_p(M)
        assert math.exp(-eps0) * (1 - 1e-12) <= p <= 1.0


# ---------------------------------------------------------------------------------------
# The g > 0 counterexample (spec §1 warning) — kept as a regression test
# ---------------------------------------------------------------------------------------
def test_g_positive_pair_is_not_an_upper_bound():
    eps0, n, eps = 0.7, 3, 0.49
    worst, arg = oracle.worst_delta(_rr(eps0, 3), n, eps)
    assert abs(float(worst) - 0.02392) < 5e-6
    marginal = cp.krr_marginal_pair(eps0, 3, n)
    low = cp.pair_delta_lower(marginal, eps)
    assert abs(low - 0.01988) < 5e-6 and low < float(worst)
    assert abs(cp.pair_delta(cp.fmt23_pair(eps0, n), eps) - 0.05651) < 5e-6
    with pytest.raises(ValueError, match="g = .* > 0"):
        cp.pair_delta(marginal, eps)
    with pytest.raises(ValueError):
        cp.pair_epsilon(marginal, 1e-3)
    with pytest.raises(ValueError):
        cp.pair_rdp(marginal, [2])


def test_marginal_pair_is_exact_on_its_instance():
    # spec §5: counts of 0s and 1s on X0 = (0,2,..,2), X1 = (1,2,..,2) have the law of the pair;
    # the full output carries a little more (5-RR, n = 5, ε0 = 1.2, ε = 0.3: 0.11316 vs 0.11288).
    eps0, n, eps = 1.2, 5, 0.3
    low = cp.pair_delta_lower(cp.krr_marginal_pair(eps0, 5, n), eps)
    assert abs(low - 0.11288) < 5e-6
    R = _rr(eps0, 5)
    X0, X1 = (0,) + (2,) * (n - 1), (1,) + (2,) * (n - 1)
    full = oracle.hockey(oracle.shuffled(R, X0), oracle.shuffled(R, X1), eps)
    assert abs(float(full) - 0.11316) < 5e-6 and low <= float(full)


# ---------------------------------------------------------------------------------------
# Structure: symmetry, atoms, inverse, monotonicity
# ---------------------------------------------------------------------------------------
def test_symmetry_and_atoms():
    pair = cp.fmt20_pair(1.5, 60)
    lp, lq = cp.pair_log_atoms(pair)
    from shuffledp.numerics import hockey_stick
    for eps in (0.1, 0.5, 1.0):
        fwd, rev = hockey_stick(lp, lq, eps), hockey_stick(lq, lp, eps)
        assert abs(fwd - rev) <= 1e-13 * max(fwd, 1e-300)
        d = cp.pair_delta(pair, eps)
        assert d >= fwd and d <= fwd * (1 + 1e-9) + 1e-280


def test_brute_force_pair_itself_small_n():
    # The pair's law written out by enumeration (others: 0-clone, 1-clone or nothing).
    n, eps0 = 4, 1.0
    pair = cp.fmt23_pair(eps0, n)
    mp.mp.dps = 40
    a = mp.e ** eps0 / (mp.e ** eps0 + 1)
    p = 2 / (mp.e ** eps0 + 1)
    import itertools
    P, Q = {}, {}
    for others in itertools.product(range(3), repeat=n - 1):
        pr = mp.fprod([p / 2 if o < 2 else 1 - p for o in others])
        z, o = others.count(0), others.count(1)
        for vic, pv, qv in ((0, a, 1 - a), (1, 1 - a, a)):
            key = (z + (vic == 0), o + (vic == 1))
            P[key] = P.get(key, 0) + pr * pv
            Q[key] = Q.get(key, 0) + pr * qv
    for eps in (0.0, 0.3, 0.8):
        ref = oracle.hockey(P, Q, eps)
        got = cp.pair_delta(pair, eps)
        assert float(ref) <= got <= float(ref) * (1 + 1e-10) + 1e-280
        assert abs(float(oracle.hockey(Q, P, eps)) - float(ref)) <= 1e-30
    ref2 = float(oracle.renyi(P, Q, 3))
    got = cp.pair_rdp(pair, [3])[0]
    assert ref2 <= got <= ref2 * (1 + 1e-10)


@settings(max_examples=10, deadline=None)
@given(eps0=st.floats(0.1, 6.0), n=st.integers(2, 2000), logd=st.floats(-12, -2))
def test_invariants(eps0, n, logd):
    delta = 10 ** logd
    p20, p23 = cp.fmt20_pair(eps0, n), cp.fmt23_pair(eps0, n)
    e20, e23 = cp.pair_epsilon(p20, delta), cp.pair_epsilon(p23, delta)
    assert 0.0 <= e23 <= e20 + 1e-12 <= eps0 * (1 + 1e-12) + 1e-12
    assert cp.pair_delta(p23, e23) <= delta                       # δ(ε(δ)) ≤ δ
    assert cp.pair_delta(p20, e20) <= delta
    for eps in (0.0, 0.5 * eps0):
        # Exact parts compared: the rigorous tail charges (~1e-31) need not be ordered.
        assert cp.pair_delta_lower(p23, eps) <= cp.pair_delta(p20, eps)
    for k in (3, 10):
        low = cp.pair_delta_lower(cp.krr_marginal_pair(eps0, k, n), 0.3 * eps0)
        assert low <= cp.pair_delta(p23, 0.3 * eps0)


def test_monotone_in_n_and_delta():
    e = [cp.pair_epsilon(cp.fmt23_pair(2.0, n), 1e-6) for n in (1000, 3000, 10_000)]
    assert e[0] > e[1] > e[2]
    d = [cp.pair_epsilon(cp.fmt23_pair(2.0, 3000), dl) for dl in (1e-8, 1e-6, 1e-4)]
    assert d[0] > d[1] > d[2]


def test_edge_cases_and_bad_input():
    assert cp.pair_delta(cp.fmt20_pair(0.0, 100), 0.0) == 0.0
    assert cp.pair_epsilon(cp.fmt20_pair(0.0, 100), 1e-6) == 0.0
    assert cp.pair_epsilon(cp.fmt23_pair(1.0, 1), 1e-6) <= 1.0 + 1e-12
    e = cp.pair_epsilon(cp.fmt23_pair(20.0, 1000), 1e-300)
    assert math.isfinite(e) and e <= 20.0 * (1 + 1e-12)
    for bad in (dict(n=0, p=0.5, a=0.6, b=0.4), dict(n=5, p=0.0, a=0.6, b=0.4),
                dict(n=5, p=0.5, a=0.4, b=0.6), dict(n=5, p=0.5, a=0.7, b=0.4),
                dict(n=5, p=float("nan"), a=0.6, b=0.4)):
        with pytest.raises(ValueError):
            cp.ClonePair(**bad)
    with pytest.raises(ValueError, match="eps0"):
        cp.fmt20_pair(-1.0, 10)
    with pytest.raises(ValueError, match="orders"):
        cp.pair_rdp(cp.fmt20_pair(1.0, 10), [1.5])


def test_speed_single_epsilon_n1e6():
    import time
    pair = cp.fmt23_pair(1.0, 1_000_000)
    t = time.perf_counter()
    e = cp.pair_epsilon(pair, 1e-6)
    assert time.perf_counter() - t < 2.0        # target 0.1 s; loose on a shared machine
    assert 0 < e < 0.01


# ---------------------------------------------------------------------------------------
# The moment series of the pair RDP (pairs.clone.rdp_series._series_part)
# ---------------------------------------------------------------------------------------
def _mp_slice_value(c, eps0, lam):
    """E_Q[(P/Q)^λ] − 1 of the slice with c clones, from the spec's slice form in mpmath."""
    mp.mp.dps = 40
    alpha = mp.e ** eps0 / (mp.e ** eps0 + 1)
    b = [mp.mpf(1) / mp.mpf(2) ** c]
    for x in range(c):
        b.append(b[-1] * (c - x) / (x + 1))
    P, Q = _mp_conditional(b, alpha)
    return mp.fsum(P[x] * ((P[x] / Q[x]) ** (lam - 1) - 1) for x in range(len(P)) if P[x] > 0)


@pytest.mark.parametrize("n,eps0", [(60, 1.0), (2000, 0.5), (2000, 3.0), (200, 6.0)])
def test_series_slice_values_are_upper_and_tight_where_used(n, eps0):
    # Every slice: value + remainder ≥ the exact slice value (also where the remainder is
    # too large for the series to be used); where it is used, within 1e-11 relative.
    pair = cp.fmt23_pair(eps0, n)
    K = 12.0
    cs = rdp_points._rdp_window(n, pair.p, K)[0]
    used = 0
    for lam in (2, 8, 33, 65):
        for kmax in (16, 64):
            val, rem = rdp_series._series_slices(pair, lam, K, kmax)
            for j in range(0, cs.size, max(1, cs.size // 5)):
                ref = float(_mp_slice_value(int(cs[j]), eps0, lam))
                assert val[j] + rem[j] >= ref
                if rem[j] <= rdp_series._SERIES_TOL * val[j]:
                    used += 1
                    assert val[j] + rem[j] <= ref * (1 + 1e-11)
    if n == 2000:
        assert used > 0


def test_series_forced_everywhere_is_still_an_upper_bound(monkeypatch):
    # Accept every slice whatever its remainder: the remainder is added, so the value stays
    # above the 40-digit evaluation and the brute-force pair (only looser).
    monkeypatch.setattr(rdp_series, "_SERIES_TOL", math.inf)
    renyi._VALUES.clear()
    n, eps0 = 300, 1.0
    orders = [2, 4, 8, 16, 32]
    ours = cp.pair_rdp(cp.fmt23_pair(eps0, n), orders)
    ref = mp_rdp(n, 2 / (mp.e ** eps0 + 1), eps0, orders)
    for lam, o in zip(orders, ours):
        assert o >= float(ref[lam])
    monkeypatch.undo()
    renyi._VALUES.clear()


@pytest.mark.parametrize("which,eps0", [("fmt20", 0.5), ("fmt23", 1.0), ("fmt23", 4.0)])
def test_series_path_matches_point_sum(which, eps0):
    # n = 2e4: the default path sums (almost) every slice by its series; step=1 forces the
    # slice-by-slice point sum, itself checked against mpmath above. The point sum carries a
    # cancellation slack of ~1e-10 relative that the series does not need.
    n = 20_000
    pair = cp.fmt20_pair(eps0, n) if which == "fmt20" else cp.fmt23_pair(eps0, n)
    orders = np.array([2, 3, 5, 8, 16, 32, 64])
    renyi._VALUES.clear()
    jstop, _ = rdp_series._series_part(pair, orders, 24.0)
    assert jstop < rdp_points._rdp_window(n, pair.p, 24.0)[0].size      # the series is used
    fast = cp.pair_rdp(pair, orders)
    point_sum = cp.pair_rdp(pair, orders, step=1)     # the other code path, not an oracle
    assert np.all(fast <= point_sum * (1 + 1e-13))
    assert np.all(fast >= point_sum * (1 - 1e-9))


# ---------------------------------------------------------------------------------------
# Huge orders ((λ − 1) log(a/b) > 600): log-space sums over cached points
# ---------------------------------------------------------------------------------------
def test_huge_orders_from_cached_points_match_mpmath():
    """The huge-order path keeps the points' log weights with the cached point set; single
    orders asked after a batch (what the order search does) must give the same certified
    values as a fresh call, and stay above the 40-digit sum."""
    pair = cp.fmt20_pair(4.0, 2000)                  # (λ − 1)·4 > 600 from λ = 152 on
    orders = [160, 230, 300]
    sd.clear_caches()
    batch = cp.pair_rdp(pair, orders)
    singles = [float(cp.pair_rdp(pair, [o])[0]) for o in (300, 230)]
    sd.clear_caches()
    fresh = [float(cp.pair_rdp(pair, [o])[0]) for o in (300, 230)]
    assert singles == pytest.approx(fresh, rel=1e-13)
    ref = mp_rdp(2000, mp.e ** -4, 4.0, orders)
    for lam, o in zip(orders, batch):
        r = float(ref[lam])
        assert o >= r * (1 - 1e-14)                   # upper bound
        assert o <= r * (1 + 1e-9)                    # and tight


def test_log_sum_pos_is_rounded_up():
    rng = np.random.default_rng(3)
    for size in (1, 7, 100_000):
        v = rng.normal(-500.0, 40.0, size)
        mp.mp.dps = 40
        exact = mp.log(mp.fsum(mp.e ** mp.mpf(float(x)) for x in v[:2000])) if size <= 2000 \
            else None
        got = rdp_points._log_sum_pos(v)
        if exact is not None:
            assert got >= float(exact)
            assert got - float(exact) <= 1e-11 * max(1.0, abs(float(exact)))
        else:                                         # against a float64 two-pass reference
            m = v.max()
            ref = m + math.log(math.fsum(np.exp(v - m)))
            assert ref <= got <= ref + 1e-11 * abs(ref)
    assert rdp_points._log_sum_pos(np.array([-np.inf, -np.inf])) == -math.inf


# ---------------------------------------------------------------------------------------
# Dominance between clone pairs (the accountant skips the dominated one)
# ---------------------------------------------------------------------------------------
def _pair_law(n, p, alpha):
    """{(c, x): (P, Q)} of a g = 0 clone pair, exact in mpmath (every c, every x)."""
    m = n - 1
    out = {}
    for c in range(m + 1):
        wc = mp.binomial(m, c) * p ** c * (1 - p) ** (m - c)
        b = [mp.binomial(c, x) / mp.mpf(2) ** c for x in range(c + 1)]
        P, Q = _mp_conditional(b, alpha)
        for x in range(c + 2):
            out[(c, x)] = (wc * P[x], wc * Q[x])
    return out


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_fmt23_pair_is_a_post_processing_of_fmt20_pair(eps0):
    """The proof behind ``_PairBound.dominated_by``: from the FMT20 pair's output (c, x), turn
    each of the m − c non-clones into a clone with probability q = (p' − p)/(1 − p) and add
    a fair bit per new clone; the result is the FMT23 pair exactly (under P and under Q)."""
    mp.mp.dps = 40
    n = 12
    m = n - 1
    alpha = mp.e ** eps0 / (mp.e ** eps0 + 1)
    p, p2 = mp.e ** -eps0, 2 / (mp.e ** eps0 + 1)
    assert p2 >= p
    q = (p2 - p) / (1 - p)
    src, want = _pair_law(n, p, alpha), _pair_law(n, p2, alpha)
    got = {k: [mp.mpf(0), mp.mpf(0)] for k in want}
    for (c, x), (P, Q) in src.items():
        for k in range(m - c + 1):                   # k non-clones become clones
            wk = mp.binomial(m - c, k) * q ** k * (1 - q) ** (m - c - k)
            for j in range(k + 1):                   # j of their fair bits are 1
                wj = wk * mp.binomial(k, j) / mp.mpf(2) ** k
                got[(c + k, x + j)][0] += wj * P
                got[(c + k, x + j)][1] += wj * Q
    for key, (P, Q) in want.items():
        assert abs(got[key][0] - P) <= mp.mpf(10) ** -35
        assert abs(got[key][1] - Q) <= mp.mpf(10) ** -35


def _hs_product(lp, lq, T, eps):
    """δ_{P‖Q} of the T-fold product of a small atom pair, by enumeration (50 digits)."""
    return oracle.product_hockey([mp.e ** mp.mpf(float(x)) for x in lp],
                                 [mp.e ** mp.mpf(float(x)) for x in lq], T, eps)


@pytest.mark.parametrize("eps0,n,budget", [(1.0, 12, 30), (2.0, 15, 40), (0.5, 10, 25)])
def test_floor_atoms_are_dominated_by_the_pair(eps0, n, budget):
    """pair_floor_atoms (blocks of slices carried at their last slice: a post-processing)
    never has a larger composed δ than the exact pair (all atoms, n small), at T = 1, 2."""
    pair = cp.fmt20_pair(eps0, n)
    fl, fq = cp.pair_floor_atoms(pair, max_atoms=budget)
    al, aq = cp.pair_log_atoms(pair)
    assert fl.size < al.size                     # blocks were merged
    for T in (1, 2):
        for eps in (0.0, 0.3 * eps0, 0.8 * eps0 * T):
            lo = _hs_product(fl, fq, T, eps)
            ex = _hs_product(al, aq, T, eps)
            assert lo <= ex * (1 + mp.mpf("1e-12"))


@pytest.mark.parametrize("which,n,eps0", [("fmt20", 10**4, 1.0), ("fmt23", 10**5, 2.0)])
def test_floor_atoms_close_to_the_exact_delta(which, n, eps0):
    """One round at larger n: the floor pair's δ(ε) is at most the exact pair δ (checked
    against mpmath above) and within 1 % of it where δ is not far in the tails (the floor
    pair leaves out everything beyond 7 standard deviations: 0 there)."""
    pair = cp.fmt20_pair(eps0, n) if which == "fmt20" else cp.fmt23_pair(eps0, n)
    fl, fq = cp.pair_floor_atoms(pair)
    for frac in (0.005, 0.01, 0.05, 0.2):
        eps = frac * eps0
        lo = float(np.sum(np.maximum(np.exp(fl) - math.exp(eps) * np.exp(fq), 0.0)))
        ex = cp.pair_delta(pair, eps)
        assert lo <= ex
        if ex > 1e-8:
            assert lo >= 0.99 * ex
