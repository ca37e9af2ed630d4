"""The PLD atoms' slice plan (session 20): the window's log-pmf in two halves gives the
floats of one call, and the plan without log masses holds the same arrays as the plan
with them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.numerics import binom_logpmf, binom_window
from shuffledp.pairs.clone import atoms as at
from shuffledp.pairs.clone import fmt20_pair, fmt23_pair
from shuffledp.pairs.clone import rdp_points as rp


@pytest.mark.parametrize("n", [10**8, 10**9, 2 * 10**9])
@pytest.mark.parametrize("eps0", [0.3, 1.0, 6.79])
@pytest.mark.parametrize("K", [7.0, 9.0, 13.0])
def test_window_halves_are_one_call(n, eps0, K):
    for p in (math.exp(-eps0), 2.0 / (math.exp(eps0) + 1.0)):
        m = n - 1
        lo, hi = binom_window(m, p, K, 3)
        cs = np.arange(lo, hi + 1)
        if cs.size < rp._SPLIT_SLICES or cs.size > 600_000:
            continue
        one = binom_logpmf(cs, m, p, 1.0 - p)
        got = rp._window_logpmf(cs, m, p)
        assert got.tobytes() == one.tobytes()


def test_split_check_can_fail():
    """A half evaluated at a different p is caught by the comparison above."""
    n, p = 10**9, math.exp(-1.0)
    m = n - 1
    lo, hi = binom_window(m, p, 9.0, 3)
    cs = np.arange(lo, hi + 1)
    h = cs.size // 2
    bad = np.concatenate([binom_logpmf(cs[:h], m, p, 1.0 - p),
                          binom_logpmf(cs[h:], m, p * (1 + 1e-15), 1.0 - p * (1 + 1e-15))])
    assert bad.tobytes() != binom_logpmf(cs, m, p, 1.0 - p).tobytes()


@pytest.mark.parametrize("pair", [fmt20_pair(1.0, 10**5), fmt20_pair(1.0, 10**9),
                                  fmt23_pair(2.1254, 5504710), fmt20_pair(6.7908, 332325324)],
                         ids=lambda p: f"n{p.n}")
def test_pld_plan_without_log_masses(pair):
    sd.clear_caches()
    plan = at._pld_plan(pair, at.PLD_MAX_ATOMS)
    sd.clear_caches()
    full = rp._rdp_plan(pair, at._PLD_SDS, None, at.PLD_MAX_ATOMS)
    assert plan[7] is None and full[7] is not None
    for i in (0, 1, 3, 4, 5, 8):
        assert plan[i].tobytes() == full[i].tobytes()
    assert plan[2] == full[2] and plan[6] == full[6]
