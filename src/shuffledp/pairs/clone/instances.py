r"""The clone pairs of the library's bounds: FMT20, FMT23, randomizer-specific, k-RR marginal.

FMT20: Feldman, McMillan, Talwar, "Hiding among the clones", arXiv:2012.12803, Thm 3.1 /
Lemma 3.3 (every adaptive ε0-LDP randomizer); FMT23: "Stronger privacy amplification by
shuffling", arXiv:2208.04591v3, Thm 3.1 with the errata (restricted class S(ε0)); the
randomizer-specific pair with p = p_R; the k-RR marginal pair (g > 0: LOWER bounds only).
The victim's α and β come from ``pairs.law.Bias`` (never 1 − α).
"""

from __future__ import annotations

import math

import numpy as np

from ...core import _validate as v
from ...core._lazy import special  # scipy.special on first use (import time)
from ...core.mechanisms import MAX_EPS0
from ..law import Bias
from .pair import ClonePair

def _alpha_pair(eps0: float) -> tuple[float, float]:
    """(α, β = 1 − α) with α = e^ε0/(e^ε0 + 1), from ``pairs.law.Bias`` (each formed from
    ε0 directly, never as a difference)."""
    bias = Bias(eps0)
    return bias.alpha, bias.beta


def _check_eps0_n(eps0, n):
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
    eps0, n = _check_eps0_n(eps0, n)
    k = v.integer("k", k, lo=2)
    # Divide through by e^ε0 so that large ε0 does not overflow.
    em = math.exp(-eps0)
    d = 1.0 + (k - 1) * em
    return ClonePair(n, min(1.0, 2.0 * em / d), 1.0 / d, em / d, eps0)

