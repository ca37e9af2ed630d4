"""The closed-form floor on a clone pair's D(2) (``bounds.sampled.clone_d2_floor``) and the
sampled bounds' RDP view that uses it to skip the unsampled pair's sums."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.bounds import get
from shuffledp.bounds.sampled import clone_d2_floor
from shuffledp.pairs import clone as cp


def _exact_d2(n, p, eps0):
    """D_2(P ‖ Q) of the clone pair by enumeration in mpmath (50 digits): C ~ Bin(n − 1, p)
    clones, A | C ~ Bin(C, ½), the victim adds a 0 w.p. α under P (a 1 under Q)."""
    mpmath.mp.dps = 50
    p = mpmath.mpf(p)
    al = mpmath.e ** eps0 / (1 + mpmath.e ** eps0)
    be = 1 - al
    tot = mpmath.mpf(0)
    for c in range(n):
        wc = mpmath.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
        half = [mpmath.binomial(c, x) / mpmath.mpf(2) ** c for x in range(c + 1)]
        for x in range(c + 2):                  # x 0-reports among the c + 1
            lo = half[x - 1] if x >= 1 else 0   # victim 0, x − 1 of the clones
            hi = half[x] if x <= c else 0       # victim 1, x of the clones
            P = al * lo + be * hi
            Q = be * lo + al * hi
            tot += wc * P * P / Q
    return float(mpmath.log(tot))


@pytest.mark.parametrize("n,eps0", [(2, 0.5), (7, 1.0), (30, 0.2), (30, 3.0), (60, 1.0)])
def test_floor_is_below_the_exact_divergence(n, eps0):
    p = math.exp(-eps0)
    pair = cp.ClonePair(n, p, math.exp(eps0) / (1 + math.exp(eps0)),
                        1 / (1 + math.exp(eps0)), log_odds=eps0)
    exact = _exact_d2(n, p, eps0)
    fl = clone_d2_floor(pair)
    assert 0.0 < fl <= exact
    if eps0 <= 1.0:
        assert fl > 0.5 * exact                # not a vacuous floor


@pytest.mark.parametrize("n,eps0", [(10**4, 1.0), (10**6, 0.3), (10**6, 4.0)])
def test_floor_is_below_the_computed_curve(n, eps0):
    pair = get("fmt20").pair(sd.Shuffle(sd.LDP(eps0), n))
    d2 = float(pair.rdp(np.array([2]))[0])
    fl = clone_d2_floor(pair)
    assert fl <= d2
    assert fl > 0.9 * d2


@pytest.mark.parametrize("rate", [0.01, 0.3, 0.95])
def test_sampled_view_is_the_per_order_minimum(rate):
    proto = sd.Shuffle(sd.LDP(1.0), 10**5, sampling=sd.CheckIn(rate))
    b = get("fmt20-sampled")
    orders = np.array([2, 3, 5, 8, 16])
    want = np.minimum(b.hidden(proto).rdp(orders), b.base_pair(proto).rdp(orders))
    assert np.array_equal(b.rdp(proto, orders), want)
