"""What keeps a sweep point cheap without changing its answer (docs/scale.md, "Measured"):
the clone bounds run their PLD route first, and the costly routes (RDP of the exact pair,
KOV15's split search) are skipped only when a proven floor on their value is at or above
a value already certified."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp import conversions as C
from shuffledp.bounds import get
from shuffledp.bounds.clones import rdp_conversion_floor
from shuffledp.views import EpsilonAt


def _rr_atoms(eps):
    """Binary randomized response: P = (e^ε, 1)/(e^ε + 1), Q reversed."""
    lp = np.array([eps, 0.0]) - math.log1p(math.exp(eps))
    return lp, lp[::-1].copy()


def _rr_rdp(eps):
    """D_λ of binary randomized response, in closed form (Mironov 2017, Prop. 5)."""
    lp, lq = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))   # log p, log(1 − p)

    def curve(orders):
        lam = np.asarray(orders, dtype=float)
        return np.logaddexp(lam * lp + (1 - lam) * lq, lam * lq + (1 - lam) * lp) / (lam - 1)
    return curve


@pytest.mark.parametrize("eps,T,delta", [(0.1, 10, 1e-6), (0.5, 1000, 1e-6), (1.0, 3, 1e-9),
                                         (0.02, 10**5, 1e-5)])
def test_rdp_floor_is_below_the_conversion_of_the_exact_curve_and_close_to_it(eps, T, delta):
    """Independent check on randomized response, whose RDP curve is a closed form: the
    floor never exceeds the RDP route's ε (search over the exact curve), and is within 2 %
    of it (tight enough to skip the route when another is 2 % better)."""
    lp, lq = _rr_atoms(eps)
    top = 100_000
    route = C.search_epsilon(_rr_rdp(eps), delta, T, max_order=top).value
    assert rdp_conversion_floor(lp, lq, T, delta, route * (1 + 1e-6), top) is None
    fl = rdp_conversion_floor(lp, lq, T, delta, 0.98 * route, top)
    assert fl is not None and 0.98 * route <= fl <= route


def test_rdp_floor_with_atoms_left_out_stays_below():
    """Sub-probability atoms (a window of a pair) only lower the floor."""
    lp, lq = _rr_atoms(0.5)
    route = C.search_epsilon(_rr_rdp(0.5), 1e-6, 100, max_order=10**5).value
    fl = rdp_conversion_floor(lp[:1], lq[:1], 100, 1e-6, 1e-3, 10**5)
    assert fl is not None and fl <= route


@pytest.mark.parametrize("eps0,n,T", [(1.0, 3000, 10), (4.0, 10**4, 100)])
def test_clone_rdp_route_floor_is_below_the_route(eps0, n, T):
    """fmt20's RDP-route floor (from a pair its clone pair dominates) against the route's
    own value computed in full: never above it, and above 98 % of it."""
    b = get("fmt20")
    p = sd.Shuffle(sd.LDP(eps0), n)
    route = b.answer(p, EpsilonAt(1e-6), T, "rdp").value
    assert b._rdp_route_floor(p, 1e-6, T, route * (1 + 1e-6)) is None
    fl = b._rdp_route_floor(p, 1e-6, T, 0.98 * route)
    assert fl is not None and fl <= route


def test_fmt20_skips_costly_routes_only_when_they_cannot_win():
    """Several rounds: PLD runs first; RDP and KOV15 are reported as skipped, and each,
    asked by name, is indeed at or above the answer."""
    p = sd.Shuffle(sd.LDP(1.0), 10**4)
    r = sd.epsilon(p, 1e-6, rounds=10, bound="fmt20")
    assert r.composition == "pld"
    skipped = r.chosen.details["routes_skipped"]
    assert set(skipped) >= {"rdp", "kov15"}
    for route in ("rdp", "kov15"):
        assert "cannot beat" in skipped[route]
        named = sd.epsilon(p, 1e-6, rounds=10, bound="fmt20", composition=route).epsilon
        assert named >= r.epsilon


def test_pld_atoms_are_built_once_per_pair_and_read_only():
    """A protocol asked at several round counts reuses its PLD atoms (a sweep's points of one
    protocol); they are shared, so they cannot be written to."""
    from shuffledp.pairs.clone import fmt20_pair
    pair = fmt20_pair(1.0, 3000)
    a = pair.pld_atoms()
    assert pair.pld_atoms() is a
    with pytest.raises(ValueError):
        a[0][0] = 0.0
