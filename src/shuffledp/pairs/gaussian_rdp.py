r"""Kernels for the shuffle Gaussian mechanism.

Private-kernel style: callers validate. Everything is vectorised over orders and works in
log space.

The homogeneous pair (Liew & Takahashi, arXiv:2206.09569v1, Theorem 1)
-----------------------------------------------------------------------
P = (1/n) Σ_i N(e_i, σ² I_n) against Q = N(0, σ² I_n). For integer λ ≥ 2

    E_λ = E_Q[(P/Q)^λ] = λ!/n^λ · [t^λ] A(t)^n,   A(t) = Σ_j a_j t^j,
    a_j = exp(j(j − 1)/(2σ²)) / j!,

(throw λ balls into n bins uniformly; E_λ = E[exp(#colliding pairs / σ²)]). The paper
enumerates integer partitions of λ (p(λ) terms). Here E_λ − 1 is computed directly, as a
sum of non-negative terms, through G(t) = A(t)^n − e^{nt} (coefficients ≥ 0 because
a_j ≥ 1/j!):

* **Recurrence (orders λ ≤ n + 1), O(λ²) for all orders at once.** From
  A·G' − n·A'·G = n·e^{nt}·ρ(t) with ρ_l = (l+1) a_{l+1} − a_l = e^{l(l−1)/(2σ²)}
  expm1(l/σ²)/l! ≥ 0 (derived here [D]; J.C.P. Miller's power recurrence applied to G):

      k g_k = Σ_{j=1..k} ((n + 1) j − k) a_j g_{k−j} + n r_{k−1},  r = e^{nt} ρ(t).

  Every coefficient (n+1)j − k is ≥ 0 while k ≤ n + 1: no cancellation.
* **Binary powering (any n, used when λ > n + 1), O(λ² log n).** With G_a = A^a − e^{at},
  G_{a+b} = G_a G_b + G_a e^{bt} + e^{at} G_b: products of non-negative series. A genuine
  polynomial power, so partitions with more than n parts are dropped automatically.

Then E_λ − 1 = λ!/n^λ · g_λ and ε(λ) = log1p(E_λ − 1)/(λ − 1): relative precision is kept
when the answer is 1e−7.
"""

from __future__ import annotations

import math

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)
from ..core._memo import register
from ..numerics import (binom_log_tail_upper, binom_logpmf, bisect_certified, log1pexp,
                       log_binom_coef, logexpm1, logsumexp_rows)

__all__ = ["homogeneous_log_em1", "homogeneous_rdp", "HomogeneousKernel",
           "gaussian_log_delta", "gaussian_delta", "gaussian_epsilon", "gaussian_rdp",
           "wbk_subsample", "checkin_chernoff", "mixture_log_em1", "checkin_exact",
           "kernel"]

_NEG_INF = -math.inf


def _log_a(sigma: float, L: int) -> np.ndarray:
    j = np.arange(L + 1, dtype=float)
    return j * (j - 1.0) / (2.0 * sigma * sigma) - special.gammaln(j + 1.0)


def _log_d(sigma: float, L: int) -> np.ndarray:
    """log d_j, d_j = expm1(j(j−1)/(2σ²))/j! (−inf for j = 0, 1)."""
    j = np.arange(L + 1, dtype=float)
    out = logexpm1(j * (j - 1.0) / (2.0 * sigma * sigma)) - special.gammaln(j + 1.0)
    out[:2] = _NEG_INF
    return out


def _log_rho(sigma: float, L: int) -> np.ndarray:
    """log ρ_l, ρ_l = (l+1) a_{l+1} − a_l = e^{l(l−1)/(2σ²)} expm1(l/σ²)/l! (−inf at l = 0)."""
    l = np.arange(L + 1, dtype=float)
    s2 = sigma * sigma
    out = l * (l - 1.0) / (2.0 * s2) + logexpm1(l / s2) - special.gammaln(l + 1.0)
    out[0] = _NEG_INF
    return out


def _log_exp_series(a: float, L: int) -> np.ndarray:
    """log of the coefficients of e^{a t}: j log a − log j!."""
    j = np.arange(L + 1, dtype=float)
    return j * math.log(a) - special.gammaln(j + 1.0)


def _lconv(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Truncated log-space convolution: out_k = log Σ_{i ≤ k} e^{x_i + y_{k−i}}."""
    L = x.size - 1
    out = np.full(L + 1, _NEG_INF)
    fx = np.flatnonzero(np.isfinite(x))
    fy = np.flatnonzero(np.isfinite(y))
    if fx.size == 0 or fy.size == 0:
        return out
    i0 = int(fx[0])
    j0 = int(fy[0])
    ks = np.arange(i0 + j0, L + 1)
    if ks.size == 0:
        return out
    ii = np.arange(i0, L + 1 - j0)
    chunk = max(1, 2_000_000 // max(1, ii.size))
    for s in range(0, ks.size, chunk):
        kk = ks[s:s + chunk]
        idx = kk[:, None] - ii[None, :]
        valid = idx >= j0
        m = np.where(valid, x[ii][None, :] + y[np.maximum(idx, 0)], _NEG_INF)
        out[kk] = logsumexp_rows(m)
    return out


def _pow_series_log_g(n: int, sigma: float, L: int) -> np.ndarray:
    """log coefficients of G = A^n − e^{nt} up to t^L by binary powering (any n ≥ 1)."""
    d = _log_d(sigma, L)
    base_g, base_a = d, 1
    acc = None            # (log G_a, a); None is a = 0
    e = n
    while True:
        if e & 1:
            if acc is None:
                acc = (base_g.copy(), base_a)
            else:
                g, a = acc
                parts = np.stack([_lconv(g, base_g),
                                  _lconv(g, _log_exp_series(base_a, L)),
                                  _lconv(_log_exp_series(a, L), base_g)])
                acc = (np.logaddexp.reduce(parts, axis=0), a + base_a)
        e >>= 1
        if not e:
            break
        sq = _lconv(base_g, base_g)
        cross = math.log(2.0) + _lconv(base_g, _log_exp_series(base_a, L))
        base_g, base_a = np.logaddexp(sq, cross), 2 * base_a
    return acc[0]


class HomogeneousKernel:
    """log(E_λ − 1) for one (n, σ), extendable to higher orders; cached by the bound.

    ``log_em1(L)`` returns the array for orders 0…L (−inf at 0 and 1).
    """

    def __init__(self, n: int, sigma: float):
        self.n = int(n)
        self.sigma = float(sigma)
        self._lg = np.array([_NEG_INF, _NEG_INF])      # log g_k, k = 0, 1
        self._la = _log_a(self.sigma, 1)
        self._lrho = _log_rho(self.sigma, 1)
        self._lr = np.array([_NEG_INF])                 # log r_i, i = 0
        self._method = "recurrence"

    # --- recurrence, orders ≤ n + 1 ----------------------------------------------
    def _extend_recurrence(self, L: int):
        n = self.n
        k0 = self._lg.size
        la = _log_a(self.sigma, L)
        lrho = _log_rho(self.sigma, L)
        lg = np.concatenate([self._lg, np.full(L + 1 - k0, _NEG_INF)])
        lr = np.concatenate([self._lr, np.full(L + 1 - self._lr.size, _NEG_INF)])
        logn = math.log(n)
        # log((n − i)... ) helper: e^{nt} coefficients n^m/m!
        lexp = _log_exp_series(float(n), L)
        for i in range(max(1, k0 - 1), L):
            # r_i = Σ_{l ≤ i} n^{i−l}/(i−l)! ρ_l
            v = lexp[i::-1] + lrho[:i + 1]
            top = v.max()
            lr[i] = top + math.log(np.sum(np.exp(v - top))) if np.isfinite(top) else _NEG_INF
        for k in range(k0, L + 1):
            j = np.arange(1, k + 1, dtype=float)
            coef = (n + 1.0) * j - k
            with np.errstate(divide="ignore"):
                v = np.log(coef) + la[1:k + 1] + lg[k - 1::-1]
            terms = np.append(v, logn + lr[k - 1])
            top = terms.max()
            if np.isfinite(top):
                lg[k] = top + math.log(np.sum(np.exp(terms - top))) - math.log(k)
        self._lg, self._lr, self._la, self._lrho = lg, lr, la, lrho

    def log_em1(self, L: int) -> np.ndarray:
        L = int(L)
        if L + 1 > self._lg.size:
            if L <= self.n + 1 and self._method == "recurrence":
                self._extend_recurrence(L)
            else:
                # Grow geometrically: each recomputation is O(L² log n).
                target = max(L, int(1.5 * (self._lg.size - 1)))
                self._lg = _pow_series_log_g(self.n, self.sigma, target)
                self._method = "powering"
        lam = np.arange(L + 1, dtype=float)
        out = special.gammaln(lam + 1.0) - lam * math.log(self.n) + self._lg[:L + 1]
        out[:2] = _NEG_INF
        return out


def homogeneous_log_em1(n: int, sigma: float, L: int, method: str = "auto") -> np.ndarray:
    """log(E_λ − 1) for λ = 0…L (fresh computation; ``method`` = auto|recurrence|powering)."""
    if method == "powering" or (method == "auto" and L > n + 1):
        lg = _pow_series_log_g(n, sigma, L)
        lam = np.arange(L + 1, dtype=float)
        out = special.gammaln(lam + 1.0) - lam * math.log(n) + lg
        out[:2] = _NEG_INF
        return out
    if method == "recurrence" and L > n + 1:
        raise ValueError(f"the recurrence needs L <= n + 1 = {n + 1}; got L={L}")
    return HomogeneousKernel(n, sigma).log_em1(L)


def rdp_from_log_em1(log_em1: np.ndarray, orders) -> np.ndarray:
    """ε(λ) = log1p(E_λ − 1)/(λ − 1) at the given integer orders."""
    lam = np.asarray(orders, dtype=np.int64)
    x = log_em1[lam]
    return log1pexp(x) / (lam - 1.0)


def homogeneous_rdp(n: int, sigma: float, orders) -> np.ndarray:
    """RDP of the homogeneous pair at integer orders ≥ 2 (an estimate; see gaussian.md §3)."""
    lam = np.asarray(orders, dtype=np.int64)
    return rdp_from_log_em1(homogeneous_log_em1(n, sigma, int(lam.max())), lam)


# ----- the Gaussian mechanism itself --------------------------------------------------

def gaussian_log_delta(sigma: float, eps: float) -> float:
    """log δ(ε) of the Gaussian mechanism, sensitivity 1 (Balle & Wang 2018, Thm 8).

    δ = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ), computed as log A + log(−expm1(log B − log A)).
    """
    la = float(special.log_ndtr(0.5 / sigma - eps * sigma))
    lb = float(eps + special.log_ndtr(-0.5 / sigma - eps * sigma))
    diff = lb - la
    if diff >= 0.0:          # only by rounding, where δ is ~0 relative to A
        return -math.inf
    return la + math.log(-math.expm1(diff))


def gaussian_delta(sigma: float, eps: float) -> float:
    """δ(ε), rounded up (relative 1e−9: covers the cancellation in A − B)."""
    ld = gaussian_log_delta(sigma, eps)
    return min(1.0, math.exp(ld) * (1.0 + 1e-9)) if ld > -745.0 else (0.0 if ld == -math.inf else 5e-324)


def gaussian_eps_hi(sigma: float, delta: float) -> float:
    """An ε with δ(ε) ≤ δ (bracket for bisection), found by doubling."""
    e = 1.0 / (2.0 * sigma * sigma) + math.sqrt(2.0 * (math.log(1.25) - math.log(delta))) / sigma
    while gaussian_delta(sigma, e) > delta:
        e *= 2.0
    return e


def gaussian_epsilon(sigma: float, delta: float) -> float:
    """Smallest certified ε with δ(ε) ≤ δ for the Gaussian mechanism."""
    if gaussian_delta(sigma, 0.0) <= delta:
        return 0.0
    hi = gaussian_eps_hi(sigma, delta)
    return bisect_certified(lambda e: gaussian_delta(sigma, e) <= delta, 0.0, hi,
                            want="smallest", xtol=1e-13, rtol=1e-11)


def gaussian_rdp(sigma: float, orders) -> np.ndarray:
    """λ/(2σ²)."""
    return np.asarray(orders, dtype=float) / (2.0 * sigma * sigma)


# ----- subsampling ---------------------------------------------------------------------

def wbk_subsample(gamma: float, base_rdp: np.ndarray, orders) -> np.ndarray:
    r"""Wang–Balle–Kasiviswanathan 2019, Theorem 9 (sampling without replacement), with the
    per-order min against the unsubsampled value.

    ``base_rdp[j]`` is the base mechanism's RDP at order j for j = 0…max(orders) (entries
    0, 1 unused). ε'(λ) ≤ 1/(λ−1) log(1 + γ² C(λ,2) min{4(e^{ε(2)} − 1), 2 e^{ε(2)}}
    + Σ_{j=3..λ} 2 γ^j C(λ,j) e^{(j−1) ε(j)}).
    """
    lam = np.asarray(orders, dtype=np.int64)
    L = int(lam.max())
    base = np.asarray(base_rdp, dtype=float)
    e2 = base[2]
    log_t2_factor = min(math.log(4.0) + float(logexpm1(np.array([e2]))[0]) if e2 > 0 else -math.inf,
                        math.log(2.0) + e2)
    j = np.arange(L + 1, dtype=float)
    lg = math.log(gamma)
    out = np.empty(lam.shape)
    for idx, l in enumerate(lam):
        l = int(l)
        lc = log_binom_coef(l, j[:l + 1])
        t2 = 2 * lg + lc[2] + log_t2_factor
        if l >= 3:
            js = np.arange(3, l + 1)
            tj = math.log(2.0) + js * lg + lc[js] + (js - 1.0) * base[js]
            s = np.logaddexp.reduce(np.append(tj, t2))
        else:
            s = t2
        v = (s + math.log1p(math.exp(-s)) if s > 0 else math.log1p(math.exp(s))) / (l - 1.0)
        out[idx] = min(v, base[l])
    return out


def checkin_chernoff(n: int, gamma: float, sub_rdp_of_m, orders, err: float | None = None,
                     single_rdp=None) -> np.ndarray:
    r"""The paper's Theorem 3 construction (Chernoff split), per order:

    ε(λ) ≤ 1/(λ−1) log(e^{(λ−1) ε_1(λ) − Δ² n γ/2} + e^{(λ−1) ε_{m}(λ)}),
    m = ⌊(1−Δ) n γ⌋ + 1. ``sub_rdp_of_m(m, orders)`` gives the subsampled-shuffle RDP of m
    users; ``single_rdp(orders)`` the fall-back (default: the one-user value of
    ``sub_rdp_of_m``). Δ is optimised per order over a grid when not given.
    """
    lam = np.asarray(orders, dtype=np.int64)
    one = (single_rdp(lam) if single_rdp is not None else sub_rdp_of_m(1, lam))
    mu = n * gamma
    errs = [err] if err is not None else [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5]
    best = np.full(lam.shape, math.inf)
    for d in errs:
        m = int(math.floor((1.0 - d) * mu)) + 1
        if m < 1 or m > n:
            continue
        a = (lam - 1.0) * one - d * d * mu / 2.0
        b = (lam - 1.0) * sub_rdp_of_m(m, lam)
        best = np.minimum(best, np.logaddexp(a, b) / (lam - 1.0))
    return best


def mixture_log_em1(q: float, log_em1_base: np.ndarray, orders) -> np.ndarray:
    r"""log(E_Q[((1 − q) + q P/Q)^λ] − 1) from the base pair's log(E_j − 1), j ≤ λ.

    Binomial expansion; the j = 0, 1 terms sum with the rest of the weights to 1 exactly
    (E_Q[P/Q] = 1), so E − 1 = Σ_{j≥2} C(λ,j) q^j (1−q)^{λ−j} (E_j − 1): non-negative terms.
    This is the homogeneous pair when each user is present independently w.p. q (the victim
    absent ⇒ identical outputs).
    """
    lam = np.asarray(orders, dtype=np.int64)
    L = int(lam.max())
    j = np.arange(L + 1, dtype=float)
    base = np.asarray(log_em1_base, dtype=float)[:L + 1]
    lq = math.log(q) if q > 0 else -math.inf
    l1q = math.log1p(-q) if q < 1 else -math.inf
    lf = lam.astype(float)[:, None]
    jj = j[None, :]
    valid = (jj >= 2) & (jj <= lf)
    with np.errstate(invalid="ignore", divide="ignore"):
        lc = log_binom_coef(lf, jj)              # −inf/NaN where j > λ: masked below
        pw = np.where(jj > 0, jj * lq, 0.0) + np.where(lf - jj > 0, (lf - jj) * l1q, 0.0)
        m = np.where(valid, lc + pw + base[None, :], _NEG_INF)
    return logsumexp_rows(m)


_KERNELS: dict = register("shuffledp.pairs.gaussian_rdp._KERNELS", {})


def kernel(n: int, sigma: float) -> HomogeneousKernel:
    """Process-wide cache of homogeneous kernels (a bounded dict, oldest evicted)."""
    key = (int(n), float(sigma))
    k = _KERNELS.get(key)
    if k is None:
        if len(_KERNELS) >= 256:
            _KERNELS.pop(next(iter(_KERNELS)))
        k = _KERNELS[key] = HomogeneousKernel(n, sigma)
    return k


def checkin_exact(n: int, gamma: float, sigma: float, orders, blocks: int = 32,
                  sds: float = 8.0) -> np.ndarray:
    r"""RDP (forward direction) of the homogeneous pair under shuffled check-in [D].

    Each user reports w.p. γ; the report count C ~ Bin(n, γ) has the same law under both
    datasets and is visible. Given C = c the victim is among the reporters w.p. c/n
    (exchangeability), so the pair is ((1 − c/n) Q_c + (c/n) P_c, Q_c), where (P_c, Q_c)
    is the homogeneous pair of c users, and

        E − 1 = Σ_c Pr[C = c] · Σ_{j ≥ 2} C(λ,j) (c/n)^j (1 − c/n)^{λ−j} (E_{c,j} − 1).

    E_{c,j} is non-increasing in c (λ balls in c + 1 bins: merging the last bin into a
    uniform one of the first c gives c bins and only adds colliding pairs — this also proves
    the paper's Conjecture 1 at integer orders). So c is summed in blocks [c_a, c_b] with
    the bound (c_b/n)^j (1 − c_a/n)^{λ−j} (E_{c_a,j} − 1), and the tails outside
    mean ± (sds·sd + sds) are charged with their binomial mass: below, q ≤ c_lo/n and
    E_{c,j} ≤ E_{1,j} = e^{j(j−1)/(2σ²)}; above, q ≤ 1 and E_{c,j} ≤ E_{c_hi,j}. The result
    is an upper bound on this pair's value (the pair itself is an estimate: gaussian.md §3).
    """
    lam = np.asarray(orders, dtype=np.int64)
    L = int(lam.max())
    mean = n * gamma
    half = sds * math.sqrt(n * gamma * (1.0 - gamma)) + sds
    lo = max(1, int(math.floor(mean - half)))
    hi = min(n, int(math.ceil(mean + half)))
    # Blocks of relative width ≤ max(1/blocks of the window, ~0.5 %) and absolute width ≥ 1:
    # the bound's looseness (c_b/c_a)^j stays small at every c.
    width_cap = max(1, (hi - lo + 1) // blocks)
    edges = [lo]
    while edges[-1] <= hi:
        c = edges[-1]
        edges.append(c + max(1, min(width_cap, int(c * 0.005))))
    edges[-1] = hi + 1
    cs = np.arange(lo, hi + 1)
    lpmf = binom_logpmf(cs.astype(float), n, gamma)
    parts = []
    for a, b in zip(edges[:-1], edges[1:]):
        ca, cb = int(a), int(b) - 1
        lw = special.logsumexp(lpmf[ca - lo:cb - lo + 1])
        base = kernel(ca, sigma).log_em1(L)
        parts.append(lw + _mixture_block(cb / n, ca / n, base, lam))
    # Tails, charged with Chernoff masses Pr[C ≤ c] ≤ exp(−n KL(c/n ‖ γ)) (no underflow to
    # a wrong 0). Blocks grow by 25 % so that Σ_j C(λ,j) q_hi^j (1 − q_lo)^{λ−j} stays
    # near 1; below lo/64 one block [1, ·) uses E_{1,j} = e^{j(j−1)/(2σ²)}.
    j = np.arange(L + 1, dtype=float)
    cb = lo - 1
    floor_c = max(1, lo // 64)
    while cb >= 1:
        ca = max(floor_c, int(cb / 1.25)) if cb > floor_c else 1
        lw = binom_log_tail_upper(n, gamma, cb, upper=False)
        if ca > 1:
            base = kernel(ca, sigma).log_em1(L)
        else:
            base = logexpm1(j * (j - 1.0) / (2.0 * sigma * sigma))
            base[:2] = _NEG_INF
        parts.append(lw + _mixture_block(cb / n, ca / n, base, lam))
        cb = ca - 1
    ca = hi + 1
    while ca <= n:
        cb = min(n, int(math.ceil(ca * 1.25)))
        lw = binom_log_tail_upper(n, gamma, ca, upper=True)
        base = kernel(ca, sigma).log_em1(L)
        parts.append(lw + _mixture_block(cb / n, ca / n, base, lam))
        ca = cb + 1
    tot = np.logaddexp.reduce(np.stack(parts), axis=0)
    return log1pexp(tot) / (lam - 1.0)


def _mixture_block(q_hi: float, q_lo: float, base: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """log Σ_j C(λ,j) q_hi^j (1 − q_lo)^{λ−j} (E_j − 1) (upper bound over q ∈ [q_lo, q_hi])."""
    L = int(lam.max())
    j = np.arange(L + 1, dtype=float)
    lf = lam.astype(float)[:, None]
    jj = j[None, :]
    lq = math.log(q_hi) if q_hi > 0 else -math.inf
    l1q = math.log1p(-q_lo) if q_lo < 1 else -math.inf
    valid = (jj >= 2) & (jj <= lf)
    with np.errstate(invalid="ignore", divide="ignore"):
        lc = log_binom_coef(lf, jj)              # −inf/NaN where j > λ: masked below
        pw = jj * lq + np.where(lf - jj > 0, (lf - jj) * l1q, 0.0)
        m = np.where(valid, lc + pw + base[None, :L + 1], _NEG_INF)
    return logsumexp_rows(m)
