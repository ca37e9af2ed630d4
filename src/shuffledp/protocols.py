"""Protocols: who takes part in a round and how reports are shuffled. Plain data."""

from __future__ import annotations

from dataclasses import dataclass

from . import _validate as v
from .mechanisms import Gaussian, LocalRandomizer, Mechanism

__all__ = ["Shuffle", "CheckIn", "WithoutReplacement", "Sampling"]


@dataclass(frozen=True)
class CheckIn:
    """Each user takes part in a round independently with probability ``rate``."""

    rate: float

    def __post_init__(self):
        object.__setattr__(self, "rate", v.real("rate", self.rate, lo=0.0, hi=1.0, lo_open=True))


@dataclass(frozen=True)
class WithoutReplacement:
    """``size`` users are drawn uniformly without replacement each round."""

    size: int

    def __post_init__(self):
        object.__setattr__(self, "size", v.integer("size", self.size, lo=1))


Sampling = CheckIn | WithoutReplacement


@dataclass(frozen=True)
class Shuffle:
    """One round: n users each run ``mechanism`` once, a shuffler permutes the reports.

    Neighbouring datasets differ in one user's value (replacement), same n.
    """

    mechanism: Mechanism
    n: int
    sampling: Sampling | None = None

    def __post_init__(self):
        if not isinstance(self.mechanism, LocalRandomizer + (Gaussian,)):
            raise ValueError("mechanism must be one of LDP, RandomizedResponse, Randomizer, "
                             "OUE, RAPPOR, HadamardResponse, LocalHashing, Gaussian; "
                             f"got {self.mechanism!r}")
        n = v.integer("n", self.n, lo=1)
        object.__setattr__(self, "n", n)
        if self.sampling is not None:
            if not isinstance(self.sampling, (CheckIn, WithoutReplacement)):
                raise ValueError("sampling must be None, CheckIn(rate) or WithoutReplacement(size); "
                                 f"got {self.sampling!r}")
            if isinstance(self.sampling, WithoutReplacement) and self.sampling.size > n:
                raise ValueError(f"sampling.size must be an integer in [1, n={n}]; "
                                 f"got {self.sampling.size!r}")

    @property
    def eps0(self) -> float | None:
        """The local ε0 of an LDP mechanism, None for the Gaussian."""
        return getattr(self.mechanism, "eps0", None)

    def describe(self) -> str:
        s = f"shuffle of n={self.n} users, {self.mechanism.describe()}"
        if isinstance(self.sampling, CheckIn):
            s += f", check-in rate {self.sampling.rate:g}"
        elif isinstance(self.sampling, WithoutReplacement):
            s += f", {self.sampling.size} users sampled per round"
        return s
