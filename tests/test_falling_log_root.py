"""falling_log_root certifies δ(x) ≤ target itself, not log δ(x) ≤ log target."""

import math

import pytest

from shuffledp.numerics import falling_log_root, falling_root_certified
from shuffledp.numerics.search import log_gap

T = 1e-5
ABOVE = T * (1 + 4e-16)          # a few ulps above the target: the same log


def _delta(x):
    # non-increasing: well above the target, then a few ulps above it, then below
    return 2 * T if x < 0.3 else (ABOVE if x < 0.6 else T / 2)


def test_the_rounding_this_guards_against_happens():
    assert ABOVE > T and math.log(ABOVE) == math.log(T)


def test_log_gap_has_the_sign_of_d_minus_target():
    lt = math.log(T)
    assert log_gap(ABOVE, T, lt) > 0.0
    assert log_gap(T, T, lt) <= 0.0
    assert log_gap(math.nextafter(T, 0.0), T, lt) <= 0.0
    assert log_gap(0.0, T, lt) == -math.inf
    assert log_gap(2 * T, T, lt) == pytest.approx(math.log(2))
    assert log_gap(T / 2, T, lt) == pytest.approx(-math.log(2))


def test_certified_end_has_delta_at_most_target():
    x = falling_log_root(_delta, T, 0.0, 1.0, xtol=1e-12, rtol=1e-8)
    assert _delta(x) <= T
    assert 0.6 <= x <= 0.6 + 1e-7


def test_the_plain_log_difference_would_certify_a_delta_above_target():
    # the pattern falling_log_root replaced: sabotage check that the test above can fail
    lt = math.log(T)
    x = falling_root_certified(lambda e: math.log(_delta(e)) - lt, 0.0, 1.0, xtol=1e-12,
                               rtol=1e-8)
    assert _delta(x) > T
