"""The Fourier inversion below n ≈ 5e4 for smooth laws (``pairs.iid.TRAPEZOID_MIN_L_SMOOTH``).

From a one-FFT length of 2^13 (blanket: n ≳ 850) a law whose atoms span at most
0.2·√n standard deviations is summed by the trapezoid inversion instead of one FFT.
Independent checks: the exact binomial sum of a two-atom law (40-digit mpmath, the whole
support); the FFT engine on the same lattice (never below, and within its certified
error); a law with far, light atoms keeps the FFT; the blanket curve's scheduling (batched
or point by point) gives the same floats.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import blanket, iid


def _exact_two_atom(a, b, p, n, dps=40):
    """E[(aK + b(n − K))_+], K ~ Bin(n, p), in mpmath over K within ±40 sd of its mean (the
    rest weighs < e^−700 of the sum) — a lower value for the exact sum, as a check of an
    upper bound needs."""
    mp.mp.dps = dps
    a, b, pm = mp.mpf(a), mp.mpf(b), mp.mpf(p)
    sdk = math.sqrt(n * p * (1 - p))
    lo, hi = max(0, int(n * p - 40 * sdk)), min(n, int(n * p + 40 * sdk) + 1)
    tot = mp.mpf(0)
    for k in range(lo, hi + 1):
        s = a * k + b * (n - k)
        if s > 0:
            tot += mp.binomial(n, k) * pm ** k * (1 - pm) ** (n - k) * s
    return tot


@pytest.mark.parametrize("n", [25000, 40000])
def test_two_atom_law_against_exact_binomial_sum(n):
    """Slightly negative mean (−0.05 sd per term). The engine's value is above the exact
    one (lattice spread and allowances are upward) and within 1 % of it. (At n ≈ 4000 a
    two-atom lattice law's near-periods make the inversion decline: its FFT answers.)"""
    a, p = 1.0, 0.3
    b = -(0.3 + 0.05 * math.sqrt(0.21)) / 0.7
    got = iid.positive_part(np.array([a, b]), np.array([p, 1.0 - p]), n, nu=20.0)
    assert got.details.get("method") == "trapezoid"
    exact = float(_exact_two_atom(a, b, p, n))
    assert got.upper >= exact
    assert got.upper <= exact * 1.01


def _matrix_like():
    v = np.array([0.8, -0.35, -0.5])
    p = np.array([0.25, 0.45, 0.30])
    return v - np.sum(p * v) - 0.01, p          # mean −0.01 (a δ in the tail)


@pytest.mark.parametrize("n", [4000, 12544, 50000])
def test_below_the_fft_on_the_same_lattice(n):
    """Where the inversion now runs first, the FFT engine (forced, one stage) is never
    below it and they agree within the FFT's certified error."""
    v, p = _matrix_like()
    new = iid.positive_part(v, p, n, nu=20.0)
    assert new.details.get("method") == "trapezoid"
    old = iid.positive_part(v, p, n, nu=20.0, split=False)
    assert "method" not in old.details
    assert new.upper <= old.upper
    assert (old.upper - new.upper) / new.upper <= old.details["certified_relative_error"] + 1e-9


def test_far_light_atoms_keep_the_fft():
    """k-RR-like law at ε0 ≈ 7.5: a rare atom ~50 sd away (span > 0.2·√n at n = 3666) —
    the inversion would need thousands of nodes; the FFT is kept, values unchanged."""
    v = np.array([40.0, -0.4, -0.01])
    p = np.array([0.0005, 0.0495, 0.95])
    n = 3666
    sdv = math.sqrt(float(np.sum(p * (v - np.sum(p * v)) ** 2)))
    assert (v.max() - v.min()) / sdv > iid.SMOOTH_SPAN * math.sqrt(n)
    got = iid.positive_part(v, p, n, nu=20.0)
    assert "method" not in got.details
    assert got.upper == iid.positive_part(v, p, n, nu=20.0, split=False).upper


def test_the_thresholds_decide_the_engine(monkeypatch):
    """Back at the old threshold the same sum is an FFT again (the switch is the cause)."""
    v, p = _matrix_like()
    monkeypatch.setattr(iid, "TRAPEZOID_MIN_L_SMOOTH", iid.TRAPEZOID_MIN_L)
    assert "method" not in iid.positive_part(v, p, 12544, nu=20.0).details


@pytest.mark.parametrize("mech,n", [
    (sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]), 10000),
    (sd.RandomizedResponse(7.5592, 4), 3666),
])
def test_curve_scheduling_does_not_change_floats(mech, n):
    """A blanket curve is summed in batches (the matrix's laws by Fourier inversion, the
    far-atom 4-RR law's by FFT, its FFTs on the thread pool); summed point by point with
    ``_max_over_pairs`` instead, every point of the curve is the same float."""
    blanket._fdp_cached.cache_clear()
    grid, small = blanket._fdp_cached(mech, n, 1.0, 40, 20.0)
    blanket._fdp_cached.cache_clear()
    pairs = blanket._pairs_cached(mech, 1.0)
    top = max(p.max_log_ratio() for p in pairs)
    one = [blanket._max_over_pairs(pairs, n, float(e), 20.0, excess=bool(e < 0))[0]
           if abs(e) < top else 0.0 for e in grid]
    assert small.tobytes() == np.array(one).tobytes()


def test_sabotaged_atoms_fall_below_the_exact_sum(monkeypatch):
    """The exact check has the power to see a wrong-direction error: atoms moved DOWN by
    2 % of a standard deviation (instead of up by their rounding) give a value below the
    exact sum."""
    a, p, n = 1.0, 0.3, 25000
    b = -(0.3 + 0.05 * math.sqrt(0.21)) / 0.7
    shift = 0.02 * (a - b) * math.sqrt(p * (1 - p))
    monkeypatch.setattr(iid, "_moved_up", lambda v, e: v - shift)
    got = iid.positive_part(np.array([a, b]), np.array([p, 1.0 - p]), n, nu=20.0)
    assert got.details.get("method") == "trapezoid"
    assert got.upper < float(_exact_two_atom(a, b, p, n))
