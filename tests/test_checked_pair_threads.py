"""``compose.composition._checked_pair_new``: its two exponentials on two threads give the
floats of one thread, and its checks still name logp before logq."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.compose import composition as C


def _pair(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    return np.log(rng.dirichlet(np.ones(n))), np.log(rng.dirichlet(np.ones(n)))


def test_threaded_scan_same_floats(monkeypatch):
    lp, lq = _pair()
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    one = C._checked_pair_new(lp, lq, 0.0)[3]
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    monkeypatch.setattr(C, "_SCAN_THREADED", 10)
    two = C._checked_pair_new(lp, lq, 0.0)[3]
    for i in (0, 1):
        assert np.array_equal(one.exp(i), two.exp(i))
    assert np.array_equal(two.exp(0), np.exp(lp)) and not np.array_equal(two.exp(0), np.exp(lq))


@pytest.mark.parametrize("threshold", [10, 10**9])
def test_checks_name_logp_first(monkeypatch, threshold):
    monkeypatch.setattr(C, "_SCAN_THREADED", threshold)
    lp, lq = _pair(100)
    bad_p, bad_q = lp.copy(), lq.copy()
    bad_p[3], bad_q[5] = np.nan, 0.5
    with pytest.raises(ValueError, match=r"logp must hold .* NaN at index 3"):
        C._checked_pair_new(bad_p, bad_q, 0.0)
    with pytest.raises(ValueError, match=r"logq must hold .* got 0.5"):
        C._checked_pair_new(lp, bad_q, 0.0)
    with pytest.raises(ValueError, match=r"logp must sum"):
        C._checked_pair_new(lp + 0.1, lq, 0.0)
