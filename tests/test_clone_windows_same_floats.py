"""The clone pair's slice windows cut from the widest one formed (``rdp_points._window_core``)
hold the floats of each window's own evaluation (the code before: one ``binom_logpmf`` per
window), whatever order the windows are asked in and whatever the width hint."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.numerics import binom_logpmf, binom_window
from shuffledp.pairs.clone import rdp_points as RP
from shuffledp.pairs.clone.slices import _log_tails


def window_ref(n, p, K):
    """The previous ``_rdp_window``, frozen."""
    m = n - 1
    lo, hi = binom_window(m, p, K, 3)
    cs = np.arange(lo, hi + 1)
    logw = binom_logpmf(cs, m, p, 1.0 - p)
    log_below, log_above = _log_tails(m, p, lo, hi)
    return cs, np.exp(logw), log_below, log_above, logw


def _same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        else:
            assert x == y or (math.isnan(x) and math.isnan(y))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_windows_in_any_order_are_the_frozen_ones(seed):
    sd.clear_caches()
    rng = np.random.default_rng(seed)
    ns = [int(10 ** rng.uniform(2.5, 8.0)) for _ in range(3)]
    for _ in range(40):
        n = int(rng.choice(ns))
        p = float(math.exp(-rng.uniform(0.3, 9.0)))
        for K in rng.choice([3.0, 7.0, 9.0, 20.0, 24.0, 32.0, 36.0, 40.0, 56.0],
                            size=int(rng.integers(1, 5))):
            RP._rdp_window.cache_clear() if rng.random() < 0.3 else None
            got = RP._rdp_window(n, p, float(K))
            _same(got, window_ref(n, p, float(K)))
            cs, w, logw = RP._window_core(n, p, float(K))
            _same((cs, w, logw), (got[0], got[1], got[4]))
            for a in (cs, w, logw):
                assert not a.flags.writeable


def test_hint_widens_the_stored_window_only():
    sd.clear_caches()
    n = 10**6
    RP._window_core(n, 0.01, 40.0)                 # sets the hint for n
    cs, _, _ = RP._window_core(n, 0.0101, 20.0)
    lo, hi, *_ = RP._WIDE[(n, 0.0101)]
    lo40, hi40 = binom_window(n - 1, 0.0101, 40.0, 3)
    assert (lo, hi) == (lo40, hi40)                 # formed 40 sd wide at once
    assert (int(cs[0]), int(cs[-1])) == binom_window(n - 1, 0.0101, 20.0, 3)
    # a wide hint is not applied where the window would be large (n = 1e9)
    RP._window_core(10**9, 0.3, 40.0)
    RP._window_core(10**9, 0.31, 9.0)
    lo, hi, *_ = RP._WIDE[(10**9, 0.31)]
    assert (lo, hi) == binom_window(10**9 - 1, 0.31, 9.0, 3)
