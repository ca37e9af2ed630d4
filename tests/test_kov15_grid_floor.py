"""The KOV15 split search's grid without its proven losers (``composition._opt_grid``).

Independent references: the exact hockey-stick H_k(ε) of the k-fold binary-RR product,
enumerated over the number of flips in 50-digit mpmath (the floor must stay below it),
and the full grid (every point evaluated, the code before the skip), against which the
result must be the same floats. A floor inflated by 5 % is caught by the implication test.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp.compose import composition as comp

mp.mp.dps = 50


def exact_h(eps1, k, eps):
    """H_k(ε) = Σ_j Bin(k, 1/(1 + e^ε1))(j)·(1 − e^{ε − (k − 2j)ε1})_+ in mpmath."""
    e1 = mp.mpf(repr(float(eps1)))
    p = 1 / (1 + mp.e ** e1)
    e = mp.mpf(repr(float(eps)))
    tot = mp.mpf(0)
    for j in range(k + 1):
        top = (k - 2 * j) * e1
        if top > e:
            tot += mp.binomial(k, j) * p ** j * (1 - p) ** (k - j) * (1 - mp.e ** (e - top))
    return tot


@pytest.mark.parametrize("eps1,k", [(0.05, 3), (0.7, 17), (3.0, 60), (0.064, 200)])
def test_hockey_floor_below_exact_and_close(eps1, k):
    for frac in (0.01, 0.2, 0.5, 0.8, 0.99):
        eps = frac * k * eps1
        ex = exact_h(eps1, k, eps)
        fl = comp._hockey_rr_floor(eps1, k, eps)
        assert mp.mpf(fl) <= ex
        if ex > mp.mpf("1e-250"):
            assert mp.mpf(fl) >= ex * (1 - mp.mpf("1e-5"))


def rr_curve(e0):
    s = math.exp(e0) / (math.exp(e0) + 1)
    return lambda d: max(0.0, e0 + math.log1p(-d / s)) if d < s else 0.0


def gauss_like(sigma):
    # A smooth, decreasing single-round curve ε1(δ1) (the tail bound of the Gaussian
    # mechanism): any decreasing curve serves the comparison.
    return lambda d: 0.5 / sigma ** 2 + math.sqrt(2.0 * math.log(1.25 / d)) / sigma


def _full_grid(split, e1, opt_val, closed_val, k, delta):
    return [(opt_val(split(z)[0]), z, "grid") for z in comp._GRID_Z]


CASES = [(rr_curve(1.0), 10, 1e-6), (rr_curve(0.2), 200, 1e-6), (rr_curve(0.05), 3, 1e-9),
         (gauss_like(3.0), 20, 1e-5), (gauss_like(10.0), 500, 1e-6),
         (gauss_like(40.0), 1549, 8e-8), (gauss_like(0.8), 5, 1e-10)]


@pytest.mark.parametrize("curve,T,delta", CASES)
def test_same_floats_as_full_grid(monkeypatch, curve, T, delta):
    best, results = comp.compose_epsilon(curve, T, delta)
    with monkeypatch.context() as m:
        m.setattr(comp, "_opt_grid", _full_grid)
        best0, results0 = comp.compose_epsilon(curve, T, delta)
    assert best == best0
    assert results == results0


def test_the_grid_skips_points():
    # the skip is real (most points left out) and every point left out is above the min
    curve, T, delta = gauss_like(10.0), 500, 1e-6
    L = math.log1p(-delta)
    from shuffledp.core._lazy import special

    def split(z):
        f = float(special.expit(z))
        return -math.expm1(f * L / T), -math.expm1((1.0 - f) * L)

    def opt_val(d1):
        return comp._kov_epsilon(curve(d1), d1, T, delta, 1e-7)

    def closed_val(d1):
        return comp._closed_epsilon(curve(d1), d1, T, delta)[0]

    pts = comp._opt_grid(split, curve, opt_val, closed_val, T, delta)
    full = [opt_val(split(z)[0]) for z in comp._GRID_Z]
    skipped = [i for i, (v, _, _) in enumerate(pts) if v == math.inf]
    assert len(skipped) >= 10
    assert all(full[i] > min(full) for i in skipped)
    assert min(v for v, _, _ in pts) == min(full)


def _loses_cases(seed=7, n=300):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.choice([2, 3, 7, 40, 300, 1500]))
        ref = float(10 ** rng.uniform(-3, 0.7))
        x = ref * float(1 + rng.choice([0.0, 1e-6, 1e-3, 0.05]))
        delta = float(10 ** rng.uniform(-12, -3))
        d1 = float(10 ** rng.uniform(-16, math.log10(delta / k) - 0.01))
        v_ref = comp._kov_epsilon(ref, d1, k, delta, 1e-7)
        if not math.isfinite(v_ref) or v_ref == 0.0:
            continue
        for f in (0.97, 0.999, 0.99999, 1.00001, 1.001):
            yield ref, x, d1, k, delta, v_ref * f


def test_loses_implies_value_above():
    hits = 0
    for ref, x, d1, k, delta, beat in _loses_cases():
        if comp._kov_loses(ref, d1, k, delta, beat):
            hits += 1
            assert comp._kov_epsilon(x, d1, k, delta, 1e-7) > beat
            assert comp._kov_epsilon(x, d1, k, delta, 1e-11) > beat
    assert hits > 100


def test_inflated_floor_is_caught(monkeypatch):
    # A floor 5 % too high claims points that do not lose: the implication above fails.
    monkeypatch.setattr(comp, "_FLOOR_SHRINK", -0.05)
    bad = 0
    for ref, x, d1, k, delta, beat in _loses_cases():
        if comp._kov_loses(ref, d1, k, delta, beat) and \
                not comp._kov_epsilon(x, d1, k, delta, 1e-7) > beat:
            bad += 1
    assert bad > 0
