"""What keeps a sweep point cheap without changing its answer (docs/scale.md, "Measured"):
the clone bounds run their PLD route first, and the costly routes (RDP of the exact pair,
KOV15's split search) are skipped only when a proven floor on their value is at or above
a value already certified."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.compose import conversions as C
from shuffledp import compose as composers
from shuffledp.core.views import EpsilonAt, RdpView


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


def _rr_parts(eps, top, rounds):
    """One entry whose RDP view is randomized response's exact curve, its own floor."""
    curve = _rr_rdp(eps)
    view = SimpleNamespace(kind="upper", rdp=RdpView(curve, top, "dense", floor=curve))
    return [(view, rounds)]


@pytest.mark.parametrize("eps,T,delta", [(0.1, 10, 1e-6), (0.5, 1000, 1e-6), (1.0, 3, 1e-9),
                                         (0.02, 10**5, 1e-5)])
def test_rdp_composer_floor_is_below_the_conversion_of_the_exact_curve(eps, T, delta):
    """Independent check on randomized response, whose RDP curve is a closed form: the RDP
    composer's floor (``RdpComposer.floor``, from a lower curve that here is the exact
    curve itself) never exceeds the RDP route's ε (the order search over the exact curve),
    and is within 10 % of it."""
    top = 100_000
    route = C.search_epsilon(_rr_rdp(eps), delta, T, max_order=top).value
    fl = composers.get("rdp").floor(_rr_parts(eps, top, T), EpsilonAt(delta), route)
    assert fl is not None and 0.9 * route <= fl <= route


def test_rdp_composer_floor_below_a_lower_curve_stays_below():
    """A floor curve below the exact one (half of it) only lowers the composer's floor."""
    top, T = 10**5, 100
    route = C.search_epsilon(_rr_rdp(0.5), 1e-6, T, max_order=top).value
    curve = _rr_rdp(0.5)
    view = SimpleNamespace(kind="upper",
                           rdp=RdpView(curve, top, "dense", floor=lambda o: 0.5 * curve(o)))
    fl = composers.get("rdp").floor([(view, T)], EpsilonAt(1e-6), route)
    assert fl is None or fl <= route


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
