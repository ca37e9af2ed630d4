"""The clone pair's Rényi series kernels (``pairs.clone.rdp_series``) give the floats of
their previous forms, kept here as frozen references (session 17: the remainder bound by
candidate rows, ψ's recurrence in Python floats, the moment window copied block by block,
the one-row Rademacher moments)."""

import math

import numpy as np
import pytest

from shuffledp.numerics import rademacher_log_moments
from shuffledp.pairs.clone import fmt20_pair
from shuffledp.pairs.clone import rdp_series as RS
from shuffledp.pairs.trimmed import trimmed_pair


def _psi_even_ref(lam, gamma, kmax):
    c = np.empty(2 * kmax + 1)
    c[0], c[1], c[2] = 1.0, (2 * lam - 1) * gamma, 2.0 * lam * (lam - 1) * gamma * gamma
    a = 2.0 * lam - 1.0
    for j in range(2, 2 * kmax):
        c[j + 1] = gamma * (a * c[j] + (j - 2) * gamma * c[j - 1]) / (j + 1)
    return c[2::2]


def _series_eval_ref(pair, lam, kmax, s, mu, log_top):
    a, b = pair.a, pair.b
    gamma = pair.gamma
    c = _psi_even_ref(lam, gamma, kmax)
    val = mu @ c
    J1 = 2 * (kmax + 1)
    log_psi_g = lam * math.log(2.0 * a / (a + b)) + (1 - lam) * math.log(2.0 * b / (a + b))
    fixed = np.array([1.0, 0.5, 0.25, 0.1, min(1.0, J1 / ((2 * lam - 1) * gamma))])
    full = s.size
    B = max(1, -(-full // RS._REM_POINTS))
    s, log_top = s[::B], log_top[::B]
    t_h = np.minimum(1.0, np.sqrt(2.0 * (max(log_psi_g, 0.0) + math.log(2.0) + 40.0) / s))
    ts = np.concatenate([np.broadcast_to(fixed, (s.size, fixed.size)), t_h[:, None]], axis=1)
    head = np.concatenate([fixed[None, :], t_h[:, None]], axis=None)
    rg = gamma * head
    with np.errstate(divide="ignore"):
        log_1m = np.log(2.0 * pair.beta + gamma * (1.0 - head))
    part = lam * np.log1p(rg) + (1 - lam) * log_1m - J1 * np.log(head)
    k = fixed.size
    t1 = np.empty(ts.shape)
    np.add(part[None, :k], log_top[:, None], out=t1[:, :k])
    np.add(part[k:], log_top, out=t1[:, k])
    t2 = log_psi_g + np.minimum(math.log(2.0) - 0.5 * s[:, None] * ts * ts, 0.0)
    t2 = np.where(ts >= 1.0, -np.inf, t2)
    with np.errstate(over="ignore"):
        tot = np.exp(t1)
        tot += np.exp(t2)
    rem = tot[:, 0].copy()
    for j in range(1, tot.shape[1]):
        np.minimum(rem, tot[:, j], out=rem)
    rem = rem + 2.3e-308 * float(c.sum())
    if B > 1:
        rem = np.repeat(rem, B)[:full]
    return val * (1.0 + RS._SERIES_SLACK), rem


def _moments_ref(s_lo, s_hi, kmax):
    R = RS._MOM_ROWS
    b_lo, b_hi = s_lo // R, s_hi // R
    if b_hi - b_lo + 1 > RS._MOM_BLOCKS // 2:
        lm = rademacher_log_moments(np.arange(s_lo, s_hi + 1, dtype=float), kmax)
        return np.exp(lm[:, :-1]), lm[:, -1]
    parts = []
    for b in range(b_lo, b_hi + 1):
        rows = np.arange(max(b * R, 1), (b + 1) * R, dtype=float)
        lm = rademacher_log_moments(rows, kmax)
        if b == 0:
            lm = np.concatenate([np.full((1, kmax), np.nan), lm])
        parts.append((np.exp(lm[:, :-1]), lm[:, -1].copy()))
    off = s_lo - b_lo * R
    rows = slice(off, off + (s_hi - s_lo + 1))
    return (np.concatenate([m for m, _ in parts])[rows],
            np.concatenate([t for _, t in parts])[rows])


def _rademacher_ref(s, kmax):
    from shuffledp.numerics.binomial import _even_partition_counts
    s = np.asarray(s, dtype=float).ravel()
    E = np.array([[float(v) for v in row] for row in _even_partition_counts(kmax)])
    n = s.size
    F = np.empty((n, kmax + 1), order="F")
    U = np.empty((n, kmax + 1), order="F")
    F[:, 0] = 1.0
    U[:, 0] = 1.0
    inv = 1.0 / s
    for j in range(1, kmax + 1):
        np.multiply(F[:, j - 1], np.maximum(1.0 - float(j - 1) / s, 0.0), out=F[:, j])
        np.multiply(U[:, j - 1], inv, out=U[:, j])
    logs = np.log(s)
    out = np.empty((n, kmax))
    buf = np.empty((n, kmax), order="F")
    with np.errstate(divide="ignore"):
        for k in range(1, kmax + 1):
            blk = buf[:, :k]
            np.multiply(F[:, 1:k + 1], U[:, k - 1::-1], out=blk)
            inner = blk @ E[k, 1:k + 1]
            out[:, k - 1] = np.log(inner) - k * logs
    return out


def _pairs():
    rng = np.random.default_rng(17)
    out = []
    while len(out) < 14:
        n = int(10 ** rng.uniform(2, 9))
        e0 = float(rng.uniform(0.1, 8.0))
        if len(out) % 2:
            pair = fmt20_pair(e0, n)
        else:
            pair = trimmed_pair(min(n, 10**6), float(rng.uniform(0.5, 8.0)), e0)[0]
        if pair is not None and pair.a > pair.b:
            lam = int(rng.choice([2, 3, 5, 17, 64, 118, 300, 1000, 4000]))
            kmax = int(rng.choice([16, 32, 64]))
            out.append((pair, lam, kmax))
    return out


@pytest.mark.parametrize("pair,lam,kmax", _pairs())
def test_series_eval_same_floats(pair, lam, kmax):
    assert np.array_equal(RS._psi_even(lam, pair.gamma, kmax), _psi_even_ref(lam, pair.gamma, kmax))
    for K in (8.0, 20.0):
        cs = RS._rdp_window(pair.n, pair.p, K)[0]
        s_lo, s_hi = int(cs[0]) + 1, int(cs[-1]) + 1
        RS._MOM_CACHE.clear()
        mu, log_top = RS._moments_rows(s_lo, s_hi, kmax + 1)
        mu_r, top_r = _moments_ref(s_lo, s_hi, kmax + 1)
        assert np.array_equal(mu, mu_r) and np.array_equal(log_top, top_r)
        s = (cs + 1).astype(float)
        for sl in (slice(None), slice(0, 1), slice(-1, None), slice(3, 67), slice(0, 130)):
            got = RS._series_eval(pair, lam, kmax, s[sl], mu[sl], log_top[sl])
            want = _series_eval_ref(pair, lam, kmax, s[sl], mu_r[sl], top_r[sl])
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("kmax", [5, 17, 33, 65])
def test_rademacher_log_moments_same_floats(kmax):
    rng = np.random.default_rng(kmax)
    for s in [np.array([1.0]), np.array([2.0]), np.array([float(kmax)]),
              np.array([float(rng.integers(1, 10**8))]), np.arange(1.0, 1025.0),
              np.arange(70000.0, 71024.0), rng.integers(1, 10**9, 50).astype(float),
              rng.integers(1, 10**6, 5).astype(float), np.arange(1.0, 9.0)]:
        assert np.array_equal(rademacher_log_moments(s, kmax), _rademacher_ref(s, kmax),
                              equal_nan=True)


def test_hoeffding_underflow_is_zero():
    # _series_eval leaves out e^x for x <= -746: it must be +0.0 exactly.
    x = np.linspace(-1000.0, -746.0, 200001)
    assert np.all(np.exp(x) == 0.0)
