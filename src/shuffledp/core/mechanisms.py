"""What each user runs locally: small, frozen, validated records with no maths in them.

Bounds interpret these. ``eps0`` is the local privacy level: every output
probability changes by at most a factor e^eps0 when the user's input changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from ._lazy import special  # scipy.special on first use (import time)

from . import _validate as v

__all__ = ["LDP", "RandomizedResponse", "Randomizer", "Gaussian", "OUE", "RAPPOR",
           "HadamardResponse", "LocalHashing", "ENCODERS", "Mechanism", "LocalRandomizer"]

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
    """Each user adds N(0, σ²I) to its vector; σ is the noise per unit ℓ2 *diameter*.

    The users' vectors lie in a set of ℓ2 diameter 1 (any two of them are at most 1
    apart), and neighbouring datasets replace one user's vector by another (replace-one).
    ``sigma`` is the noise standard deviation in units of that diameter.

    Most training code (Opacus, dp_accounting, TF Privacy, the shuffle-Gaussian paper,
    Liew & Takahashi arXiv:2206.09569) instead clips each vector to ℓ2 *norm* C and adds
    N(0, z²C²I) with a *noise multiplier* z. Clipped vectors are up to 2C apart, so that
    is ``Gaussian(z / 2)``; say it directly with ``Gaussian.from_noise_multiplier(z)`` and
    read it back with ``.noise_multiplier`` (= 2σ). docs/conventions.md compares the
    conventions.

    >>> g = Gaussian.from_noise_multiplier(5.0)
    >>> g.sigma, g.noise_multiplier
    (2.5, 5.0)
    """

    sigma: float

    def __post_init__(self):
        object.__setattr__(self, "sigma", v.real("sigma", self.sigma, lo=0.0, lo_open=True))

    @classmethod
    def from_noise_multiplier(cls, noise_multiplier: float) -> "Gaussian":
        """Inputs clipped to ℓ2 norm C, noise N(0, z²C²I) (Opacus' ``noise_multiplier`` z).

        The clipped inputs have diameter 2C, so this is ``Gaussian(z / 2)``.
        """
        z = v.real("noise_multiplier", noise_multiplier, lo=0.0, lo_open=True)
        return cls(z / 2.0)

    @property
    def noise_multiplier(self) -> float:
        """The noise multiplier z = 2σ: noise N(0, z²C²I) on inputs clipped to ℓ2 norm C."""
        return 2.0 * self.sigma

    def units(self) -> str:
        """Both units in one phrase, e.g. 'sigma = 2.5 per unit l2 diameter = noise
        multiplier 5 for inputs clipped to l2 norm C'."""
        return (f"sigma = {self.sigma:g} per unit l2 diameter = noise multiplier "
                f"{self.noise_multiplier:g} for inputs clipped to l2 norm C")

    def describe(self) -> str:
        return f"Gaussian noise, {self.units()}"


def _encoder_d(d):
    return v.integer("d", d, lo=2)


class _Encoder:
    """Shared behaviour of the named encoders: ε0, domain size d, blanket atoms, matrix."""

    #: Largest number of outputs for which ``matrix()`` builds the full matrix.
    MAX_MATRIX_COLUMNS = 1 << 14


    # Fields of every encoder dataclass (declared here for the type checker; _Encoder is
    # not a dataclass itself, so these are not fields).
    eps0: float
    d: int


    def __post_init__(self):
        # Every encoder is (eps0, d); the dataclass subclasses inherit this validation.
        object.__setattr__(self, "eps0", v.real("eps0", self.eps0, lo=0.0, hi=MAX_EPS0))
        object.__setattr__(self, "d", _encoder_d(self.d))

    def n_outputs(self) -> int:
        """Outputs of the randomizer: 2^d bit vectors for the unary encodings (capped so
        the count stays a machine integer); Hadamard and hashing override it."""
        return 1 << self.d if self.d < 63 else 1 << 62

    def matrix(self) -> np.ndarray:
        """Row-stochastic matrix R[x, y] (small d only; the outputs grow like 2^d)."""
        if self.n_outputs() > self.MAX_MATRIX_COLUMNS:
            raise ValueError(f"d must be small enough for {self.n_outputs()} outputs to be "
                             f"listed (at most {self.MAX_MATRIX_COLUMNS}); got d={self.d}")
        return _encoder_matrix(self)


@dataclass(frozen=True)
class OUE(_Encoder):
    """Optimized unary encoding (Wang, Blocki, Li, Jha, USENIX Security 2017, arXiv:1705.04421).

    The input x ∈ {0, …, d−1} is one-hot encoded; the 1-bit is reported as 1 with
    probability 1/2, every 0-bit as 1 with probability 1/(e^ε0 + 1), independently.
    """


    eps0: float
    d: int

    def describe(self) -> str:
        return f"optimized unary encoding (OUE), d={self.d}, eps0={self.eps0:g}"


@dataclass(frozen=True)
class RAPPOR(_Encoder):
    """Symmetric unary encoding / basic one-time RAPPOR (Erlingsson, Pihur, Korolova, CCS
    2014, arXiv:1407.6981): one-hot encode, flip every bit independently with probability
    1/(e^{ε0/2} + 1). Two inputs differ in two bits, so the randomizer is ε0-LDP.
    """


    eps0: float
    d: int

    def describe(self) -> str:
        return f"symmetric unary encoding (basic one-time RAPPOR), d={self.d}, eps0={self.eps0:g}"


@dataclass(frozen=True)
class HadamardResponse(_Encoder):
    """Hadamard response (Acharya, Sun, Zhang, AISTATS 2019, arXiv:1802.04705), basic form.

    K = the smallest power of 2 above d; input x owns the set C_x of columns where row x+1
    of the K×K Sylvester–Hadamard matrix is +1 (|C_x| = K/2); the output j ∈ {0, …, K−1}
    is drawn with probability ∝ e^ε0 on C_x and ∝ 1 elsewhere.
    """


    eps0: float
    d: int

    @property
    def K(self) -> int:
        return 1 << int(self.d).bit_length()     # smallest power of 2 >= d + 1

    def n_outputs(self) -> int:
        return self.K

    def describe(self) -> str:
        return f"Hadamard response, d={self.d} (K={self.K}), eps0={self.eps0:g}"


@dataclass(frozen=True)
class LocalHashing(_Encoder):
    """Binary local hashing (Bassily–Smith 2015; Wang et al. 2017 with g = 2): the user
    draws a uniformly random function h: {0, …, d−1} → {0, 1} and reports (h, b) with
    b = h(x) w.p. e^ε0/(e^ε0 + 1), else 1 − h(x). (A uniformly random function, not a
    smaller hash family: the blanket atoms depend on the family.)
    """


    eps0: float
    d: int

    def n_outputs(self) -> int:
        return 2 << self.d if self.d < 62 else 1 << 62

    def describe(self) -> str:
        return f"binary local hashing, d={self.d}, eps0={self.eps0:g}"

#: The named encoders (one-hot / hashing); ε0-LDP randomizers with a blanket decomposition.
ENCODERS = (OUE, RAPPOR, HadamardResponse, LocalHashing)
LocalRandomizer = (LDP, RandomizedResponse, Randomizer) + ENCODERS
Mechanism = LDP | RandomizedResponse | Randomizer | Gaussian | OUE | RAPPOR | HadamardResponse | LocalHashing


# ----------------------------------------------------------------------------------------
# Full matrices of the encoders at small d (their definitions written out)
# ----------------------------------------------------------------------------------------
def _bits(d):
    y = np.arange(1 << d)[:, None]
    return ((y >> np.arange(d)[None, :]) & 1).astype(float)       # (2^d, d)


def _unary_matrix(p1, p0, d):
    """R[x, y] = Π_i P(y_i | e_x,i) with P(1|1) = p1, P(1|0) = p0."""
    bits = _bits(d)
    out = np.empty((d, 1 << d))
    for x in range(d):
        pr = np.where(bits == 1, p0, 1 - p0)
        pr[:, x] = np.where(bits[:, x] == 1, p1, 1 - p1)
        out[x] = pr.prod(axis=1)
    return out


def _encoder_matrix(mech) -> np.ndarray:
    """The full matrix of a named encoder (its definition written out; small d only)."""
    e0 = mech.eps0
    d = mech.d
    if isinstance(mech, OUE):
        return _unary_matrix(0.5, float(special.expit(-e0)), d)
    if isinstance(mech, RAPPOR):
        return _unary_matrix(float(special.expit(e0 / 2)), float(special.expit(-e0 / 2)), d)
    if isinstance(mech, HadamardResponse):
        K = mech.K
        r = np.arange(K)
        H = np.array([[(-1) ** bin(i & j).count("1") for j in r] for i in r])
        E = math.exp(e0)
        rows = H[1:d + 1]
        return np.where(rows == 1, 2 * E / (K * (E + 1)), 2 / (K * (E + 1)))
    if isinstance(mech, LocalHashing):
        E = math.exp(e0)
        hs = _bits(d)                                   # (2^d functions, d)
        out = np.empty((d, 2 << d))
        for x in range(d):
            hx = hs[:, x]
            for bval in (0, 1):
                out[x, bval::2] = np.where(hx == bval, E, 1.0) / (E + 1) / (1 << d)
        return out
    raise ValueError(f"no matrix for {mech!r}")
