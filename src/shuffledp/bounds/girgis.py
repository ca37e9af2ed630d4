r"""Rényi-DP bounds of Girgis, Data, Diggavi, Suresh, Kairouz, "On the Rényi Differential
Privacy of the Shuffle Model", CCS 2021, arXiv:2105.05180.

* ``girgis-ub1`` — Theorem 3.1 (Upper Bound 1) [V], floored n̄ (what the proof gives).
* ``girgis-ub2`` — Theorem 3.3 (Upper Bound 2) [R]; never tighter than UB1 on the tested
  range, valid by a Hoeffding-lemma argument.
* ``girgis-simplified`` — Corollary 3.2 reconstruction [R]: an *estimate*, only inside
  its condition λ⁴ e^{5ε0} < n/9.
* ``girgis-lower`` — Theorem 3.4 [V] and its reverse direction [D]: the exact RDP of
  binary randomized response on D0 = (0,…,0), D1 = (0,…,0,1); the max of both directions.

All sums are over non-negative terms in log space; truncated sums in the upper bounds get
rigorous geometric tails (the term ratio of UB1 is bounded through Wendel's inequality
Γ(x + ½)/Γ(x) ≤ √x).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)

from ..core.errors import NotApplicableError
from ..core.mechanisms import LDP, RandomizedResponse
from ..numerics import (binom_logpmf, hockey_stick_lower, log1pexp, log_pow_minus_tangent,
                        logsumexp, round_up)
from ._common import ldp_reason, no_sampling_reason
from .base import Bound, register

__all__ = ["nbar", "ub1", "ub2", "simplified", "simplified_max_order", "lower",
           "binary_instance_logpmfs", "lower_delta"]

_EXTRA_TERMS = 64   # terms kept past the point where the ratio bound drops below 1/2


def nbar(eps0: float, n: int, floor: bool = True) -> float:
    """n̄ = ⌊(n − 1)/(2 e^ε0)⌋ + 1 (floor=False: the authors' code, (n − 1)/(2 e^ε0) + 1)."""
    x = (n - 1) / (2.0 * math.exp(eps0))
    return float(math.floor(x) + 1) if floor else x + 1.0


def _log_expm1(x: float) -> float:
    """log(e^x − 1) for x > 0 without overflow."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def _log_sinh(x: float) -> float:
    # −expm1(−2x), not 1 − e^−2x: the latter rounds to 0 for x ≲ 1e-17 and would drop the
    # i ≥ 3 terms of UB1 (a smaller, unsafe value).
    return x + math.log(-math.expm1(-2.0 * x)) - math.log(2.0)


def ub1(eps0: float, n: int, orders, floor_nbar: bool = True) -> np.ndarray:
    """Upper Bound 1 (Theorem 3.1) at integer orders ≥ 2, rounded up.

    log(1 + C(λ,2)(e^ε0 − 1)²/(n̄ e^ε0) + Σ_{i≥3} C(λ,i) i Γ(i/2) K^{i/2}
        + exp(ε0 λ − (n − 1)/(8 e^ε0))) / (λ − 1),   K = 2 sinh²(ε0)/n̄.
    """
    lam = np.asarray(orders, dtype=np.int64)
    if eps0 == 0.0:
        return np.zeros(lam.shape)
    nb = nbar(eps0, n, floor_nbar)
    log_nb = math.log(nb)
    log_k = math.log(2.0) + 2.0 * _log_sinh(eps0) - log_nb
    k = math.exp(min(log_k, 600.0))   # only for the cut-off; terms use log_k
    lmax = int(lam.max())
    g = special.gammaln(np.arange(lmax + 2, dtype=float) + 1.0)    # log j!
    half = special.gammaln(np.maximum(np.arange(lmax + 2, dtype=float), 1.0) / 2.0)  # log Γ(i/2)
    log_tail_event = eps0 * lam - (n - 1) / (8.0 * math.exp(eps0))
    log_t2 = (g[lam] - g[2] - g[lam - 2] + 2.0 * _log_expm1(eps0) - log_nb - eps0)

    # Last index J(λ) summed exactly: past i_half the ratio bound ρ_i ≤ 1/2, so 64 more
    # terms shrink them by 2^-64; the rest is charged as t_J ρ_J/(1 − ρ_J).
    lf = lam.astype(float)
    i_half = 4.0 * k * lf * lf / ((4.0 * k * lf + 1.0) + np.sqrt(8.0 * k * lf + 1.0))
    if log_k > 600.0:   # every term matters: sum them all
        i_half = lf
    last = np.minimum(lam, np.maximum(3, np.ceil(i_half).astype(np.int64)) + _EXTRA_TERMS)
    out = np.empty(lam.shape)
    order_idx = np.argsort(last)
    # Chunks of orders with similar J keep the rectangular work close to the ragged sum.
    chunk = max(1, int(2_000_000 // max(1, int(last.max()))))
    for start in range(0, lam.size, chunk):
        sel = order_idx[start:start + chunk]
        ls, js = lam[sel], last[sel]
        width = int(js.max()) - 2
        if width >= 1:
            i = np.arange(3, 3 + width, dtype=np.int64)[None, :]
            valid = i <= js[:, None]
            ii = np.minimum(i, ls[:, None])
            terms = (g[ls][:, None] - g[ii] - g[ls[:, None] - ii]
                     + np.log(ii) + half[ii] + 0.5 * ii * log_k)
            terms = np.where(valid, terms, -np.inf)
            log_sum_i = logsumexp(terms, axis=1)
            has_i = ls >= 3
            log_sum_i = np.where(has_i, log_sum_i, -np.inf)
            # Geometric tail beyond J where J < λ.
            jj = js.astype(float)
            with np.errstate(divide="ignore"):
                rho = np.exp(np.log(np.maximum(ls - jj, 0.0)) + 0.5 * (log_k - np.log(2.0 * jj)))
            cut = js < ls
            log_tj = (g[ls] - g[js] - g[ls - js] + np.log(jj) + half[js] + 0.5 * jj * log_k)
            with np.errstate(divide="ignore"):
                log_tail = np.where(cut & (rho < 1), log_tj + np.log(rho) - np.log1p(-rho), -np.inf)
            if np.any(cut & (rho >= 1)):   # cannot happen by construction of J
                raise ArithmeticError("UB1 truncation ratio bound is not below 1")
        else:
            log_sum_i = np.full(ls.shape, -np.inf)
            log_tail = np.full(ls.shape, -np.inf)
        stack = np.stack([log_t2[sel], log_sum_i, log_tail, log_tail_event[sel]])
        log_s = logsumexp(stack, axis=0)
        out[sel] = log1pexp(log_s) / (ls - 1.0)
    return round_up(out)


def ub2(eps0: float, n: int, orders) -> np.ndarray:
    """Upper Bound 2 (Theorem 3.3) [R]: log(e^{λ²(e^ε0−1)²/n̄} + e^{ε0λ − (n−1)/(8e^ε0)})/(λ−1)."""
    lam = np.asarray(orders, dtype=float)
    if eps0 == 0.0:
        return np.zeros(lam.shape)
    nb = nbar(eps0, n)
    # λ²(e^ε0 − 1)²/n̄ in log space: e^ε0 overflows its square for ε0 ≳ 355.
    with np.errstate(over="ignore"):   # +inf is the (vacuous, valid) value there
        a = np.exp(2.0 * np.log(lam) + 2.0 * _log_expm1(eps0) - math.log(nb))
    b = eps0 * lam - (n - 1) / (8.0 * math.exp(eps0))
    return round_up(np.logaddexp(a, b) / (lam - 1.0))


def simplified_max_order(eps0: float, n: int) -> int:
    """Largest integer λ with λ⁴ e^{5ε0} < n/9 (0 if none)."""
    x = (n / 9.0) ** 0.25 * math.exp(-1.25 * eps0)
    lam = int(math.floor(x))
    while lam >= 1 and lam ** 4 * math.exp(5 * eps0) >= n / 9.0:
        lam -= 1
    return lam


def simplified(eps0: float, n: int, orders) -> np.ndarray:
    """Corollary 3.2 reconstruction [R]: log(1 + 4 C(λ,2)(e^ε0 − 1)²/n)/(λ − 1), inside its condition."""
    lam = np.asarray(orders, dtype=float)
    top = simplified_max_order(eps0, n)
    if np.any(lam > top):
        raise NotApplicableError(
            f"girgis-simplified holds only for orders with lambda^4 e^(5 eps0) < n/9; the "
            f"largest such order here is {top}, got {lam.max():g}")
    return np.log1p(4.0 * lam * (lam - 1.0) / 2.0 * math.expm1(eps0) ** 2 / n) / (lam - 1.0)


def _lower_sums(eps0: float, n: int, a: np.ndarray, reverse: bool) -> np.ndarray:
    """log(E_{m~Bin(n,q)}[r(m)^a] − 1) for each exponent in ``a``, r(m) = 1 + c(m − nq).

    Summed as Σ pmf(m)·((1 + x)^a − 1 − a·x) ≥ 0 with x = c(m − nq): E[x] = 0 exactly, so
    the "−1" form is exact and keeps relative precision when the answer is 1e−7. Returned
    as a log so that large orders do not overflow (E[r^a] can exceed 1e308). One window
    serves all exponents; it is widened (doubling) until the log-integrand at both edges is
    50 nats below its peak for every exponent (truncation only lowers a lower bound).
    """
    q = float(special.expit(-eps0))
    p = float(special.expit(eps0))
    c = 2.0 * math.sinh(eps0) / n          # (e^{2ε0} − 1)/(n e^ε0)
    mean = n * q
    sd = math.sqrt(n * p * q)

    def log_integrand(lo, hi):
        m = np.arange(lo, hi + 1, dtype=float)
        lpmf = binom_logpmf(m, n, q, p)
        x = c * (m - mean)
        # log r(m) from r = c·m + e^−ε0 (no cancellation) where r is small: 1 + x has
        # lost its relative precision there, and the reverse direction raises r to
        # 1 − λ (at ε0 = 20, λ = 4096 the value came out above ε0).
        with np.errstate(divide="ignore"):
            lr = np.where(x < -0.5, np.log(c * m + math.exp(-eps0)), np.log1p(x))
        return np.stack([lpmf + log_pow_minus_tangent(x, ai, lr) for ai in a])

    amax = float(np.max(np.abs(a)))
    if n <= 20_000:
        lo, hi = 0, n
    else:
        # Tilting Bin(n, q) by r^a moves its peak by about a·c·npq = a·tanh(ε0/2) ≤ |a|.
        half = 15.0 * sd + amax * c * sd * sd + 20.0
        lo = max(0, int(math.floor(mean - half)))
        hi = min(n, int(math.ceil(mean + half)))
    while True:
        lg = log_integrand(lo, hi)
        top = lg.max(axis=1)
        ok_lo = lo == 0 or bool(np.all(lg[:, 0] < top - 50))
        ok_hi = hi == n or bool(np.all(lg[:, -1] < top - 50))
        if ok_lo and ok_hi:
            break
        width = hi - lo
        if not ok_lo:
            lo = max(0, lo - width)
        if not ok_hi:
            hi = min(n, hi + width)
    if reverse and lo > 0:
        # The reverse integrand can have a second bump at m = 0, where r is smallest. Add
        # a window [0, b] grown (doubling) until its right edge is 50 nats below the peak;
        # capped, since dropping non-negative terms only lowers a lower bound.
        l0 = log_integrand(0, 0)[:, 0]
        if np.any(l0 > top - 50):
            b = min(lo - 1, 64)
            while True:
                lgb = log_integrand(0, b)
                peak = np.maximum(top, lgb.max(axis=1))
                if b >= lo - 1 or b >= _MAX_BUMP or np.all(lgb[:, -1] < peak - 50):
                    break
                b = min(lo - 1, 2 * b)
            lg = np.concatenate([lgb, lg], axis=1)
    return logsumexp(lg, axis=1)


_MAX_BUMP = 1 << 20


def lower(eps0: float, n: int, orders, direction: str = "max") -> np.ndarray:
    """Exact RDP of binary RR on D0 = (0,…,0), D1 = (0,…,0,1) (Theorem 3.4).

    ``direction``: "forward" (the paper's, D_λ(M(D1) ‖ M(D0))), "reverse"
    (D_λ(M(D0) ‖ M(D1))) or "max". Not rounded up: it is a lower bound.
    """
    lam = np.atleast_1d(np.asarray(orders, dtype=float))
    if eps0 == 0.0:
        return np.zeros(lam.shape)
    vals = []
    chunk = 64
    if direction in ("forward", "max"):
        f = np.concatenate([_lower_sums(eps0, n, lam[i:i + chunk], False)
                            for i in range(0, lam.size, chunk)])
        vals.append(log1pexp(f) / (lam - 1.0))
    if direction in ("reverse", "max"):
        r = np.concatenate([_lower_sums(eps0, n, 1.0 - lam[i:i + chunk], True)
                            for i in range(0, lam.size, chunk)])
        vals.append(log1pexp(r) / (lam - 1.0))
    return np.max(np.stack(vals), axis=0)


def binary_instance_logpmfs(eps0: float, n: int, window: bool = True):
    """Counts of reported ones for binary RR on D0 = (0,…,0) and D1 = (0,…,0,1).

    Returns (m, log P0(m), log P1(m)): P0 = Bin(n, q), P1 = Bern(α) + Bin(n − 1, q),
    q = 1/(e^ε0 + 1), α = 1 − q. With ``window`` the support is cut to ±(14 sd + 14)
    around the mean (fine for lower bounds: dropped terms are non-negative).
    """
    q = float(special.expit(-eps0))
    p = float(special.expit(eps0))
    if window:
        half = 14.0 * math.sqrt(n * p * q) + 14.0
        lo, hi = max(0, int(n * q - half)), min(n, int(math.ceil(n * q + half)))
    else:
        lo, hi = 0, n
    m = np.arange(lo, hi + 1, dtype=float)
    lp0 = binom_logpmf(m, n, q, p)
    a = binom_logpmf(m, n - 1, q, p) + math.log(q)
    b = binom_logpmf(m - 1, n - 1, q, p) + math.log(p)
    lp1 = np.logaddexp(a, b)
    return m, lp0, lp1


@functools.lru_cache(maxsize=64)
def _instance_cached(eps0: float, n: int):
    return binary_instance_logpmfs(eps0, n)


def lower_delta(eps0: float, n: int, eps: float) -> float:
    """δ(ε) of the binary-RR instance, max of both directions, certified not above the
    exact value (``numerics.hockey_stick_lower``: the logs' rounding is charged downward)."""
    if eps0 == 0.0:
        return 0.0
    _, lp0, lp1 = _instance_cached(eps0, n)
    return max(hockey_stick_lower(lp0, lp1, eps), hockey_stick_lower(lp1, lp0, eps))


class _GirgisBase(Bound):
    reference = "Girgis, Data, Diggavi, Suresh, Kairouz, CCS 2021, arXiv:2105.05180"

    def check(self, proto):
        return ldp_reason(proto) or no_sampling_reason(proto)

    def valid_for(self, proto):
        return "any eps0-LDP randomizer"


@register
class GirgisUB1(_GirgisBase):
    id = "girgis-ub1"
    scope = "ldp"
    kind = "upper"
    title = "Girgis et al. Upper Bound 1 (Theorem 3.1)"
    reference = _GirgisBase.reference + ", Theorem 3.1"

    def rdp(self, proto, orders):
        return ub1(proto.eps0, proto.n, orders)

    def max_order(self, proto):
        return 200_000

    def likely_first(self, proto):
        # Order only: milliseconds, and far below the trivial bound once n is large, so
        # that bound's proven floor (many rounds) meets this answer instead of none.
        return True


@register
class GirgisUB2(_GirgisBase):
    id = "girgis-ub2"
    scope = "ldp"
    kind = "upper"
    # Tagged [R] in spec/girgis.md §2: listed, never the default answer (it is never
    # tighter than UB1 on the tested range anyway).
    default = False
    title = "Girgis et al. Upper Bound 2 (Theorem 3.3) [R]"
    reference = _GirgisBase.reference + ", Theorem 3.3 (reconstructed)"

    def rdp(self, proto, orders):
        return ub2(proto.eps0, proto.n, orders)


@register
class GirgisSimplified(_GirgisBase):
    id = "girgis-simplified"
    scope = "approximation"
    kind = "estimate"
    default = False
    title = "Girgis et al. Corollary 3.2, reconstructed [R]: an approximation"
    reference = _GirgisBase.reference + ", Corollary 3.2 (constants not confirmed)"

    def check(self, proto):
        r = super().check(proto)
        if r:
            return r
        if simplified_max_order(proto.eps0, proto.n) < 2:
            return "its condition lambda^4 e^(5 eps0) < n/9 fails already at order 2"
        return None

    def valid_for(self, proto):
        return "approximation (constants not confirmed), orders with lambda^4 e^(5 eps0) < n/9"

    def rdp(self, proto, orders):
        return simplified(proto.eps0, proto.n, orders)

    def max_order(self, proto):
        return simplified_max_order(proto.eps0, proto.n)


@register
class GirgisLower(_GirgisBase):
    id = "girgis-lower"
    costly = True
    scope = "instance"
    kind = "lower"
    title = "Girgis et al. lower bound (Theorem 3.4): binary RR, both directions"
    reference = _GirgisBase.reference + ", Theorem 3.4 (reverse direction:)"

    def check(self, proto):
        r = ldp_reason(proto) or no_sampling_reason(proto)
        if r:
            return r
        m = proto.mechanism
        if isinstance(m, RandomizedResponse) and m.k != 2:
            return (f"its instance is binary randomized response, not {m.k}-ary; "
                    "use krr-lower for k-RR")
        if not isinstance(m, (LDP, RandomizedResponse)):
            return "its instance is binary randomized response, not the given matrix"
        return None

    def valid_for(self, proto):
        return ("binary RR on (0,...,0) vs (0,...,0,1): some eps0-LDP randomizer leaks this")

    def rdp(self, proto, orders):
        return lower(proto.eps0, proto.n, orders)

    def max_order(self, proto):
        return 4096

    def delta_one(self, proto, eps):
        return lower_delta(proto.eps0, proto.n, eps)
