"""The one numerics layer every bound uses.

Everything here is private-kernel style (scipy.stats' "public validates, private
computes"): callers pass valid input, functions are vectorised and never validate.

Contents
--------
* ``binom_logpmf``: log of the binomial pmf, accurate to ~1e-15 relative near the mode for
  n up to 1e9 (Loader's saddle-point form, the algorithm behind R's ``dbinom``).
  ``scipy.stats.binom.logpmf`` computes ``lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1)``,
  which at n = 1e6 loses ~1e-9 to cancellation; that is why this exists.
* ``binom_window`` / ``binom_tail_mass``: a window that carries all but a certified tail
  mass, and that mass (rounded up).
* ``hockey_stick`` / ``renyi_minus_one``: divergences between two finite pmfs given in
  log space, written as sums of non-negative terms so relative precision survives.
* ``bisect_certified``: root finding that returns the end certified to satisfy a predicate.
* ``round_up``: the floating-point slack every upper bound gets before it is returned.

References: C. Loader, "Fast and accurate computation of binomial probabilities" (2000).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np
from ._lazy import special  # scipy.special on first use (import time)
from ._memo import register

__all__ = [
    "REL_SLACK",
    "round_up",
    "stirlerr",
    "bd0",
    "binom_logpmf",
    "binom_window",
    "binom_tail_mass",
    "binom_cdf_bounds",
    "binom_sf_bounds",
    "log_binom_coef",
    "logsumexp",
    "hockey_stick",
    "renyi_minus_one",
    "bisect_certified",
    "expm1mx",
    "log1pmx",
    "pow_minus_tangent",
    "log_pow_minus_tangent",
    "binom_log_tail_bound",
    "next_fast_len",
    "fft_power",
    "fft_power_product",
    "golden_min",
    "increasing_root",
]

#: Relative slack added to every upper bound before it leaves a bound module. It covers
#: accumulated floating-point error (sums of up to ~1e7 terms, log/exp round trips) with
#: a wide margin; it is far below every tolerance users care about.
REL_SLACK = 1e-12

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

# stirlerr(n) = lgamma(n+1) - (n+1/2) log n + n - log sqrt(2 pi) for n = 1..30, computed
# once with mpmath at 40 digits:
#   mp.loggamma(n+1) - (n+mp.mpf(1)/2)*mp.log(n) + n - mp.log(mp.sqrt(2*mp.pi))
_STIRLERR_TABLE = np.array([
    0.0,  # n = 0 is never used (k = 0 and k = n are handled separately)
    0.08106146679532725822, 0.041340695955409294094, 0.027677925684998339149,
    0.020790672103765093112, 0.016644691189821192163, 0.013876128823070747999,
    0.011896709945891770095, 0.010411265261972096497, 0.0092554621827127329177,
    0.0083305634333628712565, 0.007573675487951840795, 0.0069428401072095298657,
    0.0064089941880042070684, 0.0059513701127588477356, 0.005554733551962801371,
    0.0052076559196096404407, 0.0049013959484347378607, 0.0046291537493340285924,
    0.0043855602492323242683, 0.0041663196919969224575, 0.0039679542186408596173,
    0.0037876180684444345779, 0.0036229602246830947074, 0.0034720213829787669629,
    0.0033331556367280928758, 0.0032049702280550380112, 0.0030862786826087770633,
    0.002976063983550408826, 0.0028734493623524663876, 0.0027776749297526936036,
])

# Coefficients of the Stirling series 1/(12n) - 1/(360n^3) + 1/(1260n^5) - ...
_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188


def round_up(x):
    """Add the floating-point slack of an upper bound (works on scalars and arrays)."""
    return np.asarray(x, dtype=float) * (1.0 + REL_SLACK) if np.ndim(x) else float(x) * (1.0 + REL_SLACK)


def stirlerr(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for integer-valued n >= 1 (vectorised)."""
    n = np.asarray(n, dtype=float)
    out = np.empty_like(n)
    small = n <= 30
    if np.any(small):
        out[small] = _STIRLERR_TABLE[n[small].astype(np.int64)]
    big = ~small
    if np.any(big):
        nb = n[big]
        inv2 = 1.0 / (nb * nb)
        # Five terms of the asymptotic series: error < S5/n^11 < 1e-19 for n > 30.
        out[big] = (_S0 - (_S1 - (_S2 - (_S3 - _S4 * inv2) * inv2) * inv2) * inv2) / nb
    return out


def bd0(x, m):
    """x log(x/m) + m - x without cancellation (Loader's deviance term), vectorised."""
    x = np.asarray(x, dtype=float)
    m = np.asarray(m, dtype=float)
    x, m = np.broadcast_arrays(x, m)
    out = np.empty(x.shape)
    # Series in v = (x − m)/(x + m) wherever |v| < 1/2 (x/m in (1/3, 3)); outside, the
    # direct form cancels by at most a factor ~3. (A 0.1 cut-off left the direct form's
    # ~10x cancellation at 3 sd of Bin(1000, 0.1): 2e-14 absolute in the log-pmf.)
    near = np.abs(x - m) < 0.5 * (x + m)
    if np.any(near):
        xn, mn = x[near], m[near]
        v = (xn - mn) / (xn + mn)
        s = (xn - mn) * v
        ej = 2.0 * xn * v
        v2 = v * v
        # Term j is s·O(v2^j)/(2j+1): enough terms to reach 1e-18 relative at max v2.
        top = float(np.max(v2))
        n_terms = 1 if top == 0.0 else int(min(60, max(1, math.ceil(math.log(1e-18) / math.log(top)))))
        for j in range(1, n_terms + 1):
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        out[near] = s
    far = ~near
    if np.any(far):
        xf, mf = x[far], m[far]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[far] = xf * np.log(xf / mf) + mf - xf
    return out


def half_binom_logpmf(k, c):
    """log Pr[Bin(c, ½) = k], vectorised in both k and c (Loader's form; −inf outside)."""
    k = np.asarray(k, dtype=float)
    c = np.asarray(c, dtype=float)
    k, c = np.broadcast_arrays(k, c)
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


#: Per-term relative error allowed to the run recurrence before falling back to Loader.
RUN_REL_ERR = 2e-13


def half_binom_logpmf_runs(c, x0, counts, block: int = 32):
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
            sub[valid[bad]] = half_binom_logpmf_runs(c[bad], x0[bad], counts[bad], block // 4)
            out[bad] = sub
        else:
            out[bad] = half_binom_logpmf(x[bad], np.broadcast_to(c[bad][:, None], x[bad].shape))
    return out[valid]


def half_binom_pmf_walk(c, k, block: int = 64):
    """Pr[Bin(c_j, ½) = k_j] along a walk: c_{j+1} = c_j + 1 and k_{j+1} − k_j ∈ {0, 1}.

    Loader's form at every ``block``-th point and the exact ratios in between,
    pmf(c + 1, k)/pmf(c, k) = (c + 1)/(2(c + 1 − k)) and
    pmf(c + 1, k + 1)/pmf(c, k) = (c + 1)/(2(k + 1)): a product of < ``block`` ratios, each
    rounded once, errs by < 2·block ulps (~3e-14 relative at the default). The δ(ε) kernel
    needs the pmf at its threshold of every slice, and the threshold moves by 0 or 1 per
    slice. Returns None (caller evaluates directly) if the input is not such a walk or
    leaves the support 0 ≤ k ≤ c.
    """
    c = np.asarray(c, dtype=float)
    k = np.asarray(k, dtype=float)
    n = c.size
    if n < 2 * block:
        return None
    dk = np.diff(k)
    if (np.any(np.diff(c) != 1.0) or np.any((dk != 0.0) & (dk != 1.0))
            or np.any(k < 0) or np.any(k > c)):
        return None
    with np.errstate(divide="ignore"):
        ratio = np.where(dk == 0.0, (c[:-1] + 1.0) / (2.0 * (c[:-1] + 1.0 - k[:-1])),
                         (c[:-1] + 1.0) / (2.0 * (k[:-1] + 1.0)))
    nb = -(-n // block)
    r = np.ones(nb * block)
    r[1:n] = ratio
    r = r.reshape(nb, block)
    r[:, 0] = 1.0
    heads = np.exp(half_binom_logpmf(k[::block], c[::block]))
    return (heads[:, None] * np.cumprod(r, axis=1)).ravel()[:n]


def binom_logpmf(k, n, p, q=None):
    """log Pr[Bin(n, p) = k], accurate to ~1e-15 relative in the pmf (vectorised in k).

    ``q`` is 1 - p; pass it when it is known more accurately than ``1 - p`` (for example
    ``q = 1/(e^eps0 + 1)`` computed directly). Out-of-support k gives -inf. (One n for all
    k; ``binom_logpmf_pairs`` takes one n per k.)
    """
    return binom_logpmf_pairs(k, float(n), p, q)


#: Largest n at which scipy's ``bdtr``/``bdtrc`` (regularised incomplete beta) are used with
#: a 1e-6 relative slack: against ``binom_cdf_bounds`` they were at most 6e-9 relative
#: low at n = 1e6 (thresholds from −14 to +3 sd, p from 0.01 to 0.99), but 1.8e-6 low at
#: 2e6, 1e-4 at 4e6, 22 % near the mean at 1e8, and NaN or wrong by 1e32 at 1e10.
BDTR_MAX_N = 1_000_000


def _tail_series(edge: int, n: int, p: float, down: bool) -> tuple[float, float]:
    """Certified (lower, upper) bounds on Σ b(i) over i ≤ edge (``down``) or i ≥ edge.

    b(edge)·Σ_j Π_{i<j} r_i with the pmf ratios r_i moving away from the mean, which fall
    with i; the caller makes sure the edge is on its tail's side of the mean, so r_i < 1,
    and once a partial product t_m is reached the rest is at most t_m/(1 − r_m) (a geometric
    tail). b is Loader's log-pmf (``binom_logpmf``, ~1e-12 relative at n = 1e9); the products
    and sums of m positive terms add ≤ 4(m + 2)·u relative. One entry of
    ``_tail_series_many`` (the one implementation of the series).
    """
    lo, hi = _tail_series_many([edge], n, p, [down])
    return float(lo[0]), float(hi[0])


def binom_cdf_bounds(k: int, n: int, p: float) -> tuple[float, float]:
    """Certified (lower, upper) bounds on Pr[Bin(n, p) ≤ k], at any n (no incomplete beta).

    The tail on the far side of k from the mean is summed from its edge outward
    (``_tail_series``); Pr[X ≤ k] = 1 − Pr[X ≥ k + 1] when k is above the mean. Cost
    O(√(np(1 − p))) terms near the mean (~1e5 at n = 1e9), fewer in the tails.
    """
    n, k, p = int(n), int(k), float(p)
    if k < 0:
        return 0.0, 0.0
    if k >= n:
        return 1.0, 1.0
    if k <= n * p:
        return _tail_series(k, n, p, down=True)
    lo, hi = _tail_series(k + 1, n, p, down=False)
    return _complement(lo, hi)


def binom_logpmf_pairs(k, n, p: float, q: float | None = None) -> np.ndarray:
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

#: Terms per vectorised pass of ``_tail_series_many`` (a few arrays of this many floats).
_SERIES_ELEMENTS = 1 << 21


def _tail_series_many(edge, n, p: float, down) -> tuple[np.ndarray, np.ndarray]:
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
        group = max(1, _SERIES_ELEMENTS // block)    # entries per pass (bounds memory)
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


def binom_cdf_bounds_many(k, n, p: float) -> tuple[np.ndarray, np.ndarray]:
    """``binom_cdf_bounds`` at paired arrays (k[i], n[i]), in one vectorised series."""
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    k, n = np.broadcast_arrays(k, n)
    lo = np.where(k >= n, 1.0, 0.0).astype(float)
    hi = lo.copy()
    reg = (k >= 0) & (k < n)
    if np.any(reg):
        kr, nr = k[reg], n[reg]
        down = kr <= nr * float(p)
        edge = np.where(down, kr, kr + 1)
        l, h = _tail_series_many(edge, nr, p, down)
        # above the mean the far tail is the upper one: complement, rounded outward
        lo[reg] = np.where(down, l, np.maximum(1.0 - h - _U, 0.0))
        hi[reg] = np.where(down, h, np.minimum(1.0 - l + _U, 1.0))
    return lo, hi


def binom_sf_bounds(k: int, n: int, p: float) -> tuple[float, float]:
    """Certified (lower, upper) bounds on Pr[Bin(n, p) ≥ k] (see ``binom_cdf_bounds``)."""
    n, k, p = int(n), int(k), float(p)
    if k <= 0:
        return 1.0, 1.0
    if k > n:
        return 0.0, 0.0
    if k >= n * p:
        return _tail_series(k, n, p, down=False)
    lo, hi = _tail_series(k - 1, n, p, down=True)
    return _complement(lo, hi)


def _complement(lo: float, hi: float) -> tuple[float, float]:
    """Bounds on 1 − x from bounds on x, each rounded outward (1 − x rounds by ≤ u)."""
    return max(1.0 - hi - _U, 0.0), min(1.0 - lo + _U, 1.0)


def binom_window(n, p, sds=12.0, extra=12):
    """Integer window [lo, hi] around the mean of Bin(n, p): mean +- (sds * sd + extra).

    The mass outside is tiny but not zero; callers that need a guarantee charge it with
    ``binom_tail_mass``.
    """
    mean = n * p
    half = sds * math.sqrt(max(n * p * (1.0 - p), 0.0)) + extra
    lo = max(0, int(math.floor(mean - half)))
    hi = min(int(n), int(math.ceil(mean + half)))
    return lo, hi


def binom_tail_mass(n, p, lo, hi):
    """Upper bound on Pr[Bin(n, p) < lo] + Pr[Bin(n, p) > hi] (relative slack included)."""
    if n > BDTR_MAX_N:
        below = binom_cdf_bounds(lo - 1, n, p)[1] if lo > 0 else 0.0
        above = binom_sf_bounds(hi + 1, n, p)[1] if hi < n else 0.0
        return float(min(1.0, below + above))
    below = special.bdtr(lo - 1, n, p) if lo > 0 else 0.0
    above = special.bdtrc(hi, n, p) if hi < n else 0.0
    # bdtr/bdtrc go through the regularised incomplete beta; at c ~ 5e5 they were measured
    # ~1e-9 relative off (against mpmath), so allow 1e-6 relative plus an absolute 1e-300.
    return float(min(1.0, (below + above) * (1.0 + 1e-6) + 1e-300))


def log_binom_coef(n, k):
    """log C(n, k) via log-gamma (vectorised; fine for the moderate n of RDP orders)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def logsumexp(*args, **kwargs):
    """``scipy.special.logsumexp`` (a function, not an alias, so scipy loads on first use)."""
    return special.logsumexp(*args, **kwargs)


def hockey_stick(logp, logq, eps):
    """H_{e^eps}(P || Q) = sum (P - e^eps Q)_+ for pmfs given by their logs.

    Written as sum P * (-expm1(eps + log Q - log P)) over the points where the log ratio
    exceeds eps: every term is non-negative and computed without cancellation.
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    with np.errstate(invalid="ignore"):
        diff = eps + logq - logp
    mask = (diff < 0) & np.isfinite(logp)
    if not np.any(mask):
        return 0.0
    return float(np.sum(np.exp(logp[mask]) * -np.expm1(diff[mask])))


def hockey_stick_lower(logp, logq, eps, log_err: float = 1e-13):
    """A value certified ≤ H_{e^eps}(P || Q) for pmfs given by logs accurate to ``log_err``
    (absolute, each) — for lower bounds, whose value must never exceed the truth.

    ``hockey_stick`` is accurate to a few ulps of its terms, but a term P·(1 − e^{ε − ℓ})
    with ℓ barely above ε carries the absolute error of ℓ = log P − log Q (ulps of logs
    of size 30 or more at large ε0) as a relative error: 1.5e-12 of δ at ε0 = 33, enough
    to put a "lower" ε above the exact one. Here each loss is lowered by its error bound
    (2·log_err + 8u(|log P| + |log Q| + |ε|)) and each mass by e^−log_err before summing.
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    u = 2.0 ** -53
    with np.errstate(invalid="ignore"):
        err = 2.0 * log_err + 8.0 * u * (np.abs(logp) + np.abs(logq) + abs(eps))
        err = np.where(np.isfinite(err), err, 0.0)
        diff = eps + logq - logp + err
    mask = (diff < 0) & np.isfinite(logp)
    if not np.any(mask):
        return 0.0
    terms = np.exp(logp[mask] - log_err) * -np.expm1(diff[mask])
    return float(np.sum(terms)) * (1.0 - 4.0 * u * (np.count_nonzero(mask) + 4))


def renyi_minus_one(logp, logq, order):
    """E_Q[(P/Q)^order] - 1 for finite pmfs in log space, kept in the "-1" form.

    sum_x P(x) [(P/Q)(x)^(order-1) - 1], which is exact because sum P = 1. Points where
    Q = 0 and P > 0 give +inf (the divergence is infinite there).
    """
    logp = np.asarray(logp, dtype=float)
    logq = np.asarray(logq, dtype=float)
    live = np.isfinite(logp)
    if np.any(live & ~np.isfinite(logq)):
        return math.inf
    lr = logp[live] - logq[live]
    return float(np.sum(np.exp(logp[live]) * np.expm1((order - 1.0) * lr)))


def falling_root_certified(g: Callable[[float], float], lo: float, hi: float, *,
                           xtol: float = 1e-12, rtol: float = 1e-8, max_iter: int = 200,
                           gtol: float | None = None) -> float:
    """Smallest x (to tolerance) with g(x) ≤ 0, for g non-increasing with g(lo) > 0 ≥ g(hi):
    the certified end of a bracket, like ``bisect_certified(lambda x: g(x) <= 0, …)``.

    Illinois regula falsi on the values of g (a log δ(ε) − log δ is nearly linear in ε, so a
    few evaluations replace the ~30 of bisection); a step that does not shrink the bracket
    by half, or a non-finite value, falls back to bisection. The returned x always had
    g(x) ≤ 0 evaluated, and the bracket is narrowed to a quarter of the bisection tolerance
    — or, with ``gtol``, until the returned end has −gtol ≤ g ≤ 0 (g resolved no finer).
    """
    glo, ghi = g(lo), g(hi)
    if not ghi <= 0.0:
        raise ArithmeticError(f"falling_root_certified: g(hi={hi!r}) = {ghi!r} is not <= 0")
    if glo <= 0.0:
        return lo
    side = 0
    for _ in range(max_iter):
        width = hi - lo
        if width <= 0.25 * max(xtol, rtol * abs(hi)) or (gtol is not None and -ghi <= gtol):
            break
        if math.isfinite(glo) and math.isfinite(ghi) and glo > ghi:
            x = hi - ghi * width / (ghi - glo)
            # keep x strictly inside, away from the ends by a sliver
            x = min(max(x, lo + 1e-3 * width), hi - 1e-3 * width)
        else:
            x = 0.5 * (lo + hi)
        if x <= lo or x >= hi:
            break
        gx = g(x)
        if gx <= 0.0:
            hi, ghi = x, gx
            if side == -1:
                glo *= 0.5                # Illinois: halve the stale end's weight
            side = -1
        else:
            lo, glo = x, gx
            if side == 1:
                ghi *= 0.5
            side = 1
        if hi - lo > 0.5 * width:         # slow progress: one bisection step
            m = 0.5 * (lo + hi)
            gm = g(m)
            if gm <= 0.0:
                hi, ghi = m, gm
            else:
                lo, glo = m, gm
            side = 0
    return hi


def bisect_certified(ok: Callable[[float], bool], lo: float, hi: float, *,
                     want: str = "smallest", xtol: float = 1e-10, rtol: float = 1e-10,
                     max_iter: int = 200) -> float:
    """Bisection on a monotone predicate that returns the certified end.

    ``want="smallest"``: ``ok`` is False below some threshold and True above it, ``ok(hi)``
    must be True; returns an x with ``ok(x)`` True that is within tolerance of the
    threshold (the safe end for "smallest ε with δ(ε) ≤ δ").
    ``want="largest"``: ``ok`` is True below the threshold; ``ok(lo)`` must be True;
    returns the largest certified x found (the safe end for "largest ε0 meeting a target").
    """
    if want not in ("smallest", "largest"):
        raise ValueError(f"want must be 'smallest' or 'largest', got {want!r}")
    # The returned end must be certified: check the bracket end that may be returned
    # unchanged (otherwise an uncertified bracket end would come back silently).
    if want == "smallest" and not ok(hi):
        raise ArithmeticError(f"bisect_certified(want='smallest'): the predicate is False at "
                              f"hi={hi!r}, so no certified point exists in the bracket")
    if want == "largest" and not ok(lo):
        raise ArithmeticError(f"bisect_certified(want='largest'): the predicate is False at "
                              f"lo={lo!r}, so no certified point exists in the bracket")
    for _ in range(max_iter):
        if hi - lo <= max(xtol, rtol * abs(hi if want == "smallest" else lo)):
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        good = ok(mid)
        if want == "smallest":
            if good:
                hi = mid
            else:
                lo = mid
        else:
            if good:
                lo = mid
            else:
                hi = mid
    return hi if want == "smallest" else lo


def expm1mx(y):
    """e^y − 1 − y ≥ 0 without cancellation (series for |y| < 0.1), vectorised."""
    y = np.asarray(y, dtype=float)
    out = np.empty(y.shape)
    small = np.abs(y) < 0.1
    ys = y[small]
    # y^2/2 (1 + y/3 + y^2/12 + ...): term j is y^j/j!; 14 terms reach 1e-20 relative.
    acc = np.zeros(ys.shape)
    term = ys * ys / 2.0
    for j in range(2, 16):
        acc = acc + term
        term = term * ys / (j + 1)
    out[small] = acc
    yb = y[~small]
    out[~small] = np.expm1(yb) - yb
    return out


def log1pmx(x):
    """log(1 + x) − x ≤ 0 without cancellation (series for |x| < 0.1), vectorised."""
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape)
    small = np.abs(x) < 0.1
    xs = x[small]
    acc = np.zeros(xs.shape)
    pw = xs * xs
    for j in range(2, 20):
        acc = acc + (pw / j if j % 2 else -pw / j)
        pw = pw * xs
    out[small] = acc
    xb = x[~small]
    out[~small] = np.log1p(xb) - xb
    return out


def pow_minus_tangent(x, a, log1px=None):
    """(1 + x)^a − 1 − a·x, the non-negative part of E[(1+X)^a] when E[X] = 0.

    Non-negative for a ≥ 1 and a ≤ 0 (convexity). Computed as
    expm1mx(a·log1p(x)) + a·log1pmx(x): for a ≤ 0 both parts are non-negative; for a > 1
    the second is negative but the cancellation costs at most a factor a/(a − 1).
    ``log1px``: log(1 + x) when the caller knows it more accurately than ``log1p(x)``
    (x near −1, where 1 + x has lost its relative precision in ``x``).
    """
    x = np.asarray(x, dtype=float)
    lx = np.log1p(x) if log1px is None else np.asarray(log1px, dtype=float)
    lmx = log1pmx(x)
    if log1px is not None:
        far = np.abs(x) >= 0.1
        lmx = np.where(far, lx - x, lmx)
    return np.maximum(expm1mx(a * lx) + a * lmx, 0.0)


def log_pow_minus_tangent(x, a, log1px=None):
    """log((1 + x)^a − 1 − a·x), finite even where (1 + x)^a overflows (−inf where 0).

    ``log1px`` as in ``pow_minus_tangent``.
    """
    x = np.asarray(x, dtype=float)
    lx = np.log1p(x) if log1px is None else np.asarray(log1px, dtype=float)
    y = a * lx
    out = np.empty(x.shape)
    big = y > 50.0
    with np.errstate(divide="ignore"):
        out[~big] = np.log(pow_minus_tangent(x[~big], a, lx[~big]))
    # For |x| < 1e-30 the value a(a−1)x²/2 (relative error O(|a x|)) underflows in the
    # linear domain; take its log directly so that log space stays finite.
    tiny = (np.abs(x) < 1e-30) & (x != 0.0) & ~big
    if np.any(tiny) and a != 0.0 and a != 1.0:
        out[tiny] = math.log(abs(a * (a - 1.0)) / 2.0) + 2.0 * np.log(np.abs(x[tiny]))
    yb = y[big]
    out[big] = yb + np.log1p(-(1.0 + a * x[big]) * np.exp(-yb))
    return out


# ----------------------------------------------------------------------------------------
# Moments of Rademacher sums
# ----------------------------------------------------------------------------------------
def _even_partition_counts(kmax: int):
    """E[k][m] = number of partitions of a 2k-set into m blocks of even size (exact ints).

    Recurrence on the block holding element 1 (size 2i, its 2i − 1 other elements chosen
    from the remaining 2k − 1): E(2k, m) = Σ_i C(2k − 1, 2i − 1) E(2k − 2i, m − 1).
    """
    e = [[0] * (kmax + 1) for _ in range(kmax + 1)]
    e[0][0] = 1
    for k in range(1, kmax + 1):
        for m in range(1, k + 1):
            e[k][m] = sum(math.comb(2 * k - 1, 2 * i - 1) * e[k - i][m - 1]
                          for i in range(1, k - m + 2))
    return e


_EVEN_PARTITIONS: dict = register("shuffledp.numerics._EVEN_PARTITIONS", {})


def rademacher_log_moments(s, kmax: int) -> np.ndarray:
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


def binom_log_tail_bound(n, p, k, upper: bool, q=None) -> float:
    """Rigorous upper bound on log Pr[Bin(n, p) ≥ k] (``upper``) or log Pr[Bin(n, p) ≤ k].

    Chernoff–Hoeffding in log space (Hoeffding 1963, Thm 1): for k ≥ np,
    Pr[X ≥ k] ≤ exp(−n·KL(k/n ‖ p)), and symmetrically below the mean; 0 (log 1) on the
    wrong side of the mean. Never underflows, so a far tail multiplied by a huge factor
    (e^{(λ−1)·loss} in a Rényi sum) stays a bound instead of a floor that dominates it.
    ``q`` = 1 − p when known more accurately. A relative 1e-10 of the terms is given back
    to cover rounding in them.
    """
    n = float(n)
    k = float(k)
    p = float(p)
    q = 1.0 - p if q is None else float(q)
    if upper:
        if k <= n * p:
            return 0.0
        if k > n:
            return -math.inf
    else:
        if k >= n * p:
            return 0.0
        if k < 0:
            return -math.inf
    # n·KL(k/n ‖ p) = k log(k/(np)) + (n − k) log((n − k)/(nq)), each with 0·log 0 = 0.
    lp = math.log(p) if p > 0 else -math.inf
    lq = math.log1p(-p) if p < 0.5 else math.log(q)
    t1 = 0.0 if k == 0 else k * (math.log(k / n) - lp)
    t2 = 0.0 if k == n else (n - k) * (math.log1p(-k / n) - lq)
    kl = t1 + t2
    if kl != kl:
        return 0.0
    if kl == math.inf:
        return -math.inf
    return -max(kl - 1e-10 * (abs(t1) + abs(t2)), 0.0)


# ----------------------------------------------------------------------------------------
# Certified FFT power (shared by the i.i.d.-sum engine and the PLD composer)
# ----------------------------------------------------------------------------------------
_U = 2.0 ** -53
#: Constant of the normwise FFT error bound (Higham, Accuracy and Stability of Numerical
#: Algorithms, 2nd ed., Thm 24.2, proved for radix 2: c·u·log2 L); 10 leaves a wide margin
#: for pocketfft's mixed radices 2, 3, 5.
_C_FFT = 10.0
#: Spectral components with |F|^n below e^-_DROP are set to 0 (and charged): computing them
#: produces subnormal numbers, ~100x slower on common CPUs.
_DROP = 600.0


def next_fast_len(n: int) -> int:
    """Smallest 5-smooth integer ≥ n (an efficient length for numpy's pocketfft)."""
    n = max(int(n), 1)
    best = 1 << max(n - 1, 0).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m <<= 1
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def circular_run(Q: np.ndarray, start: int, length: int) -> np.ndarray:
    """Q[(start + j) mod L] for j < length, L = Q.size — a window of a circular convolution
    read as at most two slices when length ≤ L, and as a slice of Q tiled when longer (a
    periodic run); no index array either way."""
    L = Q.size
    i = start % L
    if length > L:
        return np.tile(Q, -(-(i + length) // L))[i:i + length]
    if i + length <= L:
        return Q[i:i + length]
    return np.concatenate([Q[i:], Q[:length - (L - i)]])


def fft_power(q, n: int, L: int):
    """Circular n-fold self-convolution of a non-negative vector by one FFT power.

    ``q`` (length ≤ L, entries ≥ 0, Σq ≤ 1) is zero-padded to L. Returns ``(Q, err)``: the
    computed length-L vector and an a-posteriori bound ``err`` ≥ 2‖Q − Q*‖₂ (a factor-2
    margin included), where Q* is the exact circular convolution. A weighted sum Σ w·Q is
    then within ‖w‖₂·err of Σ w·Q*. ``fft_power_product([(q, n)], L)``; see there.
    """
    return fft_power_product([(q, n)], L)


def fft_powers(q, ns, L: int):
    """``[fft_power(q, n, L) for n in ns]`` with one forward transform of ``q`` (the same
    values to the last bit)."""
    fwd = _forward(q, 0.0, L)
    return [fft_power_product([(q, n)], L, _fwd=[fwd]) for n in ns]


def _fft_err_unit(L: int) -> float:
    """c·u·log₂L: the error of one length-L transform per unit ℓ1 norm of its input."""
    return _C_FFT * _U * math.ceil(math.log2(max(L, 2)))


def _forward(q, in_err: float, L: int):
    """(F̂, |F̂|, ε) of one part: its zero-padded real transform and the componentwise bound
    on the transform's error (``fft_power_product``)."""
    cf = _fft_err_unit(L)
    qa = np.asarray(q, dtype=float)
    arr = np.zeros(L)
    arr[:qa.size] = qa
    F = np.fft.rfft(arr)
    return F, np.abs(F), cf * float(np.sum(np.abs(qa))) + in_err


def fft_power_product(parts, L: int, _fwd=None):
    """Circular convolution of ``n_i``-fold self-convolutions of non-negative vectors ``q_i``
    (``parts``: tuples (q_i, n_i) or (q_i, n_i, in_err_i)) by one product of FFT powers.

    Each ``q_i`` (length ≤ L, entries ≥ 0, Σq_i ≤ 1 up to its error) may itself be a
    computed approximation: ``in_err_i`` bounds ‖q_i − q_i*‖₁, and Q* is then the exact
    result for the exact q_i*. Returns ``(Q, err)`` with err ≥ 2‖Q − Q*‖₂.

    The forward transforms' errors η_ik = F̂_ik − F_ik are bounded componentwise,
    |η_ik| ≤ ε_i = c·u·log₂L·‖q_i‖₁ + in_err_i: every intermediate value of a decimation
    stage is a DFT of a subsequence (modulus ≤ its ℓ1 norm), each butterfly errs by a few
    ulps of its inputs' moduli, and later stages carry an error to each output along one
    path of unit-modulus twiddles, so one stage adds ≤ c·u·‖q_i‖₁ to |η_ik| (an input
    perturbation adds at most its ℓ1 norm). For one part without input error the normwise
    bound ‖η‖₂ ≤ c·u·log₂L·√L‖q‖₂ (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., Thm 24.2) is also used and the smaller result kept.

    The product Π F_ik^{n_i} then moves by at most G_k·Σ_i n_i ε_i/(|F̂_ik| + ε_i),
    G_k = Π_i (|F̂_ik| + ε_i)^{n_i} (telescoping) — negligible wherever G_k is, i.e. at all
    but a few frequencies once n is large, where the normwise bound charges n‖η‖₂ to every
    frequency (at n = 1e8 the difference between a 4 % and a 0.01 % allowance on the
    blanket's δ). Added: the powers' own rounding (complex log/exp,
    ∝ n_i(|log|F_i|| + π + 1)·u per part), the components dropped as below e^−600 (each at
    most G_k), and the inverse transform's error; Parseval turns spectral into time-domain
    norms.
    """
    parts = [(p[0], int(p[1]), float(p[2]) if len(p) > 2 else 0.0) for p in parts]
    cf = _fft_err_unit(L)
    logG = None
    Fs, absFs, epss = [], [], []
    for i, (q, n, in_err) in enumerate(parts):
        F, absF, eps_i = _fwd[i] if _fwd is not None else _forward(q, in_err, L)
        Fs.append(F)
        absFs.append(absF)
        epss.append(eps_i)
        with np.errstate(divide="ignore", invalid="ignore"):
            lg = np.log(absF + eps_i)
        logG = n * lg if logG is None else logG + n * lg
    # Where log G_k < −746, G_k = e^{log G_k} is exactly 0 in floating point: no power is
    # kept there (|F̂|^n ≤ G) and nothing is charged. Everything below runs on the other
    # frequencies only — once n is large, a small fraction of them.
    live = np.flatnonzero(logG > -746.0)
    rough = None
    pert_sum = None
    for F, absF, eps_i, (_, n, _) in zip(Fs, absFs, epss, parts):
        a_l = absF[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.log(a_l)
        rough = n * la if rough is None else rough + n * la
        # n_i ε_i/(|F̂_ik| + ε_i) (the telescoping sum's factor), ≤ n_i
        term = n * eps_i / (a_l + eps_i) if eps_i > 0 else np.zeros(a_l.size)
        pert_sum = term if pert_sum is None else pert_sum + term
    # The complex logs (the accurate log|F̂| near |F̂| = 1, and the phase) only where the
    # power can be kept. The margin covers the difference between log(abs(F̂)) and the
    # complex log's real part.
    cand_l = np.flatnonzero(rough > -_DROP - 1.0 - 1e-6 * sum(n for _, n, _ in parts))
    cand = live[cand_l]
    logF = np.zeros(cand.size, dtype=complex)
    logabs_i = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for F, (_, n, _) in zip(Fs, parts):
            lf = np.log(F[cand])
            logF += n * lf
            logabs_i.append(lf.real)             # log|F̂_i| (−inf where F̂_i = 0)
    keep = logF.real > -_DROP
    sig_l = cand_l[keep]                         # kept components, as positions in ``live``
    sig = cand[keep]                             # … and as frequencies
    logabs_i = [la[keep] for la in logabs_i]
    Fn = np.zeros(absFs[0].size, dtype=complex)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        Fn[sig] = np.exp(logF[keep])
    Q = np.fft.irfft(Fn, L)
    aFn = np.abs(Fn[sig])
    with np.errstate(under="ignore", over="ignore"):
        G = np.exp(logG[live])
    pert = G * pert_sum
    pert_l2 = math.sqrt(float(np.sum(pert[sig_l] ** 2)))
    if len(parts) == 1 and parts[0][2] == 0.0:
        q, n, _ = parts[0]
        qa = np.asarray(q, dtype=float)
        e_norm = cf * math.sqrt(L) * math.sqrt(float(np.sum(qa * qa)))
        grow = math.exp((n - 1) * math.log(float(absFs[0].max()) + e_norm)) if n > 1 else 1.0
        pert_l2 = min(pert_l2, n * e_norm * grow)
    # powers' rounding: exp(Σ n_i log F_i) — each log carries ≤ ~4u(|log|F|| + π + 1)
    rnd = np.zeros(int(sig_l.size))
    for (q, n, _), la in zip(parts, logabs_i):
        rnd += 4.0 * _U * (n * (np.abs(la) + math.pi + 1.0) + 2.0)
    pow_round = aFn * (rnd + 2.0 * _U * len(parts))
    # dropped components (|exact| ≤ G_k) and the non-significant ones' perturbation
    rest = np.ones(live.size, dtype=bool)
    rest[sig_l] = False
    dropped = G[rest] * (1.0 + pert_sum[rest])
    spec_err = (pert_l2 + math.sqrt(float(np.sum(pow_round * pow_round)))
                + math.sqrt(float(np.sum(dropped * dropped))))
    time_err = math.sqrt(2.0) * spec_err / math.sqrt(L)
    inv_err = cf * math.sqrt(2.0) * math.sqrt(float(np.sum(aFn * aFn))) / math.sqrt(L) * 1.01
    return Q, 2.0 * (time_err + inv_err)


# ----------------------------------------------------------------------------------------
# Small scalar searches (scipy.optimize costs ~0.4 s to import; these are all we need)
# ----------------------------------------------------------------------------------------
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def golden_min(f, a: float, b: float, iters: int):
    """Golden-section search for a minimum of f on [a, b]; returns (x, f(x)), the best seen."""
    best = (math.inf, None)
    c = b - _GOLDEN * (b - a)
    d = a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    best = min(best, (fc, c), (fd, d))
    for _ in range(iters):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
            best = min(best, (fc, c))
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
            best = min(best, (fd, d))
    return best[1], best[0]


def increasing_root(f, a: float, b: float, *, xtol: float = 1e-14, rtol: float = 1e-13,
                    max_iter: int = 200) -> float:
    """Root of an increasing function with f(a) ≤ 0 ≤ f(b): regula falsi with the Illinois
    modification (superlinear), bisection when it stalls. Not a certified end: callers use
    it where any point near the root is valid (a tilt, a refinement)."""
    fa, fb = f(a), f(b)
    if fa >= 0.0:
        return a
    if fb <= 0.0:
        return b
    side = 0
    for _ in range(max_iter):
        if b - a <= max(xtol, rtol * max(abs(a), abs(b))):
            break
        x = (a * fb - b * fa) / (fb - fa)
        if not a < x < b:
            x = 0.5 * (a + b)
        fx = f(x)
        if fx > 0.0:
            b, fb = x, fx
            if side == -1:
                fa *= 0.5
            side = -1
        elif fx < 0.0:
            a, fa = x, fx
            if side == 1:
                fb *= 0.5
            side = 1
        else:
            return x
    return 0.5 * (a + b)
