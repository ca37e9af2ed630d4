"""Fast paths of ``binomial.half_binom_logpmf`` and ``half_binom_pmf_walk`` with the SAME
floats (issue 30, latency).

The δ(ε) kernel of the clone pairs (``pairs/clone/hockey.py``, ``slices.py``) calls the
half-binomial log-pmf a dozen times per evaluation on arrays of a few to a few hundred
entries, where numpy's per-call overhead (masks, ``np.any``, broadcasting) is most of the
cost. When every entry is in the interior with k, c − k > 30 (Loader's table is not
needed) and both deviance terms are on their series branch, the same arithmetic is done
here in the same order on whole arrays, so every value is bit-identical to
``half_binom_logpmf``; any other input is passed to it unchanged.
The bit-identity is tested (tests/test_binomial_batch.py).
"""

from __future__ import annotations

import math

import numpy as np

from .binomial import _S0, _S1, _S2, _S3, _S4, half_binom_logpmf, half_binom_pmf_walk

__all__ = ["half_binom_logpmf_fast", "half_binom_pmf_walk_fast"]

_TWO_PI = 2.0 * math.pi
_LOG_1E18 = math.log(1e-18)


def _stirlerr_big(n):
    # binomial.stirlerr for n > 30: the same five-term series, the same operations.
    inv2 = 1.0 / (n * n)
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 * inv2) * inv2) * inv2) * inv2) / n


def _bd0_series(x, m):
    """binomial.bd0 for entries on its series branch (|x − m| < (x + m)/2)."""
    d = x - m
    v = d / (x + m)
    s = d * v
    ej = 2.0 * x * v
    v2 = v * v
    top = float(v2.max())
    n_terms = 1 if top == 0.0 else int(min(60, max(1, math.ceil(_LOG_1E18 / math.log(top)))))
    for j in range(1, n_terms + 1):
        ej = ej * v2
        s = s + ej / (2 * j + 1)
    return s


def _interior(k, c, nk, half):
    return (_stirlerr_big(c) - _stirlerr_big(k) - _stirlerr_big(nk) - _bd0_series(k, half)
            - _bd0_series(nk, half) - 0.5 * np.log(_TWO_PI * k * nk / c))


def half_binom_logpmf_fast(k, c):
    """``binomial.half_binom_logpmf(k, c)``, bit for bit, with less overhead: entries in the
    interior (k, c − k > 30, both deviances on their series branch) by the same arithmetic
    without masks, the others by ``half_binom_logpmf`` itself.

    Evaluating entries in different batches gives the same floats: ``bd0``'s series length
    is set by the largest v² of its call, and the terms an entry gets beyond those its own
    v² needs are each below 1e-18·|v| of its sum, under half an ulp, so the sum does not
    move (tested, tests/test_binomial_batch.py).
    """
    k = np.asarray(k, dtype=float)
    c = np.asarray(c, dtype=float)
    if k.shape != c.shape or k.size == 0 or k.ndim != 1:
        return half_binom_logpmf(k, c)
    nk = c - k
    half = 0.5 * c
    easy = ((k > 30.0) & (nk > 30.0) & (np.abs(k - half) < 0.5 * (k + half))
            & (np.abs(nk - half) < 0.5 * (nk + half)))
    if easy.all():
        return _interior(k, c, nk, half)
    if not easy.any():
        return half_binom_logpmf(k, c)
    out = np.full(k.shape, -np.inf)
    out[easy] = _interior(k[easy], c[easy], nk[easy], half[easy])
    # Loader's exact edge values (k = 0 or k = c) as ``half_binom_logpmf`` forms them; −inf
    # outside the support; the rest of the interior by ``half_binom_logpmf`` itself.
    edge = ((k == 0) | (k == c)) & (c >= 0)
    if edge.any():
        out[edge] = -c[edge] * math.log(2.0)
    hard = ~easy & (k > 0) & (k < c)
    if hard.any():
        out[hard] = half_binom_logpmf(k[hard], c[hard])
    return out


def half_binom_pmf_walk_fast(c, k, block: int = 64):
    """``binomial.half_binom_pmf_walk(c, k, block)`` for the δ(ε) kernel's consecutive
    slices, bit for bit (the same ratios, heads by ``half_binom_logpmf_fast``); None where
    that returns None (not a walk, or outside the support)."""
    c = np.asarray(c, dtype=float)
    k = np.asarray(k, dtype=float)
    n = c.size
    if n < 2 * block or c.ndim != 1:
        return half_binom_pmf_walk(c, k, block)
    dk = np.diff(k)
    if (bool(np.any(np.diff(c) != 1.0)) or bool(np.any((dk != 0.0) & (dk != 1.0)))
            or float(k.min()) < 0 or bool(np.any(k > c))):
        return None
    with np.errstate(divide="ignore"):
        ratio = np.where(dk == 0.0, (c[:-1] + 1.0) / (2.0 * (c[:-1] + 1.0 - k[:-1])),
                         (c[:-1] + 1.0) / (2.0 * (k[:-1] + 1.0)))
    nb = -(-n // block)
    r = np.ones(nb * block)
    r[1:n] = ratio
    r = r.reshape(nb, block)
    r[:, 0] = 1.0
    heads = np.exp(half_binom_logpmf_fast(k[::block], c[::block]))
    return (heads[:, None] * np.cumprod(r, axis=1)).ravel()[:n]
