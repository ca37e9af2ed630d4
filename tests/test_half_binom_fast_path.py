"""numerics/binomial.py: ``half_binom_logpmf``'s mask-free path for interior entries (and
so ``half_binom_pmf_walk``'s heads) gives the SAME floats as the general masked form,
kept here as the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.numerics import binomial
from shuffledp.numerics.binomial import bd0, half_binom_logpmf, half_binom_pmf_walk, stirlerr


def _reference_logpmf(k, c):
    """The general masked form of ``half_binom_logpmf`` (before its interior fast path)."""
    k, c = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(c, dtype=float))
    out = np.full(k.shape, -np.inf)
    edge = ((k == 0) | (k == c)) & (c >= 0)
    out[edge] = -c[edge] * math.log(2.0)
    inner = (k > 0) & (k < c)
    if np.any(inner):
        ki, ci = k[inner], c[inner]
        nk = ci - ki
        half = 0.5 * ci
        out[inner] = (stirlerr(ci) - stirlerr(ki) - stirlerr(nk) - bd0(ki, half) - bd0(nk, half)
                      - 0.5 * np.log(2.0 * math.pi * ki * nk / ci))
    return out


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
        assert _same(half_binom_logpmf(k, c), _reference_logpmf(k, c))


def test_logpmf_edges_pass_through():
    c = np.array([0.0, 5.0, 40.0, 100.0, 10.0**6])
    for k in (np.array([0.0, 5.0, 40.0, 0.0, 1.0]), np.array([-3.0, 2.0, 20.0, 31.0, 5e5]),
              np.array([1.0, 6.0, 41.0, 69.0, 5e5 + 4000])):
        assert _same(half_binom_logpmf(k, c), _reference_logpmf(k, c))
    assert _same(half_binom_logpmf(3.0, 10.0), _reference_logpmf(3.0, 10.0))
    assert _same(half_binom_logpmf(np.zeros(0), np.zeros(0)),
                 _reference_logpmf(np.zeros(0), np.zeros(0)))


@pytest.mark.parametrize("c0,q,size", [(0, 0.5, 500), (200, 0.52, 3000), (10**5, 0.7, 5000),
                                       (10**7, 0.5001, 20000), (3, 0.9, 100)])
def test_walk_bit_identical(c0, q, size, monkeypatch):
    c = np.arange(c0, c0 + size, dtype=float)
    k = np.floor(q * (c + 1))
    got = half_binom_pmf_walk(c, k)
    k2 = k.copy()
    k2[size // 2] += 3
    # the same walk with its heads from the reference log-pmf
    monkeypatch.setattr(binomial, "half_binom_logpmf", _reference_logpmf)
    assert _same(got, half_binom_pmf_walk(c, k))
    # not a walk: refused
    assert half_binom_pmf_walk(c, k2) is None


def test_logpmf_fast_path_on_two_dimensional_interior():
    # broadcast 2-D input, every entry interior: the mask-free path, the same floats
    c = np.array([[100.0], [10.0**6], [10.0**9]])
    k = np.floor(0.5 * c + np.array([[-3.0, 0.0, 4.0]]) * np.sqrt(c))
    assert _same(half_binom_logpmf(k, c), _reference_logpmf(k, c))
