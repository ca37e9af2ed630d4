"""ψ's coefficients kept per (λ, γ) and read as a prefix for fewer terms
(``rdp_series._psi_even``) are the floats of each call's own recurrence, and the series
sums that read them are those of the frozen code, whatever order the term counts come in."""

from __future__ import annotations

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs.clone import rdp_series as RS
from shuffledp.pairs.trimmed import trimmed_pair


def psi_ref(lam, gamma, kmax):
    """The recurrence of ``_psi_even`` as first written (numpy entries, one call)."""
    c = np.zeros(2 * kmax + 1)
    c[0] = 1.0
    c[1] = (2 * lam - 1) * gamma
    c[2] = 2.0 * lam * (lam - 1) * gamma * gamma
    a = 2.0 * lam - 1.0
    for j in range(2, 2 * kmax):
        c[j + 1] = gamma * (a * c[j] + (j - 2) * gamma * c[j - 1]) / (j + 1)
    return c[2::2]


@pytest.mark.parametrize("order", [(64, 16, 32), (16, 32, 64), (32, 16, 64, 16), (16,), (64,)])
def test_prefix_reads_are_the_recurrence(order):
    sd.clear_caches()
    rng = np.random.default_rng(len(order))
    for lam in (2, 3, 17, 110, 1000):
        gamma = float(rng.uniform(0.05, 0.999))
        for kmax in order:
            got = RS._psi_even(lam, gamma, kmax)
            ref = psi_ref(lam, gamma, kmax)
            assert got.shape == ref.shape and got.strides == ref.strides
            assert np.array_equal(got, ref)
            assert not got.flags.writeable


def test_series_sums_after_prefix_reads_are_unchanged():
    # the window's matrix-vector product on a prefix view gives the frozen floats
    sd.clear_caches()
    pair = trimmed_pair(10**6, 2.0, 4.6)[0]
    cs = RS._rdp_window(pair.n, pair.p, 20.0)[0]
    s_lo, s_hi = int(cs[0]) + 1, int(cs[-1]) + 1
    for lam in (5, 60, 118):
        RS._psi_even(lam, pair.gamma, 64)                 # the longest first
        for kmax in (16, 32):
            mu, log_top = RS._moments_rows(s_lo, s_hi, kmax + 1)
            assert np.array_equal(mu @ RS._psi_even(lam, pair.gamma, kmax),
                                  mu @ psi_ref(lam, pair.gamma, kmax))


def _windows(seed=3):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < 12:
        pair = trimmed_pair(int(10 ** rng.uniform(5, 6)), float(rng.uniform(0.8, 6.0)),
                            float(rng.uniform(1.0, 6.0)))[0]
        if pair is not None and pair.a > pair.b and (pair.n - 1) * pair.p > 200:
            out.append((pair, int(rng.choice([2, 3, 5, 9, 16, 30, 60, 118])),
                        int(rng.choice([16, 32, 64]))))
    return out


def _eval_both(pair, lam, kmax):
    from test_rdp_series_same_floats import _series_eval_ref
    s, mu, log_top = RS._series_moments(pair.n, pair.p, 20.0, kmax)
    return (RS._series_eval(pair, lam, kmax, s, mu, log_top),
            _series_eval_ref(pair, lam, kmax, s, mu, log_top))


def test_dominated_remainder_rows_change_no_float(monkeypatch):
    # rows left out of the remainder's minimum (``_dominated_rows``) never held it
    sd.clear_caches()
    seen = []
    orig = RS._dominated_rows
    monkeypatch.setattr(RS, "_dominated_rows", lambda *a: seen.append(orig(*a)) or seen[-1])
    for pair, lam, kmax in _windows():
        (v, r), (v0, r0) = _eval_both(pair, lam, kmax)
        assert np.array_equal(v, v0) and np.array_equal(r, r0)
    assert sum(any(x) for x in seen) >= 3          # the skip is exercised


def test_a_wrong_skip_is_caught(monkeypatch):
    # leaving out rows that are not dominated changes the remainder: the check above can fail
    sd.clear_caches()
    monkeypatch.setattr(RS, "_dominated_rows", lambda fixed, part, lt: [False] + [True] * (fixed.size - 1))
    diff = 0
    for pair, lam, kmax in _windows():
        (v, r), (v0, r0) = _eval_both(pair, lam, kmax)
        diff += not np.array_equal(r, r0)
    assert diff > 0
