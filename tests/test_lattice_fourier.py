"""The trapezoid Fourier inversion of ``numerics.lattice_fourier`` and its use by the
blanket's certified i.i.d. sum (``pairs.iid.positive_part`` at large n).

Independent checks: exact integer convolution powers (rational atoms) summed in 40-digit
mpmath; the FFT engine on the same lattice; the exact binomial sum of a two-atom law at
n = 10¹⁰ (numpy in log space); a sabotaged variant that must be caught."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp.numerics import lattice_fourier as LF
from shuffledp.pairs import iid


def _exact_T(j, num, den, n, h, phi, dps=40):
    """Σ_{s≥1} h·s·e^{−φs}·Q(s), Q = q^{*n} with q_l = num_l/den, by integer convolution."""
    lo = min(j)
    width = max(j) - lo
    base = [0] * (width + 1)
    for jj, c in zip(j, num):
        base[jj - lo] += c
    Q = [1]
    for _ in range(n):
        out = [0] * (len(Q) + width)
        for a, qa in enumerate(Q):
            if qa:
                for b, cb in enumerate(base):
                    if cb:
                        out[a + b] += qa * cb
        Q = out
    mp.mp.dps = dps
    tot = mp.mpf(0)
    scale = mp.mpf(den) ** n
    for idx, c in enumerate(Q):
        s = idx + n * lo
        if s >= 1 and c:
            tot += mp.mpf(h) * s * mp.e ** (-mp.mpf(phi) * s) * c / scale
    return tot


CASES = [
    # positions, integer weights, denominator, n, phi (laws centred at 0, as the engine's
    # caller tilts them)
    ([-2, 0, 1, 3], [3, 4, 3, 1], 11, 60, 0.05),
    ([-5, -1, 2, 4], [2, 2, 2, 2], 8, 120, 0.01),
    ([-1, 2], [2, 1], 3, 200, 0.3),
]


@pytest.mark.parametrize("j,num,den,n,phi", CASES)
def test_matches_exact_convolution(j, num, den, n, phi):
    q = np.array([c / den for c in num])
    sd = math.sqrt(float(np.sum(q * np.array(j) ** 2) - np.sum(q * np.array(j)) ** 2))
    mean = float(np.sum(q * np.array(j)))
    got = LF.trapezoid_positive_sum(np.array(j), q, n, 0.7, phi, mean, sd)
    assert got is not None
    upper, det = got
    exact = _exact_T(j, num, den, n, 0.7, phi)
    assert upper >= exact                                  # never below
    assert (upper - exact) / exact < 1e-9                  # and tight
    assert det["node_error"] + det["remainder"] < 1e-9 * det["main"]


@pytest.mark.parametrize("j,num,den,n,phi", CASES)
def test_band_and_certified_remainder_match_every_node(j, num, den, n, phi, monkeypatch):
    """At n = 3000 (every node summed is still cheap): the band of summed nodes, the
    near-period nodes and the certified remainder give the same value within the charged
    errors, and never below the every-node sum's lower end."""
    n = 3000
    q = np.array([c / den for c in num])
    jj = np.array(j)
    sd = math.sqrt(float(np.sum(q * jj ** 2) - np.sum(q * jj) ** 2))
    mean = float(np.sum(q * jj))
    monkeypatch.setattr(LF, "FULL_WORK", 1 << 40)
    full, fd = LF.trapezoid_positive_sum(jj, q, n, 0.7, phi, mean, sd)
    assert fd["remainder"] == 0.0
    monkeypatch.setattr(LF, "FULL_WORK", 0)
    got = LF.trapezoid_positive_sum(jj, q, n, 0.7, phi, mean, sd)
    assert got is not None
    band, bd = got
    assert bd["nodes"] < fd["nodes"]
    assert band >= fd["main"] - fd["node_error"]
    assert abs(band - full) <= 2.0 * (fd["node_error"] + bd["node_error"] + bd["remainder"]) + 1e-15 * full


def test_sabotaged_variant_is_caught(monkeypatch):
    """A W with the wrong sign of the phase (the weights' transform conjugated) moves the
    value far beyond the certified error: the exact check above has the power to see it."""
    j, num, den, n, phi = CASES[0]
    q = np.array([c / den for c in num])
    exact = _exact_T(j, num, den, n, 0.7, phi)
    real_W = LF._W

    def bad_W(*args):
        W, a = real_W(*args)
        return np.conj(W), a

    monkeypatch.setattr(LF, "_W", bad_W)
    got = LF.trapezoid_positive_sum(np.array(j), q, n, 0.7, phi, 0.0, 3.0)
    assert got is None or abs(got[0] - exact) / exact > 1e-3


def test_declines_degenerate_input():
    assert LF.trapezoid_positive_sum(np.array([3]), np.array([1.0]), 100, 1.0, 0.1, 3.0, 0.0) is None
    assert LF.trapezoid_positive_sum(np.array([0, 2]), np.array([0.5, 0.5]), 100, 1.0, 0.0, 1.0, 1.0) is None


def _blanket_like(n):
    """Atoms of a k-RR-like GPARV: a rare large positive value, a rare negative one, a
    small negative bulk and a zero atom (mean < 0)."""
    v = np.array([19.08, -19.11, -1.0e-3, 0.0])
    p = np.array([0.0084, 0.0084, 0.8229, 0.1603])
    return v, p / p.sum()


@pytest.mark.parametrize("n", [10**6, 3 * 10**7])
def test_agrees_with_fft_engine_on_the_same_lattice(n, monkeypatch):
    """At large n the engine uses the trapezoid; forced onto one FFT (same lattice, no two
    stages) the value is at least as large and agrees within the FFT's certified error."""
    v, p = _blanket_like(n)
    new = iid.positive_part(v, p, n, nu=12.0)
    assert new.details.get("method") == "trapezoid"
    old = iid.positive_part(v, p, n, nu=12.0, split=False)   # split given: the FFT engine
    assert "method" not in old.details
    assert new.upper <= old.upper
    assert (old.upper - new.upper) / new.upper <= old.details["certified_relative_error"] + 1e-9


@pytest.mark.parametrize("b", [-0.0101, -(0.01 + 1e-8) / 0.99])   # mean > 0 (reflected), ≈ −0.1 sd
@pytest.mark.parametrize("n", [10**10, 10**12])
def test_two_atom_law_at_huge_n_against_exact_binomial_sum(n, b):
    """G = a w.p. p, b < 0 otherwise: ΣG = aK + b(n − K), K ~ Bin(n, p). The exact
    E[(ΣG)_+] (log-space binomial pmf over ±40 sd of K) is below the engine's value, which
    exceeds it only by the lattice spread's convex-order excess and the n-fold rounding
    allowance (< 1 %, of which ~0.2 % is rounding at n = 1e12)."""
    from scipy.stats import binom
    a, p = 1.0, 0.01
    kc = n * p
    sdk = math.sqrt(n * p * (1 - p))
    k = np.arange(int(kc - 40 * sdk), int(kc + 40 * sdk) + 1, dtype=float)
    # scipy's binomial log-pmf (Boost), normalised over the window (its mass is 1 − e^−800):
    # a common error of the log-pmfs cancels
    pmf = np.exp(binom.logpmf(k, n, p))
    s = a * k + b * (n - k)
    exact = float(np.sum(pmf * np.maximum(s, 0.0)) / np.sum(pmf))
    got = iid.positive_part(np.array([a, b]), np.array([p, 1 - p]), n, nu=12.0)
    assert got.details.get("method") == "trapezoid"
    assert got.upper >= exact
    assert got.upper <= exact * 1.01


def test_edges_large_and_small_tilt():
    """Far in the tail (δ ~ 1e-200 after scaling) and at the mean (tilt ~ 0): finite,
    positive, and the FFT engine (forced, one stage) is never below."""
    v, p = _blanket_like(10**6)
    for shift in (-0.5, 0.0, 0.3):
        vv = v + shift * np.array([1.0, 0.0, 0.0, 0.0])
        r = iid.positive_part(vv, p, 10**6, nu=12.0)
        assert math.isfinite(r.upper) and r.upper >= 0.0
        assert r.details.get("method") in ("trapezoid", None) or "reason" in r.details


def test_blanket_above_the_old_cap_between_the_exact_lower_bound_and_girgis():
    """With the Fourier inversion the blanket is evaluated up to n = 1e13 (the cap was
    1e10). Binary RR at n = 4e10, δ = 1e-10, one round: at or above the exact shuffled-RR lower bound
    (krr-lower, an independent computation), within 30 % of it, and far below girgis-ub1."""
    import shuffledp as sd
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 2), n=4 * 10**10)   # (krr-lower: 15 s at 1e12)
    c = {b: sd.epsilon(proto, delta=1e-10, bound=b).epsilon
         for b in ("blanket", "krr-lower", "girgis-ub1")}
    assert c["krr-lower"] <= c["blanket"] <= 1.3 * c["krr-lower"]
    assert c["blanket"] < 0.5 * c["girgis-ub1"]


def test_past_1e10_a_declined_inversion_falls_back_to_chernoff_not_the_fft(monkeypatch):
    """No FFT past n = 1e10 (its allowance there is 1-100x the value, two stages ~0.2 s):
    where the inversion declines, the certified Chernoff bound stands in — above the exact
    binomial value of a two-atom law, and no FFT is run."""
    from scipy.stats import binom
    n, a, p = 10**12, 1.0, 0.01
    b = -(0.01 + 1e-8) / 0.99
    def declined(*args, **kw):
        return None
        yield                                   # a step generator that declines at once
    monkeypatch.setattr(iid, "trapezoid_steps", declined)
    monkeypatch.setattr(iid, "fft_power_product",
                        lambda *args, **kw: (_ for _ in ()).throw(AssertionError("FFT run")))
    got = iid.positive_part(np.array([a, b]), np.array([p, 1 - p]), n, nu=12.0)
    assert got.details["method"] == "chernoff"
    kc, sdk = n * p, math.sqrt(n * p * (1 - p))
    k = np.arange(int(kc - 40 * sdk), int(kc + 40 * sdk) + 1, dtype=float)
    pmf = np.exp(binom.logpmf(k, n, p))
    exact = float(np.sum(pmf * np.maximum(a * k + b * (n - k), 0.0)) / np.sum(pmf))
    assert got.upper >= exact
