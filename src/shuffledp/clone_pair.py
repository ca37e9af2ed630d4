r"""The one generic clone pair and its exact divergences.

Every clone-reduction bound in the product is a post-processing statement about one pair
of distributions on N²:

* n users; each of the other n − 1 is a 0-clone w.p. p/2, a 1-clone w.p. p/2 and
  uninformative otherwise, so C ~ Bin(n − 1, p) clones and A | C ~ Bin(C, ½) 0-clones;
* the victim is type 0 w.p. a, type 1 w.p. b, uninformative w.p. g = 1 − a − b under X0
  (a and b swap under X1);
* P = (A + 1[victim 0], C − A + 1[victim 1]); Q is the same under X1.

Instances (constructors below): FMT20 (Feldman, McMillan, Talwar, "Hiding among the
clones", arXiv:2012.12803, Thm 3.1 / Lemma 3.3 — valid for every adaptive ε0-LDP
randomizer), FMT23 ("Stronger privacy amplification by shuffling", arXiv:2208.04591v3,
Thm 3.1 with the errata: restricted class S(ε0)), the
randomizer-specific pair with p = p_R, and the k-RR marginal pair with g > 0.

**g > 0 is not a reduction** (brute force): the value of the g > 0 pair is
a *lower* bound on one k-RR instance, never an upper bound. The kernels here compute it
exactly, but only functions named ``*_lower`` accept it, and the upper-bound kernels
(``pair_delta``, ``pair_epsilon``, ``pair_rdp``) refuse a pair with g > 0.

Structure used: swapping the coordinates maps P to
Q (one direction suffices); conditioned on the slice S = C + 1 the pair is a mixture
α·Bin(c, ½)(x − 1) + (1 − α)·Bin(c, ½)(x) against the swapped mixture, with a monotone
likelihood ratio; every divergence of a slice is non-increasing in c, so the tails of C are
charged rigorously with the value at the window edge (upper tail) or at c = 0 (lower tail).

All kernels are private-style: the ``ClonePair`` constructor validates, the rest assume
valid input (scipy.stats' "public validates, private computes").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from ._lazy import special  # scipy.special on first use (import time)

from .clone_law import Bias
from .numerics import (BDTR_MAX_N, REL_SLACK, binom_cdf_bounds, binom_log_tail_bound,
                       binom_sf_bounds, binom_logpmf, binom_window, half_binom_logpmf,
                       half_binom_logpmf_runs, half_binom_pmf_walk, rademacher_log_moments,
                       round_up)

__all__ = [
    "ClonePair",
    "pair_delta",
    "pair_delta_lower",
    "pair_epsilon",
    "pair_epsilon_lower",
    "pair_rdp",
    "pair_log_atoms",
    "pair_pld_atoms",
    "pair_lower_atoms",
    "conditional_hockey",
    "fmt20_pair",
    "fmt23_pair",
    "specific_pair",
    "specific_p",
    "krr_marginal_pair",
    "in_stronger_class",
]

#: Slack on each slice's closed-form hockey-stick value, relative to the size of its two
#: terms κ·Pr[A = m − 1] and (e^ε − 1)·Pr[A ≥ m]: covers the cancellation between them
#: plus the ~1e-14 relative error of the pmf (Loader) and of scipy's incomplete beta.
_TERM_SLACK = 1e-11
#: Absolute slack per δ evaluation: underflowed terms (each < 1e-300) cannot add more.
_ABS_SLACK = 1e-290
#: Window of C in standard deviations for δ(ε): ±(12 sd + 12).
_SDS, _EXTRA = 12.0, 12
#: For g = 0 pairs the slices are summed exactly over ±(7 sd + 12) only; below that, blocks
#: one sd wide are charged their (largest) lower-end value, and the rest the value at c = 0.
#: Same rigour as the ±12 sd window of the spec (monotonicity in c), about 1.7× less work.
_SDS_EXACT, _LOWER_BLOCKS = 7.0, 6


# ----------------------------------------------------------------------------------------
# The pair
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClonePair:
    """The generic clone pair (its definition is in docs/trimmed-clone.md, "Setting").

    Parameters
    ----------
    n : int ≥ 1 — users (the victim and n − 1 others).
    p : float in (0, 1] — clone probability of each other user.
    a, b : floats with a ≥ b > 0 and a + b ≤ 1 — victim type probabilities under X0.
        g = 1 − a − b is the uninformative probability (values within 1e-12 of 0 are 0).
    log_odds : float, optional — log(a/b) when it is known exactly (ε0 for the clone pairs
        of an ε0-LDP randomizer). At large ε0, a = e^ε0/(1 + e^ε0) rounds to 1 and only b
        carries the information; everything here uses b (and β = b/(a + b)) directly and
        never 1 − a, and the largest loss is taken from this exact value.
    """

    n: int
    p: float
    a: float
    b: float
    log_odds: float | None = None

    def __post_init__(self):
        from . import _validate as v
        object.__setattr__(self, "n", v.integer("n", self.n, lo=1))
        object.__setattr__(self, "p", v.real("p", self.p, lo=0.0, hi=1.0, lo_open=True))
        a = v.real("a", self.a, lo=0.0, hi=1.0, lo_open=True)
        b = v.real("b", self.b, lo=0.0, hi=1.0, lo_open=True)
        if b > a:
            raise ValueError(f"b must be a real number in (0, a={a!r}]; got {b!r}")
        if a + b > 1.0 + 1e-12:
            raise ValueError(f"a + b must be <= 1 (g = 1 - a - b >= 0); got a + b = {a + b!r}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        if self.log_odds is not None:
            lo = v.real("log_odds", self.log_odds, lo=0.0)
            # It must agree with the floats a, b (up to their rounding) or the pair is not
            # the one described: a wrong log-odds would move the δ(ε) = 0 cut-off.
            direct = math.log(a) - math.log(b)
            if abs(lo - direct) > 1e-12 * max(1.0, lo):
                raise ValueError(f"log_odds must equal log(a/b) = {direct!r}; got {lo!r}")
            object.__setattr__(self, "log_odds", lo)

    @property
    def g(self) -> float:
        """Uninformative victim probability; 0 when a + b is 1 up to rounding."""
        g = 1.0 - self.a - self.b
        return 0.0 if g <= 1e-12 else g

    @property
    def alpha(self) -> float:
        """a / (a + b): the victim's bias within an informative slice (g = 0 pairs)."""
        return self.a / (self.a + self.b)

    @property
    def beta(self) -> float:
        """b / (a + b) = 1 − α, computed from b (1 − α rounds to 0 for ε0 ≳ 36.7)."""
        return self.b / (self.a + self.b)

    @property
    def log_alpha(self) -> float:
        return math.log(self.a) - math.log(self.a + self.b)

    @property
    def log_beta(self) -> float:
        return math.log(self.b) - math.log(self.a + self.b)

    @property
    def gamma(self) -> float:
        """α − β = (a − b)/(a + b) = tanh(log(a/b)/2): from the exact log-odds when known
        (at small ε0, a and b both round to ½ and a − b to 0)."""
        if self.log_odds is not None:
            return Bias(self.log_odds).gamma
        return (self.a - self.b) / (self.a + self.b)

    @property
    def log_ratio(self) -> float:
        """log(a/b): the largest privacy loss of the pair (δ(ε) = 0 for ε ≥ it)."""
        if self.log_odds is not None:
            return self.log_odds
        return math.log(self.a) - math.log(self.b)

    def swapped(self) -> "ClonePair":
        """Nothing changes: the swap of coordinates maps P to Q (kept for the tests)."""
        return self


# ----------------------------------------------------------------------------------------
# Instances
# ----------------------------------------------------------------------------------------
def _alpha_pair(eps0: float) -> tuple[float, float]:
    """(α, β = 1 − α) with α = e^ε0/(e^ε0 + 1), from ``clone_law.Bias`` (each formed from
    ε0 directly, never as a difference)."""
    bias = Bias(eps0)
    return bias.alpha, bias.beta


def _check_eps0_n(eps0, n):
    from . import _validate as v
    from .mechanisms import MAX_EPS0
    return v.real("eps0", eps0, lo=0.0, hi=MAX_EPS0), v.integer("n", n, lo=1)


def fmt20_pair(eps0: float, n: int) -> ClonePair:
    """FMT20 clone pair: p = e^−ε0, a = α (arXiv:2012.12803, Lemma 3.3) [V].

    Valid for every adaptive sequence of ε0-LDP randomizers.
    """
    eps0, n = _check_eps0_n(eps0, n)
    a, b = _alpha_pair(eps0)
    return ClonePair(n, math.exp(-eps0), a, b, eps0)


def fmt23_pair(eps0: float, n: int) -> ClonePair:
    """FMT23 stronger clone pair: p = 2/(e^ε0 + 1), a = α (arXiv:2208.04591v3, Thm 3.1).

    The errata restricts it to a class of randomizers; this library proves class S(ε0). Do not
    use it for an arbitrary ε0-LDP randomizer.
    """
    eps0, n = _check_eps0_n(eps0, n)
    a, b = _alpha_pair(eps0)
    return ClonePair(n, 2.0 * b, a, b, eps0)


def specific_p(matrix) -> float:
    """p_R = min over x, x⁰ ≠ x¹, y of 2 R(x)(y) / (R(x⁰)(y) + R(x¹)(y)) [D].

    Rounded down by a few ulps: a smaller p gives a larger (safer) divergence.
    """
    m = np.asarray(matrix, dtype=float)
    col_min = m.min(axis=0)
    top2 = -np.sort(-m, axis=0)[:2]             # two largest entries of each column
    denom = top2.sum(axis=0)
    live = denom > 0
    ratio = 2.0 * col_min[live] / denom[live]
    return float(min(1.0, ratio.min()) * (1.0 - 8e-16))


def in_stronger_class(matrix, eps0: float) -> bool:
    """The finite check for S(ε0): p_R ≥ 2/(e^ε0 + 1), with a few ulps of slack."""
    return specific_p(matrix) >= 2.0 * float(special.expit(-eps0)) * (1.0 - 4e-15)


def specific_pair(randomizer, n: int) -> ClonePair:
    """Randomizer-specific pair: p = p_R of the matrix, a = α(ε0) [D].

    Valid for the one randomizer it was computed for (``randomizer``: a
    ``shuffledp.Randomizer`` or anything with ``.array`` and ``.eps0``).
    """
    eps0, n = _check_eps0_n(randomizer.eps0, n)
    a, b = _alpha_pair(eps0)
    return ClonePair(n, specific_p(randomizer.array), a, b, eps0)


def krr_marginal_pair(eps0: float, k: int, n: int) -> ClonePair:
    """k-RR marginal pair: p = 2/D, a = e^ε0/D, b = 1/D, g = (k − 2)/D, D = e^ε0 + k − 1.

    LOWER BOUND ONLY (an uninformative victim is not a reduction): the law of the counts of 0s and 1s on
    X0 = (0, 2, …, 2), X1 = (1, 2, …, 2). Use with ``pair_delta_lower``.
    """
    from . import _validate as v
    eps0, n = _check_eps0_n(eps0, n)
    k = v.integer("k", k, lo=2)
    # Divide through by e^ε0 so that large ε0 does not overflow.
    em = math.exp(-eps0)
    d = 1.0 + (k - 1) * em
    return ClonePair(n, min(1.0, 2.0 * em / d), 1.0 / d, em / d, eps0)


# ----------------------------------------------------------------------------------------
# Slices
# ----------------------------------------------------------------------------------------
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
    total = np.zeros(mu.shape)
    idx = np.arange(mu.size)
    start = mu.copy()
    # Blocks start at ~8 sd of the largest slice (the tail from a threshold at or above the
    # mean has fallen by 1e-18 within that) and double while any entry is unfinished.
    block = int(min(512, max(32, 2 ** math.ceil(math.log2(4.0 * math.sqrt(float(cc.max())) + 2)))))
    while idx.size:
        steps = np.arange(block - 1, dtype=float)[None, :]
        k0 = start[idx].astype(float)
        cb = cc[idx].astype(float)
        # Block head by Loader's pmf, the rest by the exact term ratio (c − k)/(k + 1):
        # a cumulative product of ≤ 511 ratios adds < 1e-13 relative.
        head = np.exp(half_binom_logpmf(k0, cb))
        kk = k0[:, None] + steps
        ratios = np.maximum(cb[:, None] - kk, 0.0) / (kk + 1.0)
        terms = np.concatenate([head[:, None], head[:, None] * np.cumprod(ratios, axis=1)], axis=1)
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
    out[mid] = np.where(low, 1.0 - total, total)
    return out


def _tails(m: int, p: float, lo: int, hi: int) -> tuple[float, float]:
    """Upper bounds on Pr[Bin(m, p) < lo] and Pr[Bin(m, p) > hi] for far-tail windows.

    scipy's incomplete beta is off by ~1e-9 relative at m ~ 1e6 and the error grows with m;
    these masses are ~1e-30 and only ever multiply a remainder, so a factor 2 costs nothing
    and covers any plausible error.
    """
    if m > BDTR_MAX_N:
        # The incomplete beta is NaN or off by orders of magnitude at m ≳ 1e10: certified sums.
        below = binom_cdf_bounds(lo - 1, m, p)[1] if lo > 0 else 0.0
        above = binom_sf_bounds(hi + 1, m, p)[1] if hi < m else 0.0
        return below, above
    below = 2.0 * float(special.bdtr(lo - 1, m, p)) + 1e-300 if lo > 0 else 0.0
    above = 2.0 * float(special.bdtrc(hi, m, p)) + 1e-300 if hi < m else 0.0
    return below, above


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
        below, above = _tails(m, p, lo, hi)
        alpha = np.full(cs.shape, a / (a + b))
        beta = np.full(cs.shape, b / (a + b))
        # Lower tail: blocks [c_{j+1}, c_j) with c_0 = lo, c_{j+1} = c_j − ⌈sd⌉, the last
        # block reaching down to c = 0; each charged Pr[C < c_j] (≥ its mass) times the
        # value at its lower end (slice values are non-increasing in c).
        sd = max(1, int(math.ceil(math.sqrt(m * p * (1.0 - p)))))
        ends, masses, top = [], [], lo
        for j in range(_LOWER_BLOCKS):
            if top <= 0:
                break
            nxt = 0 if j == _LOWER_BLOCKS - 1 else max(0, top - sd)
            ends.append(nxt)
            masses.append(_tails(m, p, top, m)[0])
            top = nxt
        return _Slices(cs, w, alpha, beta, below, above, np.array(ends, dtype=np.int64),
                       np.array(masses))
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


def _pair_slices(pair: ClonePair) -> _Slices:
    return _slices(pair.n, pair.p, pair.a, pair.b, pair.g)


# ----------------------------------------------------------------------------------------
# Hockey-stick divergence
# ----------------------------------------------------------------------------------------
def conditional_hockey(c, alpha, eps: float, with_error: bool = False, *, beta, gamma=None):
    """H_{e^ε}(P_c ‖ Q_c) for P_c = α Bin(c,½)(x−1) + (1−α) Bin(c,½)(x), Q_c swapped.

    Closed form (derived here, checked against mpmath), vectorised over slices c (and α):
    κ = α − e^ε (1 − α); H = 0 if κ ≤ 0; else r* = (e^ε α − (1−α))/κ,
    t* = (c+1) r*/(1 + r*), m = ⌊t*⌋ + 1 and H = κ Pr[A = m−1] − (e^ε − 1) Pr[A ≥ m].
    Thresholds m − 1, m, m + 1 are all evaluated and the largest value kept: every
    threshold gives a value ≤ the optimum, so the max is exact whatever the rounding of t*.

    With ``with_error`` also returns a bound on the floating-point error of each value.
    ``beta`` = 1 − α given directly (required, keyword-only: 1 − α formed in floating
    point keeps ~8 digits at ε0 ≈ 19 and is 0 from ε0 ≈ 36.7, where the slice would look
    deterministic; ``clone_law.Bias`` forms both). ``gamma`` = α − β given directly
    (optional): at small ε0 both α and β round to ½ and their difference to 0, so the
    slice would look uninformative; with it κ = γ − (e^ε − 1)β has no cancellation at ε = 0.
    """
    c = np.asarray(c, dtype=np.int64)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), c.shape)
    beta = np.broadcast_to(np.asarray(beta, dtype=float), c.shape)
    E = math.exp(eps)
    em1 = math.expm1(eps)
    if gamma is not None:
        gamma = np.broadcast_to(np.asarray(gamma, dtype=float), c.shape)
        kappa = gamma - em1 * beta
    else:
        kappa = alpha - E * beta
    live = kappa > 0
    val = np.zeros(c.shape)
    err = np.zeros(c.shape)
    if np.any(live):
        cl, al, bl, kl = c[live], alpha[live], beta[live], kappa[live]
        # t* = (c + 1) r*/(1 + r*) = (c + 1)/(1 + 1/r*): 1/r* = κ/(e^ε α − β) cannot
        # overflow (r* itself does when κ is tiny at large ε).
        den = (gamma[live] + em1 * al) if gamma is not None else (E * al - bl)
        tstar = (cl + 1) / (1.0 + kl / den)
        # t* can exceed c + 1 when r*/(1 + r*) rounds to 1 (α/β near 1/ulp): clip so that
        # m − 1 ≤ c; every threshold in 0..c + 1 is a valid candidate (value ≤ optimum), and
        # x = c + 1 always carries loss log(α/β) > ε when κ > 0.
        m = np.floor(np.minimum(tstar, cl + 0.0)).astype(np.int64) + 1
        # One log-pmf per slice; its neighbours by the exact ratio pmf(k+1)/pmf(k) = (c−k)/(k+1).
        pm1 = half_binom_pmf_walk(cl, m - 1)                               # Pr[A = m−1]
        if pm1 is None:
            pm1 = np.exp(half_binom_logpmf(m - 1, cl))
        with np.errstate(divide="ignore", invalid="ignore"):
            pm0 = np.where((m >= 1) & (m <= cl), pm1 * (cl - m + 1) / np.maximum(m, 1), 0.0)
            pm2 = np.where((m >= 2) & (m - 2 <= cl), pm1 * (m - 1) / np.maximum(cl - m + 2, 1), 0.0)
        pm0 = np.where(m - 1 < 0, np.exp(half_binom_logpmf(m, cl)), pm0)   # pm1 = 0 below support
        sf_p1 = _sf_slices(m + 1, cl, pm0, pm1)                        # Pr[A ≥ m+1]
        sf_0 = sf_p1 + pm0                                            # Pr[A ≥ m]
        sf_m1 = sf_0 + pm1                                            # Pr[A ≥ m−1]
        t1 = kl * np.stack([pm2, pm1, pm0])                           # κ Pr[A = m'−1]
        t2 = em1 * np.stack([sf_m1, sf_0, sf_p1])                     # (e^ε−1) Pr[A ≥ m']
        cand = t1 - t2
        best = np.argmax(cand, axis=0)
        idx = np.arange(cl.size)
        val[live] = np.maximum(cand[best, idx], 0.0)
        # κ = α − e^ε β itself cancels when ε is near log(α/β): its rounding error is a few
        # ulps of α + e^ε β, not of κ, so charge that too (times Pr[A = m' − 1] ≤ 1).
        pm_best = np.stack([pm2, pm1, pm0])[best, idx]
        # With γ given, κ = γ − (e^ε − 1)β is formed from two accurate terms (γ to 2u, the
        # product to 3u, the difference u|κ|): at most 4u(γ + (e^ε − 1)β) ≤ 4.5e-16 of
        # them, which is also ≤ the charge on α − e^ε β (γ + (e^ε − 1)β ≤ α + e^ε β).
        kerr = (4.5e-16 * (gamma[live] + em1 * bl) if gamma is not None
                else 4.5e-16 * (al + E * bl))
        err[live] = (_TERM_SLACK * (t1[best, idx] + t2[best, idx]) + kerr * pm_best)
    return (val, err) if with_error else val


#: Slices per anchor of the Pr[A ≥ m] recurrence (exact incomplete beta at every anchor).
_ANCHOR = 1024


def _sf_slices(mp1, c, pm0, pm1):
    """Pr[Bin(c, ½) ≥ m + 1] for consecutive slices c whose thresholds m step by 0 or 1.

    Accurate values (``_half_sf``) at every ``_ANCHOR``-th slice; in between the recurrence
    over c, Pr[A_{c+1} ≥ m] = Pr[A_c ≥ m] + ½ Pr[A_c = m − 1] and
    Pr[A_{c+1} ≥ m + 1] = Pr[A_c ≥ m] − ½ Pr[A_c = m] (A_{c+1} = A_c + a fair bit).
    The recurrence is checked against the next anchor; any disagreement beyond 1e-12
    relative falls back to ``_half_sf`` everywhere. Non-consecutive input: direct.
    """
    m = mp1 - 1
    n = c.size
    anchor = max(64, min(_ANCHOR, n // 4))
    if n < 4 * 64 or np.any(np.diff(c) != 1) or np.any((np.diff(m) < 0) | (np.diff(m) > 1)):
        return _half_sf(mp1, c)
    # S_c = Pr[A_c ≥ m_c]; step d_c from slice c to c + 1.
    step = np.diff(m)
    d = np.where(step == 0, 0.5 * pm1[:-1], -0.5 * pm0[:-1])
    anchors = np.arange(0, n, anchor)
    s_anchor = _half_sf(m[anchors], c[anchors])
    S = np.empty(n)
    for i, a0 in enumerate(anchors):
        a1 = min(a0 + anchor, n)
        seg = np.cumsum(d[a0:a1 - 1])
        S[a0] = s_anchor[i]
        S[a0 + 1:a1] = s_anchor[i] + seg
        if a1 < n:
            pred = S[a1 - 1] + d[a1 - 1]
            exact = s_anchor[i + 1]
            if abs(pred - exact) > 1e-12 * max(exact, 1e-300) + 1e-300:
                return _half_sf(mp1, c)
    return np.maximum(S - pm0, 0.0)


def _delta_sum(pair: ClonePair, eps: float, upper: bool) -> float:
    sl = _pair_slices(pair)
    # g = 0: every slice's α − β is the pair's γ, exact from its log-odds (small ε0)
    gam = pair.gamma if pair.g == 0.0 else None
    h, err = conditional_hockey(sl.c, sl.alpha, eps, with_error=True, beta=sl.beta, gamma=gam)
    total = float(np.dot(sl.w, h))
    if not upper:
        return total
    total += float(np.dot(sl.w, err))
    # Tails of C (spec §1 property 4: H_c is non-increasing in c): above the window every
    # slice is ≤ H at the top edge; below it every slice is ≤ H at c = 0.
    if sl.above > 0:
        total += sl.above * (h[-1] + err[-1])
    if sl.block_c is not None and sl.block_c.size:
        hb, eb = conditional_hockey(sl.block_c, pair.alpha, eps, with_error=True,
                                    beta=pair.beta, gamma=gam)
        total += float(np.dot(sl.block_mass, hb + eb))
    return float(round_up(total + _ABS_SLACK))


def _need_g0(pair: ClonePair, what: str):
    if pair.g > 0.0:
        raise ValueError(
            f"{what} is an upper-bound kernel and the pair has g = {pair.g!r} > 0: a pair "
            "with an uninformative victim is not a reduction (brute force shows it below the truth); "
            "use pair_delta_lower / pair_epsilon_lower for its (lower-bound) value")


def pair_delta(pair: ClonePair, eps: float) -> float:
    """δ(ε) = H_{e^ε}(P ‖ Q) of a g = 0 pair: a rigorous UPPER bound (either direction).

    Exact sum over the slices in ±(12 sd(C) + 12), plus the tails of C charged at their
    worst slice value, plus floating-point slack (per-slice cancellation bound, an absolute
    1e-290, and ``round_up``). Symmetric: H(P‖Q) = H(Q‖P) because swapping coordinates
    maps P to Q. Zero for ε ≥ log(a/b).
    """
    _need_g0(pair, "pair_delta")
    if eps >= pair.log_ratio * (1.0 + 1e-15):
        return 0.0
    return min(1.0, _delta_sum(pair, max(eps, 0.0), upper=True))


def pair_delta_lower(pair: ClonePair, eps: float) -> float:
    """Exact δ(ε) of any pair (g ≥ 0) without tails or slack: a value ≤ the true δ(ε).

    For g > 0 (the k-RR marginal pair) this is only ever a LOWER bound on a k-RR instance.
    """
    if eps >= pair.log_ratio * (1.0 + 1e-15):
        return 0.0
    return max(0.0, _delta_sum(pair, max(eps, 0.0), upper=False) * (1.0 - 1e-11))


def _root(ok_delta, lo: float, hi: float, target: float, xtol: float,
          dlo: float | None = None, guess: float | None = None) -> tuple[float, float]:
    """Certified bracket [lo, hi] of the threshold of a non-increasing δ(ε).

    ``ok_delta(e)`` returns δ(e). Invariant: δ(lo) > target ≥ δ(hi). Steps are Illinois
    regula falsi on √(−log δ) (close to linear in ε: the pair's loss has Gaussian-like
    tails, log δ ≈ −a ε²), with bisection while δ(hi) underflows to 0.
    """
    st = math.sqrt(-math.log(target))

    def f(d):                                    # > 0 iff d > target; −∞ when d = 0
        return st - math.sqrt(-math.log(min(d, 1.0))) if d > 0 else -math.inf

    if dlo is None:
        dlo = ok_delta(lo)
    flo = f(dlo)
    fhi = -math.inf
    side = 0
    # A first probe at the caller's guess, then ×4 / ÷4 steps until both ends carry a
    # finite log δ (δ underflows to 0 far above the root, where bisection would waste steps).
    if guess is not None and lo < guess < hi:
        x = guess
        for _ in range(12):
            d = ok_delta(x)
            if d <= target:
                hi = x
                if d > 0:
                    fhi = f(d)
                    break
                x = lo + (x - lo) / 4.0
            else:
                lo, flo = x, f(d)
                x = min(lo + 4.0 * (x - lo) + 1e-300, 0.5 * (lo + hi))
                if x >= hi or x <= lo:
                    break
                if math.isfinite(fhi):
                    break
    for _ in range(200):
        if hi - lo <= xtol:
            break
        width = hi - lo
        if math.isfinite(fhi) and math.isfinite(flo):
            x = hi - fhi * (hi - lo) / (fhi - flo)
            # Keep the probe strictly inside the bracket.
            x = min(max(x, lo + 1e-3 * width), hi - 1e-3 * width)
        else:
            x = 0.5 * (lo + hi)
        if not (lo < x < hi):
            x = 0.5 * (lo + hi)
            if not (lo < x < hi):
                break
        d = ok_delta(x)
        if d <= target:
            hi, fhi = x, f(d)
            if side == -1 and math.isfinite(flo):
                flo *= 0.5                       # Illinois: halve the stale end
            side = -1
        else:
            lo, flo = x, f(d)
            if side == 1 and math.isfinite(fhi):
                fhi *= 0.5
            side = 1
    return lo, hi


def pair_epsilon(pair: ClonePair, delta: float, xtol: float = 1e-11) -> float:
    """Smallest certified ε with ``pair_delta(pair, ε) ≤ delta``, searched on [0, log(a/b)].

    Returns the upper end of a bracket of width ≤ ``xtol`` (≤ 1e-9) whose
    upper end satisfies δ(ε) ≤ δ by evaluation, so it is an upper bound on the pair's ε(δ).
    """
    _need_g0(pair, "pair_epsilon")
    hi = pair.log_ratio * (1.0 + 2e-15) + 1e-300
    d0 = pair_delta(pair, 0.0)
    if d0 <= delta:
        return 0.0
    _, top = _root(lambda e: pair_delta(pair, e), 0.0, hi, delta, xtol, dlo=d0,
                   guess=_guess(pair, delta, hi))
    return top


def _guess(pair: ClonePair, delta: float, hi: float) -> float:
    """A starting point for the root: the Gaussian-tail scale of the pair's privacy loss.

    The loss of a slice with c clones has sd ≈ 2(2α − 1)/√c; with c ≈ (n − 1)p, a δ-tail
    sits near √(2 log(1/δ)) sd. Only a starting point: the root finder certifies the answer.
    """
    c = max(1.0, (pair.n - 1) * pair.p)
    g = 2.0 * (2.0 * pair.alpha - 1.0) / math.sqrt(c) * math.sqrt(2.0 * (-math.log(delta)))
    return min(max(g, 1e-12), 0.5 * hi)


def pair_epsilon_lower(pair: ClonePair, delta: float, xtol: float = 1e-11) -> float:
    """Largest certified ε with ``pair_delta_lower(pair, ε) > delta`` (a lower bound)."""
    hi = pair.log_ratio * (1.0 + 2e-15) + 1e-300
    if pair_delta_lower(pair, 0.0) <= delta:
        return 0.0
    low, _ = _root(lambda e: pair_delta_lower(pair, e), 0.0, hi, delta, xtol)
    return low


# ----------------------------------------------------------------------------------------
# Rényi divergence at integer orders
# ----------------------------------------------------------------------------------------
#: Largest number of (slice, x) points one RDP evaluation sums point by point (slices the
#: moment series does not cover). Past it, slices are evaluated every Δ-th c and each block
#: [c_j, c_j + Δ) is charged its first slice's value (valid: slice divergences are
#: non-increasing in c).
RDP_POINT_BUDGET = 4_000_000
#: Orders whose largest loss (λ − 1) log(a/b) is below this use the linear "−1" form.
_LINEAR_MAX = 600.0


def _rdp_window_sds(lam_max: int, log_ratio: float) -> float:
    """√(2((λ − 1) log(a/b) + 60)) + 3 standard deviations."""
    return math.sqrt(2.0 * ((lam_max - 1) * log_ratio + 60.0)) + 3.0


@functools.lru_cache(maxsize=16)
def _rdp_window(n: int, p: float, K: float):
    """Slices c in mean ± (K sd(C) + 3), their probabilities, log bounds on Pr[C < lo] and
    Pr[C > hi] (``_log_tails``), and the slices' log probabilities (which may be below the
    float range where the probabilities underflow)."""
    m = n - 1
    lo, hi = binom_window(m, p, K, 3)
    cs = np.arange(lo, hi + 1)
    logw = binom_logpmf(cs, m, p, 1.0 - p)
    log_below, log_above = _log_tails(m, p, lo, hi)
    return cs, np.exp(logw), log_below, log_above, logw


def _rdp_plan(pair: ClonePair, K: float, step: int | None, budget: int, jstop: int | None = None):
    """Which slices the RDP sum evaluates, their block masses and x-windows.

    Returns (c_eval, mass, log_below, alo, ahi, tails, step, log_mass, log_tails):
    ``mass[j]`` is the probability of the block charged to slice ``c_eval[j]`` (the last
    block absorbs the upper tail of C unless ``jstop`` cuts the window: then slices from
    index ``jstop`` on are left to the series form), ``log_mass`` its log (finite where the
    mass underflows), ``log_below`` ≥ log Pr[C < lo], ``[alo[j], ahi[j] + 1]`` the x-grid
    of slice j and ``tails[j]`` = e^{log_tails[j]} a bound on the P-mass of slice j outside it.
    """
    cs, w, log_below, log_above, logw = _rdp_window(pair.n, pair.p, K)
    if jstop is not None and jstop < cs.size:
        cs, w, logw, log_above = cs[:jstop], w[:jstop], logw[:jstop], -math.inf
    if step is None:
        step = _step_for(cs, K, budget)
    starts = np.arange(0, cs.size, step)
    mass = np.add.reduceat(w, starts)
    mass[-1] += math.exp(log_above)
    log_mass = (np.logaddexp.reduceat(logw, starts) if step > 1 else logw.copy())
    log_mass[-1] = np.logaddexp(log_mass[-1], log_above)
    c_eval = cs[starts]
    alo, ahi, log_tails = _x_windows(c_eval, K)
    return (c_eval, mass, log_below, alo, ahi, np.exp(log_tails), step, log_mass, log_tails)


def _x_half(c, K: float):
    """Half-width of slice c's x-grid: about K sd(A) = K √c / 2, plus 3."""
    return np.floor(0.5 * K * np.sqrt(np.maximum(c, 1.0))) + 3


def _step_for(cs, K: float, budget: int) -> int:
    """Slice step Δ that keeps the x-grids of the slices ``cs`` within ``budget`` points."""
    width = np.minimum(cs + 2, 2 * _x_half(cs, K) + 2)
    return max(1, int(math.ceil(float(width.sum()) / budget)))


def _x_windows(c_eval, K: float):
    """(alo, ahi, log_tails): slice c's x-grid [alo, ahi + 1] and a bound on the log of its
    P-mass outside (Hoeffding: Pr[|A − c/2| ≥ t] ≤ 2 exp(−2t²/c) for A ~ Bin(c, ½) —
    rigorous, closed form)."""
    h = _x_half(c_eval, K)
    alo = np.maximum(0, np.floor(0.5 * c_eval) - h).astype(np.int64)
    ahi = np.minimum(c_eval, np.ceil(0.5 * c_eval) + h).astype(np.int64)
    t_lo = 0.5 * c_eval - (alo - 1)
    t_hi = (ahi + 1) - 0.5 * c_eval
    cpos = np.maximum(c_eval, 1).astype(float)
    log_tails = np.logaddexp(np.where(alo > 0, -2.0 * t_lo * t_lo / cpos, -np.inf),
                             np.where(ahi < c_eval, -2.0 * t_hi * t_hi / cpos, -np.inf))
    return alo, ahi, log_tails


def _auto_step(pair: ClonePair, K: float, budget: int) -> int:
    """The slice step Δ ``_rdp_plan`` picks for the full window K under ``budget`` points."""
    return _step_for(_rdp_window(pair.n, pair.p, K)[0], K, budget)


def _rdp_points(pair: ClonePair, c_eval, alo, ahi, j0: int, j1: int):
    """Points of slices j0..j1−1: (slice index, log P(x | c), ℓ = log P/Q)."""
    alpha, beta, gamma = pair.alpha, pair.beta, pair.gamma
    ce, lo_, hi_ = c_eval[j0:j1], alo[j0:j1], ahi[j0:j1]
    counts = hi_ + 2 - lo_                       # x from alo to ahi + 1
    jj = np.repeat(np.arange(j0, j1), counts)
    offs = np.arange(jj.size) - np.repeat(np.cumsum(counts) - counts, counts)
    x = (alo[jj] + offs).astype(float)
    c = c_eval[jj].astype(float)
    lv = half_binom_logpmf_runs(ce, lo_, counts)  # log Bin(c,½)(x), run by run
    # u(x) = Bin(c,½)(x − 1) = v(x)·x/(c + 1 − x); at x = c + 1, v = 0 and u = 2^−c.
    with np.errstate(divide="ignore", invalid="ignore"):
        lu = lv + np.log(x) - np.log(np.maximum(c + 1.0 - x, 1.0))
    top = ~(x <= c)                              # x = c + 1 only: a few points
    lu[top] = -c[top] * math.log(2.0)
    lu[x == 0] = -np.inf
    logP = np.logaddexp(pair.log_alpha + lu, pair.log_beta + lv)
    # ℓ = log1p((2α−1)(r−1)/((1−α)r + α)), r = x/(c+1−x), multiplied through by (c+1−x):
    # no cancellation and finite at x = 0 and x = c + 1.
    den = beta * x + alpha * (c + 1.0 - x)
    arg = gamma * (2.0 * x - c - 1.0) / den
    # Near x = 0 the argument tends to −γ/α = β/α − 1, which rounds to −1 when β is tiny
    # (large ε0): there the ratio itself, log(α x + β(c + 1 − x)) − log(den), is accurate.
    ell = np.log1p(np.maximum(arg, -0.5))
    low = ~(arg > -0.5)                          # the other form only where it is used
    if low.any():
        xl, cl = x[low], c[low]
        with np.errstate(divide="ignore"):
            ell[low] = np.log(alpha * xl + beta * (cl + 1.0 - xl)) - np.log(den[low])
    return jj, logP, ell


def _slice_points(pair: ClonePair, K: float, step: int | None = None):
    """All points at once (for ``pair_log_atoms``)."""
    c_eval, mass, log_below, alo, ahi, tails, step, _, _ = _rdp_plan(pair, K, step,
                                                                     RDP_POINT_BUDGET)
    jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
    return c_eval, mass, log_below, jj, logP, ell, tails, step


def pair_rdp(pair: ClonePair, orders, step: int | None = None,
             budget: int | None = None) -> np.ndarray:
    """D_λ(P ‖ Q) of a g = 0 pair at integer orders ≥ 2: rigorous UPPER bounds, rounded up.

    e^{(λ−1)D_λ} − 1 = Σ_c Pr[C = c] Σ_x P(x|c) [(P/Q)(x|c)^{λ−1} − 1], summed in
    the "−1" form (expm1) so that relative precision survives answers of 1e−7. Windows of
    √(2((λ−1) log(a/b) + 60)) + 3 standard deviations in c and in x; remainders: the x-tail
    of a slice adds at most t·((a/b)^{λ−1} − 1), the lower c-tail its mass times the value at
    c = 0, the upper c-tail its mass times the value at the window edge. Symmetric in the
    direction (swap = P ↔ Q).

    By default each slice whose moment series is accurate (``_series_part``: every term
    non-negative, remainder bounded rigorously and added) is summed in closed form, in
    O(number of series terms) instead of O(√c) points: at large n·p that is every slice,
    and a 64-order curve at n = 1e6 takes well under a second. The remaining slices (small
    c, or orders with (λ − 1) log(a/b) > 600) are summed point by point; when that sum would
    exceed ``budget`` points (default ``RDP_POINT_BUDGET``), slices are evaluated every Δ-th
    c and each block charged its first slice's value: still a valid upper bound, but looser
    by a relative ~Δ/(2 E[C]). ``step`` (an int) forces the point sum everywhere with that
    Δ; ``step=1`` is the exact point sum.
    """
    _need_g0(pair, "pair_rdp")
    lam = np.asarray(orders)
    if lam.size == 0:
        return np.zeros(0)
    if np.any(lam != np.round(lam)) or np.any(lam < 2):
        raise ValueError(f"orders must be integers >= 2; got {orders!r}")
    lam = lam.astype(np.int64)
    out = np.empty(lam.shape, dtype=float)
    lr = pair.log_ratio
    if lr == 0.0:
        return np.zeros(lam.shape)
    flat = lam.ravel()
    res = np.empty(flat.shape)
    # Orders are processed in groups of similar size so that the window fits each group.
    order_idx = np.argsort(flat)
    groups = []
    cur = [order_idx[0]]
    for i in order_idx[1:]:
        if flat[i] > 2 * flat[cur[0]] + 8:
            groups.append(cur)
            cur = [i]
        else:
            cur.append(i)
    groups.append(cur)
    for grp in groups:
        g_orders = flat[grp]
        # Windows on a ladder of 4 standard deviations: a wider window is still rigorous
        # (its remainders are computed for the window used) and the points of one rung
        # are cached, so the order search's later calls reuse them.
        K = 4.0 * math.ceil(_rdp_window_sds(int(g_orders.max()), lr) / 4.0)
        res[grp] = _rdp_group(pair, g_orders, K, step, budget or RDP_POINT_BUDGET)
    out[...] = res.reshape(lam.shape)
    return round_up(out)


#: Points per chunk of the RDP sum (bounds memory; the budget bounds time).
_CHUNK_POINTS = 1_000_000


#: Cached point sets of the RDP sum: (pair, K, step, budget) -> terms. At most twelve
#: entries and at most ``_TERMS_CACHE_BYTES`` in all (the most recent entry is always
#: kept): a sweep over many protocols held 12 entries of up to ~150 MB each (1.5 GB peak);
#: one question at n = 1e6, T = 10 uses ~380 MB of them.
_TERMS_CACHE: "dict" = {}
_TERMS_CACHE_SIZE = 12
_TERMS_CACHE_BYTES = 600 * 2**20


def _nbytes(obj) -> int:
    """Bytes held by the numpy arrays inside nested tuples, lists and dicts."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(x) for x in obj.values())
    return 0


def _rdp_terms(pair: ClonePair, K: float, step, budget, jstop: int | None = None,
               want_logw: bool = False):
    """The points of the RDP sum as chunks of (weight, log-ratio), plus the remainders.

    ``jstop``: only the slices before this index of the window (the rest go to the series).
    ``want_logw``: also keep the points' log weights (huge orders need them), made here
    while the points are at hand instead of regenerated by ``_chunk_logw``.
    """
    key = (pair, K, step, budget, jstop)
    if key not in _TERMS_CACHE and jstop is None:
        # A cached window up to two rungs wider serves too (wider is still rigorous) when it
        # is summed at the same slice step: a wider window over the point budget is summed
        # every Δ-th slice, looser than this window's own sum (2e-5 relative at n = 1e6).
        own = _auto_step(pair, K, budget) if step is None else step
        for k2 in (K + 4.0, K + 8.0):
            if ((pair, k2, step, budget, None) in _TERMS_CACHE
                    and (step is not None or _auto_step(pair, k2, budget) == own)):
                key = (pair, k2, step, budget, None)
                break
    hit = _TERMS_CACHE.pop(key, None)
    if hit is None:
        (c_eval, mass, log_below, alo, ahi, _, _, log_mass,
         log_tails) = _rdp_plan(pair, key[1], step, budget, jstop)
        chunks = []
        logw_memo = {}
        counts = ahi + 2 - alo
        j0 = 0
        while j0 < c_eval.size:
            j1 = j0 + 1
            tot = counts[j0]
            while j1 < c_eval.size and tot + counts[j1] <= _CHUNK_POINTS:
                tot += counts[j1]
                j1 += 1
            jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, j0, j1)
            # Points with ℓ ≥ 0 first: their terms are ≥ 0 and the others' ≤ 0, so the sum
            # of absolute values (for the rounding charge) needs no extra pass.
            idx = np.argsort(ell < 0, kind="stable")
            split = int(np.count_nonzero(ell >= 0))
            jj, logP, ell = jj[idx], logP[idx], ell[idx]
            if want_logw:
                logw_memo[(j0, j1)] = log_mass[jj] + logP
            chunks.append((mass[jj] * np.exp(logP),          # block mass × P(x | c_j)
                           ell, split, (j0, j1)))
            j0 = j1
        log_tm = float(special.logsumexp(log_mass + log_tails)) if c_eval.size else -math.inf
        hit = (chunks, log_tm, log_below, (c_eval, mass, alo, ahi, log_mass), logw_memo)
    _TERMS_CACHE[key] = hit                     # most recently used last
    while len(_TERMS_CACHE) > _TERMS_CACHE_SIZE:
        _TERMS_CACHE.pop(next(iter(_TERMS_CACHE)))
    # (sizes measured at eviction time: a hit's memo of log weights may have grown since)
    while len(_TERMS_CACHE) > 1 and sum(map(_nbytes, _TERMS_CACHE.values())) > _TERMS_CACHE_BYTES:
        _TERMS_CACHE.pop(next(iter(_TERMS_CACHE)))
    return hit


#: Per-pair memo of computed orders: (pair, step, budget) -> {order: value}. Any window
#: gives a rigorous upper value, so a value is reused whatever window produced it.
_VALUES: "dict" = {}


def _rdp_group(pair: ClonePair, orders: np.ndarray, K: float, step, budget) -> np.ndarray:
    vkey = (pair, step, budget)
    done = _VALUES.pop(vkey, None) or {}
    _VALUES[vkey] = done
    while len(_VALUES) > 64:
        _VALUES.pop(next(iter(_VALUES)))
    todo = np.array(sorted({int(o) for o in orders} - set(done)), dtype=np.int64)
    # Orders past the linear regime take the log-space path over every slice; the others
    # may use the series, so the two kinds are summed separately.
    lin = (todo - 1) * pair.log_ratio <= _LINEAR_MAX
    for part in (todo[lin], todo[~lin]):
        if part.size:
            done.update(zip(part.tolist(), _rdp_group_sum(pair, part, K, step, budget).tolist()))
    return np.array([done[int(o)] for o in orders], dtype=float)


#: Terms of the moment series of a slice's RDP (even moments of V up to twice this), tried
#: in this order until every slice of the window is accurate (cost grows as the square).
_SERIES_TERMS = (16, 32, 64)
#: A slice is summed by its series when the series' remainder bound is below this fraction
#: of its value (accuracy only: the remainder bound is added either way).
_SERIES_TOL = 1e-13
#: Relative slack on a series value: ≤ 130 float operations on non-negative terms, ~1e-14.
_SERIES_SLACK = 1e-12
#: Off only in benchmarks (to time the point sum it replaces).
_SERIES_ENABLED = True
#: Slices at which the series remainder is evaluated (each charged to a block above it).
_REM_POINTS = 4096


@functools.lru_cache(maxsize=16)
def _series_moments(n: int, p: float, K: float, kmax: int):
    """E[(W/s)^2k] for every slice s = c + 1 of the window, k ≤ kmax + 1.

    Returns (s, mu, log_top): mu[:, k−1] the 2k-th moment for k ≤ kmax (values below the
    float range are 0 and charged separately) and log_top the log of the (2kmax + 2)-th.
    """
    cs = _rdp_window(n, p, K)[0]
    s = (cs + 1).astype(float)
    logmu = _log_moments_rows(int(cs[0]) + 1, int(cs[-1]) + 1, kmax + 1)
    return s, np.exp(logmu[:, :-1]), logmu[:, -1]


#: Rows of ``rademacher_log_moments`` by blocks of consecutive s: they depend on s alone,
#: so the windows of different pairs (the trimmed-clone ε0 search, the order rungs) share
#: them. (kmax, block) -> array; at most _MOM_BLOCKS blocks of _MOM_ROWS rows are kept.
_MOM_CACHE: "dict" = {}
_MOM_ROWS = 1024
_MOM_BLOCKS = 96


def _log_moments_rows(s_lo: int, s_hi: int, kmax: int) -> np.ndarray:
    """``rademacher_log_moments(arange(s_lo, s_hi + 1), kmax)`` from cached blocks."""
    b_lo, b_hi = s_lo // _MOM_ROWS, s_hi // _MOM_ROWS
    if b_hi - b_lo + 1 > _MOM_BLOCKS // 2:                 # too wide to cache: direct
        return rademacher_log_moments(np.arange(s_lo, s_hi + 1, dtype=float), kmax)
    parts = []
    for b in range(b_lo, b_hi + 1):
        key = (kmax, b)
        blk = _MOM_CACHE.pop(key, None)
        if blk is None:
            rows = np.arange(max(b * _MOM_ROWS, 1), (b + 1) * _MOM_ROWS, dtype=float)
            blk = rademacher_log_moments(rows, kmax)
            if b == 0:                                      # s = 0 is not a slice size
                blk = np.concatenate([np.full((1, kmax), np.nan), blk])
        _MOM_CACHE[key] = blk                               # most recently used last
        parts.append(blk)
    while len(_MOM_CACHE) > _MOM_BLOCKS:
        _MOM_CACHE.pop(next(iter(_MOM_CACHE)))
    out = np.concatenate(parts) if len(parts) > 1 else parts[0]
    off = s_lo - b_lo * _MOM_ROWS
    return out[off: off + (s_hi - s_lo + 1)]


def _psi_even(lam: int, gamma: float, kmax: int) -> np.ndarray:
    """ψ_2k γ^2k for k = 1..kmax, where ψ(v) = (1 + v)^λ (1 − v)^(1−λ) = Σ_j ψ_j v^j.

    From (1 − v²) ψ' = (2λ − 1 − v) ψ: ψ_{j+1} = ((2λ − 1) ψ_j + (j − 2) ψ_{j−1})/(j + 1), with
    ψ_0 = 1, ψ_1 = 2λ − 1, ψ_2 = 2λ(λ − 1). For an integer λ ≥ 2 every ψ_j ≥ 0 (both factors
    have non-negative Taylor coefficients) and the recurrence adds non-negative terms only.
    """
    c = np.empty(2 * kmax + 1)
    c[0], c[1], c[2] = 1.0, (2 * lam - 1) * gamma, 2.0 * lam * (lam - 1) * gamma * gamma
    a = 2.0 * lam - 1.0
    for j in range(2, 2 * kmax):
        c[j + 1] = gamma * (a * c[j] + (j - 2) * gamma * c[j - 1]) / (j + 1)
    return c[2::2]


def _series_slices(pair: ClonePair, lam: int, K: float, kmax: int):
    """(value, remainder bound) of E[ψ(V)] − 1 for every slice of the window at order λ."""
    return _series_eval(pair, lam, kmax, *_series_moments(pair.n, pair.p, K, kmax))


def _series_eval(pair: ClonePair, lam: int, kmax: int, s, mu, log_top):
    a, b = pair.a, pair.b
    gamma = pair.gamma
    c = _psi_even(lam, gamma, kmax)
    val = mu @ c
    J1 = 2 * (kmax + 1)
    log_psi_g = lam * math.log(2.0 * a / (a + b)) + (1 - lam) * math.log(2.0 * b / (a + b))
    # Candidates r = γt: t = 1 (no Hoeffding term), a few fixed fractions, the t where the
    # first term is smallest (≈ J/((2λ − 1)γ)), and per slice the t where the Hoeffding
    # term drops below e^−40.
    fixed = np.array([1.0, 0.5, 0.25, 0.1, min(1.0, J1 / ((2 * lam - 1) * gamma))])
    # The remainder bound is evaluated at every B-th slice and charged to the B slices from
    # there on: for each r both of its terms are non-increasing in s (E[(W/s)^2k] is, since
    # sample means decrease in convex order as s grows; the Hoeffding term plainly is).
    full = s.size
    B = max(1, -(-full // _REM_POINTS))
    s, log_top = s[::B], log_top[::B]
    t_h = np.minimum(1.0, np.sqrt(2.0 * (max(log_psi_g, 0.0) + math.log(2.0) + 40.0) / s))
    ts = np.concatenate([np.broadcast_to(fixed, (s.size, fixed.size)), t_h[:, None]], axis=1)
    rg = gamma * ts
    # log(1 − γt) from 1 − γt = 2β + γ(1 − t): 1 − γ rounds to 0 at large log(a/b).
    with np.errstate(divide="ignore"):
        log_1m = np.log(2.0 * pair.beta + gamma * (1.0 - ts))
    t1 = lam * np.log1p(rg) + (1 - lam) * log_1m - J1 * np.log(ts) + log_top[:, None]
    t2 = log_psi_g + np.minimum(math.log(2.0) - 0.5 * s[:, None] * ts * ts, 0.0)
    t2 = np.where(ts >= 1.0, -np.inf, t2)
    with np.errstate(over="ignore"):
        rem = np.min(np.exp(t1) + np.exp(t2), axis=1)
    # An underflowed moment (< 2.3e-308) times its coefficient: charged to every slice.
    rem = rem + 2.3e-308 * float(c.sum())
    if B > 1:
        rem = np.repeat(rem, B)[:full]
    return val * (1.0 + _SERIES_SLACK), rem


def _accepted_from(val, rem) -> int:
    """First index of the suffix of slices whose remainder is below _SERIES_TOL of the value."""
    bad = np.nonzero(~(rem <= _SERIES_TOL * val))[0]
    return int(bad[-1]) + 1 if bad.size else 0


def _series_part(pair: ClonePair, orders: np.ndarray, K: float):
    r"""Closed-form slice sums of the RDP: (jstop, Σ_{j ≥ jstop} mass_j (slice value − 1)).

    Conditioned on s = c + 1 the victim's pair is, with X ~ Bin(s, ½), T = X/s and
    V = γ(2T − 1), γ = (a − b)/(a + b) = tanh(log(a/b)/2):
    P(x) = Bin(s,½)(x)·(1 + V), Q(x) = Bin(s,½)(x)·(1 − V), so the slice's
    E_Q[(P/Q)^λ] = E[ψ(V)] with ψ(v) = (1 + v)^λ (1 − v)^(1−λ) = Σ_j ψ_j v^j (ψ_j ≥ 0, radius 1,
    |V| ≤ γ < 1). Odd moments of V vanish, so
    E[ψ(V)] − 1 = Σ_{k ≤ M} ψ_2k γ^2k E[(W/s)^2k] + E[R(V)], W = 2X − s a sum of s signs,
    every term ≥ 0 (no cancellation in the "− 1"). The remainder R (terms j > J = 2M + 1)
    satisfies |R(v)| ≤ R(|v|) ≤ (|v|/r)^{J+1} ψ(r) for |v| ≤ r, and ≤ ψ(γ) elsewhere, so
    E[R(V)] ≤ ψ(r) (γ/r)^{J+1} E[(W/s)^{J+1}] + ψ(γ) Pr[|W| > rs/γ], the last by Hoeffding
    ≤ 2 exp(−s r²/(2γ²)); minimised over a few r ∈ (0, γ] (r = γ: no second term).
    A slice joins the series when that remainder is below ``_SERIES_TOL`` of its value; the
    series slices form a suffix of the window (the bound falls with s). The remainder is
    added in any case, so the result stays an upper bound.
    """
    cs, w, _, log_above, _ = _rdp_window(pair.n, pair.p, K)
    out = np.zeros(orders.shape)
    if pair.a <= pair.b:
        return 0, out
    lam_max = int(orders.max())
    # Hopeless when even the top slice of the window is not accurate with the most terms.
    top = np.array([float(cs[-1] + 1)])
    lm = rademacher_log_moments(top, _SERIES_TERMS[-1] + 1)
    val, rem = _series_eval(pair, lam_max, _SERIES_TERMS[-1], top, np.exp(lm[:, :-1]), lm[:, -1])
    if _accepted_from(val, rem) > 0:
        return cs.size, out
    # The fewest terms that serve the largest order as well as the most terms do.
    for kmax in _SERIES_TERMS:
        top_part = _series_slices(pair, lam_max, K, kmax)
        jstop = _accepted_from(*top_part)
        if jstop == 0:
            break
    mass = w
    parts = []
    for lam in orders.tolist():
        val, rem = top_part if lam == lam_max else _series_slices(pair, lam, K, kmax)
        jstop = max(jstop, _accepted_from(val, rem))
        parts.append((val, rem))
    if jstop >= cs.size:
        return cs.size, out
    m_ = mass[jstop:]
    for i, (val, rem) in enumerate(parts):
        out[i] = float(np.dot(m_, val[jstop:])) + float(np.dot(m_, rem[jstop:]))
        # The upper tail of C, charged at the top slice's value (in logs: it may underflow).
        top_v = float(val[-1] + rem[-1])
        if top_v > 0:
            out[i] += _exp_log_sum(log_above, math.log(top_v))
    return jstop, out


def _rdp_group_sum(pair: ClonePair, orders: np.ndarray, K: float, step, budget) -> np.ndarray:
    lr = pair.log_ratio
    A = (orders - 1).astype(float)
    linear = A * lr <= _LINEAR_MAX
    g_sum = np.zeros(orders.shape)
    g_abs = np.zeros(orders.shape)
    jstop = None
    if step is None and _SERIES_ENABLED and np.all(linear):
        # Slices from index jstop on are summed in closed form (moment series); the exact
        # point sum only covers the slices below it, if any.
        jstop, ser = _series_part(pair, orders, K)
        g_sum += ser
        if jstop >= _rdp_window(pair.n, pair.p, K)[0].size:
            jstop = None                                  # no series: the full window
        elif jstop == 0:
            chunks, log_tm = [], -math.inf
            log_below = _rdp_window(pair.n, pair.p, K)[2]
    logw_memo = {}
    if jstop is None or jstop > 0:
        chunks, log_tm, log_below, (c_eval, mass, alo, ahi, log_mass), logw_memo = _rdp_terms(
            pair, K, step, budget, jstop, want_logw=not np.all(linear))
    log_parts = [[] for _ in orders]
    for wpt, ell, split, (j0, j1) in chunks:
        buf = np.empty_like(ell)
        for i, a in enumerate(A):
            if linear[i]:
                np.multiply(ell, a, out=buf)
                np.expm1(buf, out=buf)
                np.multiply(buf, wpt, out=buf)
                pos = float(buf[:split].sum())     # pairwise sums: error ~log2(N)·u·Σ|t|
                neg = float(buf[split:].sum())
                g_sum[i] += pos + neg
                g_abs[i] += pos - neg
        if not np.all(linear):
            # Huge orders: log weights are needed where the weights underflow. They are
            # made once per cached point set (on the first huge order, aligned with ``ell``)
            # so that an order search's single-order calls do not regenerate the points.
            logw = _chunk_logw(logw_memo, pair, (c_eval, alo, ahi, log_mass), ell, (j0, j1))
            for i, a in enumerate(A):
                if not linear[i]:
                    np.multiply(ell, a, out=buf)
                    np.add(buf, logw, out=buf)
                    log_parts[i].append(_log_sum_pos(buf))
    out = np.empty(orders.shape)
    for i, a in enumerate(A):
        if linear[i]:
            # Terms of both signs cancel to a second-order quantity (amplification ~ √c/λ):
            # charge 1e-12 of their absolute sum for the ~1e-15 relative error of each.
            g = g_sum[i] + 1e-12 * g_abs[i]
            # Remainders from their logs (exact bounds, no absolute floors: a floor here
            # would be multiplied by e^{(λ−1) log(a/b)}); 1e-300 covers their underflow.
            xa = a * lr
            g += _exp_log_sum(log_tm, math.log(math.expm1(xa)))
            # α(e^x − 1) + β(e^−x − 1) = (1 − e^−x)(α e^x − β): two positive factors, no
            # cancellation at small x.
            g += _exp_log_sum(log_below, math.log(-math.expm1(-xa))
                              + math.log(pair.alpha * math.exp(xa) - pair.beta))
            g += 1e-300
            out[i] = math.log1p(max(g, 0.0)) / a
        else:
            # Huge values: every term of 1 + G is positive; sum them in log space.
            terms = list(log_parts[i])
            terms.append(log_tm + a * lr)
            terms.append(log_below + float(np.logaddexp(pair.log_alpha + a * lr,
                                                        pair.log_beta - a * lr)))
            # Complete without a "1": window points exactly, x-tails at the largest loss,
            # c below the window at c = 0, c above it in the last block (monotone in c).
            out[i] = max(float(special.logsumexp(terms)), 0.0) / a
    return out


def _chunk_logw(memo: dict, pair: ClonePair, plan, ell, span) -> np.ndarray:
    """log(block mass × P(x | c)) of a cached chunk's points, in the chunk's order."""
    hit = memo.get(span)
    if hit is None:
        c_eval, alo, ahi, log_mass = plan
        jj, logP, ell2 = _rdp_points(pair, c_eval, alo, ahi, *span)
        idx = np.argsort(ell2 < 0, kind="stable")         # the order ``_rdp_terms`` stored
        hit = log_mass[jj[idx]] + logP[idx]
        if not np.array_equal(ell2[idx], ell):
            raise AssertionError("cached RDP points out of step")   # pragma: no cover
        memo[span] = hit
    return hit


def _log_sum_pos(v: np.ndarray) -> float:
    """log Σ e^{v}, rounded up: one max, one exp pass and a pairwise sum of positive terms.

    The sum's relative error is ≤ (log2 N + 2)·u ≤ 1e-13 for N < 2^40 points; ``REL_SLACK``
    (1e-12) is added on the log scale so the result stays above the exact value.
    """
    m = float(np.max(v)) if v.size else -math.inf
    if not math.isfinite(m):
        return m
    tot = float(np.sum(np.exp(v - m)))
    return m + math.log(tot) + REL_SLACK


def _exp_log_sum(x: float, y: float) -> float:
    """e^{x + y}, 0 for x = −∞ (an empty tail), +∞ past the float range (never capped)."""
    if x == -math.inf:
        return 0.0
    return math.exp(x + y) if x + y < 709.0 else math.inf


#: Atom budget of the dominating pair handed to PLD composition, and its window (sds).
PLD_MAX_ATOMS = 1_500_000
_PLD_SDS = 9.0
#: Below this many standard deviations the lower tail of C is carried by c = 0.
_LOW_SDS = 18.0


def pair_pld_atoms(pair: ClonePair, max_atoms: int | None = None):
    """A finite dominating pair for PLD composition: (log P atoms, log Q atoms, tail mass).

    Dominance (hockey-stick at every order, both directions, so it survives adaptive
    composition — Zhu, Dong, Wang, AISTATS 2022, Thm 10): the pair is a disjoint mixture
    over c of slice pairs (c is readable from the output), H is additive over the mixture,
    and every slice's H is non-increasing in c (both
    directions by the pair's symmetry). So slices may be replaced by a smaller c: the
    window's slices are kept every Δ-th c (Δ = 1 when within ``max_atoms``), each block
    carrying its mass at its first slice, the upper tail of C joins the last block, and
    the lower tail is carried by the c = 0 slice (two atoms). Within a slice x runs over
    ±(9 sd + 3); the P-mass outside (Hoeffding, ≤ 2e-17 per slice) is the returned tail,
    which the PLD route charges at infinite loss every round (the pair is symmetric, so the
    same bound serves Q). For g = 0 pairs only.
    """
    _need_g0(pair, "pair_pld_atoms")
    budget = int(max_atoms or PLD_MAX_ATOMS)
    c_eval, mass, log_below, alo, ahi, tails, _, _, _ = _rdp_plan(pair, _PLD_SDS, None, budget)
    jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
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
        lo = int(_rdp_window(pair.n, pair.p, _PLD_SDS)[0][0])
        lo2 = binom_window(m, pair.p, _LOW_SDS, 3)[0]
        if 0 < lo2 < lo:
            cs = np.arange(lo2, lo, dtype=float)
            mid = float(np.sum(np.exp(binom_logpmf(cs, m, pair.p, 1.0 - pair.p)))) * (1.0 + 1e-12)
            log_below = _log_tails(m, pair.p, lo2, m)[0]
            c2 = np.array([lo2], dtype=np.int64)
            a2, b2, lt2 = _x_windows(c2, _PLD_SDS)
            j2, lP2, ell2 = _rdp_points(pair, c2, a2, b2, 0, 1)
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


#: Window (standard deviations of C and of A in each slice) and atom budget of the floor
#: pair (``pair_floor_atoms``): it decides skips only, so it is sized for speed.
_FLOOR_SDS = 7.0
FLOOR_MAX_ATOMS = 200_000


def pair_floor_atoms(pair: ClonePair, max_atoms: int | None = None):
    """Atoms (log P, log Q) of a pair DOMINATED by the clone pair: every hockey-stick curve
    and T-fold composition of it is at or below the clone pair's (for floors: a bound whose
    pair's T-fold ε is provably above the best answer so far need not be evaluated).

    The mirror image of ``pair_pld_atoms``: the window's slices are grouped in blocks of Δ
    consecutive c, and each block carries its mass at its *last* slice c'. Slice c' is a
    post-processing of slice c ≤ c' (add c' − c fair-coin clones to x), so the blocked
    mixture is a post-processing of the clone pair (the post-processor reads c, moves it to
    c' = the end of its block and adds the coins). Everything outside the window (the tails
    of C, x beyond ±7 sd in a slice) is left out, which only lowers every composed δ. The
    floating-point error of the masses (~1e-12 relative) is covered by scaling every atom
    down by 1e-9 (both P and Q: each term (P − e^ε Q)_+ then shrinks), and that of the
    losses by lowering them by a margin in the floor lattice (``pld_fft.floor_lattice``).
    For g = 0 pairs only.
    """
    _need_g0(pair, "pair_floor_atoms")
    budget = int(max_atoms or FLOOR_MAX_ATOMS)
    cs, _, _, _, logw = _rdp_window(pair.n, pair.p, _FLOOR_SDS)
    step = _step_for(cs, _FLOOR_SDS, budget)
    starts = np.arange(0, cs.size, step)
    ends = np.append(starts[1:], cs.size) - 1
    log_mass = np.logaddexp.reduceat(logw, starts) if step > 1 else logw.copy()
    c_eval = cs[ends]
    alo, ahi, _ = _x_windows(c_eval, _FLOOR_SDS)
    jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
    logp = log_mass[jj] + logP + math.log1p(-1e-9)
    logq = logp - ell
    keep = np.isfinite(logp) & np.isfinite(logq)
    return logp[keep], logq[keep]


def pair_lower_atoms(pair: ClonePair, sds: float = 9.0, max_atoms: int = 3_000_000):
    """Atoms (log P, log Q) of any pair (g ≥ 0) on a window, for LOWER-bound composition.

    Slices in ±(12 sd(C) + 12), x in ±(sds·sd + 3) of each; everything outside is simply
    left out, which only lowers every composed δ (the right direction for a lower bound,
    e.g. the k-RR marginal pair). Raises ``ValueError`` past
    ``max_atoms``.
    """
    sl = _pair_slices(pair)
    c = sl.c.astype(np.int64)
    keep = sl.w > 0
    c, W, al, be = c[keep], sl.w[keep], sl.alpha[keep], sl.beta[keep]
    half = np.floor(0.5 * sds * np.sqrt(np.maximum(c, 1.0))) + 3
    alo = np.maximum(0, np.floor(0.5 * c) - half).astype(np.int64)
    ahi = np.minimum(c, np.ceil(0.5 * c) + half).astype(np.int64)
    counts = ahi + 2 - alo                       # x from alo to ahi + 1
    total = int(counts.sum())
    if total > max_atoms:
        raise ValueError(f"the pair would have {total} atoms on its window, more than "
                         f"max_atoms={max_atoms}")
    jj = np.repeat(np.arange(c.size), counts)
    offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    x = (alo[jj] + offs).astype(float)
    cf = c[jj].astype(float)
    lv = half_binom_logpmf(x, cf)                # log Bin(c,½)(x); −inf at x = c + 1
    lu = half_binom_logpmf(x - 1.0, cf)          # log Bin(c,½)(x − 1)
    la, lb = np.log(al)[jj], np.log(be)[jj]
    lw = np.log(W)[jj]
    logp = lw + np.logaddexp(la + lu, lb + lv)
    logq = lw + np.logaddexp(lb + lu, la + lv)
    ok = np.isfinite(logp) | np.isfinite(logq)
    logp, logq = logp[ok], logq[ok]
    if pair.g > 0.0:
        # The s = 0 outcome (uninformative victim, no clones) has loss 0 but real mass; in a
        # composition it carries the other rounds' losses, so it must not be dropped.
        l0 = math.log(pair.g) + float(binom_logpmf(0, pair.n - 1, pair.p, 1.0 - pair.p))
        logp, logq = np.append(logp, l0), np.append(logq, l0)
    return logp, logq


def pair_log_atoms(pair: ClonePair, sds: float = 12.0, max_atoms: int = 20_000_000):
    """Atoms (log P, log Q) of the pair on a window, for PLD composition by other modules.

    The support points are (c, x): c clones in ±(sds·sd(C) + 3) and x in ±(sds·sd(A) + 3)
    within each slice (plus one for the victim). **Truncated**: the P-mass (and, by the
    symmetry of the pair, the Q-mass) missing from the atoms is 1 − Σ exp(logp); a
    pessimistic PLD must put it at privacy loss +∞. For g = 0 pairs only.
    """
    _need_g0(pair, "pair_log_atoms")
    m = pair.n - 1
    lo, hi = binom_window(m, pair.p, sds, 3)
    est = sum(min(c + 2, sds * math.sqrt(max(c, 1)) + 8) for c in range(lo, hi + 1))
    if est > max_atoms:
        raise ValueError(f"the pair would have about {est:.3g} atoms, more than max_atoms="
                         f"{max_atoms}; lower sds or raise max_atoms")
    c_eval, mass, _, jj, logP, ell, tails, _ = _slice_points(pair, sds, step=1)
    logp = np.log(mass[jj]) + logP
    # The last block absorbed the upper tail mass of C; take it back out for exact atoms.
    logw = binom_logpmf(c_eval, m, pair.p, 1.0 - pair.p)
    logp = logw[jj] + logP
    logq = logp - ell
    return logp, logq
