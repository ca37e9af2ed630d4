"""Approximate-DP composition: KOV15 (optimal homogeneous and closed form) and PLD.

Every function returns a certified *upper* bound (composition
theorems bound what T adaptive rounds can leak; they never give lower bounds).

KOV15 optimal homogeneous composition
-------------------------------------
Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015
(arXiv:1311.0776v4), Thm 3.3: the k-fold adaptive composition of (ε, δ)-DP mechanisms is,
for every i = 0 … ⌊k/2⌋, ((k − 2i) ε, 1 − (1 − δ)^k (1 − δ_i))-DP with

    δ_i = Σ_{ℓ=0}^{i−1} C(k, ℓ) (e^{(k−ℓ)ε} − e^{(k−2i+ℓ)ε}) / (1 + e^ε)^k.

(The denominator is (1 + e^ε)^k; one public routine writes (1 − e^ε)^k, a sign error.)
The proof shows the composed privacy region lies inside the region of the k-fold product
of the canonical pair P̃ = (δ, (1−δ)α, (1−δ)(1−α), 0), Q̃ = (0, (1−δ)(1−α), (1−δ)α, δ),
α = e^ε/(1 + e^ε). That region is the intersection of the half-planes of the statement
above, so at *any* ε' the bound is the hockey-stick of the product pair:

    δ(ε') = 1 − (1 − δ)^k (1 − H_k(ε')),
    H_k(ε') = Σ_{j : (k−2j)ε > ε'} Bin(k, 1−α)(j) · (1 − e^{ε' − (k−2j)ε}),

which equals δ_i at ε' = (k − 2i)ε. Every term is non-negative; the binomial weights come
from the Loader log-pmf in ``numerics``; the binomial window is closed with a certified
tail mass. Works for k up to 1e5 and beyond.

KOV15 closed form
-----------------
Same paper, Thm 3.4 (homogeneous; Thm 3.5 for heterogeneous): for any δ̃ ∈ (0, 1],
(ε̃, 1 − (1 − δ̃) Π(1 − δ_ℓ))-DP with

    ε̃ = min{ Σε_ℓ,
             Σ ε_ℓ tanh(ε_ℓ/2) + √(2 Σε_ℓ² · log(e + √(Σε_ℓ²)/δ̃)),
             Σ ε_ℓ tanh(ε_ℓ/2) + √(2 Σε_ℓ² · log(1/δ̃)) }

((e^ε − 1)ε/(e^ε + 1) = ε tanh(ε/2)). FMT23's Figure 3 cites "advanced composition
[KOV15, Thm 4.3]"; which statement carries that number is unconfirmed, so both the
optimal and the closed form are offered and labelled ("kov15-optimal", "kov15-closed").

The δ split
-----------
With a single-round curve ε1(δ1) (or δ1(ε1)) the per-round δ1 and the composition's δ̃
are a free choice: any split gives a valid bound. ``compose_epsilon`` / ``compose_delta``
minimise over a grid, the papers' usual split (δ1 = δ/(2T)), the pure endpoint (δ1 = 0)
when the curve has one, and a golden-section refinement; the split used is reported.

PLD
---
The privacy-loss distribution of a finite dominating pair (P, Q) composes exactly by
convolution (Koskela et al. 2020; Doroshenko et al. 2022 for the "connect the dots"
family used by Google's ``dp_accounting``). ``pld_epsilon`` / ``pld_delta`` build the PLDs
of both directions (P‖Q and Q‖P) with losses rounded *up* to the grid (pessimistic), the
P-mass of atoms the pair does not list charged as infinite loss, and self-compose them
``rounds`` times by one exponentially tilted FFT power with every error bounded
(``pld_fft``; numpy only). The optimistic PLDs of lower bounds and the mixed entries of a
ledger use ``dp_accounting.pld`` (optional dependency, the ``pld`` extra; imported
lazily); counts are passed explicitly (dp_accounting 0.6's randomized-response PLD
ignores the repeat count in some paths; we never use it).
PLD of T = 1 is the single round's hockey-stick up to the discretisation (≤ one grid step
in ε, always on the safe side).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)

from ..core import _validate as v
from ..core.errors import NotApplicableError
from ..numerics import pld_fft as _pf
from ..core._memo import memo, register as _memo_register
from ..core._parallel import pmap
from ..numerics import (golden_min, binom_logpmf, binom_window, bisect_certified,
                       log_binom_coef, round_up)

__all__ = [
    "kov15_delta",
    "kov15_epsilon",
    "kov15_points",
    "kov15_closed_epsilon",
    "kov15_closed_delta",
    "Composed",
    "compose_epsilon",
    "compose_delta",
    "pld_unavailable_reason",
    "pld_epsilon",
    "pld_delta",
    "pld_epsilon_lower",
    "pld_delta_lower",
]

# ---------------------------------------------------------------------------------------
# KOV15 optimal homogeneous
# ---------------------------------------------------------------------------------------

_WINDOW_SDS = 40.0   # binomial mass outside the window is < e^-800: the tail term is 1e-300


@memo(maxsize=256)
def _rr_weights(eps1: float, k: int):
    """Window of the flip count j ~ Bin(k, e^-eps1/(1+e^-eps1)) and its log weights.

    Cached: the ε-searches of KOV15 evaluate H_k at many ε for the same (eps1, k).
    """
    p = float(special.expit(-eps1))     # prob of a "flip" (the Q-favoured outcome)
    q = float(special.expit(eps1))
    wlo, whi = binom_window(k, p, sds=_WINDOW_SDS, extra=40)
    j = np.arange(wlo, whi + 1, dtype=float)
    if q < 1.0:
        lw = binom_logpmf(j, k, p, q)
    else:
        # eps1 > ~37: q rounds to 1 (Loader's form needs log(1 − q)); weights directly,
        # log p = −eps1 − log1p(e^−eps1), log q = −log1p(e^−eps1), with a relative
        # allowance for the log-gamma error at large k.
        l1 = math.log1p(math.exp(-eps1))
        lw = log_binom_coef(k, j) - j * (eps1 + l1) - (k - j) * l1
        lw = lw + 1e-15 * (k * math.log(k + 1.0) + j * eps1 + 1.0)
    w = np.exp(lw)
    j.setflags(write=False)
    w.setflags(write=False)
    return p, q, wlo, whi, j, w


def _hockey_rr(eps1: float, k: int, eps: float) -> float:
    """H_k(eps): hockey-stick of the k-fold binary-RR(eps1) product pair, rounded up."""
    if eps1 <= 0.0 or eps > k * eps1 * (1.0 + 1e-14):
        return 0.0
    # Live terms: (k - 2j) eps1 > eps, i.e. j < (k - eps/eps1)/2; the mask below is exact.
    jmax = min(k, int(math.floor((k - eps / eps1) / 2.0)) + 2)
    p, q, wlo, whi, jall, wall = _rr_weights(float(eps1), int(k))
    cut = max(0, min(whi, jmax) - wlo + 1)
    j, w = jall[:cut], wall[:cut]
    # Term j is live when (k − 2j) eps1 > eps. The floating-point gap can be off by a few
    # ulps (3*0.3 vs 0.8999999999999999): widen it by that much, so that a term that is
    # live in exact arithmetic is never dropped and none is made smaller.
    top = (k - 2.0 * j) * eps1
    gap = top - eps + 8.0 * np.spacing(np.abs(top) + abs(eps))
    live = gap > 0
    total = float(np.sum(w[live] * -np.expm1(-gap[live]))) if cut else 0.0
    # Live terms outside the window weigh at most their binomial mass (Chernoff bound,
    # in log space; at 40 sds it is ~e^-800, so a floor of the smallest subnormal keeps it
    # an upper bound without charging 1e-300 to targets like δ = 1e-300).
    tail = 0.0
    if wlo > 0 and wlo <= jmax:
        tail += _chernoff_tail(k, p, q, wlo - 1)
    elif wlo > jmax:
        tail += _chernoff_tail(k, p, q, jmax) if jmax < k * p else 1.0
    if whi < jmax:
        tail += _chernoff_tail(k, p, q, whi + 1)
    total += tail
    return min(1.0, float(round_up(total)))


def _chernoff_tail(k: int, p: float, q: float, a: int) -> float:
    """Pr[Bin(k, p) ≤ a] (a < kp) or Pr[Bin(k, p) ≥ a] (a > kp): ≤ exp(−k KL(a/k ‖ p))."""
    x = a / k
    kl = float(special.rel_entr(x, p) + special.rel_entr(1.0 - x, q))
    return max(math.exp(-k * kl * (1.0 - 1e-9)), 5e-324)


def _check_kov_args(eps1, delta1, k):
    eps1 = v.real("eps_round", eps1, lo=0.0)
    delta1 = v.real("delta_round", delta1, lo=0.0, hi=1.0, hi_open=True)
    k = v.integer("rounds", k, lo=1)
    return eps1, delta1, k


def _kov_delta(eps1: float, delta1: float, k: int, eps: float) -> float:
    h = _hockey_rr(eps1, k, eps)
    if h >= 1.0:
        return 1.0
    log_keep = k * math.log1p(-delta1) + math.log1p(-h)
    return min(1.0, float(round_up(-math.expm1(log_keep))))


def kov15_delta(eps_round: float, delta_round: float, rounds: int, epsilon: float) -> float:
    """δ after ``rounds`` adaptive rounds of (ε1, δ1)-DP at total ε (KOV15 Thm 3.3).

    Exact for the composition theorem at every ε (the hockey-stick of the canonical
    product pair); equals the theorem's δ_i at ε = (k − 2i) ε1. Rounded up.
    """
    eps1, delta1, k = _check_kov_args(eps_round, delta_round, rounds)
    eps = v.real("epsilon", epsilon, lo=0.0)
    return _kov_delta(eps1, delta1, k, eps)


@memo(maxsize=256)
def _rr_prefix(eps1: float, k: int):
    """Breakpoints and prefix sums of H_k on its window (``_kov_steer``), cached with the
    weights: tops[j] = (k − 2j)·ε1 (term j is live below it), A[j] = Σ_{i≤j} w_i and
    log B[j] = log Σ_{i≤j} w_i e^{−tops[i]}."""
    _, _, _, _, j, w = _rr_weights(eps1, k)
    tops = (k - 2.0 * j) * eps1
    with np.errstate(divide="ignore"):
        lb = np.logaddexp.accumulate(np.log(w) - tops)
    return tops, np.cumsum(w), lb


def _kov_steer(eps1: float, k: int, hstar: float) -> float | None:
    """The root of H_k(ε) = h* from prefix sums (uncertified; only steers the search).

    Between consecutive breakpoints tops[J] ≤ ε < tops[J−1] exactly the terms i < J are
    live, so H_k(ε) = A[J−1] − e^ε B[J−1] there: H at each breakpoint in one vector
    operation, then the root inside the bracketing interval in closed form."""
    tops, A, lb = _rr_prefix(eps1, k)
    if tops.size < 2:
        return None
    # H at the breakpoint tops[J] (term J is zero there): increasing in J
    hb = A[:-1] - np.exp(tops[1:] + lb[:-1])
    J = int(np.searchsorted(hb, hstar, side="left")) + 1      # hb[J-1] ≥ h*, index in tops
    if J >= tops.size or A[J - 1] <= hstar:
        return None                                # the root is outside the window
    return float(math.log(A[J - 1] - hstar) - lb[J - 1])


def _kov_epsilon(eps1: float, delta1: float, k: int, delta: float, rtol: float = 1e-11) -> float:
    # Need (1 - delta1)^k (1 - H) >= 1 - delta, i.e. H <= h_star.
    log_slack = math.log1p(-delta) - k * math.log1p(-delta1)
    if log_slack > 0.0:
        return math.inf                   # the rounds' own δ already exceeds the target
    seen: dict = {}

    def ok(e):
        if e not in seen:
            seen[e] = _kov_delta(eps1, delta1, k, e) <= delta
        return seen[e]

    # Steer: the closed-form root between breakpoints (``_kov_steer``, typically within
    # 1e-13 relative) brackets the certified threshold in two evaluations, instead of ~40
    # bisection steps over [0, kε1]. The end is still certified by ``ok`` (a bracket with
    # ok(a) False and ok(b) True holds the threshold: ``ok`` is monotone), bisected 100x
    # finer than asked, so it comes back at or below where the plain bisection would have
    # stopped, bar ties within 1e-2·rtol.
    s = _kov_steer(float(eps1), int(k), -math.expm1(log_slack))
    if s is not None and 0.0 < s < k * eps1:
        for w in (1e-12, 1e-9):
            a, b = s * (1.0 - w), min(k * eps1, s * (1.0 + w) + 1e-15)
            if ok(b) and not ok(a):
                return bisect_certified(ok, a, b, want="smallest", xtol=1e-15,
                                        rtol=1e-2 * rtol)
    if ok(0.0):
        return 0.0
    hi = k * eps1
    if not ok(hi):
        # H(k eps1) = 0: only rounding in 1 - (1-δ1)^k can fail here; step up a hair.
        hi = hi * (1.0 + 1e-9) + 1e-12
        if not ok(hi):
            return math.inf
    return bisect_certified(ok, 0.0, hi, want="smallest", xtol=1e-13, rtol=rtol)


def kov15_epsilon(eps_round: float, delta_round: float, rounds: int, delta: float) -> float:
    """Smallest certified total ε with total δ (KOV15 Thm 3.3); inf if δ < 1 − (1 − δ1)^k."""
    eps1, delta1, k = _check_kov_args(eps_round, delta_round, rounds)
    delta = v.probability("delta", delta)
    return _kov_epsilon(eps1, delta1, k, delta)


def kov15_points(eps_round: float, delta_round: float, rounds: int):
    """The theorem's statement as written: arrays (ε_i, δ_total_i), i = 0 … ⌊k/2⌋.

    δ_i is summed in log space term by term (each term C(k, ℓ)(e^{(k−ℓ)ε} −
    e^{(k−2i+ℓ)ε})/(1 + e^ε)^k is non-negative). O(k²): meant for k up to a few thousand
    (tests, tables); the accountant uses ``kov15_delta``.
    """
    eps1, delta1, k = _check_kov_args(eps_round, delta_round, rounds)
    i = np.arange(0, k // 2 + 1)
    eps_i = (k - 2.0 * i) * eps1
    log_norm = k * np.logaddexp(0.0, eps1)
    out = np.empty(i.size)
    for idx, ii in enumerate(i):
        if ii == 0 or eps1 == 0.0:
            out[idx] = 0.0
            continue
        ell = np.arange(0, ii, dtype=float)
        # e^{(k-ℓ)ε} − e^{(k−2i+ℓ)ε} = e^{(k-ℓ)ε} (1 − e^{−2(i−ℓ)ε})
        lt = (log_binom_coef(k, ell)
              + (k - ell) * eps1 + np.log(-np.expm1(-2.0 * (ii - ell) * eps1)) - log_norm)
        out[idx] = float(np.exp(special.logsumexp(lt)))
    total = -np.expm1(k * math.log1p(-delta1) + np.log1p(-np.minimum(out, 1.0)))
    return eps_i, round_up(total)


# ---------------------------------------------------------------------------------------
# KOV15 closed form
# ---------------------------------------------------------------------------------------

def _closed_terms(eps1: float, k: int):
    mu = k * eps1 * math.tanh(eps1 / 2.0)
    s2 = k * eps1 * eps1
    return mu, s2


def _closed_eps_tilde(eps1: float, k: int, dtilde: float) -> tuple[float, str]:
    """ε̃(δ̃) of the closed form and which expression achieved the min."""
    mu, s2 = _closed_terms(eps1, k)
    cands = [(k * eps1, "sum")]
    if dtilde > 0.0:
        # log(e + sqrt(s2)/δ̃) without overflow
        a = math.log(math.sqrt(s2)) - math.log(dtilde) if s2 > 0 else -math.inf
        lg = float(np.logaddexp(1.0, a))
        cands.append((mu + math.sqrt(2.0 * s2 * lg), "sqrt-log-e"))
        cands.append((mu + math.sqrt(2.0 * s2 * -math.log(dtilde)), "sqrt-log"))
    val, which = min(cands)
    return float(round_up(val)), which


def kov15_closed_epsilon(eps_round: float, delta_round: float, rounds: int, delta: float):
    """(total ε, which expression) of the KOV15 closed form at total δ; ε = inf if infeasible."""
    eps1, delta1, k = _check_kov_args(eps_round, delta_round, rounds)
    delta = v.probability("delta", delta)
    return _closed_epsilon(eps1, delta1, k, delta)


def _closed_epsilon(eps1, delta1, k, delta):
    log_slack = math.log1p(-delta) - k * math.log1p(-delta1)
    if log_slack > 0.0:
        return math.inf, "infeasible"
    dtilde = -math.expm1(log_slack)
    # δ̃ was computed in floating point: shrink it a hair so the total stays ≤ δ.
    dtilde = dtilde * (1.0 - 1e-12)
    return _closed_eps_tilde(eps1, k, dtilde)


def _closed_delta(eps1: float, delta1: float, k: int, eps: float) -> tuple[float, str]:
    mu, s2 = _closed_terms(eps1, k)
    if eps >= k * eps1 * (1.0 + 1e-12):
        dt, which = 0.0, "sum"
    elif eps <= mu or s2 == 0.0:
        return 1.0, "none"
    else:
        x = (eps - mu) ** 2 / (2.0 * s2)
        d3 = math.exp(-x)                              # from sqrt(2 s2 log(1/δ̃))
        # log(e + sqrt(s2)/δ̃) = x  =>  δ̃ = sqrt(s2) / (e^x − e), when x > 1
        d2 = math.exp(0.5 * math.log(s2) - (x + math.log(-math.expm1(1.0 - x)))) if x > 1.0 else math.inf
        dt, which = (d3, "sqrt-log") if d3 <= d2 else (d2, "sqrt-log-e")
        dt = min(1.0, dt * (1.0 + 1e-9))
        # certify: the forward ε̃(δ̃) must be ≤ eps
        for _ in range(60):
            if _closed_eps_tilde(eps1, k, dt)[0] <= eps or dt >= 1.0:
                break
            dt = min(1.0, dt * (1.0 + 1e-6) + 1e-300)
    total = -math.expm1(k * math.log1p(-delta1) + math.log1p(-min(dt, 1.0)))
    return min(1.0, float(round_up(total))), which


def kov15_closed_delta(eps_round: float, delta_round: float, rounds: int, epsilon: float):
    """(total δ, which expression) of the KOV15 closed form at total ε."""
    eps1, delta1, k = _check_kov_args(eps_round, delta_round, rounds)
    eps = v.real("epsilon", epsilon, lo=0.0)
    return _closed_delta(eps1, delta1, k, eps)


# ---------------------------------------------------------------------------------------
# Composition of a single-round curve with the split optimised
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Composed:
    """One composition statement's answer, with the split that achieved it."""

    value: float
    statement: str               # "kov15-optimal" or "kov15-closed"
    eps_round: float
    delta_round: float
    details: dict = field(default_factory=dict)


_GRID_Z = np.linspace(-12.0, 12.0, 25)   # logit of the share of δ given to the rounds


def compose_epsilon(eps_round: Callable[[float], float], rounds: int, delta: float, *,
                    pure_eps: Optional[float] = None, refine: int = 14) -> tuple[Composed, list[Composed]]:
    """T-round ε at total δ from a single-round curve ε1(δ1), split optimised.

    Parameters
    ----------
    eps_round : callable δ1 ↦ certified upper single-round ε1 (δ1 in (0, 1)).
    rounds : int ≥ 1
    delta : total δ in (0, 1)
    pure_eps : the single-round ε at δ1 = 0 when finite (pure DP), else None.
    refine : golden-section iterations around the best grid split.

    Returns
    -------
    (best, [optimal, closed]) — each a ``Composed`` with the split used (``delta_round``,
    and ``details['delta_composition']``, ``details['split']``).
    """
    k = v.integer("rounds", rounds, lo=1)
    delta = v.probability("delta", delta)
    if pure_eps is not None:
        pure_eps = v.real("pure_eps", pure_eps, lo=0.0)
    L = math.log1p(-delta)
    cache: dict = {}

    def split(z):
        """z = logit(f): rounds get log-survival share f, the composition 1 − f."""
        if z == -math.inf:
            return 0.0, delta
        f = float(special.expit(z))
        d1 = -math.expm1(f * L / k)
        return d1, -math.expm1((1.0 - f) * L)

    def e1(d1):
        if d1 not in cache:
            if d1 == 0.0:
                cache[d1] = math.inf if pure_eps is None else pure_eps
            else:
                x = float(eps_round(d1))
                if math.isnan(x):
                    raise ArithmeticError(f"single-round curve returned NaN at delta={d1!r}")
                cache[d1] = x
        return cache[d1]

    def opt_val(d1, rtol=1e-7):
        # Every value is certified whatever the tolerance; the split search only needs
        # to rank splits, so it bisects coarsely and the chosen split is redone finely.
        x = e1(d1)
        return _kov_epsilon(x, d1, k, delta, rtol) if math.isfinite(x) else math.inf

    def closed_val(d1):
        x = e1(d1)
        return _closed_epsilon(x, d1, k, delta)[0] if math.isfinite(x) else math.inf

    half_d1 = delta / (2.0 * k)
    results = []
    for name, fn in (("kov15-optimal", opt_val), ("kov15-closed", closed_val)):
        if name == "kov15-optimal":
            pts = _opt_grid(split, e1, opt_val, closed_val, k, delta)
        else:
            pts = [(fn(split(z)[0]), z, "grid") for z in _GRID_Z]
        if pure_eps is not None:
            pts.append((fn(0.0), -math.inf, "pure"))
        half_val = fn(half_d1)
        best_val, best_z, how = min(pts, key=lambda t: t[0])
        chosen_d1 = split(best_z)[0]
        if math.isfinite(best_val) and math.isfinite(best_z) and refine > 0:
            z, val = golden_min(lambda z: fn(split(z)[0]), best_z - 1.0, best_z + 1.0, refine)
            if val < best_val:
                best_val, best_z, how, chosen_d1 = val, z, "refined", split(z)[0]
        if half_val < best_val:
            best_val, how, chosen_d1 = half_val, "usual split delta/(2T)", half_d1
        if name == "kov15-optimal" and math.isfinite(best_val):
            best_val = min(best_val, opt_val(chosen_d1, 1e-11))
        dcomp = -math.expm1(L - k * math.log1p(-chosen_d1)) if chosen_d1 > 0 else delta
        det = {"delta_round": chosen_d1, "delta_composition": dcomp, "split": how,
               "eps_round": e1(chosen_d1), "usual_split_value": half_val}
        if name == "kov15-closed" and math.isfinite(e1(chosen_d1)):
            det["expression"] = _closed_epsilon(e1(chosen_d1), chosen_d1, k, delta)[1]
        results.append(Composed(float(best_val), name, e1(chosen_d1), chosen_d1, det))
    best = min(results, key=lambda c: c.value)
    return best, results


#: Margins of ``_kov_loses``: the floor's sum is taken at 1 − _FLOOR_SHRINK of its value
#: (binomial weights ~1e-12 relative, ≤ 1.6·10³-term sums of positive terms), a term only
#: where its gap top − ε exceeds _GAP_MARGIN of |top| + |ε| (its factor 1 − e^{−gap} is
#: then accurate to ~1e-9 relative), and the target δ is raised by _DELTA_MARGIN relative
#: (the rounding of h* and of the certified δ the value's own search compares).
_FLOOR_SHRINK = 1e-6
_GAP_MARGIN = 1e-6
_DELTA_MARGIN = 1e-9


def _hockey_rr_floor(eps1: float, k: int, eps: float) -> float:
    """A certified lower bound on H_k(ε) of the k-fold binary-RR(ε1) pair (the sum
    ``_hockey_rr`` bounds from above): the window's live terms only (the others are ≥ 0),
    each with a clear gap, summed at 1 − ``_FLOOR_SHRINK``. From the cached weights."""
    p, q, wlo, whi, j, w = _rr_weights(float(eps1), int(k))
    top = (k - 2.0 * j) * eps1
    gap = top - eps
    live = gap > _GAP_MARGIN * (np.abs(top) + abs(eps))
    if not live.any():
        return 0.0
    return float(np.sum(w[live] * -np.expm1(-gap[live]))) * (1.0 - _FLOOR_SHRINK)


def _kov_loses(eps1_ref: float, d1: float, k: int, delta: float, beat: float) -> bool:
    """True when ``_kov_epsilon(x, d1, k, delta)`` is proven above ``beat`` for every
    per-round ε1 = x ≥ ``eps1_ref`` (whose weights are at hand), without x's weights.

    The value is a point e where the certified δ_total(e) = 1 − (1 − δ1)^k (1 − H_k(e; x))
    (rounded up) is ≤ δ, or ∞. H_k(e; x) is non-increasing in e and non-decreasing in x
    (binary RR at a smaller ε1 is a post-processing of RR at a larger one, coordinate by
    coordinate), so for every e ≤ ``beat``: H_k(e; x) ≥ H_k(beat; eps1_ref) ≥ its floor
    (``_hockey_rr_floor``). When that floor is above h* = 1 − (1 − δ')/(1 − δ1)^k at
    δ' = δ(1 + ``_DELTA_MARGIN``), the exact δ_total(e) exceeds δ at every e ≤ beat, so
    no such e passes the value's test and the value is > beat."""
    if not (math.isfinite(beat) and beat >= 0.0 and 0.0 < eps1_ref <= 37.0):
        return False             # (above ~37 the weights carry an upward allowance)
    log_slack = math.log1p(-delta * (1.0 + _DELTA_MARGIN)) - k * math.log1p(-d1)
    if not log_slack < 0.0:
        return False
    hstar = -math.expm1(log_slack)
    return _hockey_rr_floor(eps1_ref, k, beat) > hstar * (1.0 + _DELTA_MARGIN)


def _opt_grid(split, e1, opt_val, closed_val, k: int, delta: float) -> list:
    """``compose_epsilon``'s grid for the optimal statement: [(value, z, "grid")] over
    ``_GRID_Z``, where a point proven above the best value found (``_kov_loses``) is given
    ∞ instead of its value. Only the minimum and its first position are read from the
    grid, and a skipped point is strictly above the minimum, so both are those of the full
    grid (bit for bit). ε1 is formed at every point in grid order (as the full grid does);
    the point with the smallest ε1 is evaluated first (every other point's ε1 is at least
    it, so its weights serve every point's floor), then the rest in the order of the closed
    statement's value (cheap; it ranks the optimal one closely), each point's floor drawn
    from the evaluated point with the largest ε1 not above its own."""
    zs = list(_GRID_Z)
    d1s = [split(z)[0] for z in zs]
    xs = [e1(d) for d in d1s]
    vals: list = [None] * len(zs)
    fin = [i for i, x in enumerate(xs) if math.isfinite(x)]
    if fin:
        first = min(fin, key=lambda i: (xs[i], -i))
        rest = sorted((i for i in range(len(zs)) if i != first),
                      key=lambda i: (closed_val(d1s[i]), i))
        order = [first] + rest
    else:
        order = list(range(len(zs)))
    best = math.inf
    refs: list = []                       # ε1 of evaluated points with a finite value
    for i in order:
        x = xs[i]
        if math.isfinite(best) and math.isfinite(x):
            r = max((e for e in refs if e <= x), default=None)
            if r is not None and _kov_loses(r, d1s[i], k, delta, best):
                vals[i] = math.inf
                continue
        v_ = opt_val(d1s[i])
        vals[i] = v_
        if math.isfinite(v_):
            best = min(best, v_)
            if math.isfinite(x):
                refs.append(x)
    return [(vals[i], z, "grid") for i, z in enumerate(zs)]


def compose_delta(delta_round: Callable[[float], float], rounds: int, epsilon: float, *,
                  eps_max: float, refine: int = 14) -> tuple[Composed, list[Composed]]:
    """T-round δ at total ε from a single-round curve δ1(ε1), per-round ε1 optimised.

    ``eps_max`` is an ε1 at which the single-round δ1 is 0 (or the largest ε1 worth
    trying). Returns (best, [optimal, closed]) like ``compose_epsilon``.
    """
    k = v.integer("rounds", rounds, lo=1)
    eps = v.real("epsilon", epsilon, lo=0.0)
    eps_max = v.real("eps_max", eps_max, lo=0.0, lo_open=True)
    cache: dict = {}

    def d1(e):
        if e not in cache:
            x = float(delta_round(e))
            if math.isnan(x):
                raise ArithmeticError(f"single-round curve returned NaN at eps={e!r}")
            cache[e] = min(1.0, max(0.0, x))
        return cache[e]

    def opt_val(e):
        dd = d1(e)
        return 1.0 if dd >= 1.0 else _kov_delta(e, dd, k, eps)

    def closed_val(e):
        dd = d1(e)
        if dd >= 1.0:
            return 1.0
        return _closed_delta(e, dd, k, eps)[0]

    lo_x = math.log(max(eps_max * 1e-6, min(eps_max, max(eps, 1e-12) / k) * 1e-2))
    hi_x = math.log(eps_max)
    grid = np.linspace(lo_x, hi_x, 31)
    results = []
    # The optimal statement is piecewise smooth in ε1 with kinks where (k − 2i) ε1 = ε
    # (a term of H switches on); its minima sit on those kinks, so try them explicitly.
    ms = set(range(k, max(0, k - 40), -2))
    ms.update(int(m) for m in np.unique(np.geomspace(1, k, 24).astype(int)))
    kinks = [eps / m for m in sorted(ms) if 0 < eps / m < eps_max]
    for name, fn in (("kov15-optimal", opt_val), ("kov15-closed", closed_val)):
        pts = [(fn(float(math.exp(x))), float(x)) for x in grid]
        pts.append((fn(eps_max), hi_x))
        pts.extend((fn(e), math.log(e)) for e in kinks)
        best_val, best_x = min(pts)
        how = "grid"
        chosen = math.exp(best_x) if best_x != hi_x else eps_max
        step = grid[1] - grid[0]
        if refine > 0 and best_val < 1.0:
            x, val = golden_min(lambda x: fn(math.exp(min(x, hi_x))), best_x - step,
                                 min(hi_x, best_x + step), refine)
            if val < best_val:
                best_val, chosen, how = val, math.exp(min(x, hi_x)), "refined"
        det = {"eps_round": chosen, "delta_round": d1(chosen), "split": how}
        if name == "kov15-closed":
            det["expression"] = _closed_delta(chosen, d1(chosen), k, eps)[1] if d1(chosen) < 1 else "none"
        results.append(Composed(float(best_val), name, chosen, d1(chosen), det))
    best = min(results, key=lambda c: c.value)
    return best, results


# ---------------------------------------------------------------------------------------
# PLD through dp_accounting
# ---------------------------------------------------------------------------------------

#: Losses below this are rounded up to it (safe: P-mass at loss L is ≤ e^L, so the
#: change is ≤ e^-40 per round and only ever upward).
_LOSS_FLOOR = _pf._LOSS_FLOOR
#: Absolute allowance for dp_accounting's FFT rounding in the composed pmf, used where
#: dp_accounting composes (lower bounds, a ledger's mixed entries). Not a proof: double-
#: precision FFT convolution of a probability vector has absolute errors around 1e-16 per
#: entry; 1e-12 covers them with a wide margin. The single-entry upper route (``pld_fft``)
#: bounds its error instead.
PLD_ABS_SLACK = 1e-12
#: dp_accounting's truncation of the composed pmf's tails (charged to infinity mass).
_TAIL_TRUNCATION = 1e-15


@memo(maxsize=1)
def pld_unavailable_reason() -> str | None:
    """None when dp_accounting's PLD module imports, else why not (cached)."""
    try:
        from dp_accounting.pld import privacy_loss_distribution  # noqa: F401
    except Exception as exc:  # ImportError, or a broken install
        return (f"PLD composition needs the optional dependency dp-accounting "
                f"(pip install 'shuffledp[pld]'); import failed: {exc}")
    return None


def _pld_module():
    why = pld_unavailable_reason()
    if why:
        raise NotApplicableError(why)
    from dp_accounting.pld import privacy_loss_distribution
    return privacy_loss_distribution


def _check_pair(logp, logq, extra_delta):
    lp, lq, extra, _ = _checked_pair_new(logp, logq, extra_delta)
    return lp, lq, extra


#: Loss moments and lattices of recent read-only atom arrays (``_checked_pair``): key
#: (id(logp), id(logq)) -> (weak references to both, the pair's ``LossPair.store``).
_PAIR_STORES: dict = _memo_register("shuffledp.compose.composition._PAIR_STORES", {})
_PAIR_STORES_MAX = 8


def _pair_store(logp, logq):
    """The kept moments and lattices of this exact pair of arrays, or None.

    The bound views hand the same atom arrays to every question on one protocol (a sweep
    over rounds and δ), and the grids depend on the atoms only. Kept only for read-only
    float arrays (nothing can change them in place) and found by identity: the weak
    references must still point at these very objects (an id reused by a new array finds
    a dead reference). The entry holds no reference to the arrays themselves."""
    if not all(isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 1
               and _frozen(a) for a in (logp, logq)):
        return None
    key = (id(logp), id(logq))
    hit = _PAIR_STORES.get(key)
    if hit is not None and hit[0]() is logp and hit[1]() is logq:
        return hit[2]
    try:
        refs = (weakref.ref(logp), weakref.ref(logq))
    except TypeError:
        return None
    if len(_PAIR_STORES) >= _PAIR_STORES_MAX:
        _PAIR_STORES.pop(next(iter(_PAIR_STORES)))
    store: dict = {"checked": False}
    _PAIR_STORES[key] = (refs[0], refs[1], store)
    return store


def _frozen(a) -> bool:
    """Neither ``a`` nor any array it views can be written (a read-only view of a writeable
    array still changes with it)."""
    while a is not None:
        if not isinstance(a, np.ndarray) or a.flags.writeable:
            return False
        a = a.base
    return True


def _checked_pair(logp, logq, extra_delta):
    """``_check_pair`` and the pair's ``pld_fft.LossPair`` (seeded with the exponentials
    the check computes; its moments and lattices kept across calls for read-only atoms,
    ``_pair_store``)."""
    store = _pair_store(logp, logq)
    if store is not None and store["checked"]:
        lp, lq = logp, logq                  # 1-D float arrays: asarray/ravel are views
        extra = v.real("extra_delta", extra_delta, lo=0.0, hi=1.0)
        return lp, lq, extra, _pf.LossPair(lp, lq, store=store)
    lp, lq, extra, pair = _checked_pair_new(logp, logq, extra_delta, store)
    if store is not None:
        store["checked"] = True
    return lp, lq, extra, pair


def _checked_pair_new(logp, logq, extra_delta, store=None):
    lp = np.asarray(logp, dtype=float).ravel()
    lq = np.asarray(logq, dtype=float).ravel()
    if lp.size == 0 or lp.shape != lq.shape:
        raise ValueError(f"logp and logq must be non-empty arrays of equal length; got "
                         f"lengths {lp.size} and {lq.size}")

    def scan(a):
        top = float(np.max(a))               # NaN when any entry is NaN (one pass, not four)
        if math.isnan(top) or top > 1e-9:
            return top, None, 0.0
        e = np.exp(a)
        return top, e, float(np.sum(e))

    # The two exponentials (and their sums) are independent passes over up to ~10⁶ atoms
    # each (numpy releases the GIL in them): side by side on two threads from
    # ``_SCAN_THREADED`` atoms; each array gets the same calls either way, so the floats
    # are the same. The checks then run in order (logp's error first).
    scans = pmap(scan, (lp, lq)) if lp.size >= _SCAN_THREADED else [scan(lp), scan(lq)]
    exps = []
    for name, a, (top, e, s) in zip(("logp", "logq"), (lp, lq), scans):
        if math.isnan(top):
            raise ValueError(f"{name} must hold log-probabilities in [-inf, 0]; got NaN at "
                             f"index {int(np.flatnonzero(np.isnan(a))[0])}")
        if top > 1e-9:
            raise ValueError(f"{name} must hold log-probabilities in [-inf, 0]; got "
                             f"{top!r}")
        exps.append(e)
        if s > 1.0 + 1e-9:
            raise ValueError(f"{name} must sum (in probability) to at most 1; got {s!r}")
    extra = v.real("extra_delta", extra_delta, lo=0.0, hi=1.0)
    return lp, lq, extra, _pf.LossPair(lp, lq, *exps, store=store)


#: Atoms from which ``_checked_pair_new`` takes the two exponentials on two threads.
_SCAN_THREADED = 100_000


def _rounded(la, lb, d, extra, pessimistic: bool = True):
    """PLD pmf of A‖B on the grid d·Z as ({index: prob}, infinity mass) for dp_accounting
    (``pld_fft.lattice`` does the rounding: up and unlisted mass to +∞ when pessimistic,
    down and dropped when optimistic)."""
    keys, probs, inf = _pf.lattice(la, lb, d, extra, pessimistic)
    return {int(k): float(p) for k, p in zip(keys, probs)}, inf


_MAX_BINS = 2 ** 20


def _default_discretization(lp, lq, rounds):
    """Grid step: accurate (bias ≤ rounds·d ≤ 1e-3 where affordable), ≤ ~4e6 bins.

    The composed PLD's support after dp_accounting's tail truncation is about the single
    round's span plus ±13 standard deviations of the T-fold loss; the step is the larger
    of the accuracy target and that width over ``_MAX_BINS`` (~1e6 bins keeps one route
    to about a second; pass ``discretization`` for more accuracy).
    """
    mom = _pf.loss_moments(lp, lq)
    if mom is None:
        return 1e-4
    _, var, span = mom
    span += 1e-12
    width = span + (26.0 * math.sqrt(rounds * var) if rounds > 1 else 0.0)
    return max(min(1e-4, 1e-3 / rounds), width / _MAX_BINS, 1e-9)


def _build(lp, lq, rounds, extra, discretization, pessimistic: bool = True):
    """A dp_accounting PLD of the pair (the lower bounds and the ledger's mixed entries)."""
    pld_mod = _pld_module()
    d = discretization if discretization is not None else _default_discretization(lp, lq, rounds)
    rem, inf_rem = _rounded(lp, lq, d, extra, pessimistic)
    add, inf_add = _rounded(lq, lp, d, extra, pessimistic)
    pld = pld_mod.PrivacyLossDistribution.create_from_rounded_probability(
        rem or {0: 0.0}, inf_rem, d, pessimistic_estimate=pessimistic,
        rounded_probability_mass_function_add=add or {0: 0.0}, infinity_mass_add=inf_add,
        symmetric=False)
    if rounds > 1:
        # dp_accounting's truncation follows the estimate: pessimistic moves the right tail
        # to infinite loss; optimistic moves it down to the last kept loss and drops the left.
        pld = pld.self_compose(rounds, tail_mass_truncation=_TAIL_TRUNCATION)
    return pld, d


def _check_rounds_disc(rounds, discretization):
    rounds = v.integer("rounds", rounds, lo=1)
    if discretization is not None:
        discretization = v.real("discretization", discretization, lo=0.0, lo_open=True, hi=1.0)
    return rounds, discretization


def _both_directions(pair, extra, discretization, compose, symmetric: bool = False):
    """(largest grid step, [compose(lattice) for P‖Q and Q‖P]): each direction sizes its own
    loss lattice unless a step is given (the spread has no drift, so the grid only needs to
    resolve the loss's spread). The two directions are independent: side by side on two
    threads (``_parallel.pmap``), sharing the pair's arrays (``pld_fft.LossPair``, filled
    before the threads start). ``symmetric``: P‖Q only (see ``pld_delta``)."""
    def one(flip):
        lat = pair.lattice(flip, discretization, extra)
        return lat.d, compose(lat)

    if symmetric:
        res = [one(False)]
        return res[0][0], [res[0][1]]
    if not (pair.has_lattice(False, discretization, extra)
            and pair.has_lattice(True, discretization, extra)) and pair.shared:
        pair.exp(0), pair.exp(1)
    res = pmap(one, (False, True))
    return max(r[0] for r in res), [r[1] for r in res]


#: The ledger's common PLD grid (``composers.pld.MULTI_DISCRETIZATION``), the finest step
#: the one-entry route refines to.
LEDGER_GRID = 2e-4
#: The one-entry route also composes on a finer grid when its own step (``pld_fft.auto_step``,
#: the loss's standard deviation over ``pld_fft.NU``) is at least this coarse in ε per round.
COARSE_STEP = 1e-2
#: ... as long as the finer grid's FFT stays within this length (tens of milliseconds) and
#: the step gets at least ``_FINER_RATIO`` times smaller.
FINER_MAX_FFT = 1 << 15
_FINER_RATIO = 4.0


def _finer_step(pair, rounds: int, symmetric: bool) -> float | None:
    """A second grid step for the one-entry PLD route, or None when the default suffices.

    The default step is relative (the loss's standard deviation over ``pld_fft.NU``). For a
    weakly amplified round — a pair with few atoms and a wide loss (n of a few users, large
    ε0) — it is coarse in absolute terms, and at small δ the answer rests on the top of the
    T-fold support, which the spread onto that grid moves by up to a step per round: with
    RandomizedResponse(2.0), n = 3, WithoutReplacement(2), δ = 1e-6, T = 5 the default grid
    (0.033) gives ε = 8.0926, a grid of 6e-4 gives 8.0673. A ledger composing the same pair
    on its common grid (``LEDGER_GRID``) found the smaller value, so the same rounds got a
    different answer by how they were entered (issue 28). Here the finer grid is the ledger's
    where one FFT of ``FINER_MAX_FFT`` points covers it, else the finest that does.
    """
    steps = []
    for flip in (False,) if symmetric else (False, True):
        mom = pair.loss_moments(flip)         # kept from the default grid's lattice
        if mom is None:
            return None
        auto = pair.auto_step(flip)
        if auto < COARSE_STEP:
            return None
        d = LEDGER_GRID
        # The FFT length grows like 1/d: coarsen until it fits.
        while _pf.fft_length_estimate(mom, rounds, d) > FINER_MAX_FFT:
            d *= 1.25
            if d * _FINER_RATIO > auto:
                return None
        if d * _FINER_RATIO > auto:
            return None
        steps.append(d)
    return max(steps)


def pld_delta(logp, logq, rounds: int, epsilon: float, extra_delta: float = 0.0, *,
              discretization: float | None = None,
              symmetric: bool = False) -> tuple[float, dict]:
    """Certified δ at total ε for ``rounds`` rounds of the dominating pair (P, Q).

    Both directions (P‖Q, Q‖P) are composed and the larger is returned. ``symmetric=True``
    (the caller's promise): (P, Q) dominates, in the P‖Q direction, a pair whose two
    directions are equal — a swap of the output maps its P to its Q, as for every clone
    pair (the victim's two types exchanged; the clones' fair coins are symmetric). Then
    H(P'‖Q') = H(Q'‖P') ≤ H(P‖Q) at every ε, so P‖Q alone is a dominating pair of the
    mechanism in both orders of the neighbours (Zhu, Dong, Wang, AISTATS 2022) and only
    it is composed: half the work, and a value at or below the two-direction one. ``extra_delta``
    is the pair's truncated tail mass per round (mass not listed in ``logp``/``logq``);
    it is charged as infinite privacy loss in every round, so it adds at most
    1 − (1 − extra_delta)^rounds to δ. Losses are rounded up to the grid; the T-fold law
    is computed by ``pld_fft`` (one tilted FFT power, every error bounded). numpy only.
    Without ``discretization``, a coarse default grid is complemented by a finer one
    (``_finer_step``) and the smaller certified value kept. Returns (δ, details).
    """
    lp, lq, extra, pair = _checked_pair(logp, logq, extra_delta)
    rounds, discretization = _check_rounds_disc(rounds, discretization)
    eps = v.real("epsilon", epsilon, lo=0.0)
    return _default_then_finer(
        lambda d: _pld_delta_at(pair, rounds, eps, extra, d, symmetric),
        pair, rounds, discretization, symmetric, worth=lambda val: val > 0.0)


def _default_then_finer(at, pair, rounds, discretization, symmetric, worth):
    """``at(discretization)``; with no discretization given, also ``at`` the finer step of
    ``_finer_step`` when ``worth(value)``, and the smaller certified value of the two."""
    val, det = at(discretization)
    fine = _finer_step(pair, rounds, symmetric) if discretization is None else None
    if fine is not None and worth(val):
        v2, det2 = at(fine)
        det2["default_grid_value"] = val
        if v2 < val:
            val, det = v2, det2
    return val, det


def _pld_delta_at(pair, rounds, eps, extra, discretization, symmetric):
    d, outs = _both_directions(pair, extra, discretization,
                               lambda lat: _pf.composed_delta(lat, rounds, eps), symmetric)
    val = min(1.0, float(round_up(max(o[0] for o in outs))))
    return val, {"discretization": d, "variance_added_per_round": d * d / 4.0,
                 "engine": "tilted FFT, certified", "tail_per_round": extra,
                 "fft_length": max(o[1].get("fft_length", 0) for o in outs)}


def pld_epsilon(logp, logq, rounds: int, delta: float, extra_delta: float = 0.0, *,
                discretization: float | None = None,
                symmetric: bool = False) -> tuple[float, dict]:
    """Certified ε at total δ for ``rounds`` rounds of the dominating pair (P, Q).

    See ``pld_delta`` (and its ``symmetric``): the larger of the two directions' smallest certified ε with
    δ(ε) ≤ δ; inf when the infinite-loss mass alone exceeds δ. Without ``discretization``,
    a coarse default grid is complemented by a finer one (``_finer_step``) and the smaller
    certified value kept. Returns (ε, details).
    """
    lp, lq, extra, pair = _checked_pair(logp, logq, extra_delta)
    rounds, discretization = _check_rounds_disc(rounds, discretization)
    delta = v.probability("delta", delta)
    if _tails_alone_exceed(extra, rounds, delta):
        return math.inf, {"engine": "tilted FFT, certified", "tail_per_round": extra,
                          "reason": "the charged tail mass alone, 1 - (1 - tail)^T, exceeds "
                                    "delta (no grid was built)"}
    return _default_then_finer(
        lambda d: _pld_epsilon_at(pair, rounds, delta, extra, d, symmetric),
        pair, rounds, discretization, symmetric,
        worth=lambda val: math.isfinite(val) and val > 0.0)


def _tails_alone_exceed(extra: float, rounds: int, delta: float) -> bool:
    """True when the tail mass charged as infinite loss in every round already exceeds δ
    after ``rounds`` rounds: the T-fold P-law then has mass 1 − (1 − extra)^T at loss +∞,
    δ(ε) is at least that at every ε, and no finite ε is certified (the grid would find
    the same ∞ after building it: ~0.15-0.2 s for 1.5 M atoms at T = 1e6, δ = 1e-12).
    The margin 1e-9 covers the rounding of log1p/expm1."""
    if not extra > 0.0:
        return False
    return -math.expm1(rounds * math.log1p(-extra)) * (1.0 - 1e-9) > delta


def _pld_epsilon_at(pair, rounds, delta, extra, discretization, symmetric):
    d, outs = _both_directions(pair, extra, discretization,
                               lambda lat: _pf.composed_epsilon(lat, rounds, delta), symmetric)
    det = {"discretization": d, "variance_added_per_round": d * d / 4.0,
           "engine": "tilted FFT, certified", "tail_per_round": extra}
    eps = max(o[0] for o in outs)
    det["fft_length"] = max(o[1].get("fft_length", 0) for o in outs)
    if not math.isfinite(eps):
        det["reason"] = "the infinite-loss mass (charged tails, Q = 0 atoms) exceeds delta"
        return math.inf, det
    return float(round_up(eps)), det


def _fast_delta(pld):
    """δ(ε) of a composed dp_accounting PLD from suffix sums, or None if its internals differ.

    δ(ε) = inf_mass + Σ_{L>ε} p (1 − e^{ε−L}) = inf_mass + S_p(ε) − e^ε S_{pe^{−L}}(ε);
    used only to steer the bisection (the answer is re-checked exactly).
    """
    pmfs = []
    for attr in ("_pmf_remove", "_pmf_add"):
        pmf = getattr(pld, attr, None)
        pmf = pmf.to_dense_pmf() if hasattr(pmf, "to_dense_pmf") else None
        if pmf is None or not all(hasattr(pmf, a) for a in
                                  ("_probs", "_lower_loss", "_discretization", "_infinity_mass")):
            return None
        probs = np.asarray(pmf._probs, dtype=float)
        losses = (np.arange(probs.size) + pmf._lower_loss) * pmf._discretization
        top = float(losses[-1]) if losses.size else 0.0
        # suffix sums; p e^{-L} scaled by e^{top} to stay finite
        s_p = np.cumsum(probs[::-1])[::-1]
        if losses.size and top - float(losses[0]) > 700.0:
            return None
        s_q = np.cumsum((probs * np.exp(top - losses))[::-1])[::-1]
        pmfs.append((losses, s_p, s_q, top, float(pmf._infinity_mass)))

    def delta(e):
        worst = 0.0
        for losses, s_p, s_q, top, inf in pmfs:
            i = int(np.searchsorted(losses, e, side="right"))
            if i >= losses.size:
                val = inf
            else:
                val = inf + s_p[i] - math.exp(e - top) * s_q[i]
            worst = max(worst, val)
        return worst
    return delta


def _max_loss(lp, lq):
    fin = np.isfinite(lp) & np.isfinite(lq)
    if not np.any(fin):
        return 0.0
    return float(max(np.max(lp[fin] - lq[fin]), np.max(lq[fin] - lp[fin])))


# ----------------------------------------------------------------------------------------
# Lower bounds: optimistic PLD of one instance's pair
# ----------------------------------------------------------------------------------------
def pld_delta_lower(logp, logq, rounds: int, epsilon: float, *,
                    discretization: float | None = None) -> tuple[float, dict]:
    """A LOWER bound on δ at ε of ``rounds`` rounds of the pair (P, Q) (both directions).

    For a pair that one instance of a mechanism provably produces (or a post-processing of
    it), this lower-bounds the T-round mechanism's δ(ε) on that instance: the rounds use
    fresh randomness on the same datasets, so the T-round outputs are the product pair.
    Optimistic PLD (losses rounded down, truncations dropped) minus the FFT allowance
    ``PLD_ABS_SLACK``. Returns (δ, details).
    """
    lp, lq, _ = _check_pair(logp, logq, 0.0)
    rounds, discretization = _check_rounds_disc(rounds, discretization)
    eps = v.real("epsilon", epsilon, lo=0.0)
    pld, d = _build(lp, lq, rounds, 0.0, discretization, pessimistic=False)
    raw = float(pld.get_delta_for_epsilon(eps))
    return max(0.0, raw - PLD_ABS_SLACK), {"discretization": d, "fft_slack": PLD_ABS_SLACK,
                                           "rounding": "optimistic"}


def pld_epsilon_lower(logp, logq, rounds: int, delta: float, *,
                      discretization: float | None = None) -> tuple[float, dict]:
    """Largest certified ε with ``pld_delta_lower`` > δ: a LOWER bound on the T-round ε(δ)."""
    lp, lq, _ = _check_pair(logp, logq, 0.0)
    rounds, discretization = _check_rounds_disc(rounds, discretization)
    delta = v.probability("delta", delta)
    pld, d = _build(lp, lq, rounds, 0.0, discretization, pessimistic=False)
    det = {"discretization": d, "fft_slack": PLD_ABS_SLACK, "rounding": "optimistic"}

    def above(e):
        return float(pld.get_delta_for_epsilon(e)) - PLD_ABS_SLACK > delta

    if not above(0.0):
        return 0.0, det
    hi = max(1.0, rounds * _max_loss(lp, lq)) + 1.0
    if above(hi):
        return math.inf, det                  # infinite-loss mass alone exceeds δ
    return bisect_certified(above, 0.0, hi, want="largest", xtol=1e-12, rtol=1e-10), det
