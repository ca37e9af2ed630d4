"""The PLD route's ∞ from the charged tails alone is found before any grid is built, and
it is the ∞ the grid would find: 1 − (1 − tail)^T at loss +∞ bounds δ(ε) from below."""

import math

import numpy as np

from shuffledp.compose import composition as C


def _pair():
    # binary randomized response at eps0 = 1 with a small truncated tail
    a = math.e / (1 + math.e)
    lp = np.log(np.array([a, 1 - a]))
    lq = np.log(np.array([1 - a, a]))
    return lp, lq


def test_tail_shortcut_agrees_with_the_grid_on_both_sides_of_the_threshold():
    lp, lq = _pair()
    tail, T = 1e-9, 1000
    thr = -math.expm1(T * math.log1p(-tail))          # 1 - (1 - tail)^T ~ 1e-6
    orig = C._tails_alone_exceed
    for d in (0.5 * thr, 0.999 * thr, 1.001 * thr, 2.0 * thr):
        try:
            C._tails_alone_exceed = lambda *a: False
            slow = C.pld_epsilon(lp, lq, T, d, extra_delta=tail, symmetric=True)[0]
        finally:
            C._tails_alone_exceed = orig
        fast, det = C.pld_epsilon(lp, lq, T, d, extra_delta=tail, symmetric=True)
        assert fast == slow
        assert math.isinf(fast) == (d < thr)
        if d < thr:
            assert "no grid was built" in det["reason"]


def test_no_tail_never_shortcuts():
    assert not C._tails_alone_exceed(0.0, 10**6, 1e-300)
    assert C._tails_alone_exceed(1e-17, 10**6, 1e-12)
    assert not C._tails_alone_exceed(1e-19, 10**6, 1e-12)
