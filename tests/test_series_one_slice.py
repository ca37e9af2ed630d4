"""The series' one-slice checks in Python floats (``rdp_series._one_slice``): within 1e-12
relative of the numpy row on the exact moments, and the decisions of ``_first_slice_fails``
and ``_top_hopeless`` are those of the exact row (frozen here as before session 20)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.pairs.clone import fmt20_pair
from shuffledp.pairs.clone import rdp_series as RS
from shuffledp.pairs.trimmed import trimmed_pair


def _cases(seed=20, count=60):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        e0 = float(rng.uniform(0.2, 8.0))
        if len(out) % 3 == 2:
            pair = fmt20_pair(e0, int(10 ** rng.uniform(3, 9)))
        else:
            pair = trimmed_pair(int(10 ** rng.uniform(3, 6)), float(rng.uniform(0.5, 8.0)), e0)[0]
        if pair is None or not pair.a > pair.b:
            continue
        lam = int(rng.choice([2, 3, 5, 9, 17, 40, 64, 118, 300, 1000]))
        kmax = int(rng.choice(RS._SERIES_TERMS))
        s = int(10 ** rng.uniform(0.3, 6.5)) + 1
        out.append((pair, lam, kmax, s))
    return out


def _exact_row(pair, lam, kmax, s):
    mu, log_top = RS._moments_rows(s, s, kmax + 1)
    val, rem = RS._series_eval(pair, lam, kmax, np.array([float(s)]), mu, log_top)
    return float(val[0]), float(rem[0])


def _fails_ref(pair, lam, kmax, s):
    """``_first_slice_fails`` as it was: the exact one-row moments."""
    v, r = _exact_row(pair, lam, kmax, s)
    return r > RS._SERIES_TOL * v * (1.0 + RS._FAIL_MARGIN)


@pytest.mark.parametrize("pair,lam,kmax,s", _cases())
def test_one_slice_is_the_numpy_row(pair, lam, kmax, s):
    v, r = _exact_row(pair, lam, kmax, s)
    got = RS._one_slice(pair, lam, kmax, float(s))
    if got is None:
        assert not (math.isfinite(v) and math.isfinite(r) and v > 0.0)
        return
    assert got[0] == pytest.approx(v, rel=1e-12)
    assert got[1] == pytest.approx(r, rel=1e-12, abs=1e-300)
    assert RS._first_slice_fails(pair, lam, s, kmax) == _fails_ref(pair, lam, kmax, s)


def test_the_checks_decide_as_the_exact_row():
    n_fail = 0
    for pair, lam, kmax, s in _cases(seed=7, count=150):
        if RS._first_slice_fails(pair, lam, s, kmax):
            n_fail += 1
            v, r = _exact_row(pair, lam, kmax, s)
            assert r > RS._SERIES_TOL * v                   # the window's first slice fails
        exact = RS._accepted_from(*RS._series_eval(pair, lam, RS._SERIES_TERMS[-1],
                                                    np.array([float(s)]),
                                                    *RS._top_moments(float(s)))) > 0
        assert RS._top_hopeless(pair, lam, float(s)) == exact
    assert 10 < n_fail < 140                                # both outcomes are exercised


def test_a_wrong_remainder_is_caught(monkeypatch):
    # a one-slice remainder 1 % off is caught by the comparison with the numpy row
    orig = RS._one_slice

    def off(*a):
        got = orig(*a)
        return None if got is None else (got[0], 1.01 * got[1])

    monkeypatch.setattr(RS, "_one_slice", off)
    pair, lam, kmax, s = next(c for c in _cases() if RS._one_slice(*c[:3], float(c[3])))
    assert RS._one_slice(pair, lam, kmax, float(s))[1] != pytest.approx(
        _exact_row(pair, lam, kmax, s)[1], rel=1e-12, abs=1e-300)
