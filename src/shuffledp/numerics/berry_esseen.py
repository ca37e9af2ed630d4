r"""Certified LOWER bound on a T-fold composed hockey-stick divergence from three moments of
one round's privacy loss (Berry–Esseen), for floors: milliseconds at any T.

For a pair (P, Q) with loss L = log(P/Q) and T independent rounds (loss sum S_T),

    δ_T(ε) = E_{P^T}[(1 − e^{ε − S_T})_+] ≥ (1 − e^{−a})·P(S_T > ε + a)      (any a > 0),

and, with μ, σ², ρ the mean, variance and third absolute central moment of L under P,
the Berry–Esseen inequality for i.i.d. summands with Shevtsova's constant
(I. G. Shevtsova, "On the absolute constants in the Berry–Esseen type inequalities for
identically distributed summands", arXiv:1111.6554, 2011: C ≤ 0.4748) gives

    P(S_T > x) ≥ 1 − Φ((x − Tμ)/(σ√T)) − C·ρ/(σ³√T).

The pair may be a sub-probability pair (atoms left out, losses lowered: a pair the caller's
pair dominates, e.g. ``pairs.clone.pair_floor_atoms``): with s = ΣP ≤ 1 and P̃ = P/s, the
T-fold sum over the listed atoms is s^T·E_{P̃^T}[(1 − e^{ε − S_T})_+] and the moments are
those of P̃. Every moment is bounded with its floating-point error (sums of K terms: K·u
of the sum of absolute values, generous), z rounded up, the Berry–Esseen term rounded up.

Where the composed loss is close to Gaussian (T large) this decides, in microseconds after
the moments, that a bound whose pair's T-fold ε is far above the best answer so far cannot
win — the FFT floor (``pld_fft.composed_delta_floor``) needs a lattice finer than 1/√T
loss standard deviations and is not tried past ~1e5 rounds. docs/latency.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["BE_CONSTANT", "LossMoments", "loss_moments_bounds", "composed_delta_floor_be"]

#: Shevtsova (2011), i.i.d. summands, uniform distance: C ≤ 0.4748.
BE_CONSTANT = 0.4748
_U = 2.0 ** -53


@dataclass(frozen=True)
class LossMoments:
    """Certified bounds on the normalised moments of one round's loss under P̃ = P/s:
    ``log_s_lo`` ≤ log ΣP, ``mu_lo`` ≤ μ, ``sd_lo`` ≤ σ ≤ ``sd_hi``, ``rho_hi`` ≥ ρ."""

    log_s_lo: float
    mu_lo: float
    sd_lo: float
    sd_hi: float
    rho_hi: float


def loss_moments_bounds(log_p, loss) -> LossMoments | None:
    """``LossMoments`` of the sub-probability pair with P-masses e^{log_p} and losses ``loss``
    (both taken as exact: the caller has lowered the losses by their own error and scaled
    the masses down by theirs). None when no atom has positive mass or σ is not provably
    positive."""
    try:
        with np.errstate(over="ignore", under="ignore"):
            return _moments(np.asarray(log_p, dtype=float), np.asarray(loss, dtype=float))
    except (OverflowError, ZeroDivisionError, ValueError):
        return None


def _moments(lp, L):
    ok = np.isfinite(lp) & np.isfinite(L)
    lp, L = lp[ok], L[ok]
    if lp.size == 0:
        return None
    # masses: exp carries ≤ 2u relative (numpy's SIMD exp: ≤ 4 ulp), covered by 8u
    p = np.exp(lp)
    K = p.size
    g = (K + 8.0) * _U                    # relative error of a K-term sum of ≥ 0 terms, and more
    s = float(np.sum(p))
    if not s > 0.0:
        return None
    s_lo = s * (1.0 - g - 8.0 * _U)
    pw = p / s                                   # P̃, each within ~(g + 10u) relative
    r = g + 12.0 * _U                            # relative error of each P̃ mass, bounded
    aL = np.abs(L)
    m1_abs = float(np.sum(pw * aL))
    c = float(np.sum(pw * L))
    # |μ − c| ≤ r·Σ P̃|L| (mass errors) + (K + 4)u·Σ P̃|L| (products and the sum)
    e_mu = (r + (K + 4.0) * _U) * m1_abs * 1.01 + 1e-300
    mu_lo = c - e_mu
    dev = L - c                                  # each within u|dev| + u|c| of the exact
    adev = np.abs(dev)
    e_dev = _U * (adev + abs(c))
    # E(L − c)² from above and below (each term's error: the deviation's and the product's)
    v2 = float(np.sum(pw * adev * adev))
    e_v2 = (r + (K + 8.0) * _U) * v2 + float(np.sum(pw * (2.0 * adev * e_dev + e_dev * e_dev)))
    v2_hi = (v2 + e_v2) * (1.0 + 1e-12)
    v2_lo = (v2 - e_v2) * (1.0 - 1e-12)
    # σ² = E(L − c)² − (μ − c)²: from below, less e_mu²; from above, E(L − c)² itself
    var_lo = v2_lo - e_mu * e_mu
    if not (var_lo > 0.0 and math.isfinite(v2_hi) and math.isfinite(e_mu)):
        return None
    sd_lo = math.sqrt(var_lo) * (1.0 - 4.0 * _U)
    sd_hi = math.sqrt(v2_hi) * (1.0 + 4.0 * _U)
    # ρ = E|L − μ|³ ≤ ((E|L − c|³)^{1/3} + |μ − c|)³ (Minkowski)
    ad = adev + e_dev
    v3 = float(np.sum(pw * ad * ad * ad)) * (1.0 + r + (K + 8.0) * _U) * (1.0 + 1e-12)
    rho_hi = (v3 ** (1.0 / 3.0) * (1.0 + 1e-12) + e_mu) ** 3 * (1.0 + 1e-12)
    return LossMoments(math.log(s_lo) - 4.0 * _U, float(mu_lo), sd_lo, sd_hi, rho_hi)


def _upper_sf(z: float) -> float:
    """1 − Φ(z), rounded down (erfc: a few ulp)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0)) * (1.0 - 1e-12)


def composed_delta_floor_be(m: LossMoments, T: int, eps: float) -> float:
    """Certified lower bound on δ_T(ε) of the pair whose loss moments ``m`` bounds: the best
    over a grid of margins a > 0 of s^T·(1 − e^{−a})·(1 − Φ(z) − C·ρ/(σ³√T)), z rounded up
    (module docstring); 0 where nothing positive is certified (also where a moment is so
    small or large that the arithmetic under- or overflows: 0 is always a valid floor)."""
    T = int(T)
    if T < 1 or m is None or not math.isfinite(eps):
        return 0.0
    try:
        return _floor(m, T, float(eps))
    except (OverflowError, ZeroDivisionError):
        return 0.0


def _floor(m: LossMoments, T: int, eps: float) -> float:
    if not (m.sd_lo > 0.0 and math.isfinite(m.sd_hi) and math.isfinite(m.rho_hi)):
        return 0.0
    root = math.sqrt(T)
    be = BE_CONSTANT * m.rho_hi / (m.sd_lo ** 3 * root) * (1.0 + 1e-12)
    if not be < 1.0:
        return 0.0
    scale = T * m.log_s_lo * (1.0 + 1e-12)       # ≤ T·log s (log s ≤ 0)
    if scale < -700.0:
        return 0.0
    drift = T * m.mu_lo
    sd_T_lo, sd_T_hi = m.sd_lo * root, m.sd_hi * root
    best = 0.0
    for k in np.geomspace(1e-3, 40.0, 64):
        a = float(k) * sd_T_hi
        num = eps + a - drift
        num = num + 4.0 * _U * (abs(eps) + a + abs(drift))   # rounded up
        z = num / (sd_T_lo if num >= 0.0 else sd_T_hi)
        z = z + 4.0 * _U * abs(z)                             # rounded up
        tail = _upper_sf(z) - be
        if tail <= 0.0:
            continue
        v = -math.expm1(-a) * tail * (1.0 - 1e-12)
        best = max(best, v)
    return best * math.exp(scale) * (1.0 - 1e-12)
