"""The check-in Gaussian's ε0 search (session 19): its faster forms give the same floats.

The runs of check-in cells whose threshold holds are carried several at a time
(``pairs.hidden._still_blocks_log_cdf``, the stacked ``_still_runs_log_cdf`` and the
all-still branch of ``_segments_log_cdf``). The reference here is the general path of
``_runs_log_cdf`` (``still_path=False``: the pmf steps taken, all zero) on one run at a time,
which does not go through any of them.
"""

import math

import numpy as np
import pytest

from shuffledp.pairs import hidden as sp
from shuffledp.pairs.trimmed import trimmed_hidden


def _one_run_at_a_time(N, q, K, F0, base, segs):
    """``_path_log_cdf_upper``'s values on ``segs`` from the general path, run by run."""
    lp = math.log1p(-q)
    out = {}
    for i, (j, r0, r1) in enumerate(segs):
        m = r1 - r0
        if m == 1:
            out[(j, r0)] = np.array([math.log(min(float(F0[i]), 1.0) + 1e-300)])
            continue
        out[(j, r0)] = sp._runs_log_cdf(N[None, r0:r1], K[None, r0:r1, j], np.array([m]), q, lp,
                                        np.array([float(F0[i])]), np.array([float(base[i])]),
                                        still_path=False)[0]
    return out


def _check_path(N, q, K, ranking):
    """``_path_log_cdf_upper`` against the one-run-at-a-time general path, bit for bit, with
    the same segment starts (captured from the function itself)."""
    got = sp._path_log_cdf_upper(N, q, K, ranking)
    R, J = K.shape
    # the segments as ``_path_log_cdf_upper`` forms them (all rows regular here)
    first = np.ones((R, J), dtype=bool)
    first[1:] = (K[1:] - K[:-1]) < -2
    segs = []
    for j in range(J):
        st = np.flatnonzero(first[:, j]).tolist()
        segs += [(j, a, b) for a, b in zip(st, st[1:] + [R])]
    sj = np.array([x[0] for x in segs])
    s0 = np.array([x[1] for x in segs])
    kk = K[s0, sj]
    if ranking:
        from scipy import special
        F0 = np.minimum(1.0, special.betainc(N[s0] - kk, kk + 1.0, 1.0 - q) * (1.0 + 1e-9))
    else:
        from shuffledp.numerics import binom_cdf_bounds_many
        F0 = binom_cdf_bounds_many(kk, N[s0], q)[1]
    from shuffledp.numerics import binom_logpmf_pairs
    base = binom_logpmf_pairs(kk, N[np.minimum(s0 + 1, R - 1)], q)
    want = _one_run_at_a_time(N, q, K, F0, base, segs)
    for (j, r0, r1) in segs:
        assert np.array_equal(got[r0:r1, j], want[(j, r0)]), (j, r0, r1)


def _block_thresholds(n_rows, block, q, N, drift=0):
    """K of blocks of ``block`` rows, each block's six thresholds held (falling by more
    than 2 from block to block, as the cells' edges do); ``drift`` > 0 moves one column's
    threshold by 1 every ``drift`` rows inside the blocks (a moving run)."""
    z = np.array([-12.0, -4.0, -2.5, -1.5, -0.75, 0.0])
    starts = np.arange(0, n_rows, block)
    ends = np.minimum(starts + block, n_rows) - 1
    sd_b = np.sqrt(N[starts] * q * (1.0 - q))
    edges = np.maximum(0.0, np.floor(N[ends, None] * q + z[None, :] * sd_b[:, None]))
    K = edges[np.repeat(np.arange(starts.size), ends - starts + 1)] - 1.0
    if drift:
        K[:, 2] -= (np.arange(n_rows) % block) // drift
    return K


@pytest.mark.parametrize("n0,rows,block,q,ranking", [
    (10**9, 6000, 3000, 0.9, "sampled"),       # long still runs: blocks stacked
    (10**9, 6000, 3000, 0.9, False),           # the certified starts
    (10**6, 700, 25, 0.85, "sampled"),         # many short still runs: padded at once
    (10**6, 701, 30, 0.5, False),
    (2 * 10**7, 900, 300, 0.99, "sampled"),
    (2 * 10**7, 7000, 1000, 0.95, "sampled"),  # blocks of 10³ rows: stacked per block
    (2 * 10**7, 7000, 1000, 0.95, False),
])
def test_path_values_equal_one_run_at_a_time(n0, rows, block, q, ranking):
    N = float(n0) - np.arange(rows, dtype=float)
    K = _block_thresholds(rows, block, q, N)
    _check_path(N, q, K, ranking)


@pytest.mark.parametrize("block,q,drift", [(3000, 0.9, 700), (25, 0.85, 7), (1000, 0.95, 300)])
def test_path_values_with_a_moving_run(block, q, drift):
    # one column's threshold moves inside its blocks: those runs take the general path,
    # the others the still one
    rows = 2 * block + 11
    N = 10.0**8 - np.arange(rows, dtype=float)
    K = _block_thresholds(rows, block, q, N, drift=drift)
    _check_path(N, q, K, "sampled")


@pytest.mark.parametrize("S,M,q", [(6, 5000, 0.9), (7, 300, 0.3), (3, 2, 0.6), (5, 3, 0.5)])
def test_still_runs_stacked_and_listed_equal_the_general_path(S, M, q):
    rng = np.random.default_rng(S * M + 1)
    N0 = 10.0**7 + rng.integers(0, 10**6, S).astype(float)
    Ns = N0[:, None] - np.arange(M)[None, :]
    k0 = np.floor(N0 * q) - rng.integers(0, 4000, S)
    ks = np.repeat(k0[:, None], M, axis=1)
    lens = np.array([M] + [int(rng.integers(2, M + 1)) for _ in range(S - 1)])
    lp = math.log1p(-q)
    F0 = rng.uniform(0.01, 0.9, S)
    base = rng.uniform(-12.0, -8.0, S)
    slow = sp._runs_log_cdf(Ns, ks, lens, q, lp, F0, base, still_path=False)
    listed = sp._still_runs_log_cdf(Ns[:, 1:], ks[:, 1:], lens, q, lp, F0, base)
    stacked = sp._still_runs_log_cdf(Ns[:, 1:], k0[:, None], lens, q, lp, F0, base,
                                     stacked=True)
    for s_ in range(S):
        assert np.array_equal(listed[s_], slow[s_])
        assert np.array_equal(stacked[s_, :lens[s_]], slow[s_])


def test_a_wrong_threshold_is_seen():
    # the comparison can fail: a threshold one lower gives other values
    N = 10.0**9 - np.arange(4000, dtype=float)
    K = _block_thresholds(4000, 2000, 0.9, N)
    a = sp._path_log_cdf_upper(N, 0.9, K, "sampled")
    K2 = K.copy()
    K2[:, 3] -= 1.0
    b = sp._path_log_cdf_upper(N, 0.9, K2, "sampled")
    assert not np.array_equal(a[:, 3], b[:, 3]) and np.array_equal(a[:, 2], b[:, 2])


@pytest.mark.parametrize("n,sigma,rate,eps0", [(10**9, 2.0, 0.1, 4.79), (10**6, 2.0, 0.1, 4.09),
                                               (151140522, 1.2923, 0.331, 6.83)])
def test_ranking_cells_finite_and_ordered(n, sigma, rate, eps0):
    # the ranking cells of a search member: weights positive and finite, within the mass
    hp, _ = trimmed_hidden(n, sigma, eps0, rate, None)
    cl = sp.hidden_cells(hp, 80_000, ranking=sp.SAMPLED)
    assert np.all(np.isfinite(cl.w)) and np.all(cl.w > 0)
    assert 0.9 < float(cl.w.sum()) + cl.zero + cl.worst < 1.1


@pytest.mark.parametrize("n,sigma,rate,eps0,delta", [(10**3, 2.0, 0.1, 2.5, 1e-5),
                                                     (10**7, 2.0, 0.1, 4.4, 1e-12),
                                                     (2000, 0.6, 0.0068, 9.0, 1e-9)])
def test_hidden_epsilon_asks_each_eps_once_and_gives_the_same_end(monkeypatch, n, sigma, rate,
                                                                 eps0, delta):
    """hidden_epsilon reuses δ(ε) at the bracket's ends: each ε is evaluated once, and the
    end is the one the same search finds evaluating δ afresh at every step."""
    from shuffledp.numerics import falling_root_certified
    from shuffledp.numerics.search import log_gap
    hp, _ = trimmed_hidden(n, sigma, eps0, rate, None)
    assert hp is not None
    asked = []
    real = sp.hidden_delta

    def counted(h, e, budget=None, ranking=False):
        asked.append(e)
        return real(h, e, budget, ranking)

    monkeypatch.setattr(sp, "hidden_delta", counted)
    got = sp.hidden_epsilon(hp, delta, 80_000, ranking=True)
    assert len(asked) == len(set(asked)) and len(asked) >= 4

    # the previous form: every step asks δ(ε) afresh
    def fresh(e):
        return real(hp, e, 80_000, True)

    hi = hp.log_ratio
    assert fresh(0.0) > delta and fresh(hi) <= delta
    lo = 0.0
    while hi > 1e-9:
        if fresh(hi / 8) <= delta:
            hi /= 8
        else:
            lo = hi / 8
            break
    ld = math.log(delta)
    want = falling_root_certified(lambda e: log_gap(fresh(e), delta, ld), lo, hi,
                                  xtol=1e-12, rtol=1e-8)
    assert got == want
    # the certified end: δ(ε) ≤ δ itself there (not only log δ(ε) ≤ log δ)
    assert fresh(got) <= delta


@pytest.mark.parametrize("n,eps0", [(10**6, 4.09), (10**5, 4.5)])
def test_ranking_atoms_grouped_or_gathered_alike(monkeypatch, n, eps0):
    # the search's atoms slice by slice (35 slices at 1e6 users) or in one gathered pass
    # (125 at 1e5): the same floats either way
    hp, _ = trimmed_hidden(n, 2.0, eps0, 0.1, None)
    f = sp.hidden_atoms.__wrapped__
    monkeypatch.setattr(sp, "_GROUPED_SLICES_RANKING", 10**6)
    grouped = f(hp, 80_000, sp.SAMPLED)
    monkeypatch.setattr(sp, "_GROUPED_SLICES_RANKING", -1)
    gathered = f(hp, 80_000, sp.SAMPLED)
    for a, b in zip(grouped, gathered):
        assert np.array_equal(a, b)
