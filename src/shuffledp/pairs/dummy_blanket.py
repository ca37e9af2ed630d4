r"""The privacy blanket with dummy reports drawn from a public distribution (docs/dummies.md).

A round of h honest users of a concrete randomizer R and D dummy reports, each drawn from a
public distribution ν over R's outputs (``Shuffle(..., dummies=D, dummy_distribution=ν)``).
The blanket decomposition of Balle, Bell, Gascón, Nissim (CRYPTO 2019, arXiv:1903.02837)
writes every other user's report as a draw from the blanket ω with probability γ
(γω(y) = min_u R(u)(y)); a dummy is the same with probability

    c = min_y ν(y)/ω(y)        (ν = cω + (1 − c)ν', ν' a distribution: c ≤ 1)

— c = 1 for ν = ω ("blanket"), and for k-ary randomized response, whose blanket is uniform,
c = 1 for uniform dummies. Give the adversary every non-blanket report (the others' and the
dummies' draws from R'(x_i) and ν', none of which depends on the victim) and the number X of
blanket draws; what is left is the victim's report shuffled with X draws from ω, where

    X = M + M_d,  M ~ Bin(h − 1, γ),  M_d ~ Bin(D, c)   (independent).

Given X = x the view is (x + 1) reports, x from ω and one from R(x₁) or R(x₁'); its exact
hockey-stick divergence, in the generalized privacy-amplification form of Su, Cheng, Wang
(IEEE S&P 2026, arXiv:2504.07414), is

    f(x) = γ E[(G'_1 + … + G'_{x+1})_+] / (x + 1),  G' = A − e^ε B on Y ~ ω

(A = R(x₁)(Y)/(γω(Y)), B = R(x₁')(Y)/(γω(Y)); ``gparv``), and δ(ε) = max over victim pairs
of E f(X). With D = 0 this is the library's blanket bound E[(G_1 + … + G_h)_+]/h exactly
(the identity Bin(h−1, γ)(x)·γ/(x+1) = Bin(h, γ)(x+1)/h), so nothing is lost by the
split. Adding one more blanket draw is a post-processing (the adversary can draw from the
public ω itself), so f is non-increasing in x: E f(X) is bounded by summing X's mass over
buckets [l, u) times f(l), f certified from above by ``pairs.iid.positive_part``.

Only one round: the view (X, the multiset) is a valid dominating pair that would compose,
but its PLD/RDP views are not built here; T rounds are answered by the fixed-input route
when ν is a mixture of R's rows, else by the round without dummies (docs/dummies.md).
Replace-one neighbours; no sampling (the dummies are always present).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import gparv
from ..core.mechanisms import RandomizedResponse, Randomizer
from . import iid

__all__ = ["blanket_weight", "in_row_hull", "delta", "epsilon", "output_count"]

#: Equal-mass buckets of X's body (f evaluated at each bucket's lower end, which overstates
#: f inside the bucket: more buckets is tighter and slower), and the lower-tail bucket edges
#: (cumulative probabilities) below them.
BUCKETS = 48
TAIL_EDGES = (1e-30, 1e-20, 1e-14, 1e-10, 1e-7, 1e-5, 1e-4, 1e-3)
#: Half-width of the range of each binomial kept, in standard deviations (the mass outside,
#: < 1e-30, is charged as δ = 1).
SDS = 12.0
#: Lattice resolution of the certified sums (``iid.positive_part``'s ν; 10 is ~1 % looser in
#: δ than its default and several times faster: every value stays an upper bound).
NU = 10.0
#: A bucket whose Chernoff bound times its mass is below this fraction of the Chernoff total
#: keeps its Chernoff bound (valid, looser) instead of an exact sum.
SKIP = 1e-6


def output_count(mech) -> int | None:
    """Number of outputs of a finite randomizer whose distribution a vector can name."""
    if isinstance(mech, RandomizedResponse):
        return mech.k
    if isinstance(mech, Randomizer):
        return len(mech.matrix[0])
    return None


def _nu(mech, dist) -> np.ndarray | None:
    """ν as a vector over the outputs (None for "blanket", which needs no vector)."""
    if dist == "blanket":
        return None
    k = output_count(mech)
    if dist == "uniform":
        return np.full(k, 1.0 / k)
    nu = np.asarray(dist, dtype=float)
    return nu / nu.sum()


def blanket_weight(mech, dist) -> float:
    """c = min_y ν(y)/ω(y): the probability that a dummy is a blanket draw (rounded down)."""
    if dist == "blanket":
        return 1.0
    nu = _nu(mech, dist)
    if isinstance(mech, RandomizedResponse):
        # ω is uniform; rounded down by a few ulps (c only weakens the bound when smaller).
        return min(1.0, float(mech.k * nu.min()) * (1.0 - 4e-16))
    m = np.asarray(mech.array, dtype=float)
    g = m.min(axis=0)
    keep = m.max(axis=0) > 0
    om = g[keep] / g[keep].sum()
    return min(1.0, float(np.min(nu[keep] / om)) * (1.0 - 1e-14))


def in_row_hull(mech, dist) -> bool:
    """True when ν is exactly a mixture Σπ_x R(x) of the rows (checked for k-RR only:
    ν(y) ≥ 1/(e^ε0 + k − 1) for every y; a dummy from ν is then a dummy on a random public
    input x ~ π)."""
    if not isinstance(mech, RandomizedResponse):
        return False
    if dist in ("uniform", "blanket"):
        return True          # the average of the k rows (k-RR's blanket is uniform too)
    q = 1.0 / (math.exp(mech.eps0) + mech.k - 1)
    # A margin far above the rounding of ν and q: a vector on the boundary is refused.
    return bool(np.all(_nu(mech, dist) >= q * (1.0 + 1e-12)))


def _binom_window(N: int, p: float):
    """(offset, pmf on [offset, offset + len)), mass outside (upper bound) of Bin(N, p)."""
    from scipy import stats
    if N == 0 or p == 0.0:
        return 0, np.array([1.0]), 0.0
    if p >= 1.0:
        return N, np.array([1.0]), 0.0
    mu, sd = N * p, math.sqrt(N * p * (1 - p))
    lo = max(0, int(math.floor(mu - SDS * sd - 10)))
    hi = min(N, int(math.ceil(mu + SDS * sd + 10)))
    xs = np.arange(lo, hi + 1)
    pmf = stats.binom.pmf(xs, N, p)
    out = (stats.binom.cdf(lo - 1, N, p) if lo > 0 else 0.0) + (
        stats.binom.sf(hi, N, p) if hi < N else 0.0)
    return lo, pmf, float(out) * 1.01 + 1e-300


@functools.lru_cache(maxsize=64)
def _law(h: int, gamma: float, D: int, c: float):
    """(bucket lower ends, bucket masses, mass outside the window) of X (see module doc)."""
    o1, p1, t1 = _binom_window(h - 1, gamma)
    o2, p2, t2 = _binom_window(D, c)
    pmf = np.convolve(p1, p2)
    cdf = np.cumsum(pmf)
    qs = np.concatenate([TAIL_EDGES, np.linspace(0.0, 1.0, BUCKETS + 1)[1:-1]])
    edges = np.unique(np.concatenate([[0], np.searchsorted(cdf, qs * cdf[-1])]))
    edges = edges[edges < pmf.size]
    mass = np.add.reduceat(pmf, edges)
    return tuple(int(o1 + o2 + e) for e in edges), mass, t1 + t2


def _sum_atoms(pair, eps):
    vals, _, err = pair.atoms(eps)
    return vals[:-1], pair.w / pair.gamma, err[:-1]        # the blanket draws only


@functools.lru_cache(maxsize=4096)
def _delta(mech, h: int, D: int, c: float, eps: float) -> float:
    pairs = gparv.pairs_of(mech)
    gamma = pairs[0].gamma
    lows, mass, outside = _law(h, gamma, D, c)
    best = 0.0
    for pair in pairs:
        vals, probs, err = _sum_atoms(pair, eps)
        if np.max(vals) <= 0.0:
            continue
        ms = [x + 1 for x in lows]
        ch = np.array([min(1.0, pair.gamma * iid.chernoff_positive_part(
            vals, probs, m, value_err=err) / m) for m in ms])
        cut = SKIP * float(np.dot(mass, ch))
        f = ch.copy()
        for b, m in enumerate(ms):
            if mass[b] * ch[b] >= cut:
                ex = iid.positive_part(vals, probs, m, value_err=err, nu=NU).upper
                f[b] = min(ch[b], pair.gamma * ex / m)
        best = max(best, outside + float(np.dot(mass, f)))
    # Floating-point allowance for the pmf and the sum (relative, far above their error).
    return min(1.0, best * (1.0 + 1e-9))


def delta(mech, h: int, D: int, c: float, eps: float) -> float:
    """Certified δ(ε) of one round: h honest users of ``mech`` (a concrete randomizer), D
    dummies each a blanket draw with probability c, replace-one neighbours."""
    return _delta(mech, int(h), int(D), float(c), float(eps))


def epsilon(mech, h: int, D: int, c: float, delta_: float, rtol: float = 2e-5) -> float:
    """Smallest ε found with certified δ(ε) ≤ δ: the upper end of a bracket [lo, hi] with
    δ(lo) > δ ≥ δ(hi), narrowed by secant steps on log δ (bisection when they stall)."""
    pairs = gparv.pairs_of(mech)
    top = max(p.max_log_ratio() for p in pairs)

    def d(e):
        return delta(mech, h, D, c, e)

    if d(0.0) <= delta_:
        return 0.0
    hi, dhi = top, 0.0                      # the loss never exceeds top: δ(top) = 0
    lo, dlo = 0.0, d(0.0)
    # Decades down from top until δ exceeds the target (the answer may be far below top).
    x = top / 10
    while x > 1e-9:
        v = d(x)
        if v > delta_:
            lo, dlo = x, v
            break
        hi, dhi = x, v
        x /= 10
    ld = math.log(delta_)
    for it in range(200):
        if hi - lo <= rtol * hi:
            break
        if dhi > 0.0 and it % 3 != 2:
            la, lb = math.log(dlo), math.log(dhi)
            x = lo + (la - ld) * (hi - lo) / (la - lb)
            x = min(max(x, lo + 0.02 * (hi - lo)), hi - 0.02 * (hi - lo))
        else:
            x = 0.5 * (lo + hi)
        v = d(x)
        if v <= delta_:
            hi, dhi = x, v
        else:
            lo, dlo = x, v
    return hi
