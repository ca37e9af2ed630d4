"""The numerics layer against 50-digit mpmath references computed in the test itself.

Every expected value is produced here from its definition with mpmath; nothing is taken
from the library's own output.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from shuffledp import numerics as nm

mp.mp.dps = 50


def mp_binom_logpmf(k, n, p, q):
    """log C(n, k) + k log p + (n − k) log q at 50 digits (p, q taken as given)."""
    k, n = mp.mpf(int(k)), mp.mpf(int(n))
    p, q = mp.mpf(p), mp.mpf(q)
    return (mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)
            + k * mp.log(p) + (n - k) * mp.log(q))


# (p, q) pairs with q = 1 − p exactly in binary (Sterbenz: 1 − p is exact for p ≥ 1/2),
# so the reference and the library see the same distribution.
_PAIRS = []
for _big in (0.5, 0.6, 0.9, float(1 / (1 + math.exp(-2.0)))):   # the last: α at ε0 = 2
    _small = 1.0 - _big
    assert mp.mpf(_small) + mp.mpf(_big) == 1
    _PAIRS += [(_big, _small), (_small, _big)]


@pytest.mark.parametrize("n", [10, 1_000, 1_000_000, 1_000_000_000])
@pytest.mark.parametrize("p,q", _PAIRS)
def test_binom_logpmf_near_mode_matches_mpmath(n, p, q):
    sd = math.sqrt(n * p * q)
    mode = math.floor((n + 1) * p)
    ks = sorted({min(n, max(0, int(mode + d * sd) + j))
                 for d in (-3, -1, 0, 1, 3) for j in (-1, 0, 1)})
    ours = nm.binom_logpmf(np.array(ks, dtype=float), n, p, q)
    for k, v in zip(ks, ours):
        ref = mp_binom_logpmf(k, n, p, q)
        # |Δ log pmf| ≤ 1e-14  ⇔  pmf relative error ≤ 1e-14.
        assert abs(v - float(ref)) <= 1e-14, (n, p, k, v, ref)


@pytest.mark.parametrize("n", [10, 1_000, 1_000_000, 1_000_000_000])
def test_binom_logpmf_far_tails_matches_mpmath(n):
    p, q = 0.6, 1.0 - 0.6
    sd = math.sqrt(n * p * q)
    ks = {0, n, 1, n - 1} | {min(n, max(0, int(n * p + d * sd))) for d in (-40, -20, 20, 40)}
    ks = sorted(ks)
    ours = nm.binom_logpmf(np.array(ks, dtype=float), n, p, q)
    for k, v in zip(ks, ours):
        ref = float(mp_binom_logpmf(k, n, p, q))
        # Looser in the tails: relative 1e-13 of the log-pmf (plus 1e-13 absolute).
        assert abs(v - ref) <= 1e-13 * abs(ref) + 1e-13, (n, k, v, ref)


def test_binom_logpmf_beats_lgamma_route_at_1e6():
    """Why the module exists: scipy's log-gamma route cancels at n = 1e6.

    We only assert our own accuracy (and that we are no worse than scipy); scipy's error
    is recorded in the assertion message for the record (~1e-10 on this machine).
    """
    n, p, q = 1_000_000, 0.6, 1.0 - 0.6
    sd = math.sqrt(n * p * q)
    ks = np.array([int(n * p + d * sd) for d in np.linspace(-3, 3, 25)], dtype=float)
    ref = np.array([float(mp_binom_logpmf(k, n, p, q)) for k in ks])
    ours = np.max(np.abs(nm.binom_logpmf(ks, n, p, q) - ref))
    theirs = np.max(np.abs(stats.binom.logpmf(ks, n, p) - ref))
    assert ours <= 1e-14, (ours, theirs)
    assert ours <= max(theirs, 1e-15), (ours, theirs)


def test_binom_logpmf_edges_and_support():
    # k = n with a tiny success probability: n log p (used to raise "math domain error"
    # because the edge took log1p(-q) with q = 1.0).
    v = nm.binom_logpmf(np.array([0.0, 5.0, 6.0, -1.0]), 5, 1e-200, 1.0)
    assert v[0] == 0.0 or abs(v[0]) <= 1e-190                  # 5 log1p(−1e−200)
    assert v[1] == pytest.approx(5 * math.log(1e-200), rel=1e-15)
    assert v[2] == -math.inf and v[3] == -math.inf
    # k = n when q is known more accurately than 1 − p: n log1p(−q).
    v = nm.binom_logpmf(np.array([10.0]), 10, 1.0 - 1e-20, 1e-20)
    assert v[0] == pytest.approx(-1e-19, rel=1e-12)            # 10·log1p(−1e−20)
    # Degenerate p.
    assert list(nm.binom_logpmf(np.array([0.0, 1.0]), 3, 0.0)) == [0.0, -math.inf]
    assert list(nm.binom_logpmf(np.array([3.0, 1.0]), 3, 1.0, 0.0)) == [0.0, -math.inf]


def test_stirlerr_and_bd0_match_mpmath():
    for n in list(range(1, 32)) + [100, 12345, 10**6, 10**9]:
        ref = (mp.loggamma(n + 1) - (n + mp.mpf(1) / 2) * mp.log(n) + n
               - mp.log(mp.sqrt(2 * mp.pi)))
        assert float(nm.stirlerr(np.array([float(n)]))[0]) == pytest.approx(float(ref), rel=1e-14, abs=1e-300)
    for x, m in [(10.0, 10.5), (1000.0, 999.0), (6e8, 6e8 + 3.7), (5.0, 50.0), (1e6, 1.0)]:
        ref = mp.mpf(x) * mp.log(mp.mpf(x) / mp.mpf(m)) + mp.mpf(m) - mp.mpf(x)
        assert float(nm.bd0(x, m)) == pytest.approx(float(ref), rel=1e-13)


# ----- divergences ------------------------------------------------------------------------

def _random_pmf(rng, size, zeros):
    w = rng.random(size) ** 3
    if zeros:
        w[rng.choice(size, zeros, replace=False)] = 0.0
    return w / w.sum()


@pytest.mark.parametrize("seed", range(6))
def test_hockey_stick_and_renyi_match_direct_sums(seed):
    rng = np.random.default_rng(seed)
    size = 12
    P = _random_pmf(rng, size, zeros=seed % 3)
    Q = _random_pmf(rng, size, zeros=0)
    with np.errstate(divide="ignore"):
        lp, lq = np.log(P), np.log(Q)
    Pm = [mp.mpf(float(x)) for x in P]
    Qm = [mp.mpf(float(x)) for x in Q]
    for eps in (0.0, 0.1, 1.0, 3.0):
        ref = mp.fsum(max(a - mp.e ** eps * b, 0) for a, b in zip(Pm, Qm))
        assert nm.hockey_stick(lp, lq, eps) == pytest.approx(float(ref), rel=1e-13, abs=1e-300)
    for lam in (2, 3, 7.5, 16):
        ref = mp.fsum(a ** lam * b ** (1 - lam) for a, b in zip(Pm, Qm) if a > 0) - mp.fsum(Pm)
        assert nm.renyi_minus_one(lp, lq, lam) == pytest.approx(float(ref), rel=1e-11)


def test_renyi_minus_one_keeps_relative_precision_and_detects_support():
    # P and Q differ by 1e-9: the answer is ~1e-18, far below double-precision "1 + x".
    Q = np.array([0.5, 0.5])
    P = np.array([0.5 + 1e-9, 0.5 - 1e-9])
    ref = mp.fsum(mp.mpf(float(a)) ** 2 / mp.mpf(float(b)) for a, b in zip(P, Q)) - 1
    assert nm.renyi_minus_one(np.log(P), np.log(Q), 2) == pytest.approx(float(ref), rel=1e-6)
    # P > 0 where Q = 0: infinite divergence.
    assert nm.renyi_minus_one(np.log([0.5, 0.5]), np.array([0.0, -np.inf]), 2) == math.inf
    # Hockey stick where Q = 0: all of P's mass there counts.
    assert nm.hockey_stick(np.log([0.25, 0.75]), np.array([0.0, -np.inf]), 1.0) == pytest.approx(0.75)


# ----- bisection --------------------------------------------------------------------------

@given(t=st.floats(0.001, 0.999), xtol=st.sampled_from([1e-12, 1e-8, 1e-4]))
@settings(max_examples=60, deadline=None)
def test_bisect_certified_returns_certified_end(t, xtol):
    calls = []

    def ok_small(x):
        calls.append(x)
        return x >= t

    x = nm.bisect_certified(ok_small, 0.0, 1.0, want="smallest", xtol=xtol, rtol=0)
    assert ok_small(x) and x - t <= 2 * xtol
    x = nm.bisect_certified(lambda x: x <= t, 0.0, 1.0, want="largest", xtol=xtol, rtol=0)
    assert x <= t and t - x <= 2 * xtol


def test_bisect_certified_refuses_an_uncertified_bracket():
    # want="smallest" needs ok(hi); want="largest" needs ok(lo). Returning the bracket end
    # anyway would hand back a point where the predicate is False.
    with pytest.raises(ArithmeticError, match="hi"):
        nm.bisect_certified(lambda x: x >= 2.0, 0.0, 1.0, want="smallest")
    with pytest.raises(ArithmeticError, match="lo"):
        nm.bisect_certified(lambda x: x <= -1.0, 0.0, 1.0, want="largest")
    with pytest.raises(ValueError, match="want"):
        nm.bisect_certified(lambda x: True, 0.0, 1.0, want="middle")


# ----- cancellation-free helpers ----------------------------------------------------------

_ARGS = [1e-300, -1e-300, 1e-20, -1e-12, 1e-8, 3e-5, -0.05, 0.0999, -0.0999, 0.1, 0.5, -0.7,
         2.0, 30.0]


@pytest.mark.parametrize("y", _ARGS)
def test_expm1mx_and_log1pmx_match_mpmath(y):
    ym = mp.mpf(y)
    ref = mp.expm1(ym) - ym if abs(y) > 1e-30 else ym * ym / 2   # mp.expm1 is exact-ish; guard underflow
    assert float(nm.expm1mx(np.array([y]))[0]) == pytest.approx(float(ref), rel=2e-15, abs=1e-320)
    ref = mp.log1p(ym) - ym
    assert float(nm.log1pmx(np.array([y]))[0]) == pytest.approx(float(ref), rel=2e-15, abs=1e-320)


@pytest.mark.parametrize("x", [1e-200, -1e-12, 1e-6, -0.03, 0.08, 0.3, -0.9, 4.0])
@pytest.mark.parametrize("a", [2.0, 3.0, 16.0, 64.0, 7.5, -1.0, -15.0, -63.0])
def test_pow_minus_tangent_matches_mpmath(x, a):
    with mp.workdps(700):   # (1 + 1e−200)^a − 1 − a·1e−200 needs ~450 digits
        xm, am = mp.mpf(x), mp.mpf(a)
        ref = (1 + xm) ** am - 1 - am * xm
        lref = mp.log(ref) if ref > 0 else -mp.inf
    got = float(nm.pow_minus_tangent(np.array([x]), a)[0])
    lgot = float(nm.log_pow_minus_tangent(np.array([x]), a)[0])
    # The log form stays finite even where the value underflows doubles.
    assert lgot == pytest.approx(float(lref), rel=1e-14, abs=1e-14)
    if float(ref) < 1e-300:   # underflows in double precision
        assert 0.0 <= got <= 1e-290
        return
    # The a > 1 evaluation cancels by at most a/(a − 1): allow 1e-14 relative.
    assert got == pytest.approx(float(ref), rel=1e-14)


def test_log_pow_minus_tangent_beyond_overflow():
    # (1 + x)^a overflows doubles; the log stays finite and accurate.
    for x, a in [(4.0, 1000.0), (-0.99, -500.0), (1.0, 3000.0)]:
        xm, am = mp.mpf(x), mp.mpf(a)
        ref = mp.log((1 + xm) ** am - 1 - am * xm)
        assert float(nm.log_pow_minus_tangent(np.array([x]), a)[0]) == pytest.approx(float(ref), rel=1e-14)


def test_round_up_never_lowers():
    for x in (0.0, 1e-300, 8.4206e-4, 1.0, 1e300):
        assert nm.round_up(x) >= x
    arr = np.array([1e-10, 2.0])
    assert np.all(nm.round_up(arr) >= arr)
    assert nm.round_up(1.0) == 1.0 + nm.REL_SLACK


def test_half_binom_runs_match_mpmath_and_loader():
    """The anchor + recurrence runs agree with 40-digit mpmath like Loader's form itself."""
    import mpmath as mp
    from shuffledp.numerics import half_binom_logpmf, half_binom_logpmf_runs

    mp.mp.dps = 40
    rng = np.random.default_rng(7)
    c = np.concatenate([[0, 1, 2, 5, 31, 64, 65], rng.integers(100, 3_000_000, 12)]).astype(float)
    sd = np.sqrt(np.maximum(c, 1)) / 2
    x0 = np.maximum(0, np.floor(c / 2 - 8 * sd))
    cnt = (np.minimum(c + 1, np.ceil(c / 2 + 8 * sd)) - x0 + 1).astype(int)
    got = half_binom_logpmf_runs(c, x0, cnt)
    xs = np.concatenate([x0[i] + np.arange(cnt[i]) for i in range(c.size)])
    cs = np.concatenate([np.full(cnt[i], c[i]) for i in range(c.size)])
    ref = half_binom_logpmf(xs, cs)
    assert np.array_equal(np.isfinite(got), np.isfinite(ref))
    assert np.all(got[xs > cs] == -np.inf)
    for k in rng.choice(np.flatnonzero(np.isfinite(ref)), 200, replace=False):
        exact = float(mp.log(mp.binomial(int(cs[k]), int(xs[k]))) - int(cs[k]) * mp.log(2))
        # relative error of the pmf (absolute in the log) within 2e-13 plus the float
        # representation of a large log value
        assert abs(got[k] - exact) <= 2e-13 + 4e-16 * abs(exact), (cs[k], xs[k])


def test_half_binom_runs_far_tails_use_denser_anchors(monkeypatch):
    """Runs reaching ~95 sd into the tails (huge RDP orders) fail the 32-step error test;
    they are retried with anchors every 8th and 2nd x (not Loader's form at every point)
    and still agree with 40-digit mpmath."""
    import mpmath as mp
    import shuffledp.numerics.binomial as nmod      # the module whose recursion is spied on

    mp.mp.dps = 40
    calls = []
    real = nmod.half_binom_logpmf_runs

    def spy(c, x0, counts, block=32):
        calls.append(block)
        return real(c, x0, counts, block)

    monkeypatch.setattr(nmod, "half_binom_logpmf_runs", spy)
    rng = np.random.default_rng(11)
    c = rng.integers(200, 20_000, 6).astype(float)
    sd = np.sqrt(c) / 2
    x0 = np.maximum(0, np.floor(c / 2 - 95 * sd))          # the whole support, mostly
    cnt = (np.minimum(c + 1, np.ceil(c / 2 + 95 * sd)) - x0 + 1).astype(int)
    got = nmod.half_binom_logpmf_runs(c, x0, cnt)
    assert 8 in calls                       # the denser retry ran
    xs = np.concatenate([x0[i] + np.arange(cnt[i]) for i in range(c.size)])
    cs = np.concatenate([np.full(cnt[i], c[i]) for i in range(c.size)])
    ref = nmod.half_binom_logpmf(xs, cs)
    assert np.array_equal(np.isfinite(got), np.isfinite(ref))
    far = np.flatnonzero(np.isfinite(ref) & (np.abs(xs - cs / 2) > 20 * np.sqrt(cs) / 2))
    for k in rng.choice(far, 100, replace=False):
        exact = float(mp.log(mp.binomial(int(cs[k]), int(xs[k]))) - int(cs[k]) * mp.log(2))
        # far out the log values reach thousands: a few ulps of them (~1e-12) on top
        assert abs(got[k] - exact) <= 2e-13 + 1e-15 * abs(exact), (cs[k], xs[k])


def test_even_partition_counts_small_cases():
    # E(2, 1) = 1; E(4, 1) = 1, E(4, 2) = 3 (pairings of 4); E(6, 2) = C(6, 2) = 15 (a pair and a
    # quadruple), E(6, 3) = 15 (pairings of 6); row sums are the "even" Bell numbers 1, 4, 31.
    from shuffledp.numerics.binomial import _even_partition_counts

    e = _even_partition_counts(4)
    assert e[1][1] == 1 and e[2][1:3] == [1, 3] and e[3][1:4] == [1, 15, 15]
    assert sum(e[4]) == 379                  # OEIS A005046: 1, 1, 4, 31, 379


@pytest.mark.parametrize("s", [1, 2, 3, 7, 30, 500, 2001])
def test_rademacher_moments_match_mpmath(s):
    mp.mp.dps = 40
    got = nm.rademacher_log_moments(np.array([s]), 30)[0]
    for k in (1, 2, 3, 10, 30):
        ref = mp.fsum(mp.binomial(s, x) * mp.mpf(2) ** -s * (mp.mpf(2 * x - s) / s) ** (2 * k)
                      for x in range(s + 1))
        assert abs(math.exp(got[k - 1]) / float(ref) - 1) <= 1e-13


def test_rademacher_moments_large_s_leading_order():
    # E[(W/s)^2k] → (2k − 1)!! / s^k as s → ∞ (Gaussian limit), with relative correction O(k²/s).
    s = 1e9
    got = nm.rademacher_log_moments(np.array([s]), 5)[0]
    for k in range(1, 6):
        lead = math.log(math.prod(range(1, 2 * k, 2))) - k * math.log(s)
        assert abs(got[k - 1] - lead) <= 2 * k * k / s


def test_half_binom_pmf_walk_matches_mpmath():
    # A threshold walk like the δ(ε) kernel's: k moves by 0 or 1 as c grows by 1.
    rng = np.random.default_rng(7)
    c = np.arange(400_000, 400_700, dtype=float)
    k = 200_300 + np.concatenate([[0], np.cumsum(rng.integers(0, 2, c.size - 1))])
    got = nm.half_binom_pmf_walk(c, k)
    mp.mp.dps = 40
    for j in list(range(0, c.size, 97)) + [63, 64, 65, c.size - 1]:
        ci, ki = int(c[j]), int(k[j])
        ref = mp.binomial(ci, ki) / mp.mpf(2) ** ci
        assert abs(got[j] / float(ref) - 1) <= 5e-14
    # Not a walk, or leaving the support: None (the caller evaluates directly).
    assert nm.half_binom_pmf_walk(c[::2], k[::2]) is None
    assert nm.half_binom_pmf_walk(c, k + 2 * np.arange(c.size)) is None
    assert nm.half_binom_pmf_walk(np.arange(200.0), np.arange(1.0, 201.0)) is None


def test_rademacher_moments_non_increasing_in_s():
    # Used by the RDP series (pairs.clone.rdp_series._series_eval) to charge one remainder evaluation to
    # a block of larger slices: sample means of ±1 signs fall in convex order as s grows.
    s = np.arange(1, 3001)
    L = nm.rademacher_log_moments(s, 40)
    assert np.all(np.diff(L, axis=0) <= 1e-13 * np.abs(L[1:]))


# ---------------------------------------------------------------------------------------
# Certified FFT power: the a-posteriori bound against an extended-precision reference
# ---------------------------------------------------------------------------------------
def _circular_power_longdouble(q, n, L):
    """The exact circular n-fold convolution, by repeated squaring of direct (non-negative)
    convolutions in 80-bit long double: relative error ~1e-15 per entry, far below the
    double-precision FFT error being checked."""
    a = np.zeros(L, dtype=np.longdouble)
    a[:q.size] = q
    res = np.zeros(L, dtype=np.longdouble)
    res[0] = 1

    def cconv(x, y):
        c = np.convolve(x, y)
        out = c[:L].copy()
        out[:c.size - L] += c[L:]
        return out
    while n:
        if n & 1:
            res = cconv(res, a)
        n >>= 1
        if n:
            a = cconv(a, a)
    return res


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18,
                    reason="needs an extended-precision long double for the reference")
@pytest.mark.parametrize("L,K,n,seed", [(256, 5, 10, 1), (512, 3, 1000, 2),
                                        (1024, 4, 10**5, 3), (1024, 40, 10**6, 4),
                                        (2048, 2, 10**7, 5), (720, 7, 333, 6)])
def test_fft_power_error_bound_covers_the_actual_error(L, K, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.random(K)
    q /= q.sum()
    Q, err = nm.fft_power(q, n, L)
    ref = _circular_power_longdouble(q, n, L)
    actual = float(np.sqrt(np.sum((Q.astype(np.longdouble) - ref) ** 2)))
    assert actual > 0.0            # the reference resolves the FFT's rounding
    assert err >= 2.0 * actual     # the stated factor-2 margin


def test_fft_power_allowance_stays_small_at_large_n():
    """The componentwise bound: at n = 1e8 the i.i.d.-sum engine's certified relative error
    (4-RR blanket atoms, ε = 0) is below 1e-3; the normwise bound alone gave 4 %."""
    from shuffledp.pairs import iid as iid_sum
    E = math.e
    vals = [E - 1, 1 - E, 0.0, 0.0]
    probs = [0.1748777, 0.1748777, 0.34975541, 1 - 2 * 0.1748777 - 0.34975541]
    r = iid_sum.positive_part(vals, probs, 10**8, nu=12)
    assert r.details["certified_relative_error"] < 1e-3


# ---------------------------------------------------------------------------------------
# Certified binomial CDF (scipy's incomplete beta fails at large n)
# ---------------------------------------------------------------------------------------
def _mp_binom_cdf(k, n, p):
    """Pr[Bin(n, p) ≤ k] in mpmath (40 digits): the shorter side's pmfs summed from the
    edge outward until they are below 1e-32 of the sum (they fall geometrically)."""
    mp.mp.dps = 40
    p = mp.mpf(p)
    q = 1 - p
    down = k <= n * p
    edge = k if down else k + 1
    lb = (mp.loggamma(n + 1) - mp.loggamma(edge + 1) - mp.loggamma(n - edge + 1)
          + edge * mp.log(p) + (n - edge) * mp.log(q))
    t, tot, i = mp.e ** lb, mp.mpf(0), edge
    while True:
        tot += t
        if t < tot * mp.mpf(10) ** -32 or (down and i == 0) or (not down and i == n):
            break
        if down:
            t, i = t * i * q / ((n - i + 1) * p), i - 1
        else:
            t, i = t * (n - i) * p / ((i + 1) * q), i + 1
    return tot if down else 1 - tot


def _mp_binom_sf_far(k, n, p):
    """Pr[Bin(n, p) ≥ k] for k above the mean, summed upward directly (no 1 − F)."""
    mp.mp.dps = 40
    p = mp.mpf(p)
    q = 1 - p
    t = mp.e ** (mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)
                 + k * mp.log(p) + (n - k) * mp.log(q))
    tot, i = mp.mpf(0), k
    while True:
        tot += t
        if t < tot * mp.mpf(10) ** -32 or i == n:
            return tot
        t, i = t * (n - i) * p / ((i + 1) * q), i + 1


def test_binom_cdf_bounds_at_1e11_trials_are_consistent():
    # (no 40-digit reference here: it would sum ~1e6 terms in mpmath) the bounds are
    # narrow, ordered, and the two tails add up to 1 where scipy's bdtr returns NaN.
    n, p = 10**11, 0.5
    sd = math.sqrt(n * p * (1 - p))
    prev = 0.0
    for z in (-12.0, -1.0, 0.0, 2.0):
        k = int(math.floor(n * p + z * sd))
        lo, hi = nm.binom_cdf_bounds(k, n, p)
        slo, shi = nm.binom_sf_bounds(k + 1, n, p)
        assert 0.0 < lo <= hi and hi - lo <= 1e-8 * hi and lo >= prev
        assert lo + slo <= 1.0 + 1e-15 and hi + shi >= 1.0 - 1e-15
        prev = lo


@pytest.mark.parametrize("n,p", [(10, 0.4), (1000, 0.03), (10**5, 0.5), (10**7, 0.9),
                                 (10**9, 0.1)])
def test_binom_cdf_bounds_bracket_the_40_digit_value(n, p):
    sd = math.sqrt(n * p * (1 - p))
    for z in (-12.0, -4.0, -1.0, 0.0, 0.5, 3.0):
        k = int(math.floor(n * p + z * sd))
        if not 0 <= k < n:
            continue
        lo, hi = nm.binom_cdf_bounds(k, n, p)
        ref = _mp_binom_cdf(k, n, p)
        assert lo <= ref <= hi, (n, p, z)
        assert hi - lo <= 1e-8 * ref              # 4(m + 2)u with m ~ 9 sd terms
        slo, shi = nm.binom_sf_bounds(k + 1, n, p)
        assert slo <= 1 - ref <= shi
        # the sf of a far upper tail is summed directly (no 1 − F cancellation)
        if z <= -4.0:
            k2 = int(math.ceil(n * p - z * sd))
            if k2 <= n:
                ref2 = _mp_binom_sf_far(k2, n, p)
                slo, shi = nm.binom_sf_bounds(k2, n, p)
                assert slo <= ref2 <= shi and shi - slo <= 1e-8 * ref2


def test_vectorised_binom_cdf_bounds_bracket_the_40_digit_value():
    """binom_cdf_bounds_many (one vectorised series over many (k, n)) brackets the same
    40-digit values, with n differing per entry, and agrees with the scalar version."""
    ks, ns, refs = [], [], []
    for n, p in ((1000, 0.03), (10**5, 0.03), (10**7, 0.03), (10**9, 0.03)):
        sd = math.sqrt(n * p * (1 - p))
        for z in (-12.0, -1.0, 0.0, 3.0):
            k = int(math.floor(n * p + z * sd))
            if not 0 <= k < n:
                continue
            ks.append(k)
            ns.append(n)
            refs.append(_mp_binom_cdf(k, n, 0.03))
    lo, hi = nm.binom_cdf_bounds_many(ks, ns, 0.03)
    for i, ref in enumerate(refs):
        assert lo[i] <= ref <= hi[i]
        assert hi[i] - lo[i] <= 1e-8 * ref
        slo, shi = nm.binom_cdf_bounds(ks[i], ns[i], 0.03)
        assert abs(hi[i] - shi) <= 1e-14 * shi and abs(lo[i] - slo) <= 1e-14 * slo
    # out of the support: exact
    lo, hi = nm.binom_cdf_bounds_many([-1, 5, 7], [5, 5, 5], 0.5)
    assert list(lo) == [0.0, 1.0, 1.0] and list(hi) == [0.0, 1.0, 1.0]


def test_binom_logpmf_pairs_matches_the_scalar_form():
    rng = np.random.default_rng(5)
    n = (10 ** rng.uniform(0.5, 9, 300)).astype(np.int64)
    k = np.minimum(np.maximum((n * 0.3 + rng.normal(0, 3, n.size) * np.sqrt(n)).astype(np.int64), 0), n)
    got = nm.binom_logpmf_pairs(k, n, 0.3)
    want = np.array([nm.binom_logpmf(np.array([a]), int(b), 0.3)[0] for a, b in zip(k, n)])
    assert np.allclose(got, want, rtol=1e-13, atol=1e-13)


def test_scipy_bdtr_is_only_trusted_where_measured():
    """The reason for ``BDTR_MAX_N``: at n = 1e8 scipy's bdtr is 22 % low near the mean (an
    "upper bound" built on it would be wrong), while the certified bounds hold."""
    from scipy import special
    n, p = 10**8, 0.1
    k = int(n * p) - 1
    lo, hi = nm.binom_cdf_bounds(k, n, p)
    assert lo <= float(_mp_binom_cdf(k, n, p)) * (1 + 1e-12) and hi >= float(_mp_binom_cdf(k, n, p))
    assert special.bdtr(k, n, p) < 0.9 * lo          # the failure this guards against
    assert nm.BDTR_MAX_N <= 10**6
    for m in (10**5, 10**6):                        # where bdtr is used: within 1e-8
        for z in (-12.0, -2.0, 0.0):
            kk = int(m * p + z * math.sqrt(m * p * (1 - p)))
            lo, hi = nm.binom_cdf_bounds(kk, m, p)
            assert abs(special.bdtr(kk, m, p) - lo) <= 1e-8 * lo


def test_falling_root_certified_returns_a_checked_end():
    """Regula falsi on a falling function: the end returned always had g ≤ 0 evaluated, it is
    within the tolerance of the root, and a log-linear g needs few evaluations."""
    for root, scale in [(0.3, 50.0), (1e-4, 3e4), (2.0, 0.5)]:
        calls = []

        def g(x, root=root, scale=scale):
            calls.append(x)
            return -scale * (x - root) + 0.1 * math.sin(7 * x) * (x - root)   # falling

        x = nm.falling_root_certified(g, 0.0, 10 * root + 1.0, xtol=1e-12, rtol=1e-8)
        assert g(x) <= 0.0 and x in calls
        assert root <= x <= root * (1 + 1e-8) + 1e-12
        assert len(calls) <= 40
    # −inf values (δ = 0 above the largest loss) fall back to bisection steps
    x = nm.falling_root_certified(lambda e: -math.inf if e > 0.5 else 0.5 - e, 0.0, 1.0,
                                  rtol=1e-9)
    assert 0.5 <= x <= 0.5 * (1 + 1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fft_powers_share_the_transform_bit_for_bit(seed):
    # Several powers of one vector from one forward transform must be exactly the powers
    # computed one at a time (the two-stage sums rely on it for unchanged answers).
    rng = np.random.default_rng(seed)
    q = rng.random(int(rng.integers(3, 300))) ** 3
    q /= q.sum() * (1.0 + 1e-3)
    L = nm.next_fast_len(int(rng.integers(q.size, 20_000)))
    ns = [1, 7, int(rng.integers(100, 10**6))]
    for (Q1, e1), n in zip(nm.fft_powers(q, ns, L), ns):
        Q2, e2 = nm.fft_power(q, n, L)
        assert np.array_equal(Q1, Q2) and e1 == e2


def test_circular_run_reads_any_window_of_a_period():
    from shuffledp.numerics import circular_run
    q = np.arange(7, dtype=float)
    for start in (-9, -1, 0, 3, 6, 13):
        for length in (0, 1, 4, 7, 8, 15, 30):
            want = q[(start + np.arange(length)) % q.size]
            assert np.array_equal(circular_run(q, start, length), want)


# ----- the one binomial-tail rule ----------------------------------------------------------
def _mp_tail(n, p, k, upper):
    """Pr[Bin(n, p) ≥ k] (upper) or ≤ k, summed term by term at 40 digits."""
    mp.mp.dps = 40
    ks = range(k, n + 1) if upper else range(0, k + 1)
    P = mp.mpf(p)
    return mp.fsum(mp.binomial(n, i) * P ** i * (1 - P) ** (n - i) for i in ks)


@pytest.mark.parametrize("n,p", [(200, 0.3), (2_000, 0.01)])
@pytest.mark.parametrize("z", [-9, -3, 0, 3, 9])
def test_binom_tail_upper_is_an_upper_bound_within_its_slack(n, p, z):
    """Below BDTR_MAX_N the rule is scipy's incomplete beta plus BDTR_SLACK: never below
    the exact tail (mpmath), at most 2·BDTR_SLACK above it."""
    k = max(0, min(n, int(n * p + z * math.sqrt(n * p * (1 - p)))))
    for upper in (True, False):
        exact = _mp_tail(n, p, k, upper)
        got = nm.binom_tail_upper(n, p, k, upper)
        assert got >= exact, (k, upper)
        if exact > 1e-200:
            assert got <= exact * (1 + 2 * nm.BDTR_SLACK), (k, upper)
        lg = nm.binom_log_tail_upper(n, p, k, upper)
        assert lg >= (float(mp.log(exact)) if exact > 0 else -math.inf)


def test_binom_tail_rule_above_bdtr_max_n_uses_the_certified_series():
    """Above BDTR_MAX_N the upper end of the certified sums is returned (scipy's incomplete
    beta is off there); far out the log form falls back to Chernoff instead of 0."""
    n, p = 3 * nm.BDTR_MAX_N, 0.3
    sd = math.sqrt(n * p * (1 - p))
    k = int(n * p + 6 * sd)
    assert nm.binom_tail_upper(n, p, k, True) == nm.binom_sf_bounds(k, n, p)[1]
    assert nm.binom_tail_upper(n, p, n - k, False) == nm.binom_cdf_bounds(n - k, n, p)[1]
    far = int(n * p + 60 * sd)
    assert nm.binom_tail_upper(n, p, far, True) < 1e-280
    assert nm.binom_log_tail_upper(n, p, far, True) == nm.binom_log_tail_bound(n, p, far, True)
    assert -math.inf < nm.binom_log_tail_upper(n, p, far, True) < math.log(1e-280)


def test_binom_tail_mass_is_the_rule_on_both_sides():
    n, p, lo, hi = 5_000, 0.2, 900, 1100
    below = nm.binom_tail_upper(n, p, lo - 1, False)
    above = nm.binom_tail_upper(n, p, hi + 1, True)
    exact = _mp_tail(n, p, lo - 1, False) + _mp_tail(n, p, hi + 1, True)
    got = nm.binom_tail_mass(n, p, lo, hi)
    assert exact <= got <= below + above
