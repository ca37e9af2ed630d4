"""Binomial probabilities: Loader's log-pmf, half-binomial walks, certified tail sums and
the ONE rule for a tail's upper bound (``binom_tail_upper`` / ``binom_log_tail_upper``).

* ``binom_logpmf``: log of the binomial pmf, accurate to ~1e-15 relative near the mode for
  n up to 1e9 (Loader's saddle-point form, the algorithm behind R's ``dbinom``).
  ``scipy.stats.binom.logpmf`` computes ``lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1)``,
  which at n = 1e6 loses ~1e-9 to cancellation; that is why this exists.
* ``binom_window`` / ``binom_tail_mass``: a window that carries all but a certified tail
  mass, and that mass (rounded up).
* ``binom_cdf_bounds`` / ``binom_sf_bounds``: certified two-sided bounds at any n.
* ``rademacher_log_moments``: even moments of sums of ±1 signs (W = 2·Bin(s, ½) − s).

References: C. Loader, "Fast and accurate computation of binomial probabilities" (2000);
W. Hoeffding, "Probability inequalities for sums of bounded random variables" (1963).
"""

from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction

import numpy as np

from ..core._lazy import special  # scipy.special on first use (import time)
from ..core._memo import register
from .rounding import (NUMPY_PAIRWISE_LEAF, U as _U, pairwise_combine, pairwise_leaves,
                       product_error)

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


def stirlerr(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for integer-valued n >= 1 (vectorised)."""
    n = np.asarray(n, dtype=float)
    out = np.empty_like(n)
    small = n <= 30
    if np.any(small):
        out[small] = _STIRLERR_TABLE[n[small].astype(np.int64)]
    big = ~small
    if np.any(big):
        out[big] = _stirlerr_series(n[big])
    return out


def _stirlerr_series(n):
    """``stirlerr`` for n > 30: five terms of the asymptotic series (error < S5/n^11 <
    1e-19)."""
    inv2 = 1.0 / (n * n)
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 * inv2) * inv2) * inv2) * inv2) / n


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
        out[near] = _bd0_series(x[near], m[near])
    far = ~near
    if np.any(far):
        xf, mf = x[far], m[far]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[far] = xf * np.log(xf / mf) + mf - xf
    return out


def _bd0_series(x, m):
    """``bd0`` where |x − m| < (x + m)/2 (non-empty): the series in v = (x − m)/(x + m)."""
    v = (x - m) / (x + m)
    s = (x - m) * v
    ej = 2.0 * x * v
    v2 = v * v
    # Term j is s·O(v2^j)/(2j+1): enough terms to reach 1e-18 relative at max v2.
    top = float(np.max(v2))
    n_terms = 1 if top == 0.0 else int(min(60, max(1, math.ceil(math.log(1e-18) / math.log(top)))))
    for j in range(1, n_terms + 1):
        ej = ej * v2
        s = s + ej / (2 * j + 1)
    return s


def half_binom_logpmf(k, c):
    """log Pr[Bin(c, ½) = k], vectorised in both k and c (Loader's form; −inf outside).

    When every entry is in the interior with k, c − k > 30 and both deviances on their
    series branch (the clone pairs' δ(ε) kernel, a dozen calls per evaluation on small
    arrays), the same arithmetic runs on the whole arrays without the masks: the same
    floats, less of numpy's per-call overhead."""
    k = np.asarray(k, dtype=float)
    c = np.asarray(c, dtype=float)
    k, c = np.broadcast_arrays(k, c)
    if k.size:
        nk = c - k
        half = 0.5 * c
        if bool(np.all((k > 30.0) & (nk > 30.0) & (np.abs(k - half) < 0.5 * (k + half))
                       & (np.abs(nk - half) < 0.5 * (nk + half)))):
            return (_stirlerr_series(c) - _stirlerr_series(k) - _stirlerr_series(nk)
                    - _bd0_series(k, half) - _bd0_series(nk, half)
                    - 0.5 * np.log(2.0 * math.pi * k * nk / c))
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
    (``HalfBinomRuns`` gives the same values a group of rows at a time.)
    """
    return HalfBinomRuns(c, x0, counts, block).all()


#: Points per group of rows that ``HalfBinomRuns`` (and the clone pair's point sets built
#: on it) evaluate together: a few arrays of this many floats stay in the CPU cache, where
#: one pass over all points (up to millions) streamed every temporary through memory.
RUN_GROUP_POINTS = 1 << 16


#: Grid points (rows × padded width) from which ``HalfBinomRuns.rows`` forms its running
#: sums on the transposed grid.
_TRANSPOSED_MIN = 1 << 14


class HalfBinomRuns:
    """``half_binom_logpmf_runs`` evaluated one group of rows at a time, with the same floats.

    What depends on all rows is done once here, as the one-call form did it: Loader's form
    at the anchors of every row (its deviance series takes its number of terms from the
    largest argument of the call), which rows fail the recurrence's error test, and those
    rows' values (retried with denser anchors, ``half_binom_logpmf_runs``). ``rows(r0, r1)``
    then runs the recurrence for rows r0..r1 − 1: every operation there is elementwise or
    a sum along one row's block, so the values do not depend on how rows are grouped.

    The error test's running sums (``(block + 1)·u·Σ|log ratios|``) are formed only for
    rows that a bound from the row's two ends does not already clear: the log ratio
    log((c − x)/(x + 1)) decreases in x, so its largest magnitude on a row is at one of
    its ends, and a block sums at most block − 1 of them. Rows the bound clears would pass
    the full test too (the bound is padded for the rounding of the ends' logs and of the
    sums), so the rows that fail are the same.
    """

    def __init__(self, c, x0, counts, block: int = 32):
        self.c = c = np.asarray(c, dtype=float)
        self.x0 = x0 = np.asarray(x0, dtype=float)
        self.counts = counts = np.asarray(counts, dtype=np.int64)
        self.block = block
        rows = c.size
        self.total = int(counts.sum()) if rows else 0
        self.sub = None
        if self.total == 0:
            return
        nb = int(-(-int(counts.max()) // block))
        # The anchors exactly as the one-call form took them (its padded grid's every
        # block-th column, padding included: Loader's series length depends on them all).
        anchors = x0[:, None] + np.arange(nb * block, dtype=float)[None, ::block]
        self.la = half_binom_logpmf(anchors, np.broadcast_to(c[:, None], anchors.shape))
        bad = self._bad_rows()
        self.bad = bad
        if np.any(bad):
            nbad = counts[bad]
            if block > 4:
                self.sub = half_binom_logpmf_runs(c[bad], x0[bad], nbad, block // 4)
            else:
                width = nb * block
                col = np.arange(width, dtype=float)
                xb = x0[bad][:, None] + col[None, :]
                vals = half_binom_logpmf(xb, np.broadcast_to(c[bad][:, None], xb.shape))
                self.sub = vals[col[None, :] < nbad[:, None]]
            self.sub_start = np.cumsum(nbad) - nbad          # each bad row's run in sub
            self.bad_rank = np.cumsum(bad) - 1

    def _bad_rows(self) -> np.ndarray:
        """Rows where some value's error allowance exceeds ``RUN_REL_ERR``."""
        c, x0, counts, block = self.c, self.x0, self.counts, self.block
        k = (block + 1) * 1.2e-16
        lo = x0
        hi = np.minimum(x0 + counts - 2, c - 1.0)        # the log ratios a row's steps use
        has = hi >= lo
        with np.errstate(divide="ignore", invalid="ignore"):
            d_lo = np.log((c - lo) / (lo + 1.0))
            d_hi = np.log((c - hi) / (hi + 1.0))
            top = np.maximum(np.abs(d_lo), np.abs(d_hi)) * (1.0 + 1e-9) + 1e-15
            clear = ~has | ((x0 >= 0.0) & np.isfinite(top)
                            & (k * (block - 1) * top * (1.0 + 1e-12) <= RUN_REL_ERR))
        bad = np.zeros(c.size, dtype=bool)
        check = np.flatnonzero(~clear)
        for g0, g1 in row_groups(counts[check], block):
            r = check[g0:g1]
            cr, cnt = c[r], counts[r]
            nb = int(-(-int(cnt.max()) // block))
            width = nb * block
            col = np.arange(width, dtype=float)
            x = x0[r][:, None] + col[None, :]
            step = self._steps(cr, x, nb)
            with np.errstate(invalid="ignore"):
                err = k * np.cumsum(np.abs(np.where(np.isfinite(step), step, 0.0)),
                                    axis=-1).reshape(r.size, width)
            bad[r] = np.any((col[None, :] < cnt[:, None]) & (err > RUN_REL_ERR), axis=1)
        return bad

    def _steps(self, c, x, nb: int) -> np.ndarray:
        """The recurrence's steps on a padded grid x (rows, nb·block): 0 at each block's
        anchor, then log pmf(x) − log pmf(x − 1); −inf where that is not finite."""
        block = self.block
        # step at x is log pmf(x) − log pmf(x − 1) = log((c − (x − 1))/x): the same operands
        # (x − 1 and x are exact integers) and operations as log((c − y)/(y + 1)) at y = x − 1,
        # formed in place at x (no shifted copy); then 0 at each anchor
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.subtract(c[:, None], x - 1.0)
            step /= x
            np.log(step, out=step)
        step = step.reshape(x.shape[0], nb, block)
        step[..., 0] = 0.0
        # Outside the support the recurrence is meaningless; those points are set below.
        np.copyto(step, -np.inf, where=~np.isfinite(step))
        return step

    def rows(self, r0: int, r1: int, want_x: bool = False):
        """Values of rows r0..r1 − 1, concatenated (and their x when ``want_x``): on the
        transposed grid (``_rows_transposed``) from ``_TRANSPOSED_MIN`` grid points, where its
        ``block − 1`` vector additions cost less than ``cumsum``'s per-block loop; below, the
        row-major grid (``_rows_by_row``: one call, not 31, for the small runs of the hidden
        pairs' cells). The same floats either way."""
        counts = self.counts[r0:r1]
        if counts.size:
            nb = -(-int(counts.max()) // self.block)
            if counts.size * nb * self.block >= _TRANSPOSED_MIN:
                return self._rows_transposed(r0, r1, want_x)
        return self._rows_by_row(r0, r1, want_x)

    def _rows_transposed(self, r0: int, r1: int, want_x: bool = False):
        """``rows`` on the transposed grid (``block`` rows of one column per (row, anchor)):
        the running sums are ``block − 1`` vector additions, each over every column, instead
        of numpy's ``cumsum`` along 32-long axes (a loop of its own per block, ~3 ns a
        value). Each value is the same sequence of additions from its anchor, so the same
        float (tests/test_half_binom_rows_same_floats.py)."""
        c, x0, counts = self.c[r0:r1], self.x0[r0:r1], self.counts[r0:r1]
        n = int(counts.sum()) if counts.size else 0
        if n == 0:
            return (np.zeros(0), np.zeros(0)) if want_x else np.zeros(0)
        block = self.block
        nb = int(-(-int(counts.max()) // block))
        width = nb * block
        rows = c.size
        m = rows * nb
        # column j = r·nb + b holds x = x0_r + b·block + k at row k (the same float sums
        # x0 + col as the row-major grid's)
        base = np.repeat(x0, nb)
        base += np.tile(np.arange(0.0, width, block), rows)
        xt = np.add(base[None, :], np.arange(block, dtype=float)[:, None])
        ct = np.repeat(c, nb)
        # steps log pmf(x) − log pmf(x − 1) = log((c − (x − 1))/x), 0 at each anchor
        # (``_steps``' operations, elementwise)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.subtract(ct[None, :], xt - 1.0)
            out /= xt
            np.log(out, out=out)
        out[0] = 0.0
        np.copyto(out, -np.inf, where=~np.isfinite(out))
        with np.errstate(invalid="ignore"):
            for k in range(1, block):
                np.add(out[k - 1], out[k], out=out[k])
            out += self.la[r0:r1, :nb].reshape(1, m)
        # (the masks only where some x of the grid is outside its row's support, or some
        # value is NaN: the same values as setting them everywhere)
        if float(x0.min()) < 0.0 or float(np.max(x0 + (width - 1) - c)) > 0.0:
            np.copyto(out, -np.inf, where=~((xt >= 0) & (xt <= ct[None, :])))
        if np.isnan(out).any():
            np.copyto(out, -np.inf, where=np.isnan(out))
        full = bool(np.all(counts == width))
        by_row = out.T                               # (row, anchor) by k: row-major order
        if full:
            vals = by_row.reshape(-1)                # (a copy: the view is transposed)
        else:
            col = np.arange(block)
            valid = (np.tile(np.arange(0, width, block), rows)[:, None] + col[None, :]
                     < np.repeat(counts, nb)[:, None])
            vals = by_row[valid]
        self._substitute(vals, r0, r1, counts)
        if not want_x:
            return vals
        xr = xt.T
        return vals, (xr.reshape(-1) if full else xr[valid])

    def _substitute(self, vals, r0: int, r1: int, counts) -> None:
        """Write the substituted rows' values (``sub``) over theirs in ``vals``, the rows
        r0..r1 − 1 concatenated (both grid forms of ``rows``)."""
        if self.sub is None:
            return
        b = np.flatnonzero(self.bad[r0:r1])
        if b.size:
            starts = np.cumsum(counts) - counts
            cnt = counts[b]
            offs = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            dst = np.repeat(starts[b], cnt) + offs
            src = np.repeat(self.sub_start[self.bad_rank[r0 + b]], cnt) + offs
            vals[dst] = self.sub[src]

    def _rows_by_row(self, r0: int, r1: int, want_x: bool = False):
        """``rows`` on the row-major grid, numpy's ``cumsum`` along each block."""
        c, x0, counts = self.c[r0:r1], self.x0[r0:r1], self.counts[r0:r1]
        n = int(counts.sum()) if counts.size else 0
        if n == 0:
            return (np.zeros(0), np.zeros(0)) if want_x else np.zeros(0)
        block = self.block
        nb = int(-(-int(counts.max()) // block))
        width = nb * block
        col = np.arange(width, dtype=float)
        x = x0[:, None] + col[None, :]
        step = self._steps(c, x, nb)
        with np.errstate(invalid="ignore"):
            out = np.cumsum(step, axis=-1)
            np.add(self.la[r0:r1, :nb, None], out, out=out)
        out = out.reshape(c.size, width)
        # (the masks only where some x of the grid is outside its row's support, or some
        # value is NaN: the same values as setting them everywhere)
        if float(x0.min()) < 0.0 or float(np.max(x0 + (width - 1) - c)) > 0.0:
            np.copyto(out, -np.inf, where=~((x >= 0) & (x <= c[:, None])))
        if np.isnan(out).any():
            np.copyto(out, -np.inf, where=np.isnan(out))
        full = bool(np.all(counts == width))
        valid = None if full else col[None, :] < counts[:, None]
        vals = out.reshape(-1) if full else out[valid]
        self._substitute(vals, r0, r1, counts)
        if not want_x:
            return vals
        return vals, (x.reshape(-1) if full else x[valid])

    def all(self) -> np.ndarray:
        """Every row's values, concatenated (``half_binom_logpmf_runs``)."""
        out = np.empty(self.total)
        pos = 0
        for g0, g1 in row_groups(self.counts, self.block):
            v = self.rows(g0, g1)
            out[pos:pos + v.size] = v
            pos += v.size
        return out


def row_groups(counts, block: int = 1, points: int = RUN_GROUP_POINTS):
    """Consecutive row ranges [g0, g1) of about ``points`` points each (at least one row);
    a row of ``counts`` points takes ceil(counts/block)·block on a padded grid."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.size == 0:
        return []
    padded = -(-counts // block) * block
    ends = np.cumsum(padded)
    out = []
    g0 = 0
    while g0 < counts.size:
        base = int(ends[g0 - 1]) if g0 else 0
        g1 = int(np.searchsorted(ends, base + points, side="right"))
        g1 = max(g1, g0 + 1)
        out.append((g0, g1))
        g0 = g1
    return out


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

    p = float(p)
    q = 1.0 - p if q is None else float(q)
    inner = (kb > 0) & (kb < n)
    whole = p > 0.0 and q > 0.0 and bool(inner.all())
    if whole:
        # every k strictly inside its support (the usual case): no edges to set and no
        # masked copies; the same values in the same order as the masked form's
        ki = kb
        ni = n if n.ndim == 0 else np.broadcast_to(n, shape)
    else:
        out = np.full(shape, -np.inf)
        if p <= 0.0:
            out[kb == 0] = 0.0
            return out
        if q <= 0.0:
            out[kb == n] = 0.0
            return out
        # Each edge uses whichever of p, q is small (and hence accurate): log1p of the
        # small one, or the log of it directly.
        lo_edge = kb == 0
        hi_edge = kb == n
        out[lo_edge] = at(lo_edge) * (math.log1p(-p) if p < 0.5 else math.log(q))
        out[hi_edge] = at(hi_edge) * (math.log(p) if p < 0.5 else math.log1p(-q))
    if whole or np.any(inner):
        if not whole:
            ki, ni = kb[inner], at(inner)
        nk = ni - ki
        mp_hi, mq_hi = ni * p, ni * q
        # the exact residuals n·p − fl(n·p), once per distinct n
        if ni.ndim == 0:
            mp_lo, mq_lo = _residuals(np.array([float(ni)]), p, q)
            mp_lo, mq_lo = float(mp_lo[0]), float(mq_lo[0])
        else:
            un, inv = np.unique(ni, return_inverse=True)
            inv = inv.reshape(ni.shape)
            mp_lo, mq_lo = _residuals(un, p, q)
            mp_lo, mq_lo = mp_lo[inv], mq_lo[inv]
        if _all_series(ki, nk, mp_hi, mq_hi):
            # Every entry on the series branches (both counts above 30, both deviances
            # near their means: the check-in cells' windows): the same arithmetic without
            # the masks and their copies, so the same floats (tests/test_hidden_same_floats.py).
            st_k, st_nk = _stirlerr_series(ki), _stirlerr_series(nk)
            bd_k, bd_nk = _bd0_series(ki, mp_hi), _bd0_series(nk, mq_hi)
        else:
            st_k, st_nk = stirlerr(ki), stirlerr(nk)
            bd_k, bd_nk = bd0(ki, mp_hi), bd0(nk, mq_hi)
        lc = (stirlerr(ni) - st_k - st_nk
              - bd_k - bd_nk
              - mp_lo * (1.0 - ki / mp_hi) - mq_lo * (1.0 - nk / mq_hi))
        val = lc - 0.5 * np.log(2.0 * math.pi * ki * nk / ni)
        if whole:
            return np.array(val, dtype=float).reshape(shape)
        out[inner] = val
    return out


def _residuals(x, p: float, q: float):
    """(x·p − fl(x·p), x·q − fl(x·q)) exactly, for integer-valued counts x (an array):
    ``rounding.product_error`` (vectorised, ~10 ns an entry) where it is exact, else the
    rationals themselves (``Fraction``, ~15 µs an entry) — the same doubles either way
    (tests/test_product_error.py)."""
    x = np.asarray(x, dtype=float)
    if bool(np.all(x == np.floor(x))):
        a, b = product_error(x, p), product_error(x, q)
        if a is not None and b is not None:
            return a, b

    def residual(m, f):
        v = float(m)
        return float(Fraction(int(v)) * Fraction(f) - Fraction(v * f))

    return (np.array([residual(v, p) for v in x.tolist()]),
            np.array([residual(v, q) for v in x.tolist()]))


def _all_series(k, nk, mp, mq) -> bool:
    """Whether ``stirlerr`` and ``bd0`` take their series branch at every entry (counts
    above 30; deviances with |x − m| < (x + m)/2, i.e. m/3 < x < 3m), so the masks can be
    skipped. Decided on the extremes with a 1e-9 relative margin (the masks' float tests
    agree with the exact ones to ~1e-16 of m); an entry near a border takes the masks."""
    if k.size == 0:
        return False
    lo_k, hi_k, lo_nk, hi_nk = float(k.min()), float(k.max()), float(nk.min()), float(nk.max())
    mp_lo, mp_hi = float(np.min(mp)), float(np.max(mp))
    mq_lo, mq_hi = float(np.min(mq)), float(np.max(mq))
    if np.ndim(mp) or np.ndim(mq):
        # one mean per entry: the extremes of k and m need not pair up, so test entrywise
        return bool(np.all((k > 30.0) & (nk > 30.0) & (np.abs(k - mp) < 0.5 * (k + mp))
                           & (np.abs(nk - mq) < 0.5 * (nk + mq))))
    m = 1.0 + 1e-9
    return (lo_k > 30.0 and lo_nk > 30.0
            and lo_k > m * mp_hi / 3.0 and hi_k * m < 3.0 * mp_lo
            and lo_nk > m * mq_hi / 3.0 and hi_nk * m < 3.0 * mq_lo)


def accumulate_rows(op, x, out, lengths=None):
    """``op.accumulate(x, axis=1, out=out)`` of a 2-D array (``out`` must not overlap ``x``),
    one 1-D call per row: the same sequential chain along each row. numpy holds the GIL
    through a 2-D accumulate and through one written over its own input, and releases it
    for a 1-D one into another array, so the work of two threads then runs side by side.
    ``lengths``: row i only over its first lengths[i] entries (the same chain's prefix)."""
    if lengths is None:
        for i in range(x.shape[0]):
            op.accumulate(x[i], out=out[i])
        return out
    for i, m in enumerate(lengths.tolist()):
        op.accumulate(x[i, :m], out=out[i, :m])
    return out


#: Terms per vectorised pass of ``_tail_series_many``: the pass's two arrays of this many
#: floats (1 MiB) stay in the core's cache through its five elementwise steps, the
#: cumulative product and the sums (with 2^21 every step streamed 16 MiB through memory:
#: 6 ns per term against 4.5; the cumulative product's ~3.4 ns is its sequential chain).
_SERIES_ELEMENTS = 1 << 17


def _tail_series_many(edge, n, p: float, down) -> tuple[np.ndarray, np.ndarray]:
    """``_tail_series`` for many (edge, n, down) at once (n may be one number): the edge's
    pmf times partial products of the ratios moving away from the mean, summed in blocks
    of 4096 terms (doubling) until the geometric remainder is below 1e-18 of the sum, with
    the rounding allowance 1e-11 + 4(m + 2)u for m terms summed. Each row is summed as its
    own slice, so its sums round exactly as they would for that entry alone, whatever the
    other rows of its pass (tests/test_hidden_same_floats.py and tests/test_series_columns.py
    pin the floats against the previous code).

    A pass over at least ``_COLUMN_MIN`` entries with a full block each runs the entries
    side by side (``_column_pass``): the same products and sums, ~2.5× less CPU a term. A
    likely last block stops where its remaining terms are proven not to change the floats
    (``_cut_leaves``, ``_cut_proof``; docs/latency.md, "The certified binomial series side
    by side (session 20)")."""
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
    buf_r = buf_d = None

    def settle(sub, ts, part, t_next, r_last, dn):
        """The block's sum, the next head and the stop tests of the entries ``sub``."""
        tot = total[sub] + (ts + part)
        total[sub] = tot
        done_terms[sub] = dn
        finished = dn >= limit[sub]
        under = ~finished & (t_next == 0.0)
        rem[sub[under]] = (limit[sub[under]] - dn[under]) * 5e-324
        safe = np.where(r_last < 1.0, 1.0 - r_last, 1.0)
        geo = ~finished & ~under & (r_last < 1.0) & (t_next / safe <= 1e-18 * tot)
        rem[sub[geo]] = t_next[geo] / (1.0 - r_last[geo])
        t[sub] = t_next
        return sub[~(finished | under | geo)]

    nocut = np.zeros(edge.shape, dtype=bool)
    while idx.size:
        keep = []
        nocut[:] = False
        # entries whose block is full and numerous enough: side by side (same floats)
        whole = np.minimum(block, limit[idx] - done_terms[idx]) == block
        if np.count_nonzero(whole) >= _COLUMN_MIN:
            cols = idx[whole]
            idx = idx[~whole]
            # at most ~2^22 leaf sums (32 MiB) kept per call: wider passes in groups
            width = max(_COLUMN_MIN, _COLUMN_LEAF_SUMS * _LEAF // block)
            for g0 in range(0, cols.size, width):
                sub = cols[g0:g0 + width]
                ds = done_terms[sub]
                ts = t[sub]
                part, t_next, r_last, redo = _column_pass(a0[sub] - ds, b0[sub] + ds,
                                                          num[sub], den[sub], ts, block,
                                                          total[sub])
                ok = ~redo
                keep.append(settle(sub[ok], ts[ok], part[ok], t_next[ok], r_last[ok],
                                   (ds + block)[ok]))
                idx = np.concatenate([idx, sub[redo]])   # a cut not proven: the row form
                nocut[sub[redo]] = True                  # (uncut)
        group = max(1, _SERIES_ELEMENTS // block)    # entries per pass (in cache)
        size = min(group, idx.size) * block
        if buf_r is None or buf_r.size < size:
            buf_r, buf_d = np.empty(size), np.empty(size)
        j = np.arange(block, dtype=float)
        # a likely last block may stop where its remaining terms look negligible (as in
        # ``_column_pass``): each row's chain over that prefix, the rest of the row 0.0.
        # The cuts of every row of this block size at once (``_cut_leaves`` treats each
        # column on its own; a settled group changes only its own rows): at blocks of 2^17
        # and more a group is one row, and one call a row cost ~0.1 ms of Python steps.
        ds_all = done_terms[idx]
        m_all = np.minimum(block, limit[idx] - ds_all)
        lens_all, cut_all = _row_cuts(a0[idx] - ds_all, b0[idx] + ds_all, num[idx], den[idx],
                                      t[idx], block, total[idx], (m_all == block) & ~nocut[idx])
        for g0 in range(0, idx.size, group):
            sub = idx[g0:g0 + group]
            G = sub.size
            ds = ds_all[g0:g0 + G]
            m = m_all[g0:g0 + G]                                    # terms left, this block
            full = m == block
            # r = (a0 − i)·num / ((b0 + i)·den) at i = ds + j: a0 − ds − j and b0 + ds + j
            # are the same integers (exact below 2^53), so the floats are the expression's
            r = buf_r[:G * block].reshape(G, block)
            d = buf_d[:G * block].reshape(G, block)
            np.subtract((a0[sub] - ds)[:, None], j[None, :], out=r)
            r *= num[sub, None]
            np.add((b0[sub] + ds)[:, None], j[None, :], out=d)
            d *= den[sub, None]
            r /= d
            if not full.all():       # a tail's last block: ratios past its end are 1
                r[j[None, :] >= m[:, None]] = 1.0
            last = np.maximum(m.astype(np.int64) - 1, 0)
            rows = np.arange(G)
            r_last = r[rows, last]
            ts = t[sub]
            lens = lens_all[g0:g0 + G]
            cut = cut_all[np.searchsorted(cut_all, g0):np.searchsorted(cut_all, g0 + G)] - g0
            # the cumulative products into d (not needed again), row by row so that the
            # series of two threads (``pairs.hidden``'s two CDF bounds) run side by side
            prods = accumulate_rows(np.multiply, r, d, lens)
            if cut.size:
                p_cut = d[cut, lens[cut] - 1]
                for i in cut.tolist():
                    d[i, lens[i]:] = 0.0
            prods *= ts[:, None]                                    # t_{i+1}, …
            # terms summed: the block head t and the products before the last valid one
            # (each row's own slice, so the sums round exactly as one entry's would)
            if full.all():
                part = prods[:, :block - 1].sum(axis=1)
            else:
                part = np.empty(G)
                part[full] = prods[full, :block - 1].sum(axis=1)
                for r_ in np.flatnonzero(~full):
                    part[r_] = prods[r_, :int(m[r_]) - 1].sum()
            t_next = prods[rows, last]
            if cut.size:
                sc = sub[cut]
                ok, tn, _ = _cut_proof(a0[sc] - ds[cut], b0[sc] + ds[cut], num[sc], den[sc],
                                       ts[cut], block, total[sc], part[cut], p_cut,
                                       lens[cut].astype(float))
                t_next[cut[ok]] = tn[ok]
                for i in cut[~ok].tolist():          # not proven: the whole row after all
                    np.multiply.accumulate(r[i], out=d[i])
                    d[i] *= ts[i]
                    part[i] = d[i, :block - 1].sum()
                    t_next[i] = d[i, last[i]]
            keep.append(settle(sub, ts, part, t_next, r_last, ds + m))
        idx = np.concatenate(keep) if keep else idx[:0]
        block = min(2 * block, 1 << 20)
    eta = 1e-11 + 4.0 * (done_terms + 2.0) * _U
    lo = np.exp(lb) * total * (1.0 - eta)
    hi = np.maximum(np.exp(lb) * (total + rem) * (1.0 + eta), 1e-300)
    return np.maximum(lo, 0.0), np.minimum(hi, 1.0)


#: Entries with a full block from which ``_tail_series_many`` runs them side by side
#: (``_column_pass``). A Python step per term row costs ~0.25-0.4 µs whatever the width,
#: against numpy's one-entry product chain at ~3.4 ns a term (a store-to-load chain): with
#: the ratios, products by the head and sums, a pass costs about the same either way at ~100
#: entries (measured: 2.0 ns a term for the chain at 256 entries, 0.8 at 564, 0.5 at 1128).
_COLUMN_MIN = 96
#: Rows of a column pass per chunk: one leaf of numpy's pairwise sum (128 terms).
_LEAF = NUMPY_PAIRWISE_LEAF
#: Leaf sums (columns × leaves) one ``_column_pass`` call keeps at most (2^22: 32 MiB).
_COLUMN_LEAF_SUMS = 1 << 22


@functools.lru_cache(maxsize=32)
def _pairwise_leaves(n: int) -> tuple:
    """The leaves (start, length) of numpy's pairwise summation of n contiguous floats, in
    order (``rounding.pairwise_leaves``: at most 128 values each)."""
    return tuple((s, e - s) for s, e in pairwise_leaves(n, _LEAF))


def _pairwise_join(n: int, sums) -> np.ndarray:
    """numpy's pairwise tree over n floats from its leaves' sums (an iterator, in order)."""
    return pairwise_combine(lambda s, e: next(sums), 0, n, _LEAF)


def _leaf_sums(x) -> np.ndarray:
    """numpy's pairwise sum of each column of x (L ≤ 128 rows): below 8 rows one by one
    from 0.0; else eight running sums over the rows in steps of 8 (a reduction along the
    outer axis adds in row order), joined ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)),
    then the rows past the last multiple of 8 one by one."""
    L = x.shape[0]
    if L < 8:
        res = np.add(0.0, x[0])
        for i in range(1, L):
            res += x[i]
        return res
    L8 = L - L % 8
    r = np.add.reduce(x[:L8].reshape(L8 // 8, 8, x.shape[1]), axis=0)
    h = r[0::2] + r[1::2]
    res = (h[0] + h[1]) + (h[2] + h[3])
    for i in range(L8, L):
        res += x[i]
    return res


def _column_pass(a0s, b0s, num, den, ts, block: int, total=None):
    """One full block of ``_tail_series_many`` for G entries side by side: entry g's terms
    t·Π r_i (r_i = (a0s − i)·num / ((b0s + i)·den), i < block) as column g of 128-row
    chunks, each product chain stepped one row at a time (one elementwise product per row:
    fl(P_{i−1}·r_i), the chain numpy's accumulate forms), times the head t; the sum of the
    first block − 1 terms in numpy's pairwise order (its leaves summed chunk by chunk, then
    its tree), so every float is the row form's. Returns (sums, last terms, last ratios,
    entries to redo).

    ``total`` (the sums before this block): an entry whose block is likely its last stops
    at the leaf where its remaining terms look negligible (``_cut_leaves``). Its sum is then
    taken with those terms as 0.0; it is kept only where that is proven to give the same
    ``total + (t + sum)`` and the same stop (``_cut_proof``), and its last term is replaced
    by a bound (only read by the stop test, whose remainder then adds nothing to the float
    sum). The entries where the proof fails are returned to be redone in full."""
    G = a0s.size
    leaves = _pairwise_leaves(block - 1)
    nl = len(leaves)
    chunks = leaves + ((block - 1, 1),)
    cut = np.full(G, nl + 1, dtype=np.int64)         # chunks computed: all
    if total is not None:
        cut = _cut_leaves(a0s, b0s, num, den, ts, block, total, leaves)
    order = np.argsort(-cut, kind="stable")          # the longest first: a prefix is live
    inv = np.empty(G, dtype=np.int64)
    inv[order] = np.arange(G)
    a0s, b0s, num, den, ts, cut = (x[order] for x in (a0s, b0s, num, den, ts, cut))
    live = np.searchsorted(-cut, -np.arange(nl + 1), side="left")   # live columns a chunk
    # The counts a0s − i and b0s + i are integers below 2^53, so they are exact however
    # they are formed: once per pass for the first 128 rows, then shifted by the chunk's
    # start (a scalar step instead of a broadcast of two vectors). A factor common to all
    # entries is applied as a scalar: the same products.
    lead = np.arange(_LEAF, dtype=float)[:, None]
    A0 = np.subtract(a0s[None, :], lead)
    B0 = np.add(b0s[None, :], lead)
    one_num = bool(np.all(num == num[0]))
    one_den = bool(np.all(den == den[0]))
    buf_r, buf_d = np.empty((_LEAF, G)), np.empty((_LEAF, G))
    sums = np.zeros((nl, G))
    p_cut = np.empty(G)
    mul = np.multiply
    prev = None
    width = -1
    r_last = np.empty(G)
    t_next = np.empty(G)
    for k, (s, L) in enumerate(chunks):
        g = int(live[k])
        if g != width:
            if prev is not None:                     # the chains of the columns cut here
                p_cut[g:width] = prev[g:width]
                prev = prev[:g]
            if g == 0:
                break
            if width > 0:         # contiguous buffers of the new width (a reshape of a
                A0 = np.ascontiguousarray(A0[:, :g])     # strided view would copy)
                B0 = np.ascontiguousarray(B0[:, :g])
                buf_r = buf_r.ravel()[:_LEAF * g].reshape(_LEAF, g)
                buf_d = buf_d.ravel()[:_LEAF * g].reshape(_LEAF, g)
            width = g
            rows = list(buf_r)
            nm = float(num[0]) if one_num else num[None, :g]
            dn = float(den[0]) if one_den else den[None, :g]
            tg = ts[None, :g]
        r, d = buf_r[:L], buf_d[:L]
        np.subtract(A0[:L], float(s), out=r)
        r *= nm
        np.add(B0[:L], float(s), out=d)
        d *= dn
        r /= d
        if k == nl:
            r_last[:g] = r[0]
        if prev is not None:
            mul(prev, rows[0], rows[0])
        cur0 = rows[0]
        for cur in rows[1:L]:
            mul(cur0, cur, cur)
            cur0 = cur
        prev = rows[L - 1].copy()
        r *= tg                                                     # t_{i+1}, …
        if k == nl:
            t_next[:g] = r[0]
        else:
            sums[k, :g] = _leaf_sums(r)
    part = _pairwise_join(block - 1, iter(sums))
    redo = np.zeros(G, dtype=bool)
    short = np.flatnonzero(cut <= nl)
    if short.size:
        ok, tn, rl = _cut_proof(a0s[short], b0s[short], num[short], den[short], ts[short],
                                block, total[order][short], part[short], p_cut[short],
                                np.array([leaves[c][0] for c in cut[short]], dtype=float))
        t_next[short], r_last[short] = tn, rl
        redo[short] = ~ok
    return part[inv], t_next[inv], r_last[inv], redo[inv]


#: A block's cut is tried where its terms' sum looks below this share of the sums before it
#: (so a sum rounded with the remaining terms as 0.0 lies well inside one rounding of the
#: total), and placed where the remaining terms look below ``_CUT_REST`` of that total.
_CUT_BLOCK = 1e-5
_CUT_REST = 1e-20


def _cut_leaves(a0s, b0s, num, den, ts, block, total, leaves):
    """Estimated leaf (index into ``leaves``) from which each column's remaining terms are
    negligible, nl + 1 where none or where the block does not look like its last: the
    log-ratios at every 4th leaf start and the block's end, their trapezoid sums for
    log Π r; floats only to place the cut (``_cut_proof`` decides)."""
    G = a0s.size
    nl = len(leaves)
    none = np.full(G, nl + 1, dtype=np.int64)
    tot = np.asarray(total, dtype=float)
    live = tot >= 1.0                                # a block after the first
    if not live.any():
        return none
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ltot = np.log(tot)
        lts = np.log(ts)
        # the ratios fall along the block: its sum is at most t·r_0·min(block, 1/(1 − r_0))
        r0 = (a0s * num) / (b0s * den)
        span = np.minimum(math.log(block), -np.log1p(-np.minimum(r0, 1.0)))
        live &= lts + np.log(r0) + span < math.log(_CUT_BLOCK) + ltot
        if not live.any():
            return none
        pick = np.arange(0, nl, 4)
        st = np.array([leaves[i][0] for i in pick] + [block - 1], dtype=float)[:, None]
        lr = (np.log((a0s[None, :] - st) * num[None, :])
              - np.log((b0s[None, :] + st) * den[None, :]))
        step = np.diff(st, axis=0) * 0.5 * (lr[1:] + lr[:-1])
        lt = lts + np.concatenate([lr[:1], lr[:1] + np.cumsum(step, axis=0)])
        rest = lt - np.log(-np.expm1(np.minimum(lr, -1e-300)))     # geometric tails
    live &= rest[-1] < math.log(1e-18) - 5.0 + ltot
    small = rest[:-1] < math.log(_CUT_REST) + ltot[None, :]
    small[0] = False
    has = small.any(axis=0) & live & np.isfinite(ltot)
    return np.where(has, pick[np.argmax(small, axis=0)], nl + 1).astype(np.int64)


def _row_cuts(a0s, b0s, num, den, ts, block, total, may):
    """(chain lengths, cut rows) of a row-form pass: ``block`` for every row but those of
    ``may`` that ``_cut_leaves`` cuts (the leaf's start row; the indices in ``cut``)."""
    lens = np.full(a0s.size, block, dtype=np.int64)
    if not may.any() or not np.any(total[may] >= 1.0):
        return lens, np.zeros(0, dtype=np.int64)
    leaves = _pairwise_leaves(block - 1)
    w = np.flatnonzero(may)
    c = _cut_leaves(a0s[w], b0s[w], num[w], den[w], ts[w], block, total[w], leaves)
    hit = c < len(leaves)
    cut = w[hit]
    lens[cut] = [leaves[k][0] for k in c[hit].tolist()]
    return lens, cut


def _cut_proof(a0s, b0s, num, den, ts, block, total, part, p_cut, s_cut):
    """Whether the columns cut at rows ``s_cut`` have the uncut block's float sum and stop.

    With ρ = r at the cut row (the ratios fall along the block, and the computed ones with
    them: each is a monotone rounding of a falling exact ratio), every product from there on
    is P_i = fl(P_{i−1}·r_i) ≤ P_{i−1}·ρ(1 + u), and each term fl(P_i·t) ≤ P_i·t(1 + u). So
    the left-out terms sum to at most Δ = P_cut·t(1 + u)·ρ'/(1 − ρ') with ρ' = ρ(1 + u), and
    the block's last term is at most P_cut·t(1 + u)·ρ'^(block − s_cut). numpy's pairwise sum
    is monotone in each term (every step a rounded addition), so the true block sum lies
    between ``part`` (the left-out terms as 0.0) and the sum of the bounds, which a summation
    of depth d ≤ 64 over non-negative terms keeps below (part/(1 − u)^d + Δ)(1 + u)^d ≤
    part·(1 + 2e-14) + Δ(1 + 2e-14). ``total + (t + x)`` is monotone in x: where it is the
    same float at both ends, it is the float of the uncut block. The stop test (the last
    term over 1 − r_last at most 1e-18 of that total) is monotone in the last term: where it
    holds for the bound, the uncut block stops too, and its geometric remainder (or the
    underflow's) is below half an ulp of the total (≥ 1), so the upper bound's float sum
    ``total + remainder`` is the total either way. Returns (proven, last-term bounds,
    r_last): r_last is the block's last ratio by the same operations as the row form."""
    u1 = 1.0 + 2.0 ** -52
    jl = float(block - 1)
    r_last = ((a0s - jl) * num) / ((b0s + jl) * den)
    rho = ((a0s - s_cut) * num) / ((b0s + s_cut) * den)
    rho_u = rho * u1
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        head = p_cut * ts * u1
        delta = head * rho_u / (1.0 - rho_u) * (1.0 + 1e-12)
        t_last = head * np.exp((block - s_cut) * np.log(rho_u)) * (1.0 + 1e-11)
        hi = part * (1.0 + 2e-14) + delta * (1.0 + 2e-14)
        tot_lo = total + (ts + part)
        tot_hi = total + (ts + hi)
        safe = np.where(r_last < 1.0, 1.0 - r_last, 1.0)
        stop = (r_last < 1.0) & (t_last / safe <= 1e-18 * tot_lo)
    ok = (rho_u < 1.0) & np.isfinite(delta) & np.isfinite(t_last) & (tot_lo == tot_hi) & stop
    return ok, np.where(ok, t_last, 0.0), r_last


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


#: Relative slack given to scipy's ``bdtr``/``bdtrc`` at n ≤ ``BDTR_MAX_N`` (plus an absolute
#: 1e-300): at c ~ 5e5 they were measured ~1e-9 relative off against mpmath, and at most
#: 6e-9 low at n = 1e6 against ``binom_cdf_bounds``.
BDTR_SLACK = 1e-6


def _tails_raw(n, p, below_k, above_k):
    """(Pr[X ≤ below_k], Pr[X ≥ above_k], certified) for X ~ Bin(n, p), ``None`` for a tail
    not asked: the ONE switch between scipy's incomplete beta (n ≤ ``BDTR_MAX_N``; raw
    values, ``certified`` False: the caller adds ``_bdtr_slack``) and the certified series
    above that (upper ends of ``binom_cdf_bounds`` / ``binom_sf_bounds``)."""
    if n > BDTR_MAX_N:
        below = None if below_k is None else binom_cdf_bounds(below_k, n, p)[1]
        above = None if above_k is None else binom_sf_bounds(above_k, n, p)[1]
        return below, above, True
    below = None if below_k is None else float(special.bdtr(below_k, n, p))
    above = None if above_k is None else float(special.bdtrc(above_k - 1, n, p))
    return below, above, False


def _bdtr_slack(v: float) -> float:
    return v * (1.0 + BDTR_SLACK) + 1e-300


def binom_tail_upper(n, p, k, upper: bool) -> float:
    """Upper bound on Pr[Bin(n, p) ≥ k] (``upper``) or Pr[Bin(n, p) ≤ k], at any n.

    The library's one tail rule: scipy's ``bdtr``/``bdtrc`` (regularised incomplete beta)
    with ``BDTR_SLACK`` relative and 1e-300 absolute at n ≤ ``BDTR_MAX_N``; the certified
    series (``binom_cdf_bounds`` / ``binom_sf_bounds``) above, where the incomplete beta is
    off by up to 22 % near the mean at 1e8 and NaN at 1e10. ``binom_log_tail_upper`` is the
    same in log space for masses that underflow.
    """
    n, k = int(n), int(k)
    if upper:
        if k <= 0:
            return 1.0
        if k > n:
            return 0.0
        _, v, cert = _tails_raw(n, p, None, k)
    else:
        if k < 0:
            return 0.0
        if k >= n:
            return 1.0
        v, _, cert = _tails_raw(n, p, k, None)
    return float(min(1.0, v if cert else _bdtr_slack(v)))


def binom_log_tail_upper(n, p, k, upper: bool) -> float:
    """log of an upper bound on Pr[Bin(n, p) ≥ k] (``upper``) or Pr[Bin(n, p) ≤ k] that
    never underflows: ``binom_tail_upper`` while it is a normal float (> 1e-280), else the
    Chernoff–Hoeffding bound ``binom_log_tail_bound`` (log 1 on the mean's side)."""
    v = binom_tail_upper(n, p, k, upper)
    if v > 1e-280:
        return math.log(v)
    return binom_log_tail_bound(n, p, k, upper)


def binom_tail_mass(n, p, lo, hi):
    """Upper bound on Pr[Bin(n, p) < lo] + Pr[Bin(n, p) > hi] (``binom_tail_upper``'s rule,
    the slack added once to the sum)."""
    below, above, cert = _tails_raw(n, p, lo - 1 if lo > 0 else None,
                                    hi + 1 if hi < n else None)
    tot = (below or 0.0) + (above or 0.0)
    return float(min(1.0, tot if cert else _bdtr_slack(tot)))


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
    cols = [[0] * (kmax + 1) for _ in range(kmax + 1)]      # cols[m][k] = E[k][m]
    cols[0][0] = 1
    for k in range(1, kmax + 1):
        binoms = [math.comb(2 * k - 1, 2 * i - 1) for i in range(1, k + 1)]
        for m in range(1, k + 1):
            # Σ_{i=1}^{k−m+1} C(2k − 1, 2i − 1)·E[k − i][m − 1] (exact integers)
            v = sum(map(operator.mul, binoms, reversed(cols[m - 1][m - 1:k])))
            e[k][m] = v
            cols[m][k] = v
    return e


_EVEN_PARTITIONS: dict = register("shuffledp.numerics._EVEN_PARTITIONS", {})


def rademacher_log_moments(s, kmax: int, first: int = 1) -> np.ndarray:
    r"""log E[(W/s)^{2k}] for W a sum of s independent ±1 signs, k = 1..kmax; shape (len(s), kmax).

    ``first`` > 1 (more than 8 rows only): the columns k = first..kmax alone, shape
    (len(s), kmax − first + 1), each the float of the same column with ``first`` = 1 (every
    column is formed on its own, from the same F, U and work-array layout).

    E[W^{2k}] = Σ_m E(2k, m) s(s − 1)…(s − m + 1): a sequence of 2k indices has mean-one
    product iff every index appears an even number of times, i.e. a partition of the 2k
    positions into m even blocks with distinct indices. Every term is non-negative, so the
    float evaluation loses only ~k ulps relative (no cancellation), at any s ≥ 1. Odd
    moments are zero. Used for the series form of the clone pair's RDP (clone_pair.py).
    """
    s = np.asarray(s, dtype=float).ravel()
    E = even_partition_table(kmax)
    n = s.size
    if first != 1 and (n <= 8 or not 1 <= first <= kmax):
        raise ValueError(f"first must be in [1, kmax] with more than 8 rows; got {first!r}")
    if n <= 8:
        # A few rows (the series' one-slice checks): F's and U's running products by
        # ``np.cumprod`` (it multiplies left to right, as the column loop below does), the
        # same column-major blocks and matrix-vector products, and the logs of all k at
        # once (elementwise): the same floats with ~4·kmax fewer numpy calls.
        fac = np.empty((n, kmax + 1))
        fac[:, 0] = 1.0
        np.maximum(1.0 - np.arange(kmax, dtype=float)[None, :] / s[:, None], 0.0,
                   out=fac[:, 1:])
        F = np.asfortranarray(np.cumprod(fac, axis=1))
        fac[:, 1:] = (1.0 / s)[:, None]
        U = np.asfortranarray(np.cumprod(fac, axis=1))
        inner = np.empty((kmax, n))
        buf = np.empty((n, kmax), order="F")
        for k in range(1, kmax + 1):
            blk = buf[:, :k]
            np.multiply(F[:, 1:k + 1], U[:, k - 1::-1], out=blk)
            inner[k - 1] = blk @ E[k, 1:k + 1]
        with np.errstate(divide="ignore"):
            np.log(inner, out=inner)
        inner -= np.arange(1, kmax + 1, dtype=float)[:, None] * np.log(s)[None, :]
        return np.ascontiguousarray(inner.T)
    # F[:, m] = s(s−1)…(s−m+1)/s^m (0 once m > s) and U[:, d] = s^−d, column by column (the
    # running products of the rows' factors, as a cumulative product along each row forms
    # them). Column-major: the products below read whole columns.
    F = np.empty((n, kmax + 1), order="F")
    U = np.empty((n, kmax + 1), order="F")
    F[:, 0] = 1.0
    U[:, 0] = 1.0
    inv = 1.0 / s
    for j in range(1, kmax + 1):
        np.multiply(F[:, j - 1], np.maximum(1.0 - float(j - 1) / s, 0.0), out=F[:, j])
        np.multiply(U[:, j - 1], inv, out=U[:, j])
    logs = np.log(s)
    out = np.empty((n, kmax - first + 1))
    buf = np.empty((n, kmax), order="F")
    with np.errstate(divide="ignore"):
        for k in range(first, kmax + 1):
            # inner = Σ_m E(2k, m) F_m s^{m−k}; E(2k, k) = (2k − 1)!! dominates at large s.
            # The factors F_m·U_{k−m}, m = 1..k, in a column-major block, then one
            # matrix-vector product (the layout fixes BLAS's summation order: keep it).
            blk = buf[:, :k]
            np.multiply(F[:, 1:k + 1], U[:, k - 1::-1], out=blk)
            inner = blk @ E[k, 1:k + 1]
            out[:, k - first] = np.log(inner) - k * logs
    return out


#: The rows of ``even_partition_table`` formed so far: (E(2k, m) for m ≤ k as exact
#: integers, the same as floats), k = 0, 1, ...
_EVEN_ROWS: list = register("shuffledp.numerics._EVEN_ROWS", [])


def even_partition_table(kmax: int) -> np.ndarray:
    """E(2k, m), k, m ≤ kmax, as floats (``_even_partition_counts``' exact integers, each
    rounded once): the table of ``rademacher_log_moments`` (kept per kmax in
    ``_EVEN_PARTITIONS``).

    By E(2k + 2, m) = m²·E(2k, m) + (2m − 1)·E(2k, m − 1): the exponential generating
    function of partitions into m even blocks is u^m/m!, u = cosh x − 1, and u'' = u + 1,
    u'² = u² + 2u give (u^m/m!)'' = m²·u^m/m! + (2m − 1)·u^{m−1}/(m − 1)!. O(kmax²) integer
    products instead of O(kmax³). Row k does not depend on kmax, so the rows are formed
    once and shared by every kmax (the series asks 17, 33, then 65 terms, and its quick
    check the table of 65): each table is the same floats as when formed on its own."""
    hit = _EVEN_PARTITIONS.get(kmax)
    if hit is not None:
        return hit
    rows = _EVEN_ROWS
    if not rows:
        rows.append(([1], [1.0]))
    while len(rows) <= kmax:
        prev = rows[-1][0]
        k = len(prev) - 1                       # prev holds E(2k, m), m = 0..k
        row = [0] * (k + 2)
        for m in range(1, k + 2):
            row[m] = m * m * (prev[m] if m <= k else 0) + (2 * m - 1) * prev[m - 1]
        rows.append((row, [float(v) for v in row]))
    E = np.zeros((kmax + 1, kmax + 1))
    for k in range(kmax + 1):
        E[k, :k + 1] = rows[k][1]
    _EVEN_PARTITIONS[kmax] = E
    return E


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

