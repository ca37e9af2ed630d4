"""The clone pairs' δ(ε) kernels (pairs/clone/hockey.py, slices.py) after the issue-30 work:
each entry's value does not depend on the batch it is computed in (repeated entries are
summed once), and the tails stay certified against mpmath."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from shuffledp.pairs.clone.hockey import conditional_hockey
from shuffledp.pairs.clone.slices import _belows, _half_sf, _tails


def _mp_half_sf(m, c):
    mp.mp.dps = 40
    return mp.fsum(mp.binomial(c, k) for k in range(max(m, 0), c + 1)) / mp.mpf(2) ** c


@pytest.mark.parametrize("seed", range(3))
def test_half_sf_repeated_entries_same_as_alone(seed):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3 * 10**5, 40)
    m = np.round(c * rng.uniform(0.3, 0.8, 40)).astype(np.int64)
    reps = rng.integers(0, 40, 400)                       # many repeats: the dedup path
    batch = _half_sf(m[reps], c[reps])
    alone = np.array([_half_sf(m[i:i + 1], c[i:i + 1])[0] for i in range(40)])
    assert np.array_equal(batch, alone[reps])


@pytest.mark.parametrize("m,c", [(60, 100), (500, 1000), (1600, 3000), (1450, 3000), (0, 7),
                                 (8, 7)])
def test_half_sf_against_mpmath(m, c):
    ref = _mp_half_sf(m, c)
    v = _half_sf(np.array([m] * 20), np.array([c] * 20))
    assert np.all(v == v[0])
    assert abs(v[0] - ref) <= 1e-11 * ref + 1e-300


def test_conditional_hockey_entries_independent_of_batch():
    rng = np.random.default_rng(7)
    c = np.sort(rng.integers(0, 20000, 300))
    lo = rng.uniform(0.01, 5.0, 300)
    alpha, beta, gamma = 1 / (1 + np.exp(-lo)), 1 / (1 + np.exp(lo)), np.tanh(lo / 2)
    for eps in (0.0, 0.05, 1.0):
        h, e = conditional_hockey(c, alpha, eps, True, beta=beta, gamma=gamma)
        for i in (0, 17, 150, 299):
            hi, ei = conditional_hockey(c[i:i + 1], alpha[i:i + 1], eps, True, beta=beta[i:i + 1],
                                        gamma=gamma[i:i + 1])
            assert hi[0] == h[i] and ei[0] == e[i]


@pytest.mark.parametrize("m,p", [(5000, 0.1), (2 * 10**6, 0.01)])
def test_belows_are_the_tails_one_by_one(m, p):
    tops = [400, 300, 120, 1]
    assert np.array_equal(_belows(m, p, tops), [_tails(m, p, t, m)[0] for t in tops])
    ref = mp.fsum(mp.binomial(m, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (m - k)
                  for k in range(0, 300)) if m < 10**4 else None
    if ref is not None:
        assert _belows(m, p, [300])[0] >= ref
