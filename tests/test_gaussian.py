"""Shuffle Gaussian: the homogeneous-pair kernel and the unamplified Gaussian (issue #5).

Oracles are written here, independently of the library:

* ``partition_em1``: the paper's partition formula (Liew–Takahashi eq. 14, parts ≤ n) in
  mpmath at 60 digits, E − 1 formed at that precision.
* ``series_em1``: λ!/n^λ [t^λ] (Σ_j e^{j(j−1)/(2σ²)} t^j/j!)^n by plain binary powering of
  the truncated series in mpmath at 60 digits (no "−1" trick, no recurrence) — usable up to
  λ = 100 where partitions are too many.
* Gauss–Hermite quadrature of E_Q[(P/Q)^{1−λ}] for the reverse direction at n = 2, 3.
"""

from __future__ import annotations

import math
from collections import Counter

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import gaussian_rdp as K
from shuffledp.bounds.gaussian import table1_epsilon

DPS = 60


def _partitions(r, maxp):
    if r == 0:
        yield []
        return
    for p in range(min(r, maxp), 0, -1):
        for rest in _partitions(r - p, p):
            yield [p] + rest


def partition_em1(n, sigma, lam):
    with mp.workdps(DPS):
        s2 = 2 * mp.mpf(sigma) ** 2
        tot = mp.mpf(0)
        for kap in _partitions(lam, lam):
            if len(kap) > n:
                continue                      # more parts than users: impossible
            ways = mp.factorial(n) / mp.factorial(n - len(kap))
            for mult in Counter(kap).values():
                ways /= mp.factorial(mult)
            t = ways * mp.factorial(lam)
            for k in kap:
                t *= mp.exp(mp.mpf(k * (k - 1)) / s2) / mp.factorial(k)
            tot += t
        return tot / mp.mpf(n) ** lam - 1


def series_em1(n, sigma, L):
    """[E_λ − 1 for λ = 0..L] by mpmath binary powering of the truncated series."""
    with mp.workdps(DPS):
        s2 = 2 * mp.mpf(sigma) ** 2
        a = [mp.exp(mp.mpf(j * (j - 1)) / s2) / mp.factorial(j) for j in range(L + 1)]

        def mul(x, y):
            return [mp.fsum(x[i] * y[k - i] for i in range(k + 1)) for k in range(L + 1)]

        res = [mp.mpf(1)] + [mp.mpf(0)] * L
        base, e = a, n
        while e:
            if e & 1:
                res = mul(res, base)
            e >>= 1
            if e:
                base = mul(base, base)
        return [mp.factorial(k) * res[k] / mp.mpf(n) ** k - 1 for k in range(L + 1)]


def rel(a, b):
    return abs(a / b - 1)


# --------------------------------------------------------------------------------------
# The kernel against the oracles


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 60000])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 5.0])
def test_partition_formula_small_orders(n, sigma):
    """All orders 2..14, including n < λ (partitions with more than n parts dropped)."""
    L = 14
    got = K.homogeneous_log_em1(n, sigma, L)
    for lam in range(2, L + 1):
        ref = partition_em1(n, sigma, lam)
        assert rel(math.exp(got[lam]), float(ref)) < 1e-12, (n, sigma, lam)


@pytest.mark.parametrize("n,sigma", [(2, 0.5), (10, 1.0), (1000, 2.0), (60000, 9.48), (60000, 0.5)])
def test_series_oracle_to_order_100(n, sigma):
    """Relative error ≤ 1e−9 of the RDP up to λ = 100 (λ = 60 for the slow mpmath cases)."""
    L = 100 if n <= 10 else 60
    ref = series_em1(n, sigma, L)
    got = K.homogeneous_rdp(n, sigma, np.arange(2, L + 1))
    for lam in range(2, L + 1):
        with mp.workdps(DPS):
            want = float(mp.log1p(ref[lam]) / (lam - 1))
        assert rel(got[lam - 2], want) < 1e-9, (n, sigma, lam, got[lam - 2], want)


def test_tiny_answers_keep_relative_precision():
    # n = 60000, σ = 9.48, λ = 2: E − 1 = (e^{1/σ²} − 1)/n ≈ 1.9e−7 (exact at order 2).
    n, s = 60000, 9.48
    with mp.workdps(40):
        want = float(mp.log1p(mp.expm1(1 / mp.mpf(s) ** 2) / n))
    got = float(K.homogeneous_rdp(n, s, [2])[0])
    assert want < 2e-7 and rel(got, want) < 1e-13


def test_recurrence_and_powering_agree():
    for n, s in [(40, 0.7), (300, 3.0)]:
        L = n + 1
        a = K.homogeneous_log_em1(n, s, L, method="recurrence")
        b = K.homogeneous_log_em1(n, s, L, method="powering")
        assert np.max(np.abs(a[2:] - b[2:])) < 1e-11


def test_n1_is_the_gaussian_and_small_sigma_high_order_finite():
    lam = np.arange(2, 300)
    got = K.homogeneous_rdp(1, 0.8, lam)
    assert np.allclose(got, lam / (2 * 0.8 ** 2), rtol=1e-12)
    v = K.homogeneous_rdp(3, 0.1, [2, 1000, 2000])
    assert np.all(np.isfinite(v))
    # All balls in one bin dominates: ε ≈ λ/(2σ²) − log(n)·(λ−1)/(λ−1) within a small margin.
    assert abs(v[2] - (2000 / (2 * 0.01) - math.log(3))) < 0.01


def test_extending_the_cached_kernel_is_consistent():
    k = K.HomogeneousKernel(5000, 2.0)
    a = k.log_em1(100)
    b = k.log_em1(400)
    c = K.homogeneous_log_em1(5000, 2.0, 400)
    assert np.array_equal(a[2:], b[2:101]) and np.max(np.abs(b[2:] - c[2:])) < 1e-12


def test_speed_orders_to_1000_at_60000():
    import time
    t = time.perf_counter()
    K.homogeneous_log_em1(60000, 5.0, 1000)
    assert time.perf_counter() - t < 2.0     # target 1 s; slack for a shared machine


# --------------------------------------------------------------------------------------
# Invariants


def test_invariants_monotone_and_below_unamplified():
    lam = np.arange(2, 60)
    prev = None
    for n in [1, 2, 5, 50, 500]:
        v = K.homogeneous_rdp(n, 2.0, lam)
        assert np.all(v <= lam / 8.0 * (1 + 1e-12))
        if prev is not None:
            assert np.all(v <= prev * (1 + 1e-12))       # non-increasing in n
        prev = v
    a = K.homogeneous_rdp(100, 1.0, lam)
    b = K.homogeneous_rdp(100, 2.0, lam)
    assert np.all(b < a)                                   # non-increasing in σ
    assert np.all(np.diff(a) > 0)                          # non-decreasing in λ


# --------------------------------------------------------------------------------------
# Reverse direction by quadrature (gaussian.md §1)


def _reverse_quadrature(n, sigma, lam, deg):
    x, w = np.polynomial.hermite_e.hermegauss(deg)
    w = w / w.sum()
    grids = np.meshgrid(*([x * sigma] * n), indexing="ij")
    ww = np.ones_like(grids[0])
    for wi in np.meshgrid(*([w] * n), indexing="ij"):
        ww = ww * wi
    lr = np.logaddexp.reduce(np.stack([(g - 0.5) / sigma ** 2 for g in grids]), axis=0) - math.log(n)
    fwd = math.log(np.sum(ww * np.exp(lam * lr))) / (lam - 1)
    rev = math.log(np.sum(ww * np.exp((1 - lam) * lr))) / (lam - 1)
    return fwd, rev


@pytest.mark.parametrize("n,deg", [(2, 160), (3, 90)])
@pytest.mark.parametrize("sigma", [1.0, 2.0, 5.0])
def test_reverse_direction_below_forward(n, sigma, deg):
    lams = range(2, 9)
    fwd_k = K.homogeneous_rdp(n, sigma, np.array(list(lams)))
    for i, lam in enumerate(lams):
        fwd_q, rev_q = _reverse_quadrature(n, sigma, lam, deg)
        assert rel(fwd_q, fwd_k[i]) < 1e-6          # the quadrature is accurate here
        assert rev_q <= fwd_k[i] * (1 + 1e-6), (n, sigma, lam, rev_q, fwd_k[i])


# --------------------------------------------------------------------------------------
# Anchors and the accountant


def test_table1_anchor_and_order_search():
    eps, order = table1_epsilon(60000, 9.48, 1 / 60000)
    assert abs(eps - 0.22820) < 1e-5 and order == 30          # Liew–Takahashi Table 1
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(9.48), 60000), 1 / 60000, bound="liew-homogeneous")
    assert r.kind == "estimate" and r.epsilon <= 0.0015
    c = r.candidates[0]
    assert c.details["order_limit_hit"] is False and c.details["order"] > 30


def test_accountant_never_answers_with_the_estimate():
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(9.48), 60000), 1 / 60000, lower=True)
    assert r.kind == "upper" and r.bound != "liew-homogeneous"
    est = [c for c in r.candidates if c.bound == "liew-homogeneous"]
    assert est and est[0].kind == "estimate" and "not a worst case" in est[0].valid_for


# --------------------------------------------------------------------------------------
# gaussian-unamplified


def _mp_delta(sigma, eps):
    with mp.workdps(50):
        s, e = mp.mpf(sigma), mp.mpf(eps)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


@pytest.mark.parametrize("sigma", [0.1, 0.5, 1.0, 9.48])
def test_unamplified_delta_against_mpmath(sigma):
    for eps in [0.0, 0.01, 0.3, 1.0, 3.0]:
        ref = _mp_delta(sigma, eps)
        got = K.gaussian_delta(sigma, eps)
        if ref < mp.mpf(10) ** -300:
            continue
        assert got >= ref and rel(got, float(ref)) < 1e-8, (sigma, eps)


@pytest.mark.parametrize("rounds", [1, 7, 5540])
def test_unamplified_epsilon_is_certified_and_tight(rounds):
    sigma, delta = 5.0, 1e-5
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(sigma), 6000), delta, rounds=rounds,
                   bound="gaussian-unamplified")
    s = sigma / math.sqrt(rounds)
    assert _mp_delta(s, r.epsilon) <= delta
    assert _mp_delta(s, r.epsilon * (1 - 1e-6)) > delta
    assert r.kind == "upper"


def test_unamplified_rdp_and_delta_question():
    p = sd.Shuffle(sd.Gaussian(2.0), 100)
    c = sd.rdp(p, [2, 3, 10], bound="gaussian-unamplified")
    assert np.allclose(c.values, np.array([2, 3, 10]) / 8.0, rtol=1e-11)
    assert np.all(c.values >= np.array([2, 3, 10]) / 8.0)
    d = sd.delta(p, 0.5, rounds=4, bound="gaussian-unamplified")
    assert d.delta >= _mp_delta(1.0, 0.5) and rel(d.delta, float(_mp_delta(1.0, 0.5))) < 1e-8


# --------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan"), float("inf"), "1"])
def test_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        sd.Gaussian(sigma)


def test_bad_protocol_arguments():
    g = sd.Gaussian(1.0)
    with pytest.raises(ValueError, match="rate"):
        sd.CheckIn(0.0)
    with pytest.raises(ValueError, match="rate"):
        sd.CheckIn(1.5)
    with pytest.raises(ValueError, match="size"):
        sd.Shuffle(g, 10, sampling=sd.WithoutReplacement(11))
    with pytest.raises(ValueError, match="n must be"):
        sd.Shuffle(g, 0)
    with pytest.raises(ValueError, match="delta"):
        sd.epsilon(sd.Shuffle(g, 10), 0.0)
    with pytest.raises(ValueError, match="orders"):
        sd.rdp(sd.Shuffle(g, 10), [1.0], bound="liew-homogeneous")


def test_liew_refuses_ldp_and_real_orders():
    with pytest.raises(sd.NotApplicableError):
        sd.epsilon(sd.Shuffle(sd.LDP(1.0), 100), 1e-6, bound="liew-homogeneous")
    with pytest.raises(sd.NotApplicableError):
        sd.rdp(sd.Shuffle(sd.Gaussian(1.0), 100), [2.5], bound="liew-homogeneous")
