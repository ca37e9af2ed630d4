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

    Deployments as they run (docs/deployments.md), all answered through the reductions of
    ``shuffledp.accounting.deployment`` to plain single-report protocols:

    * ``reports_per_user = k``: every user sends k reports, each the mechanism applied to
      the user's data (the same value k times, or k values of the user), all k·n shuffled
      together; the user's whole data is what a neighbour replaces.
    * ``dummies = D``: D extra reports per round, each the mechanism applied to an input
      fixed in advance, public and independent of the data, randomized where the adversary
      does not see it (by the shuffler or the users); bounds hold for any such inputs.
    * ``dummy_distribution`` (with D > 0): each dummy is drawn instead from a public
      distribution over the mechanism's outputs: ``"uniform"`` (k-RR, a matrix),
      ``"blanket"`` (the mechanism's blanket distribution, any concrete randomizer) or a
      probability vector over the outputs (k-RR, a matrix). One round of a concrete
      randomizer is then bounded by the blanket with each dummy a blanket draw with
      probability min_y ν(y)/ω(y); other questions count the dummies as users only when ν
      is a mixture of the rows (docs/dummies.md).
    * ``honest = h``: only h users (the victim included) are honest; the n − h others
      collude with the adversary, who knows their inputs and reports. ``None``: all n.
    """

    mechanism: Mechanism
    n: int
    sampling: Sampling | None = None
    reports_per_user: int = 1
    dummies: int = 0
    honest: int | None = None
    dummy_distribution: object = None

    def __post_init__(self):
        if not isinstance(self.mechanism, LocalRandomizer + (Gaussian,)):
            names = ", ".join(t.__name__ for t in LocalRandomizer + (Gaussian,))
            raise ValueError(f"mechanism must be one of {names}; got {self.mechanism!r}")
        n = v.integer("n", self.n, lo=1)
        object.__setattr__(self, "n", n)
        if self.sampling is not None:
            if not isinstance(self.sampling, (CheckIn, WithoutReplacement)):
                raise ValueError("sampling must be None, CheckIn(rate) or WithoutReplacement(size); "
                                 f"got {self.sampling!r}")
            if isinstance(self.sampling, WithoutReplacement) and self.sampling.size > n:
                raise ValueError(f"sampling.size must be an integer in [1, n={n}]; "
                                 f"got {self.sampling.size!r}")
        object.__setattr__(self, "reports_per_user",
                           v.integer("reports_per_user", self.reports_per_user, lo=1))
        object.__setattr__(self, "dummies", v.integer("dummies", self.dummies, lo=0))
        if self.honest is not None:
            # The victim is honest, so h ≥ 1; h = n is every user honest (the default).
            try:
                h = v.integer("honest", self.honest, lo=1, hi=n)
            except ValueError:
                raise ValueError(f"honest must be an integer in [1, n={n}] (the honest users, "
                                 f"the victim included) or None; got {self.honest!r}") from None
            object.__setattr__(self, "honest", h)
        if self.dummy_distribution is not None:
            object.__setattr__(self, "dummy_distribution",
                               _dummy_distribution(self.mechanism, self.dummy_distribution,
                                                   self.dummies))

    @property
    def is_deployment(self) -> bool:
        """True when a deployment field is set (k > 1 reports, dummies, or fewer honest users
        than n): the bounds answer it through ``shuffledp.accounting.deployment`` reductions."""
        return (self.reports_per_user != 1 or self.dummies != 0
                or (self.honest is not None and self.honest != self.n))

    def __repr__(self) -> str:
        # Deployment fields only when set, so plain protocols print as they always did.
        s = f"Shuffle(mechanism={self.mechanism!r}, n={self.n!r}, sampling={self.sampling!r}"
        if self.reports_per_user != 1:
            s += f", reports_per_user={self.reports_per_user!r}"
        if self.dummies:
            s += f", dummies={self.dummies!r}"
        if self.honest is not None:
            s += f", honest={self.honest!r}"
        if self.dummy_distribution is not None:
            s += f", dummy_distribution={self.dummy_distribution!r}"
        return s + ")"

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
        if self.reports_per_user != 1:
            s += f", {self.reports_per_user} reports per user shuffled together"
        if self.dummies and self.dummy_distribution is not None:
            dist = (f"the {self.dummy_distribution} distribution"
                    if isinstance(self.dummy_distribution, str) else "a given distribution")
            s += f", {self.dummies} dummy reports drawn from {dist} over the outputs"
        elif self.dummies:
            s += f", {self.dummies} dummy reports on public inputs"
        if self.honest is not None and self.honest != self.n:
            s += (f", {self.honest} honest users (the other {self.n - self.honest} collude "
                  "with the adversary)")
        return s


def _dummy_distribution(mech, dist, dummies):
    """``dummy_distribution`` checked: "uniform", "blanket" or a tuple of probabilities."""
    from .mechanisms import ENCODERS, RandomizedResponse, Randomizer
    finite = isinstance(mech, (RandomizedResponse, Randomizer))
    if dummies == 0:
        raise ValueError("dummy_distribution needs dummies > 0 (the dummy reports it "
                         f"describes); got dummies = 0, dummy_distribution = {dist!r}")
    if isinstance(dist, str):
        d = dist.strip().lower()
        if d == "uniform" and finite:
            return d
        if d == "blanket" and isinstance(mech, (RandomizedResponse, Randomizer) + ENCODERS):
            return d
        if d in ("uniform", "blanket"):
            kinds = ("RandomizedResponse or Randomizer" if d == "uniform" else
                     "a concrete randomizer (RandomizedResponse, Randomizer, OUE, RAPPOR, "
                     "HadamardResponse, LocalHashing)")
            raise ValueError(f"dummy_distribution {d!r} needs a mechanism with known outputs: "
                             f"{kinds}; got {mech!r}")
        raise ValueError("dummy_distribution must be 'uniform', 'blanket' or a list of "
                         f"probabilities over the mechanism's outputs; got {dist!r}")
    if not finite:
        raise ValueError("dummy_distribution as a list of probabilities needs a "
                         f"RandomizedResponse or a Randomizer (finite outputs); got {mech!r}")
    k = mech.k if isinstance(mech, RandomizedResponse) else len(mech.matrix[0])
    try:
        vec = tuple(float(x) for x in dist)
    except (TypeError, ValueError):
        raise ValueError("dummy_distribution must be 'uniform', 'blanket' or a list of "
                         f"{k} probabilities; got {dist!r}") from None
    if len(vec) != k or any(not (0.0 <= x <= 1.0) for x in vec) or abs(sum(vec) - 1.0) > 1e-9:
        raise ValueError(f"dummy_distribution must be {k} probabilities (one per output of "
                         f"the mechanism, each in [0, 1], summing to 1); got {dist!r}")
    return vec
