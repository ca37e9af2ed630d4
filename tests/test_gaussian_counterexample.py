"""The homogeneous pair is not a worst case in dimension ≥ 2 (gaussian.md §3).

n = 2, σ = 1, λ = 2: the victim moves between two vertices of an equilateral triangle of
side 1 while the other user sits at the third vertex. Monte Carlo of E_Q[(P/Q)²] (fixed
seed) gives D₂ ≈ 0.641, whose 4-sd interval excludes the homogeneous value
log(1 + (e − 1)/2) = 0.6201 that liew-homogeneous reports.
"""

from __future__ import annotations

import math

import numpy as np

import shuffledp as sd


def _log_phi(y, c):
    return -0.5 * np.sum((y - c) ** 2, axis=-1)


def test_equilateral_triangle_beats_the_homogeneous_pair():
    rng = np.random.default_rng(20240605)
    N = 3_000_000
    x0 = np.array([0.0, 0.0])
    x1 = np.array([1.0, 0.0])
    v = np.array([0.5, math.sqrt(3.0) / 2.0])
    # Q: victim at x0, other at v; the shuffled output is the unordered pair, so the
    # likelihood ratio is that of the symmetrised densities.
    y1 = rng.standard_normal((N, 2)) + x0
    y2 = rng.standard_normal((N, 2)) + v
    lp = np.logaddexp(_log_phi(y1, x1) + _log_phi(y2, v), _log_phi(y1, v) + _log_phi(y2, x1))
    lq = np.logaddexp(_log_phi(y1, x0) + _log_phi(y2, v), _log_phi(y1, v) + _log_phi(y2, x0))
    r = np.exp(2.0 * (lp - lq))
    m, se = r.mean(), r.std() / math.sqrt(N)
    lo = math.log(m - 4 * se)

    homogeneous = float(sd.rdp(sd.Shuffle(sd.Gaussian(1.0), 2), [2], bound="liew-homogeneous").values[0])
    assert abs(homogeneous - math.log1p(math.expm1(1.0) / 2.0)) < 1e-12   # 0.6201
    assert lo > homogeneous, (math.log(m), lo, homogeneous)
    assert abs(math.log(m) - 0.641) < 0.01

    # The always-valid unamplified Gaussian (λ/(2σ²) = 1) stays above the instance.
    up = float(sd.rdp(sd.Shuffle(sd.Gaussian(1.0), 2), [2], bound="gaussian-unamplified").values[0])
    assert up >= math.log(m + 4 * se)
