"""What each user runs locally: small, frozen, validated records with no maths in them.

Bounds interpret these. ``eps0`` is the local privacy level: every output
probability changes by at most a factor e^eps0 when the user's input changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import _validate as v

__all__ = ["LDP", "RandomizedResponse", "Randomizer", "Gaussian", "Mechanism", "LocalRandomizer"]

#: ε0 above this is accepted but every amplification bound is vacuous long before it;
#: e^ε0 must stay finite in double precision.
MAX_EPS0 = 700.0


@dataclass(frozen=True)
class LDP:
    """Any ε0-LDP local randomizer; adaptive sequences of randomizers are allowed.

    This is the class "every ε0-LDP randomizer": only bounds proven for all of them
    (FMT20, Girgis et al., trivial) apply.
    """

    eps0: float

    def __post_init__(self):
        object.__setattr__(self, "eps0", v.real("eps0", self.eps0, lo=0.0, hi=MAX_EPS0))

    def describe(self) -> str:
        return f"any {self.eps0:g}-LDP randomizer"


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response: report the true value w.p. e^ε0/(e^ε0 + k − 1)."""

    eps0: float
    k: int = 2

    def __post_init__(self):
        object.__setattr__(self, "eps0", v.real("eps0", self.eps0, lo=0.0, hi=MAX_EPS0))
        object.__setattr__(self, "k", v.integer("k", self.k, lo=2))

    def matrix(self) -> np.ndarray:
        """The k×k row-stochastic matrix R[x, y] = Pr[report y | input x]."""
        e = math.exp(self.eps0)
        m = np.full((self.k, self.k), 1.0 / (e + self.k - 1))
        np.fill_diagonal(m, e / (e + self.k - 1))
        return m

    def describe(self) -> str:
        return f"{self.k}-ary randomized response, eps0={self.eps0:g}"


@dataclass(frozen=True)
class Randomizer:
    """A finite randomizer given as a row-stochastic matrix R[x, y] = Pr[y | x].

    ``eps0`` is computed as the largest log-ratio between two rows in any column. If
    ``eps0`` is passed, the matrix must be ε0-LDP for it (the claimed level may be
    looser than the computed one; the bounds then use the claim).
    """

    matrix: tuple
    eps0: float | None = field(default=None)

    def __post_init__(self):
        try:
            m = np.array(self.matrix, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"matrix must be a 2-D array of probabilities; got {self.matrix!r}") from None
        if m.ndim != 2 or m.shape[0] < 2 or m.shape[1] < 1:
            raise ValueError(f"matrix must be 2-D with at least 2 rows (inputs); got shape {m.shape}")
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            raise ValueError("matrix must have finite, non-negative entries; got "
                             f"min {np.nanmin(m)!r} and non-finite entries: {bool(np.any(~np.isfinite(m)))}")
        sums = m.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-9)
        if bad.size:
            raise ValueError(f"matrix rows must be distributions (sum to 1 within 1e-9); "
                             f"row {int(bad[0])} sums to {sums[bad[0]]!r}")
        m = m / sums[:, None]
        cols = m[:, m.max(axis=0) > 0]
        if np.any(cols.min(axis=0) == 0):
            raise ValueError("matrix is not eps0-LDP for any finite eps0: some output has "
                             "probability 0 under one input and > 0 under another")
        computed = float(np.max(np.log(cols.max(axis=0)) - np.log(cols.min(axis=0))))
        computed = max(computed, 0.0)
        if self.eps0 is None:
            eps0 = computed
        else:
            eps0 = v.real("eps0", self.eps0, lo=0.0, hi=MAX_EPS0)
            if computed > eps0 * (1 + 1e-12) + 1e-15:
                raise ValueError(f"matrix is not eps0-LDP for the eps0 claimed: eps0 must be "
                                 f">= {computed!r} (the largest log-ratio in a column); got {eps0!r}")
        object.__setattr__(self, "matrix", tuple(tuple(float(x) for x in row) for row in m))
        object.__setattr__(self, "eps0", eps0)

    @property
    def array(self) -> np.ndarray:
        """The matrix as a (read-only) numpy array."""
        a = np.array(self.matrix, dtype=float)
        a.setflags(write=False)
        return a

    @property
    def inputs(self) -> int:
        return len(self.matrix)

    def describe(self) -> str:
        return f"{len(self.matrix)}x{len(self.matrix[0])} randomizer, eps0={self.eps0:.6g}"


@dataclass(frozen=True)
class Gaussian:
    """Each user adds N(0, σ² I) to a vector of ℓ2-sensitivity 1."""

    sigma: float

    def __post_init__(self):
        object.__setattr__(self, "sigma", v.real("sigma", self.sigma, lo=0.0, lo_open=True))

    def describe(self) -> str:
        return f"Gaussian noise, sigma={self.sigma:g} (sensitivity 1)"


LocalRandomizer = (LDP, RandomizedResponse, Randomizer)
Mechanism = LDP | RandomizedResponse | Randomizer | Gaussian
