"""pld_fft: certified T-fold composition of a dominating pair (tilted FFT, convex-order spread).

Independent checks: (1) exact enumeration of every T-tuple of outcomes in 50-digit mpmath
(the hockey-stick divergence of the product pair, no lattice, no FFT); (2) dp_accounting's
pessimistic PLD of the same pair on the same grid (it rounds losses up, so it is looser
than the spread but never below the exact value).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
from shuffledp.compose import composition as comp
from shuffledp.numerics import pld_fft as pf

mp.mp.dps = 50


def exact_delta(p, q, T, eps):
    """δ of (P^T, Q^T) at ε by enumeration: Σ (Πp − e^ε Πq)_+ in 50 digits."""
    return oracle.product_hockey([mp.mpf(float(x)) for x in p], [mp.mpf(float(x)) for x in q],
                                 T, eps)


def _pair(rng, k, zero_q=False):
    a = rng.random(k) ** 2 + 0.01
    b = rng.random(k) ** 2 + 0.01
    if zero_q:
        b[0] = 0.0
    return a / a.sum(), b / b.sum()


def _logs(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 5), T=st.integers(1, 4),
       eps=st.sampled_from([0.0, 0.3, 1.0, 2.5]), d=st.sampled_from([None, 1e-3, 0.05]),
       zero=st.booleans())
def test_delta_is_above_exact_and_close(seed, k, T, eps, d, zero):
    rng = np.random.default_rng(seed)
    a, b = _pair(rng, k, zero)
    lat = pf.loss_lattice(_logs(a), _logs(b), d)
    got, _ = pf.composed_delta(lat, T, eps)
    ex = float(exact_delta(a, b, T, eps))
    assert got >= ex * (1 - 1e-12)
    if ex > 1e-12:
        # the spread adds ≤ d²/4 variance per round: close even on a coarse grid. Near the
        # kink of (e^s − e^ε)_+ its excess is absolute, not relative: a chord over a step d
        # exceeds the function by ≤ (d/4)·e^{s+d} per round, and E_Q e^{S} ≤ 1 (found by
        # hypothesis: a loss 0.3010 at ε = 0.3, exact δ 4.3e-4, 9.2e-4 on the lattice)
        assert got <= ex * 1.02 + T * lat.d * math.exp(lat.d) / 4.0 + 1e-12


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 5), T=st.integers(1, 4),
       delta=st.sampled_from([1e-1, 1e-3, 1e-6, 1e-10]))
def test_epsilon_is_certified(seed, k, T, delta):
    rng = np.random.default_rng(seed)
    a, b = _pair(rng, k)
    lat = pf.loss_lattice(_logs(a), _logs(b), None)
    e, _ = pf.composed_epsilon(lat, T, delta)
    assert math.isfinite(e)
    assert float(exact_delta(a, b, T, e)) <= delta * (1 + 1e-12)


def test_tiny_delta_keeps_relative_precision():
    # A rare outcome with loss 2 (P-mass 0.01), 40 rounds: δ far below 1e-16, where an
    # untilted FFT has only absolute precision. Exact: the count of the rare outcome is
    # binomial, summed in 50 digits.
    pa, qa = mp.mpf("0.01"), mp.mpf("0.01") * mp.e ** -2
    pb, qb = 1 - pa, 1 - qa
    T = 40
    lat = pf.loss_lattice(np.log([float(pa), float(pb)]), np.log([float(qa), float(qb)]), None)
    for eps in (20.0, 29.0):
        ex = mp.fsum(mp.binomial(T, k) * max(pa ** k * pb ** (T - k)
                                             - mp.e ** eps * qa ** k * qb ** (T - k), 0)
                     for k in range(T + 1))
        got, _ = pf.composed_delta(lat, T, eps)
        assert 1e-300 < float(ex) < 1e-12
        assert float(ex) * (1 - 1e-12) <= got <= float(ex) * 1.01


def test_heavy_rare_losses_are_charged_not_widened():
    # A bulk of tiny losses plus one rare atom at loss ±1 (a clone pair's far slice):
    # the answer stays certified and the FFT stays short.
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1e-3, 2000)
    p = np.exp(x / 2); q = np.exp(-x / 2)
    p = np.append(p / p.sum() * (1 - 2e-19), [1e-19 * math.e, 1e-19])
    q = np.append(q / q.sum() * (1 - 2e-19), [1e-19, 1e-19 * math.e])
    lat = pf.loss_lattice(np.log(p), np.log(q), None)
    e, det = pf.composed_epsilon(lat, 10, 1e-6)
    assert det["fft_length"] < 200_000
    # certified against the exact product via the two-round dp_accounting-free check:
    # δ at e is ≤ 1e-6 for the exact pair (Gaussian-like bulk, sd 1e-3·√10)
    assert 0 < e < 0.05


@pytest.mark.parametrize("T", [2, 5, 20])
def test_not_looser_than_dp_accounting(T):
    pytest.importorskip("dp_accounting")
    rng = np.random.default_rng(T)
    a, b = _pair(rng, 6)
    la, lb = np.log(a), np.log(b)
    for delta in (1e-3, 1e-6):
        ours, _ = comp.pld_epsilon(la, lb, T, delta, discretization=1e-4)
        pld, _ = comp._build(la, lb, T, 0.0, 1e-4)
        theirs = float(pld.get_epsilon_for_delta(delta))
        assert ours <= theirs + 1e-9


def test_infinite_mass_and_refusal():
    a = np.array([0.5, 0.3, 0.2])
    b = np.array([0.6, 0.4, 0.0])           # 0.2 of P at infinite loss
    lat = pf.loss_lattice(_logs(a), _logs(b), None)
    assert lat.inf == pytest.approx(0.2)
    e, det = pf.composed_epsilon(lat, 3, 0.1)
    assert e == math.inf and "infinite" in det["reason"]
    d, _ = pf.composed_delta(lat, 3, 50.0)
    assert d >= 1 - 0.8 ** 3


def test_heavy_losses_cut_at_the_wide_cap_stay_certified(monkeypatch):
    # Bulk losses ~±0.0005 and a rare atom at loss ±1 whose union-bound charge (~3e-5·δ) is
    # too large for the strict cap (1e-9·δ): whether or not the wider cut is taken, ε is
    # certified against exact enumeration of the 8³ triples.
    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 0.0005, 6)
    p = np.exp(x / 2)
    q = np.exp(-x / 2)
    h = 1e-12
    p = np.append(p / p.sum() * (1 - h * (1 + math.e)), [h * math.e, h])
    q = np.append(q / q.sum() * (1 - h * (1 + math.e)), [h, h * math.e])
    lat = pf.loss_lattice(np.log(p), np.log(q), None)
    # the trade is made only when the FFT would be long; force it on this small case
    monkeypatch.setattr(pf, "_WIDE_MIN_L", 0)
    for delta in (1e-7, 1e-5):
        e, det = pf.composed_epsilon(lat, 3, delta)
        assert math.isfinite(e) and e < 0.05
        assert float(exact_delta(p, q, 3, e)) <= delta * (1 + 1e-12)


def test_clone_pair_far_tail_does_not_widen_the_fft():
    """4-RR, n = 1e8, T = 10, δ = 1e-12: fmt20's pair carries its lower C-tail (mass ~1e-18)
    at loss ε0; kept, it made the tilted law 4.2 million points wide (11 s)."""
    import shuffledp as sd
    from shuffledp.bounds import get
    from shuffledp.accounting.select import bound_answer
    from shuffledp.core.views import EpsilonAt
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**8)
    o = bound_answer(get("fmt20"), proto, EpsilonAt(1e-12), 10, "pld")
    assert o.details["fft_length"] < 20_000
    # between the one-round value and T times it (a sanity bracket, both from the same pair)
    one = bound_answer(get("fmt20"), proto, EpsilonAt(1e-12), 1).value
    assert one < o.value < 10 * one


def test_negligible_low_losses_are_raised_not_spread_over_the_grid():
    """A far-low atom of Q-mass 1e-70 (a dominating pair's c = 0 slice) is raised to the
    lowest loss above it: the grid starts at the bulk, and δ stays above the exact value."""
    p = np.array([0.3, 0.3, 0.4 - 1e-70, 1e-70 * math.exp(-8.0)])
    q = np.array([0.32, 0.28, 0.4 - 1e-70, 1e-70])
    p = p / p.sum()
    lat = pf.loss_lattice(np.log(p), np.log(q), 1e-3)
    assert lat.lo * lat.d > -0.2                      # the atom at loss −8 is not on the grid
    for eps in (0.0, 0.05, 0.2):
        got, _ = comp.pld_delta(np.log(p), np.log(q), 3, eps)
        assert got >= float(exact_delta(p, q, 3, eps)) * (1 - 1e-12)


@pytest.mark.parametrize("size,seed", [(10, 0), (3000, 1), (200_000, 2), (5000, 3)])
def test_low_cut_partial_sort_equals_full_sort(size, seed):
    """The floor of negligible low losses, found from the lowest ~1/64 of the atoms, is the
    one a full sort gives (ties included: losses drawn from a small set)."""
    rng = np.random.default_rng(seed)
    loss = rng.integers(-50, 50, size).astype(float) * 0.1
    w = np.exp(rng.uniform(-300, 0, size)) if seed != 3 else np.full(size, 1e-63)
    order = np.argsort(loss, kind="stable")
    for mass in (0.0, 1e-200, 1e-60, 1e-3, float(np.sum(w)) * 2):
        cum = np.cumsum(w[order])
        k = int(np.searchsorted(cum, mass, side="right"))
        want = float(loss[order[k]]) if 0 < k < size else None
        assert pf._low_cut(loss, w, mass) == want


# ----------------------------------------------------------------------------------------
# Floors: certified LOWER bounds on δ_T(ε) (they decide what the accountant may skip)
# ----------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 5), T=st.integers(1, 4),
       eps=st.sampled_from([0.0, 0.3, 1.0, 2.5]), d=st.sampled_from([None, 1e-3, 0.05]),
       zero=st.booleans())
def test_floor_is_below_exact_and_close(seed, k, T, eps, d, zero):
    p, q = _pair(np.random.default_rng(seed), k, zero)
    exact = float(exact_delta(p, q, T, eps))
    lat = pf.floor_lattice(_logs(p), _logs(q), d)
    got = pf.composed_delta_floor(lat, T, eps)
    assert got <= exact * (1 + 1e-12) + 1e-300
    if d != 0.05 and exact > 1e-6:
        # losses lowered by at most d per round: E_Q[(e^{S − Td} − e^ε)_+] = e^{−Td}·δ(ε + Td)
        # is a floor of the floor
        ref = math.exp(-T * lat.d) * float(exact_delta(p, q, T, eps + T * lat.d))
        assert got >= ref * (1 - 1e-6) - 1e-12


def _multinomial_delta(p, q, T, eps):
    """δ_{P‖Q} of (P^T, Q^T) at ε for a 3-atom pair, summed over the multinomial counts
    (log-space weights; every term non-negative)."""
    from scipy.special import gammaln
    L = np.log(p / q)
    tot = 0.0
    for i in range(T + 1):
        j = np.arange(T - i + 1)
        k = T - i - j
        lw = (gammaln(T + 1) - gammaln(i + 1) - gammaln(j + 1) - gammaln(k + 1)
              + i * math.log(p[0]) + j * math.log(p[1]) + k * math.log(p[2]))
        S = i * L[0] + j * L[1] + k * L[2]
        m = S > eps
        tot += float(np.sum(np.exp(lw[m]) * -np.expm1(eps - S[m])))
    return tot


def test_floor_with_a_window_and_aliasing_stays_below():
    """Hundreds of rounds (the tilted window is shorter than the support, so the circular
    convolution aliases mass onto it, which the floor subtracts): below the exact value
    (multinomial sum) and within a few percent of it, down to δ ~ 1e-8."""
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.3, 0.3, 0.4])
    L = np.log(p / q)
    mu, sd = float(np.sum(p * L)), math.sqrt(float(np.sum(p * L * L) - np.sum(p * L) ** 2))
    lat = pf.floor_lattice(np.log(p), np.log(q), 1e-4)
    for T in (300, 600):
        assert pf._Tilt(lat, T, mu * T / lat.d).L < T * (lat.q.size - 1) + 1   # a window
        for z in (1.0, 3.0, 5.0):
            eps = mu * T + z * sd * math.sqrt(T)
            exact = _multinomial_delta(p, q, T, eps)
            lo = pf.composed_delta_floor(lat, T, eps)
            assert lo <= exact * (1 + 1e-9)
            assert lo >= 0.9 * exact


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 6), T=st.sampled_from([3, 50, 2000, 10**5]),
       delta=st.sampled_from([1e-3, 1e-6, 1e-10]))
def test_steered_search_returns_a_checked_and_near_smallest_end(seed, k, T, delta):
    # The Newton / chord steps from the fast form's root must land on an ε where the
    # certified value holds, not above the previous geometric stepping's end, and (when
    # the allowances are small) not above the smallest such ε by more than ~1e-9 of it.
    rng = np.random.default_rng(seed)
    a, b = _pair(rng, k)
    lat = pf.loss_lattice(_logs(a), _logs(b), None)
    tilt = pf._Tilt(lat, T, pf._start_centre(lat, T, delta))
    lo = max(0.0, lat.d * (tilt.s_lo - 1))
    hi = lat.d * tilt.s_hi
    if tilt.delta_finite(hi)[0] > delta or tilt.delta_finite(lo)[0] <= delta:
        return                                   # the root is outside this window
    e = pf._search_steered(tilt, delta, lo, hi)
    exact = (lambda x: tilt.delta_finite(x)[0])
    assert exact(e) <= delta
    # never above the previous method (geometric steps up from the fast root + bisection)
    fast = tilt.steer(lo)
    if fast is None:                             # no fast form: plain certified bisection
        return
    e_fast = pf._search(fast, delta, lo, hi, certify=False)
    assert e <= pf._step_up(exact, delta, e_fast, hi) * (1 + 1e-10)
    below = e * (1.0 - 2e-9)
    if below > lo and exact(e_fast) <= 1.01 * delta:
        assert exact(below) > delta
