"""Log-space helpers (one copy each): log-binomial coefficients, logsumexp, log(1 + e^x),
log(e^x − 1), and the cancellation-free e^y − 1 − y, log(1 + x) − x and
(1 + x)^a − 1 − a·x used by the Rényi sums."""

from __future__ import annotations

import math

import numpy as np

from ..core._lazy import special  # scipy.special on first use (import time)

__all__ = ["log_binom_coef", "logsumexp", "logsumexp_rows", "log1pexp", "logexpm1", "expm1mx", "log1pmx",
           "pow_minus_tangent", "log_pow_minus_tangent"]


def log_binom_coef(n, k):
    """log C(n, k) via log-gamma (vectorised; fine for the moderate n of RDP orders)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def logsumexp(*args, **kwargs):
    """``scipy.special.logsumexp`` (a function, not an alias, so scipy loads on first use)."""
    return special.logsumexp(*args, **kwargs)


def logsumexp_rows(m: np.ndarray) -> np.ndarray:
    """logsumexp along axis 1 of a 2-D array; −inf rows stay −inf (no warnings)."""
    top = np.max(m, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore"):
        s = np.sum(np.exp(m - safe[:, None]), axis=1)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(top), safe + np.log(s), -np.inf)


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


def log1pexp(x):
    """log(1 + e^x) without overflow, keeping relative precision for tiny e^x (vectorised)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(x > 0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0))))


def logexpm1(x):
    """log(e^x − 1) for x ≥ 0 without overflow (vectorised); −inf at 0."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 700.0) * (x > 30.0))),
                        np.log(np.expm1(np.minimum(x, 30.0))))

