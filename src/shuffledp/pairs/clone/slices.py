r"""Slices of the clone pair: C = S − 1 clones, the slice law and the tails of C.

Conditioned on the slice S = C + 1 the clone pair (``pair.py``) is the mixture
α·Bin(c, ½)(x − 1) + β·Bin(c, ½)(x) against its swap; ``_slices`` lists the slices of a
window of C with their weights W_s, the victim's α_s and β_s (β formed directly, never
1 − α), and upper bounds on the mass of C outside the window (``_tails``, ``_log_tails``).
Every divergence of a slice is non-increasing in c, so the kernels charge those tails at
the window's edge (upper tail) or at c = 0 (lower tail).

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ...core._lazy import special  # scipy.special on first use (import time)
from ...numerics import (BDTR_MAX_N, binom_cdf_bounds, binom_cdf_bounds_many,
                         binom_log_tail_bound, binom_logpmf,
                         binom_sf_bounds, binom_window, half_binom_logpmf)

#: Window of C in standard deviations for δ(ε): ±(12 sd + 12).
_SDS, _EXTRA = 12.0, 12
#: For g = 0 pairs the slices are summed exactly over ±(7 sd + 12) only; below that, blocks
#: one sd wide are charged their (largest) lower-end value, and the rest the value at c = 0.
#: Same rigour as the ±12 sd window of the spec (monotonicity in c), about 1.7× less work.
_SDS_EXACT, _LOWER_BLOCKS = 7.0, 6


def _half_sf(m, c):
    """Pr[Bin(c, ½) ≥ m], vectorised, to ~1e-12 relative (exact 0/1 outside the support).

    scipy's ``bdtrc`` (incomplete beta) loses ~1e-9 relative at c ~ 5e5 (checked against
    mpmath), too much for an upper bound, so the tail is summed here: Pr[A ≥ m] =
    pmf(m) · Σ_j Π_{i<j} (c − m − i)/(m + 1 + i), every term positive, with the accurate
    Loader pmf in front; the lower half uses the symmetry Pr[A ≥ m] = 1 − Pr[A ≥ c − m + 1].
    Cost O(√c) per entry.
    """
    m = np.asarray(m, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    m, c = np.broadcast_arrays(m, c)
    out = np.where(m <= 0, 1.0, 0.0)
    mid = (m > 0) & (m <= c)
    if not np.any(mid):
        return out
    mm, cc = m[mid], c[mid]
    low = 2 * mm <= cc                     # threshold at or below the mean: use the complement
    mu = np.where(low, cc - mm + 1, mm)    # upper-tail threshold actually summed (≥ c/2)
    # Blocks start at ~8 sd of the largest slice (the tail from a threshold at or above the
    # mean has fallen by 1e-18 within that) and double while any entry is unfinished.
    block = int(min(512, max(32, 2 ** math.ceil(math.log2(4.0 * math.sqrt(float(cc.max())) + 2)))))
    inv = None
    if mu.size >= 16 and int(cc.max()) < 2**31:
        # Repeated (threshold, c) entries (the hidden pairs' cells repeat a c once per
        # count of absent users) are summed once: each entry is its own row below, so a
        # row's value does not depend on the others (the same floats).
        key, inv = np.unique(mu * 2**31 + cc, return_inverse=True)
        if key.size < mu.size:
            mu, cc = key >> 31, key & (2**31 - 1)
        else:
            inv = None
    total = _upper_tails(mu, cc, block)
    if inv is not None:
        total = total[inv.ravel()]
    out[mid] = np.where(low, 1.0 - total, total)
    return out


def _upper_tails(mu, cc, block: int) -> np.ndarray:
    """Pr[Bin(c, ½) ≥ µ] for thresholds 0 < µ ≤ c at or above c/2 (``_half_sf``'s sum)."""
    total = np.zeros(mu.shape)
    idx = np.arange(mu.size)
    start = mu.copy()
    while idx.size:
        steps = np.arange(block - 1, dtype=float)[None, :]
        k0 = start[idx].astype(float)
        cb = cc[idx].astype(float)
        # Block head by Loader's pmf, the rest by the exact term ratio (c − k)/(k + 1):
        # a cumulative product of ≤ 511 ratios adds < 1e-13 relative. (Formed in place:
        # the same operations as head·cumprod(max(c − k, 0)/(k + 1)), fewer temporaries.)
        head = np.exp(half_binom_logpmf(k0, cb))
        kk = k0[:, None] + steps
        ratios = cb[:, None] - kk
        np.maximum(ratios, 0.0, out=ratios)
        kk += 1.0
        ratios /= kk
        terms = np.empty((k0.size, block))
        terms[:, 0] = head
        np.cumprod(ratios, axis=1, out=terms[:, 1:])
        terms[:, 1:] *= head[:, None]
        total[idx] += terms.sum(axis=1)
        last = terms[:, -1]
        kl = k0 + block - 1
        done = (last <= 1e-18 * total[idx]) | (kl >= cb)
        # Remainder after the block: terms fall geometrically with ratio ρ = (c−k)/(k+1) < 1.
        rho = np.maximum(cb[done] - kl[done], 0.0) / (kl[done] + 1.0)
        total[idx[done]] += last[done] * rho / (1.0 - rho)
        start[idx] += block
        idx = idx[~done]
        block = min(512, 2 * block)
    return total


def _tails(m: int, p: float, lo: int, hi: int) -> tuple[float, float]:
    """Upper bounds on Pr[Bin(m, p) < lo] and Pr[Bin(m, p) > hi] for far-tail windows.

    scipy's incomplete beta is off by ~1e-9 relative at m ~ 1e6 and the error grows with m;
    these masses are ~1e-30 and only ever multiply a remainder, so a factor 2 costs nothing
    and covers any plausible error.
    """
    below = float(_belows(m, p, [lo])[0]) if lo > 0 else 0.0
    return below, _above(m, p, hi)


def _above(m: int, p: float, hi: int) -> float:
    """``_tails(m, p, ·, hi)[1]``: an upper bound on Pr[Bin(m, p) > hi]."""
    if hi >= m:
        return 0.0
    if m > BDTR_MAX_N:
        # The incomplete beta is NaN or off by orders of magnitude at m ≳ 1e10: certified sums.
        return binom_sf_bounds(hi + 1, m, p)[1]
    return 2.0 * float(special.bdtrc(hi, m, p)) + 1e-300


def _belows(m: int, p: float, tops) -> np.ndarray:
    """``_tails(m, p, top, ·)[0]`` for several tops > 0 in one vectorised call, the same
    floats: scipy's ``bdtr`` is elementwise, and ``binom_cdf_bounds_many`` sums each entry's
    series as its own row (rounding as it would alone)."""
    k = np.asarray(tops, dtype=np.int64) - 1
    if m > BDTR_MAX_N:
        return binom_cdf_bounds_many(k, m, p)[1]
    return 2.0 * np.asarray(special.bdtr(k, m, p), dtype=float) + 1e-300


def _log_tails(m: int, p: float, lo: int, hi: int) -> tuple[float, float]:
    """Upper bounds on log Pr[Bin(m, p) < lo] and log Pr[Bin(m, p) > hi], never underflowing.

    The RDP sums multiply these masses by up to e^{(λ−1)·log(a/b)}; an absolute floor (or an
    underflow to 0) there would either swamp the answer or drop a term, so they stay logs:
    twice scipy's incomplete beta (see ``_tails``) while it is a normal float, else the
    Chernoff bound in log space, and never more than the Chernoff bound.
    """
    def one(k, upper):
        if (upper and k > m) or (not upper and k < 0):
            return -math.inf
        ch = binom_log_tail_bound(m, p, k, upper)
        if m > BDTR_MAX_N:
            v = (binom_sf_bounds(k, m, p) if upper else binom_cdf_bounds(k, m, p))[1]
            return min(ch, math.log(v)) if v > 1e-280 else ch
        v = float(special.bdtrc(k - 1, m, p) if upper else special.bdtr(k, m, p))
        if v > 1e-280:
            return min(ch, math.log(2.0 * v))
        return ch
    return one(lo - 1, False) if lo > 0 else -math.inf, one(hi + 1, True) if hi < m else -math.inf


@dataclass(frozen=True)
class _Slices:
    c: np.ndarray          # conditional Bin(c, ½) sizes, one per slice (c = s − 1)
    w: np.ndarray          # slice probabilities W_s
    alpha: np.ndarray      # α_s of each slice
    beta: np.ndarray       # β_s = 1 − α_s of each slice, computed without cancellation
    below: float           # Pr[C < lo] (g = 0 only)
    above: float           # Pr[C > hi] (g = 0 only; charged at c = hi)
    block_c: np.ndarray = None      # lower-tail block lower ends (g = 0 only)
    block_mass: np.ndarray = None   # ≥ Pr[C in block] (g = 0 only)


@functools.lru_cache(maxsize=128)
def _slices(n: int, p: float, a: float, b: float, g: float) -> _Slices:
    """Slices of the pair over the window ±(12 sd(C) + 12)."""
    m = n - 1
    if g == 0.0:
        lo, hi = binom_window(m, p, _SDS_EXACT, _EXTRA)
        cs = np.arange(lo, hi + 1)
        w = np.exp(binom_logpmf(cs, m, p, 1.0 - p))
        alpha = np.full(cs.shape, a / (a + b))
        beta = np.full(cs.shape, b / (a + b))
        # Lower tail: blocks [c_{j+1}, c_j) with c_0 = lo, c_{j+1} = c_j − ⌈sd⌉, the last
        # block reaching down to c = 0; each charged Pr[C < c_j] (≥ its mass) times the
        # value at its lower end (slice values are non-increasing in c).
        sd = max(1, int(math.ceil(math.sqrt(m * p * (1.0 - p)))))
        ends, tops, top = [], [], lo
        for j in range(_LOWER_BLOCKS):
            if top <= 0:
                break
            nxt = 0 if j == _LOWER_BLOCKS - 1 else max(0, top - sd)
            ends.append(nxt)
            tops.append(top)
            top = nxt
        # Pr[C < c_j] for every block top in one call (the first top is lo: the window's
        # lower tail mass is the same number); above the window as before.
        masses = _belows(m, p, tops) if tops else np.zeros(0)
        below = float(masses[0]) if lo > 0 else 0.0
        above = _above(m, p, hi)
        return _Slices(cs, w, alpha, beta, below, above, np.array(ends, dtype=np.int64),
                       np.asarray(masses, dtype=float))
    lo, hi = binom_window(m, p, _SDS, _EXTRA)
    # g > 0: S ranges over lo..hi+1; W_s = (a+b) w(s−1) + g w(s). Slices with s = 0 carry no
    # information (both coordinates are 0 under X0 and X1) and are dropped. Truncation only
    # lowers the value, which is the safe direction for this lower-bound-only pair.
    s = np.arange(max(lo, 1), hi + 2)
    w_prev = np.exp(binom_logpmf(s - 1, m, p, 1.0 - p))
    w_same = np.exp(binom_logpmf(s, m, p, 1.0 - p))
    W = (a + b) * w_prev + g * w_same
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = np.where(W > 0, (a * w_prev + 0.5 * g * w_same) / W, 0.5)
        beta = np.where(W > 0, (b * w_prev + 0.5 * g * w_same) / W, 0.5)
    return _Slices(s - 1, W, alpha, beta, 0.0, 0.0)


def _window_weights(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(c, ≈W_c) over the g = 0 pair's exact-sum window ±(7 sd + 12) only, for a lower
    bound that drops the tails anyway (``hockey.pair_delta_floor``): Loader's pmf at every
    64th c and the exact ratio W_{c+1}/W_c = (m − c)/(c + 1) · p/(1 − p) in between. Each
    value is within 3e-13 relative of the pmf (Loader's ~1e-15, then ≤ 63 ratios of ≤ 4
    roundings each): far inside the 1e-9 the floor gives up. (``_slices`` keeps Loader's
    form at every c: its weights enter the upper bound's floats.)"""
    m = n - 1
    lo, hi = binom_window(m, p, _SDS_EXACT, _EXTRA)
    cs = np.arange(lo, hi + 1)
    q = 1.0 - p
    size, block = cs.size, 64
    if size <= block:
        return cs, np.exp(binom_logpmf(cs, m, p, q))
    nb = -(-size // block)
    r = np.ones(nb * block)
    r[1:size] = (m - cs[:-1]) / (cs[:-1] + 1.0) * (p / q)
    r = r.reshape(nb, block)
    r[:, 0] = 1.0
    heads = np.exp(binom_logpmf(cs[::block], m, p, q))
    return cs, (heads[:, None] * np.cumprod(r, axis=1)).ravel()[:size]


def _pair_slices(pair) -> _Slices:
    return _slices(pair.n, pair.p, pair.a, pair.b, pair.g)

