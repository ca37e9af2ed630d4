"""numerics/binomial_batch.py: the fast paths give the SAME floats as numerics/binomial.py."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.numerics.binomial import half_binom_logpmf, half_binom_pmf_walk
from shuffledp.numerics.binomial_batch import half_binom_logpmf_fast, half_binom_pmf_walk_fast


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("seed", range(6))
def test_logpmf_bit_identical(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        size = int(rng.integers(1, 400))
        cmax = 10 ** rng.uniform(0.5, 9)
        # half the draws far from c = 0 (the fast path's interior), half anywhere
        c = np.floor(rng.uniform(0 if rng.random() < 0.5 else cmax / 2, cmax, size))
        # thresholds near the mean (the kernel's), in the tails, at and outside the edges
        spread = rng.choice([0.5, 3.0, 10.0, 60.0])
        k = np.round(0.5 * c + rng.normal(0, spread, size) * np.sqrt(c + 1))
        if rng.random() < 0.3:
            k[rng.integers(0, size)] = rng.choice([-1.0, 0.0, 31.0])
        assert _same(half_binom_logpmf_fast(k, c), half_binom_logpmf(k, c))


def test_logpmf_edges_pass_through():
    c = np.array([0.0, 5.0, 40.0, 100.0, 10.0**6])
    for k in (np.array([0.0, 5.0, 40.0, 0.0, 1.0]), np.array([-3.0, 2.0, 20.0, 31.0, 5e5]),
              np.array([1.0, 6.0, 41.0, 69.0, 5e5 + 4000])):
        assert _same(half_binom_logpmf_fast(k, c), half_binom_logpmf(k, c))
    assert _same(half_binom_logpmf_fast(3.0, 10.0), half_binom_logpmf(3.0, 10.0))
    assert _same(half_binom_logpmf_fast(np.zeros(0), np.zeros(0)),
                 half_binom_logpmf(np.zeros(0), np.zeros(0)))


@pytest.mark.parametrize("c0,q,size", [(0, 0.5, 500), (200, 0.52, 3000), (10**5, 0.7, 5000),
                                       (10**7, 0.5001, 20000), (3, 0.9, 100)])
def test_walk_bit_identical(c0, q, size):
    c = np.arange(c0, c0 + size, dtype=float)
    k = np.floor(q * (c + 1))
    assert _same(half_binom_pmf_walk_fast(c, k), half_binom_pmf_walk(c, k))
    # not a walk: both refuse
    k2 = k.copy()
    k2[size // 2] += 3
    assert half_binom_pmf_walk_fast(c, k2) is None and half_binom_pmf_walk(c, k2) is None
