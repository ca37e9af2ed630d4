"""``rounding.product_error`` (Dekker's TwoProduct) against exact rationals, and the
binomial log-pmf's residuals through it against the ``Fraction`` path they replaced."""

from fractions import Fraction

import numpy as np
import pytest

from shuffledp.numerics import binomial as B
from shuffledp.numerics.rounding import product_error


def _exact(x, f):
    return float(Fraction(x) * Fraction(f) - Fraction(x * f))


@pytest.mark.parametrize("seed", [0, 1])
def test_product_error_is_the_exact_residual(seed):
    rng = np.random.default_rng(seed)
    x = np.floor(np.exp(rng.uniform(0.0, np.log(2.0 ** 53), 4000)))
    x = np.concatenate([x, [1.0, 2.0 ** 53 - 1, 2.0 ** 52 + 1, 1e12, 999_999_999.0]])
    for f in [*rng.random(25), 0.5, 1.0 - 2.0 ** -53, 2.0 ** -60, 1e-200, 0.1, 1.0 / 3.0]:
        got = product_error(x, f)
        assert got is not None
        want = np.array([_exact(float(v), float(f)) for v in x])
        assert np.array_equal(got, want), f


def test_product_error_declines_where_it_could_underflow():
    assert product_error(np.array([1.0, 3.0]), 1e-300) is None
    assert product_error(np.array([np.inf]), 0.5) is None
    # a product of non-zero factors that underflows to 0 (its residual is not 0)
    assert product_error(np.array([5e-324, 2.0]), 0.3) is None
    # exact zeros are fine: their residual is 0
    assert np.array_equal(product_error(np.array([0.0, 7.0]), 0.3), [0.0, _exact(7.0, 0.3)])
    # the comparison can fail: a residual taken without the splitting (x·f − fl(x·f) in
    # floating point, i.e. 0) differs from the exact one
    x = np.array([12345.0, 987654321.0])
    naive = x * 0.3 - x * 0.3
    assert not np.array_equal(naive, [_exact(v, 0.3) for v in x])


def test_binomial_logpmf_same_floats_as_fraction_residuals(monkeypatch):
    rng = np.random.default_rng(3)
    n = np.floor(np.exp(rng.uniform(np.log(1e3), np.log(1e12), 3000)))
    k = np.floor(n * 0.37 + rng.normal(0.0, 1.0, n.size) * np.sqrt(n))
    p = 0.37000000000000005
    fast = B.binom_logpmf_pairs(k, n, p)
    one = B.binom_logpmf_pairs(k[:1], float(n[0]), p)
    monkeypatch.setattr(B, "product_error", lambda x, f: None)
    slow = B.binom_logpmf_pairs(k, n, p)
    assert np.array_equal(fast, slow)
    assert np.array_equal(one, B.binom_logpmf_pairs(k[:1], float(n[0]), p))
