"""The hidden pair's kernels (``pairs/hidden.py``) and the certified binomial tail series
(``numerics/binomial.py``) give the same floats as the forms they replaced (session 16:
cache-sized passes, fewer temporaries, per-column steps instead of short-axis ufunc loops).
The reference forms below are the previous code, kept verbatim but for the names; every
comparison is exact (``np.array_equal``), because a changed last bit of a dominating cell
moved answers both ways (a 2e-10 relative change of the certified distribution functions
moved 13 of the 26 check-in Gaussian answers, up to 1.5e-4 relative, five of them up).
The values' accuracy itself is tested in test_numerics.py and test_sampling.py (mpmath,
independent sums).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.special

from shuffledp.numerics import binomial as nb
from shuffledp.pairs import hidden as sp
from shuffledp.numerics.binomial import _U, bd0, binom_logpmf_pairs, stirlerr

_REF_SERIES_ELEMENTS = 1 << 21


# ---------------------------------------------------------------------------------------
# Reference forms (the code before session 16, verbatim but for the names)
# ---------------------------------------------------------------------------------------
def _ref_binom_logpmf_pairs(k, n, p: float, q: float | None = None) -> np.ndarray:
    """``binom_logpmf`` at paired arrays (k[i], n[i]) (n may be one number for all k).

    Loader's form: stirlerr and the deviance ``bd0`` without cancellation. The means n·p
    and n·q are rounded to double; their rounding error e (up to n·p·2^-53) would move
    bd0(x, m) by e·(1 − x/m), i.e. ~2^-53·z·sd at z standard deviations (1e-13 at n = 1e6,
    5e-12 at n = 1e9), so the exact residual of each distinct n is carried and that
    first-order correction applied. Out-of-support k gives -inf.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if n.ndim == 0:           # one n for every k: it stays one number (no per-k copies)
        shape, kb = k.shape, k

        def at(mask):
            return n
    else:
        shape = np.broadcast_shapes(k.shape, n.shape)
        kb = np.broadcast_to(k, shape)

        def at(mask):
            return np.broadcast_to(n, shape)[mask]

    out = np.full(shape, -np.inf)
    p = float(p)
    q = 1.0 - p if q is None else float(q)
    if p <= 0.0:
        out[kb == 0] = 0.0
        return out
    if q <= 0.0:
        out[kb == n] = 0.0
        return out
    # Each edge uses whichever of p, q is small (and hence accurate): log1p of the small
    # one, or the log of it directly.
    lo_edge = kb == 0
    hi_edge = kb == n
    out[lo_edge] = at(lo_edge) * (math.log1p(-p) if p < 0.5 else math.log(q))
    out[hi_edge] = at(hi_edge) * (math.log(p) if p < 0.5 else math.log1p(-q))
    inner = (kb > 0) & (kb < n)
    if np.any(inner):
        ki, ni = kb[inner], at(inner)
        nk = ni - ki
        mp_hi, mq_hi = ni * p, ni * q
        # the exact residuals n·p − fl(n·p), once per distinct n
        def residual(m, f):
            x = float(m)
            return float(Fraction(int(x)) * Fraction(f) - Fraction(x * f))

        if ni.ndim == 0:
            mp_lo, mq_lo = residual(ni, p), residual(ni, q)
        else:
            un, inv = np.unique(ni, return_inverse=True)
            mp_lo = np.array([residual(x, p) for x in un])[inv]
            mq_lo = np.array([residual(x, q) for x in un])[inv]
        lc = (stirlerr(ni) - stirlerr(ki) - stirlerr(nk)
              - bd0(ki, mp_hi) - bd0(nk, mq_hi)
              - mp_lo * (1.0 - ki / mp_hi) - mq_lo * (1.0 - nk / mq_hi))
        out[inner] = lc - 0.5 * np.log(2.0 * math.pi * ki * nk / ni)
    return out


def _ref_tail_series_many(edge, n, p: float, down) -> tuple[np.ndarray, np.ndarray]:
    """``_tail_series`` for many (edge, n, down) at once (n may be one number): the edge's
    pmf times partial products of the ratios moving away from the mean, summed in blocks
    of 4096 terms (doubling) until the geometric remainder is below 1e-18 of the sum, with
    the rounding allowance 1e-11 + 4(m + 2)u for m terms summed. Each row is summed as its
    own slice, so its sums round exactly as they would for that entry alone."""
    edge = np.asarray(edge, dtype=float)
    n = np.asarray(n, dtype=float)
    down = np.asarray(down, dtype=bool)
    p = float(p)
    q = 1.0 - p
    a0 = np.where(down, edge, n - edge)
    b0 = np.where(down, n - edge + 1.0, edge + 1.0)
    num = np.where(down, q, p)
    den = np.where(down, p, q)
    limit = np.where(down, edge + 1.0, n - edge + 1.0)
    lb = binom_logpmf_pairs(edge, n, p)
    total = np.zeros(edge.shape)
    rem = np.zeros(edge.shape)
    t = np.ones(edge.shape)
    done_terms = np.zeros(edge.shape)
    idx = np.arange(edge.size)
    block = 4096                  # the scalar version's chunks: the same terms, the same stops
    while idx.size:
        keep = []
        group = max(1, _REF_SERIES_ELEMENTS // block)    # entries per pass (bounds memory)
        for g0 in range(0, idx.size, group):
            sub = idx[g0:g0 + group]
            i = done_terms[sub][:, None] + np.arange(block, dtype=float)[None, :]
            m = np.minimum(block, limit[sub] - done_terms[sub])     # terms left, this block
            full = m == block
            # r = (a0 − i)·num / ((b0 + i)·den), formed in place (the same operations in
            # the same order as the expression; fewer block-sized temporaries)
            r = a0[sub, None] - i
            r *= num[sub, None]
            np.add(b0[sub, None], i, out=i)
            i *= den[sub, None]
            r /= i
            if not full.all():       # a tail's last block: ratios past its end are 1
                r[np.arange(block)[None, :] >= m[:, None]] = 1.0
            last = np.maximum(m.astype(np.int64) - 1, 0)
            rows = np.arange(sub.size)
            r_last = r[rows, last]
            prods = np.cumprod(r, axis=1, out=r)                    # (r is not needed again)
            prods *= t[sub, None]                                   # t_{i+1}, …
            # terms summed: the block head t and the products before the last valid one
            # (each row's own slice, so the sums round exactly as one entry's would)
            if full.all():
                part = prods[:, :block - 1].sum(axis=1)
            else:
                part = np.empty(sub.size)
                part[full] = prods[full, :block - 1].sum(axis=1)
                for r_ in np.flatnonzero(~full):
                    part[r_] = prods[r_, :int(m[r_]) - 1].sum()
            total[sub] += t[sub] + part
            t_next = prods[rows, last]
            done_terms[sub] += m
            finished = done_terms[sub] >= limit[sub]
            under = ~finished & (t_next == 0.0)
            rem[sub[under]] = (limit[sub[under]] - done_terms[sub[under]]) * 5e-324
            safe = np.where(r_last < 1.0, 1.0 - r_last, 1.0)
            geo = ~finished & ~under & (r_last < 1.0) & (t_next / safe <= 1e-18 * total[sub])
            rem[sub[geo]] = t_next[geo] / (1.0 - r_last[geo])
            t[sub] = t_next
            keep.append(sub[~(finished | under | geo)])
        idx = np.concatenate(keep)
        block = min(2 * block, 1 << 20)
    eta = 1e-11 + 4.0 * (done_terms + 2.0) * _U
    lo = np.exp(lb) * total * (1.0 - eta)
    hi = np.maximum(np.exp(lb) * (total + rem) * (1.0 + eta), 1e-300)
    return np.maximum(lo, 0.0), np.minimum(hi, 1.0)



def _ref_path_log_cdf_upper(N, q, K, ranking: bool = False):
    """log of certified upper bounds on Pr[Bin(N[r], q) ≤ K[r, j]] along rows where N falls
    by exactly 1 per row (the slices of ``_checkin_binned``); K (rows × J) is any integer
    array (thresholds held within a block, or moving by a step per row).

    scipy's ``bdtr`` was measured 3.5e-6 relative off at N = 1e9 (beyond the 1e-6 slack it
    was given) and costs ~0.3 s per 1e6 entries; here each column is certified once at
    its first regular row (``numerics.binom_cdf_bounds``: a summed tail with a geometric
    remainder) and carried down the rows by exact identities, Bin(N) being Bin(N − 1) plus
    a Bernoulli(q):

      Pr[Bin(N − 1) ≤ k] = Pr[Bin(N) ≤ k] + q·b(N − 1, k),
      Pr[Bin(N) ≤ k − 1] = Pr[Bin(N) ≤ k] − b(N, k),  Pr[Bin(N) ≤ k + 1] = … + b(N, k + 1),

    b the pmf, moved along the path by its exact ratios in log space. The rounding is
    bounded explicitly: η·Σ|terms| is added, η covering the log-pmf (1e-11), the chained
    log ratios (m·u·(8 + max|log b|)) and the sums. Rows with K < 0 (probability 0) or
    K ≥ N (probability 1) are exact; the next regular row restarts the certification.
    """
    N = np.asarray(N, dtype=float)
    K = np.asarray(K, dtype=float)
    R, J = K.shape
    out = np.empty((R, J))
    lp = math.log1p(-q)
    segs = []
    for j in range(J):
        k = K[:, j]
        reg = (k >= 0) & (k < N)
        out[~reg, j] = np.where(k[~reg] < 0, -np.inf, 0.0)
        # A fall of the threshold by more than 2 (a block boundary) restarts: subtracting
        # the run of pmfs between the thresholds would cancel (the new CDF can be far
        # smaller than the old one).
        first = reg.copy()
        first[1:] &= ~reg[:-1] | ((k[1:] - k[:-1]) < -2)
        starts = np.flatnonzero(first)
        ends = np.empty_like(starts)
        nxt = np.append(starts[1:], R)
        for i, (r0, r1) in enumerate(zip(starts, nxt)):
            irr = np.flatnonzero(~reg[r0:r1])
            ends[i] = r0 + (int(irr[0]) if irr.size else r1 - r0)
        segs.extend((j, r0, r1) for r0, r1 in zip(starts.tolist(), ends.tolist()))
    if not segs:
        return out
    # Every segment's certified start and first log-pmf in one vectorised call each.
    sj = np.array([x[0] for x in segs])
    s0 = np.array([x[1] for x in segs])
    if ranking:
        # Only to rank candidate ε0 (never a reported value): the regularised incomplete
        # beta, Pr[Bin(N, q) ≤ k] = I_{1−q}(N − k, k + 1) (scipy, measured within 3e-10 of
        # the certified series up to N = 1e10, microseconds instead of O(√N) terms).
        kk = K[s0, sj]
        F0 = np.minimum(1.0, scipy.special.betainc(N[s0] - kk, kk + 1.0, 1.0 - q) * (1.0 + 1e-9))
    else:
        F0 = nb.binom_cdf_bounds_many(K[s0, sj], N[s0], q)[1]
    nxt_row = np.minimum(s0 + 1, R - 1)
    base = nb.binom_logpmf_pairs(K[s0, sj], N[nxt_row], q)
    if sum(r1 - r0 for _, r0, r1 in segs) >= 256 * len(segs):
        # a few long runs: contiguous slices, one call each (a padded matrix would gather)
        for i, (j, r0, r1) in enumerate(segs):
            out[r0:r1, j] = sp._segment_log_cdf(N[r0:r1], K[r0:r1, j], q, lp, float(F0[i]),
                                             float(base[i]))
    else:                               # many short runs: all at once
        sp._segments_log_cdf(out, N, K, segs, q, lp, F0, base)
    return out


def _ref_checkin_binned(hp, budget: int, ranking: bool = False) :
    n, g, p, k = hp.n, hp.rate, hp.p, hp.kappa
    mu = g * p
    q = (1.0 - g) / (1.0 - mu)
    lo, hi = nb.binom_window(n, mu, sp._S_SDS, sp._S_EXTRA)
    s = np.arange(lo, hi + 1)
    ls = nb.binom_logpmf(s, n, mu)
    N = (n - s).astype(float)
    W = np.exp(ls) * (k * N * q + s) / sp._norm(hp)
    zero = float(W[0]) if s[0] == 0 else 0.0
    keep = s >= 1
    s, W, N = s[keep], W[keep], N[keep]
    worst = nb.binom_tail_mass(n, mu, lo, hi) * (1.0 + 1.0 / k) / hp.c_gamma
    if s.size == 0:
        return sp.Cells(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
                     np.zeros(0), zero, worst, False)
    J = 1 if q <= 0.0 else len(sp._NBOT_Z)
    B = sp._block_width(s.size, J, n * mu, budget)
    starts = np.arange(0, s.size, B)
    ends = np.minimum(starts + B, s.size) - 1
    if q <= 0.0:                                     # γ = 1: n_⊥ = 0 always
        w = np.add.reduceat(W, starts)
        return sp.Cells((s[starts] - 1).astype(np.int64), np.full(starts.size, hp.bias.alpha),
                     np.full(starts.size, hp.bias.beta), np.full(starts.size, hp.bias.gamma), w,
                     zero, worst, B == 1)
    # Common n_⊥ edges per block (n_⊥ | s ~ Bin(n − s, q)), below the block's smallest
    # conditional mean. Under the size-biased weights (κ n_⊥ + s) the law of n_⊥ given s
    # mixes Bin(N, q) (share s) and 1 + Bin(N − 1, q) (share κNq).
    z = np.array(sp._NBOT_Z)
    mean_b = N[ends] * q
    sd_b = np.sqrt(N[starts] * q * (1.0 - q))
    edges = np.maximum(0.0, np.floor(mean_b[:, None] + z[None, :] * sd_b[:, None]))
    blk = np.repeat(np.arange(starts.size), ends - starts + 1)
    E = edges[blk]                                   # (n_s, J)
    mix_a = (s / (s + k * N * q))[:, None]
    if float(N.max()) > nb.BDTR_MAX_N:          # scipy's bdtr is not accurate enough there
        u1 = np.exp(_ref_path_log_cdf_upper(N, q, E - 1.0, ranking))
        u2 = np.exp(_ref_path_log_cdf_upper(N - 1.0, q, E - 2.0, ranking))
    else:
        u1 = np.exp(sp._log_cdf_upper(N[:, None], q, E - 1.0))
        u2 = np.exp(sp._log_cdf_upper(N[:, None] - 1.0, q, E - 2.0))
    U = np.minimum(1.0, mix_a * u1 + (1.0 - mix_a) * u2)
    U = np.maximum.accumulate(U, axis=1)
    frac = np.diff(np.concatenate([U, np.ones((s.size, 1))], axis=1), axis=1)
    worst += float(np.dot(W, U[:, 0]))
    wj = np.add.reduceat(W[:, None] * frac, starts, axis=0)        # (blocks, J)
    alpha, beta, gamma = sp._bias_eff(hp, s[ends][:, None], edges)
    c = np.broadcast_to((s[starts] - 1)[:, None], wj.shape)
    # Bin-major order: within a bin the slices run over consecutive c (fast δ kernel).
    wj, alpha, beta, gamma, c = wj.T, alpha.T, beta.T, gamma.T, c.T
    live = wj > 0
    return sp.Cells(c[live].astype(np.int64), alpha[live].astype(float), beta[live].astype(float),
                 gamma[live].astype(float), wj[live], zero, worst,
                 False)


# ---------------------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------------------
def _series_cases(seed, count):
    """(edge, n, p, down) entries of the kinds the callers pass: thresholds from −14 to +3
    standard deviations (either tail's side), n from 1e3 to 1e10, p from 1e-4 to 0.99;
    edges near 0 (the last block cut short) and far tails (products underflow)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = float(np.floor(10.0 ** rng.uniform(3.0, 10.0)))
        p = float(10.0 ** rng.uniform(-4.0, math.log10(0.99)))
        sd = math.sqrt(n * p * (1.0 - p))
        z = rng.uniform(-14.0, 3.0)
        k = float(min(max(np.floor(n * p + z * sd), 0.0), n - 1.0))
        down = k <= n * p
        edge = k if down else k + 1.0
        out.append((edge, n, p, down))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_tail_series_same_floats(seed):
    """Many entries of one p in one call (the callers' batches, rows of different lengths
    sharing passes) and one at a time: exactly the previous floats."""
    cases = _series_cases(seed, 60)
    p = cases[0][2]
    rng = np.random.default_rng(100 + seed)
    n = np.floor(10.0 ** rng.uniform(3.0, 9.0, 200))
    sd = np.sqrt(n * p * (1.0 - p))
    k = np.clip(np.floor(n * p + rng.uniform(-14.0, 3.0, 200) * sd), 0.0, n - 1.0)
    down = k <= n * p
    edge = np.where(down, k, k + 1.0)
    got = nb._tail_series_many(edge, n, p, down)
    ref = _ref_tail_series_many(edge, n, p, down)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    for edge1, n1, p1, down1 in cases[:12]:
        got = nb._tail_series_many([edge1], n1, p1, [down1])
        ref = _ref_tail_series_many([edge1], n1, p1, [down1])
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def test_tail_series_same_floats_one_n_many_edges():
    """One n for all entries (the check-in cells' columns), small edges whose series ends
    inside the first block, and the far tails."""
    n, p = 3.0e9, 0.37
    sd = math.sqrt(n * p * (1.0 - p))
    z = np.array([-40.0, -14.0, -12.0, -4.0, -2.5, -1.5, -0.75, 0.0, 0.5, 3.0, 9.0])
    k = np.floor(n * p + z * sd)
    down = k <= n * p
    edge = np.where(down, k, k + 1.0)
    for e, d in ((edge, down), (np.array([0.0, 5.0, 100.0, 4095.0, 4096.0, 5000.0]),
                                np.ones(6, dtype=bool))):
        got = nb._tail_series_many(e, n, p, d)
        ref = _ref_tail_series_many(e, n, p, d)
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


@pytest.mark.parametrize("seed", range(4))
def test_binom_logpmf_same_floats(seed):
    """Loader's log-pmf without masks where every entry is on the series branches: the
    previous floats, for one n and for paired n, in windows (the check-in cells'), across
    the branch borders (k ≤ 30, deviances beyond a factor 3 of the mean) and at the edges."""
    rng = np.random.default_rng(seed)
    for _ in range(25):
        n = float(np.floor(10.0 ** rng.uniform(0.5, 10.0)))
        p = float(10.0 ** rng.uniform(-6.0, 0.0))
        sd = math.sqrt(n * p * (1.0 - p))
        zs = rng.uniform(-14.0, 14.0, 2) * rng.choice([1.0, 3.0, 30.0])
        lo, hi = sorted(np.clip(np.floor(n * p + zs * sd), -2.0, n + 2.0))
        k = np.arange(lo, hi + 1.0)[: 20000]
        assert np.array_equal(binom_logpmf_pairs(k, n, p), _ref_binom_logpmf_pairs(k, n, p))
        q = 1.0 - p
        assert np.array_equal(binom_logpmf_pairs(k, n, p, q), _ref_binom_logpmf_pairs(k, n, p, q))
        nn = n - rng.integers(0, 50, k.size)
        assert np.array_equal(binom_logpmf_pairs(k, nn, p), _ref_binom_logpmf_pairs(k, nn, p))
        k2 = k[: (k.size // 2) * 2].reshape(2, -1)
        assert np.array_equal(binom_logpmf_pairs(k2, n, p), _ref_binom_logpmf_pairs(k2, n, p))
        assert np.array_equal(binom_logpmf_pairs(k2, nn[: k2.size].reshape(k2.shape), p),
                              _ref_binom_logpmf_pairs(k2, nn[: k2.size].reshape(k2.shape), p))
    for k, n, p in ((5.0, 10.0, 0.5), (0.0, 10.0, 0.3), (10.0, 10.0, 0.3), (3.0, 10.0, 0.0),
                    (3.0, 10.0, 1.0), (4e9, 1e10, 0.4)):
        assert np.array_equal(binom_logpmf_pairs(k, n, p), _ref_binom_logpmf_pairs(k, n, p))
        assert np.shape(binom_logpmf_pairs(k, n, p)) == ()


def _same_cells(a, b):
    return (np.array_equal(a.c, b.c) and np.array_equal(a.alpha, b.alpha)
            and np.array_equal(a.beta, b.beta) and np.array_equal(a.gamma, b.gamma)
            and np.array_equal(a.w, b.w) and a.zero == b.zero and a.worst == b.worst
            and a.exact == b.exact)


@pytest.mark.parametrize("n,rate,eps0,budget,ranking", [
    (301, 0.1, 1.0, sp.ATOM_BUDGET, False),
    (5_000, 0.3, 2.0, None, False),
    (200_000, 0.05, 3.0, 80_000, False),
    (1_000_000, 0.5, 1.5, sp.ATOM_BUDGET, False),      # scipy's bdtr, the largest n
    (2_000_000, 0.1, 4.0, 80_000, True),
    (3_000_000, 0.9, 0.7, 80_000, False),
    (150_000_000, 0.331, 6.8, 80_000, True),           # several blocks, ranking
    (150_000_000, 0.331, 6.8, 200_000, False),         # certified series, moving thresholds
    (10**10, 0.443, 6.0, 80_000, True),                # one block (thresholds never move)
    (10**9, 0.1, 5.0, 400_000, False),
    (50_000, 1.0, 1.0, sp.ATOM_BUDGET, False),         # γ = 1: no ⊥
    (5_000_000, 0.99999, 1.0, 80_000, False),          # few ⊥: thresholds below 0 (rows
    (5_000_000, 0.99999, 1.0, 80_000, True),           # with probability 0)
])
def test_checkin_cells_same_floats(n, rate, eps0, budget, ranking):
    """The check-in cells (thresholds' segments found for all columns at once, the running
    maximum and the bins' shares column by column): exactly the previous cells."""
    p = math.exp(-eps0) * 0.999
    hp = sp.hidden_pair(n, p, log_odds=eps0, kappa=math.exp(-eps0), rate=rate, c_gamma=0.999)
    assert _same_cells(sp._checkin_binned(hp, budget, ranking),
                       _ref_checkin_binned(hp, budget, ranking))
