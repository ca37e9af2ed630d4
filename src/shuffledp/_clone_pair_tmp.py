"""TEMPORARY stand-in for ``shuffledp.clone_pair`` (branch ``clones``), g = 0 pairs only.

The clones branch had not committed its generic clone-pair kernel when trimmed-clone was
written; this module implements the same API (``ClonePair(n, p, a, b)``, ``pair_delta``,
``pair_epsilon``, ``pair_rdp``) from spec/clones.md §1, §2, §6 so that trimmed-clone can
ship. Replace the import in bounds/trimmed_clone.py by ``..clone_pair`` after merging
``clones`` and delete this file.

Pair (g = 0): C ~ Bin(n − 1, p); given C = c, A ~ Bin(c, ½) and x = A + [victim type 0];
P(x|c) = a·Pr[A = x − 1] + b·Pr[A = x], Q(x|c) = b·Pr[A = x − 1] + a·Pr[A = x].
Both views are upper bounds: tails in c are charged with their full mass (δ) or with the
largest possible value (RDP), slices in c are charged with the value at the block's
smallest c (divergences are non-increasing in c, clones.md §1 property 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .numerics import binom_logpmf, binom_tail_mass, binom_window, bisect_certified, pow_minus_tangent

__all__ = ["ClonePair", "pair_delta", "pair_epsilon", "pair_rdp"]


@dataclass(frozen=True)
class ClonePair:
    n: int
    p: float
    a: float
    b: float

    def __post_init__(self):
        if not (0 < self.b <= self.a and abs(self.a + self.b - 1.0) <= 1e-12 and 0 < self.p <= 1):
            raise ValueError(f"temporary clone pair supports g = 0 only; got {self!r}")

    @property
    def log_ratio(self) -> float:
        return math.log(self.a) - math.log(self.b)


def _c_window(pair):
    m = pair.n - 1
    lo, hi = binom_window(m, pair.p, sds=12.0, extra=12)
    tail = binom_tail_mass(m, pair.p, lo, hi) if m > 0 else 0.0
    c = np.arange(lo, hi + 1, dtype=float)
    w = np.exp(binom_logpmf(c, m, pair.p)) if m > 0 else np.ones(1)
    return c, w, tail


def pair_delta(pair: ClonePair, eps: float) -> float:
    """Upper bound on H_{e^ε}(P‖Q) (closed form per slice, clones.md §2)."""
    a, b = pair.a, pair.b
    e = math.exp(eps)
    kappa = a - e * b
    if kappa <= 0:
        return 0.0
    c, w, tail = _c_window(pair)
    if c.size > 256:
        # Blocks of c charged with H at the block's smallest c (H_c non-increasing in c).
        idx = np.unique(np.linspace(0, c.size, 257).astype(int))
        w = np.add.reduceat(w, idx[:-1])
        c = c[idx[:-1]]
    rstar = (e * a - b) / kappa
    tstar = (c + 1.0) * rstar / (1.0 + rstar)
    m0 = np.floor(tstar) + 1.0
    best = np.zeros(c.shape)
    for dm in (-1.0, 0.0, 1.0):
        m = np.clip(m0 + dm, 0.0, c + 1.0)
        pm = np.where(m - 1 >= 0, np.exp(binom_logpmf_vec(m - 1, c)), 0.0)
        sf = np.where(m <= 0, 1.0, special.bdtrc(m - 1, c, 0.5))
        sf = np.where(m > c, 0.0, sf)
        best = np.maximum(best, kappa * pm - (e - 1.0) * sf)
    val = float(np.sum(w * best))
    return min(1.0, val * (1 + 1e-9) + tail + 1e-14)


def binom_logpmf_vec(k, c):
    """log Bin(c, ½)(k) for arrays k, c (−inf outside the support)."""
    k = np.asarray(k, float)
    c = np.asarray(c, float)
    out = np.full(np.broadcast(k, c).shape, -np.inf)
    ok = (k >= 0) & (k <= c)
    kk, cc = np.broadcast_arrays(k, c)
    out[ok] = (special.gammaln(cc[ok] + 1) - special.gammaln(kk[ok] + 1)
               - special.gammaln(cc[ok] - kk[ok] + 1) - cc[ok] * math.log(2.0))
    return out


def pair_epsilon(pair: ClonePair, delta: float) -> float:
    """Smallest certified ε with pair_delta(ε) ≤ δ."""
    if pair_delta(pair, 0.0) <= delta:
        return 0.0
    return bisect_certified(lambda e: pair_delta(pair, e) <= delta, 0.0, pair.log_ratio,
                            want="smallest", xtol=1e-12, rtol=1e-7)


def pair_rdp(pair: ClonePair, orders, c_blocks: int = 60) -> np.ndarray:
    """Upper bound on D_λ(P‖Q) at integer orders (clones.md §6), non-negative terms.

    E_Q[(P/Q)^λ] − 1 = Σ_c w_c Σ_x Q(x|c)·((1 + y)^λ − 1 − λy), y = P/Q − 1 (E_Q[y] = 0).
    c is summed in blocks charged with the block's smallest c; x outside the window and c
    outside the c-window are charged with (a/b)^λ + λ per unit mass.
    """
    lam = np.asarray(orders, dtype=np.int64)
    a, b = pair.a, pair.b
    lr_max = pair.log_ratio
    m = pair.n - 1
    lo, hi = binom_window(m, pair.p, sds=12.0, extra=12)
    c_tail = binom_tail_mass(m, pair.p, lo, hi) if m > 0 else 0.0
    edges = np.unique(np.round(np.linspace(lo, hi + 1, min(c_blocks, hi - lo + 1) + 1)).astype(np.int64))
    lamf = lam.astype(float)
    with np.errstate(over="ignore"):
        worst = np.exp(np.minimum(lamf * lr_max, 700.0)) + lamf
    total = np.zeros(lam.shape)
    K = math.sqrt(2.0 * ((float(lam.max()) - 1.0) * lr_max + 60.0)) + 3.0
    for ca, cb in zip(edges[:-1], edges[1:]):
        c = float(ca)
        wmass = float(special.bdtr(cb - 1, m, pair.p) - (special.bdtr(ca - 1, m, pair.p) if ca > 0 else 0.0)) if m > 0 else 1.0
        wmass = max(wmass, 0.0) * (1 + 1e-9) + 1e-300
        sd = 0.5 * math.sqrt(c) if c > 0 else 0.0
        xlo = max(0, int(math.floor(c / 2 - K * sd - 2)))
        xhi = min(int(c) + 1, int(math.ceil(c / 2 + K * sd + 2)))
        x = np.arange(xlo, xhi + 1, dtype=float)
        lu = binom_logpmf_vec(x - 1, c)
        lv = binom_logpmf_vec(x, c)
        u, v = np.exp(lu), np.exp(lv)
        P = a * u + b * v
        Q = b * u + a * v
        with np.errstate(invalid="ignore", divide="ignore"):
            y = (a - b) * (u - v) / Q
        live = Q > 0
        yl, Ql = y[live], Q[live]
        inner = np.array([float(np.sum(Ql * pow_minus_tangent(yl, float(l)))) for l in lamf]) \
            if lamf.size < 4 else np.sum(Ql[None, :] * _pmt2(yl, lamf), axis=1)
        # x outside the window: Q-mass ≤ Pr[A ∉ [xlo, xhi − 1]] (Q ≤ Pr[A=x−1] + Pr[A=x]).
        outside = 0.0
        if xlo > 0:
            outside += 2.0 * float(special.bdtr(xlo, c, 0.5))
        if xhi - 1 < c:
            outside += 2.0 * float(special.bdtrc(xhi - 2, c, 0.5))
        total += wmass * (inner * (1 + 1e-9) + outside * worst)
    total += c_tail * worst
    with np.errstate(over="ignore"):
        out = np.log1p(total) / (lamf - 1.0)
    return np.minimum(out * (1 + 1e-12), lr_max)


def _pmt2(y: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """(1 + y)^λ − 1 − λy ≥ 0 for every λ (rows) and y (columns), overflow → inf."""
    with np.errstate(divide="ignore"):
        ly = np.log1p(y)[None, :]
    L = lam[:, None]
    t = L * ly
    with np.errstate(over="ignore", invalid="ignore"):
        small = np.abs(t) < 1e-3
        big = np.expm1(t) - L * y[None, :]
        # series for small t: e^t − 1 − t + t − λy = expm1mx(t) + λ(log1p(y) − y)
        ser = t * t / 2 * (1 + t / 3 + t * t / 12) + L * (ly - y[None, :])
        out = np.where(small, ser, big)
    return np.where(np.isnan(out), np.inf, np.maximum(out, 0.0))
