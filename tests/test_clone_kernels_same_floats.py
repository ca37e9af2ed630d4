"""The clone pair's point sets, PLD atoms and Rademacher moments give the same floats as the
straightforward one-pass forms they replaced (session 14: grouped, cache-sized passes and
column-major products for speed). The reference forms below are the previous code, kept
verbatim; every comparison is exact (``np.array_equal``), because a changed last bit could
move an answer up. The values' accuracy itself is tested in test_numerics.py and
test_clone_pair.py (mpmath).
"""

import math
from itertools import pairwise

import numpy as np
import pytest

from shuffledp.numerics.binomial import (
    _EVEN_PARTITIONS,
    RUN_REL_ERR,
    HalfBinomRuns,
    _even_partition_counts,
    half_binom_logpmf,
    half_binom_logpmf_runs,
    rademacher_log_moments,
)
from shuffledp.pairs.clone import atoms, rdp_points
from shuffledp.pairs.clone.rdp_points import _point_terms
from shuffledp.pairs.clone.instances import fmt20_pair, fmt23_pair
from shuffledp.pairs.clone.pair import ClonePair


# ---------------------------------------------------------------------------------------
# Reference forms (the code before session 14, verbatim but for the names)
# ---------------------------------------------------------------------------------------
def _ref_runs(c, x0, counts, block: int = 32):
    """log Pr[Bin(c_i, ½) = x] for the runs x = x0_i, …, x0_i + counts_i − 1, concatenated.

    Loader's form (``half_binom_logpmf``) at every ``block``-th x of a run and the exact
    ratio recurrence pmf(x + 1)/pmf(x) = (c − x)/(x + 1) in between: ~``block`` times
    fewer saddle-point evaluations. Error of a recurrence value: at most
    ``(block + 1)·u·Σ|log ratios|`` from its anchor (a float sum of k terms errs by at most
    k·u·Σ|terms|, each log of a ratio by ≤ 2u relative); rows where that could exceed
    ``RUN_REL_ERR`` are evaluated by Loader's form throughout, so every value is within
    ~2e-13 relative of the exact pmf. Rows that fail the test are first retried with
    anchors every 8th, then every 2nd x before falling back to Loader's form.
    """
    c = np.asarray(c, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    rows = c.size
    if rows == 0:
        return np.zeros(0)
    nb = int(-(-int(counts.max()) // block))
    width = nb * block
    col = np.arange(width, dtype=float)
    x = x0[:, None] + col[None, :]                               # (rows, width)
    valid = col[None, :] < counts[:, None]
    anchors = x[:, ::block]                                      # (rows, nb)
    la = half_binom_logpmf(anchors, np.broadcast_to(c[:, None], anchors.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.log((c[:, None] - x) / (x + 1.0))                 # log pmf(x+1) − log pmf(x)
    d = d.reshape(rows, nb, block)
    step = np.zeros_like(d)
    step[..., 1:] = d[..., :-1]
    # Outside the support the recurrence is meaningless; those points are set below.
    step = np.where(np.isfinite(step), step, -np.inf)
    with np.errstate(invalid="ignore"):
        cum = np.cumsum(step, axis=-1)
        out = (la[..., None] + cum).reshape(rows, width)
        err = (block + 1) * 1.2e-16 * np.cumsum(np.abs(np.where(np.isfinite(step), step, 0.0)),
                                                 axis=-1).reshape(rows, width)
    out = np.where((x >= 0) & (x <= c[:, None]), out, -np.inf)
    out = np.where(np.isnan(out), -np.inf, out)
    bad = np.any(valid & (err > RUN_REL_ERR), axis=1)
    if np.any(bad):
        if block > 4:
            # Far-tail rows (large log ratios): anchors 4x denser, the same error test; only
            # rows that still fail it are evaluated by Loader's form at every point.
            sub = np.full((int(np.count_nonzero(bad)), width), -np.inf)
            sub[valid[bad]] = _ref_runs(c[bad], x0[bad], counts[bad], block // 4)
            out[bad] = sub
        else:
            out[bad] = half_binom_logpmf(x[bad], np.broadcast_to(c[bad][:, None], x[bad].shape))
    return out[valid]


def _ref_points(pair, c_eval, alo, ahi, j0: int, j1: int):
    """Points of slices j0..j1−1: (slice index, log P(x | c), ℓ = log P/Q), the rows built
    in one pass (the kernel builds them in row groups)."""
    ce, lo_, hi_ = c_eval[j0:j1], alo[j0:j1], ahi[j0:j1]
    counts = hi_ + 2 - lo_                       # x from alo to ahi + 1
    jj = np.repeat(np.arange(j0, j1), counts)
    offs = np.arange(jj.size) - np.repeat(np.cumsum(counts) - counts, counts)
    x = (alo[jj] + offs).astype(float)
    c = c_eval[jj].astype(float)
    lv = _ref_runs(ce, lo_, counts)  # log Bin(c,½)(x), run by run
    logP, ell = _point_terms(pair, x, c, lv)   # the points' formula itself: one copy
    return jj, logP, ell


def _ref_rademacher_log_moments(s, kmax: int) -> np.ndarray:
    r"""log E[(W/s)^{2k}] for W a sum of s independent ±1 signs, k = 1..kmax; shape (len(s), kmax).

    E[W^{2k}] = Σ_m E(2k, m) s(s − 1)…(s − m + 1): a sequence of 2k indices has mean-one
    product iff every index appears an even number of times, i.e. a partition of the 2k
    positions into m even blocks with distinct indices. Every term is non-negative, so the
    float evaluation loses only ~k ulps relative (no cancellation), at any s ≥ 1. Odd
    moments are zero. Used for the series form of the clone pair's RDP (clone_pair.py).
    """
    s = np.asarray(s, dtype=float).ravel()
    if kmax not in _EVEN_PARTITIONS:
        e = _even_partition_counts(kmax)
        _EVEN_PARTITIONS[kmax] = np.array([[float(v) for v in row] for row in e])
    E = _EVEN_PARTITIONS[kmax]
    i = np.arange(kmax + 1, dtype=float)
    # F[:, m] = s(s−1)…(s−m+1)/s^m (0 once m > s) and U[:, d] = s^−d.
    F = np.cumprod(np.concatenate([np.ones((s.size, 1)),
                                   np.maximum(1.0 - i[None, :kmax] / s[:, None], 0.0)], axis=1),
                   axis=1)
    U = np.cumprod(np.concatenate([np.ones((s.size, 1)),
                                   np.repeat((1.0 / s)[:, None], kmax, axis=1)], axis=1), axis=1)
    logs = np.log(s)
    out = np.empty((s.size, kmax))
    for k in range(1, kmax + 1):
        m = np.arange(1, k + 1)
        # inner = Σ_m E(2k, m) F_m s^{m−k}; E(2k, k) = (2k − 1)!! dominates at large s.
        inner = (F[:, m] * U[:, k - m]) @ E[k, m]
        with np.errstate(divide="ignore"):
            out[:, k - 1] = np.log(inner) - k * logs
    return out


def _ref_pld_atoms(pair, max_atoms):
    """``pair_pld_atoms`` before session 14 (``max_atoms`` atoms), on the reference points."""
    budget = int(max_atoms)
    c_eval, mass, log_below, alo, ahi, tails, _, _, _ = rdp_points._rdp_plan(pair, atoms._PLD_SDS, None, budget)
    jj, logP, ell = _ref_points(pair, c_eval, alo, ahi, 0, c_eval.size)
    with np.errstate(divide="ignore"):
        logp = np.log(mass[jj]) + logP
    logq = logp - ell
    tail = float(np.dot(mass, tails)) * 2.0 + 1e-300
    if log_below > -math.inf:
        # The lower tail of C: its part in [lo2, lo) is carried by the slice lo2 (smaller c is
        # more informative, so that slice dominates it), only the rest by the victim alone
        # (c = 0, losses ±ε0). The window is 9 sd wide, so at c = 0 it would weigh ~1e-18:
        # atoms at ±ε0 that stretch the PLD's loss grid from the bulk (~±1e-4 at n = 1e9)
        # to ±ε0 (1.6 million points) and cannot be cut at small δ. Beyond 18 sd they weigh
        # < 1e-70: the grid's heavy-loss cut and low-loss floor then absorb them.
        m = pair.n - 1
        lo = int(rdp_points._rdp_window(pair.n, pair.p, atoms._PLD_SDS)[0][0])
        lo2 = atoms.binom_window(m, pair.p, atoms._LOW_SDS, 3)[0]
        if 0 < lo2 < lo:
            cs = np.arange(lo2, lo, dtype=float)
            mid = float(np.sum(np.exp(atoms.binom_logpmf(cs, m, pair.p, 1.0 - pair.p)))) * (1.0 + 1e-12)
            log_below = atoms._log_tails(m, pair.p, lo2, m)[0]
            c2 = np.array([lo2], dtype=np.int64)
            a2, b2, lt2 = rdp_points._x_windows(c2, atoms._PLD_SDS)
            _, lP2, ell2 = _ref_points(pair, c2, a2, b2, 0, 1)
            lp2 = math.log(mid) + lP2
            logp = np.concatenate([logp, lp2])
            logq = np.concatenate([logq, lp2 - ell2])
            tail += 2.0 * mid * float(np.exp(lt2[0]))   # its x-tail, as for the others
        la, lb = pair.log_alpha, pair.log_beta
        lw = log_below
        if lw > -math.inf:
            logp = np.concatenate([logp, [lw + la, lw + lb]])
            logq = np.concatenate([logq, [lw + lb, lw + la]])
    keep = np.isfinite(logp)
    return logp[keep], logq[keep], tail


def _runs_case(rng, sds, rows=30):
    c = np.concatenate([[0, 1, 2, 5, 31, 64, 65], rng.integers(100, 50_000, rows)]).astype(float)
    sd = np.sqrt(np.maximum(c, 1)) / 2
    x0 = np.maximum(0, np.floor(c / 2 - sds * sd))
    cnt = (np.minimum(c + 1, np.ceil(c / 2 + sds * sd)) - x0 + 1).astype(int)
    return c, x0, cnt


@pytest.mark.parametrize("sds", [3.0, 9.0, 40.0, 95.0])
@pytest.mark.parametrize("block", [32, 8, 64])
def test_half_binom_runs_same_floats_as_one_pass(sds, block):
    """Grouped runs equal the one-pass form bit for bit, in the bulk and in far tails where
    rows fail the error test and are retried with denser anchors (or Loader's form)."""
    c, x0, cnt = _runs_case(np.random.default_rng(int(sds) + block), sds)
    assert np.array_equal(half_binom_logpmf_runs(c, x0, cnt, block), _ref_runs(c, x0, cnt, block))


def test_half_binom_runs_any_grouping_of_rows():
    """``HalfBinomRuns.rows`` gives each row the same floats whatever rows it is asked with."""
    c, x0, cnt = _runs_case(np.random.default_rng(3), 95.0, rows=60)
    runs = HalfBinomRuns(c, x0, cnt)
    whole = runs.all()
    for cuts in ([0, 1, c.size], [0, 7, 8, 30, c.size], list(range(c.size + 1))):
        parts = np.concatenate([runs.rows(a, b) for a, b in pairwise(cuts)])
        assert np.array_equal(parts, whole)
    assert np.array_equal(whole, _ref_runs(c, x0, cnt))


def test_half_binom_runs_screen_keeps_the_failing_rows():
    """The rows the end-point screen clears would pass the full error test: across the
    threshold (runs from the bulk to ~40 sd, c from 2 to 1e5), the rows found bad are those
    of the full test."""
    rng = np.random.default_rng(5)
    c = np.concatenate([np.arange(2, 200), rng.integers(200, 100_000, 200)]).astype(float)
    sds = rng.uniform(0.5, 40.0, c.size)
    sd = np.sqrt(c) / 2
    x0 = np.maximum(0, np.floor(c / 2 - sds * sd))
    cnt = (np.minimum(c + 1, np.ceil(c / 2 + sds * sd)) - x0 + 1).astype(int)
    block = 32
    nbk = int(-(-int(cnt.max()) // block))
    width = nbk * block
    col = np.arange(width, dtype=float)
    x = x0[:, None] + col[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.log((c[:, None] - x) / (x + 1.0)).reshape(c.size, nbk, block)
    step = np.zeros_like(d)
    step[..., 1:] = d[..., :-1]
    step = np.where(np.isfinite(step), step, 0.0)
    err = (block + 1) * 1.2e-16 * np.cumsum(np.abs(step), axis=-1).reshape(c.size, width)
    full = np.any((col[None, :] < cnt[:, None]) & (err > RUN_REL_ERR), axis=1)
    runs = HalfBinomRuns(c, x0, cnt, block)
    assert 0 < full.sum() < c.size                # both kinds occur
    assert np.array_equal(runs.bad, full)


_PAIRS = [fmt20_pair(1.0, 10**5), fmt23_pair(4.2773, 10**7), fmt20_pair(3.0, 10**6),
          fmt23_pair(0.5, 10**4), fmt23_pair(7.5, 463_067), fmt20_pair(0.05, 10**6),
          fmt23_pair(12.0, 10**6), ClonePair(5000, 0.3, 0.6, 0.4),
          fmt20_pair(1.0, 10**9)]    # (windows of 2.7e5 slices: their log-pmf in halves)


@pytest.mark.parametrize("pair", _PAIRS, ids=lambda p: f"n{p.n}-p{p.p:.3g}")
def test_clone_points_and_atoms_same_floats(pair):
    """The clone pair's points (RDP windows at small and huge orders) and its PLD atoms
    equal the one-pass forms bit for bit."""
    budget = 200_000
    for lam in (2, 64, 5000):
        K = rdp_points._rdp_window_sds(lam, pair.log_ratio)
        c_eval, _, _, alo, ahi, *_ = rdp_points._rdp_plan(pair, K, None, budget)
        got = rdp_points._rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
        ref = _ref_points(pair, c_eval, alo, ahi, 0, c_eval.size)
        for g, r in zip(got, ref):
            assert np.array_equal(g, r)
    for got, ref in zip(atoms.pair_pld_atoms(pair, budget), _ref_pld_atoms(pair, budget)):
        assert np.array_equal(got, ref)


@pytest.mark.parametrize("s,kmax", [(np.arange(1.0, 3000.0), 17), (np.arange(1.0, 1025.0), 65),
                                    (np.arange(3.6e8, 3.6e8 + 20_000), 17),
                                    (np.arange(5e4, 5e4 + 4000), 33), (np.array([1.0, 2.0, 7.0]), 5),
                                    (np.array([12345.0]), 65)])
def test_rademacher_log_moments_same_floats(s, kmax):
    """Column-major running products give the same moments as the fancy-indexed form
    (the same column-major matrix-vector product, so BLAS sums in the same order)."""
    assert np.array_equal(rademacher_log_moments(s, kmax), _ref_rademacher_log_moments(s, kmax),
                          equal_nan=True)


def test_even_partition_counts_exact():
    """Partitions of a 2k-set into m even blocks: the reference recurrence (exact integers,
    so every float built from them is the same), and closed forms: one block, perfect
    matchings (2k − 1)!!, and two blocks Σ_{i<k} C(2k − 1, 2i − 1) = 2^(2k−2) − 1."""
    def ref(kmax):
        e = [[0] * (kmax + 1) for _ in range(kmax + 1)]
        e[0][0] = 1
        for k in range(1, kmax + 1):
            for m in range(1, k + 1):
                e[k][m] = sum(math.comb(2 * k - 1, 2 * i - 1) * e[k - i][m - 1]
                              for i in range(1, k - m + 2))
        return e

    got = _even_partition_counts(65)
    assert got == ref(65)
    for k in range(1, 66):
        assert got[k][1] == 1
        assert got[k][k] == math.prod(range(1, 2 * k, 2))
        if k >= 2:
            assert got[k][2] == 2 ** (2 * k - 2) - 1
