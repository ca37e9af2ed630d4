"""Views of one round: what a bound (or a central mechanism) can tell a composer.

A *view* is one way of describing a single round's privacy: an RDP curve, a single-round
(ε, δ) curve, or a finite dominating pair whose privacy-loss distribution (PLD) can be
convolved. A view carries the kind of the bound that produced it (``upper`` / ``lower`` /
``estimate``); composers (``shuffledp.composers``) decide what they can combine.

``BoundViews`` is an adapter over the methods every ``Bound`` already has (``rdp``,
``max_order``, ``delta_one``, ``epsilon_one``, ``eps_hi``, ``pure_epsilon``,
``pld_atoms``): a bound written in that style gets its views with no change. The
existence of a view is the capability: ``views.rdp is None`` means "no RDP view".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Optional, Union

import numpy as np

__all__ = ["Outcome", "RdpView", "DpView", "PldView", "BoundViews", "rr_pair_atoms",
           "EpsilonAt", "DeltaAt", "Ask"]


@dataclass(frozen=True)
class EpsilonAt:
    """The question "the smallest certified ε at this δ" (ε in nats, δ in (0, 1))."""

    delta: float
    #: What the answer is (``Result.question``).
    solves: ClassVar[str] = "epsilon"

    @property
    def given(self) -> float:
        return self.delta


@dataclass(frozen=True)
class DeltaAt:
    """The question "the smallest certified δ at this ε"."""

    epsilon: float
    solves: ClassVar[str] = "delta"

    @property
    def given(self) -> float:
        return self.epsilon


#: A question of the accountant: the number given and what is solved for, in one record
#: (never a bare float plus a string saying which it is).
Ask = Union[EpsilonAt, DeltaAt]


@dataclass(frozen=True)
class Outcome:
    """One composer's (or route's) answer: value, kind, composition name, details."""

    value: float
    kind: str
    composition: str
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RdpView:
    """Per-round RDP at integer orders ≥ 2 (upper bounds already rounded up)."""

    curve: Callable[[np.ndarray], np.ndarray]
    max_order: int
    grid: str = "dense"          # order-search grid: "dense" | "coarse" | "sparse"
    #: Certified LOWER bounds on the exact RDP the curve bounds, at real orders ≥ 2 (a pair
    #: the bound's pair dominates), or None: lets the RDP composer prove that no order can
    #: beat a known value before evaluating the (costly) curve.
    floor: Optional[Callable[[np.ndarray], np.ndarray]] = None


@dataclass(frozen=True)
class DpView:
    """Single-round ε(δ) and δ(ε), a bracket where δ = 0, and the pure-DP ε if finite."""

    epsilon_of: Callable[[float], float]
    delta_of: Callable[[float], float]
    eps_hi: Callable[[], float]
    pure_epsilon: Callable[[], Optional[float]]
    #: ``epsilon_of`` is a closed form (microseconds), not a root search: a floor may call it.
    cheap_epsilon: bool = False


@dataclass(frozen=True)
class PldView:
    """A finite dominating pair (or an instance pair for lower bounds).

    ``atoms()`` returns ``(logp, logq, tail_mass)`` as ``Bound.pld_atoms`` does;
    ``build(discretization, count)`` (central mechanisms) returns a dp_accounting
    ``PrivacyLossDistribution`` of ``count`` rounds, pessimistic. Exactly one is set.
    ``derived`` marks a pair built from a pure-DP single-round view (randomized response at
    that ε dominates every ε-DP mechanism), offered only when entries are mixed.
    """

    atoms: Optional[Callable[[], tuple]] = None
    build: Optional[Callable[[float, int], object]] = None
    is_instance: bool = False
    derived: bool = False
    #: The pair dominates a symmetric pair in its P‖Q direction (``composition.pld_delta``).
    symmetric: bool = False


def rr_pair_atoms(eps: float):
    """Binary randomized response at ε: a dominating pair of every ε-DP mechanism
    (Kairouz, Oh, Viswanath 2015, arXiv:1311.0776, Thm 2.4 with δ = 0)."""
    la = -math.log1p(math.exp(-eps))      # log(e^ε / (1 + e^ε))
    lb = -math.log1p(math.exp(eps))       # log(1 / (1 + e^ε))
    return np.array([la, lb]), np.array([lb, la]), 0.0


class BoundViews:
    """The views of one round of ``proto`` under ``bound`` (an adapter, computed lazily)."""

    def __init__(self, bound, proto, *, derive_pld: bool = False):
        self.bound = bound
        self.proto = proto
        self.kind = bound.kind
        self.source = bound.id
        self._derive_pld = derive_pld

    @property
    def rdp(self) -> Optional[RdpView]:
        b, p = self.bound, self.proto
        if not b.has_rdp:
            return None
        fl = getattr(b, "rdp_floor", None)
        return RdpView(lambda o: b.rdp(p, o), int(b.max_order(p)), b._order_grid(),
                       None if fl is None else (lambda lam: fl(p, lam)))

    @property
    def dp(self) -> Optional[DpView]:
        b, p = self.bound, self.proto
        if not b.has_dp:
            return None
        return DpView(lambda d: b.epsilon_one(p, d), lambda e: b.delta_one(p, e),
                      lambda: b.eps_hi(p), lambda: b.pure_epsilon(p),
                      bool(b.cheap_epsilon_one))

    @property
    def pld(self) -> Optional[PldView]:
        b, p = self.bound, self.proto
        if hasattr(b, "pld_atoms"):
            return PldView(atoms=lambda: b.pld_atoms(p),
                           is_instance=bool(getattr(b, "pld_is_instance", False)),
                           symmetric=bool(getattr(b, "pld_symmetric", False)))
        if self._derive_pld and self.kind == "upper" and b.has_dp:
            try:
                e = b.pure_epsilon(p)
            except (NotImplementedError, ArithmeticError, ValueError):
                e = None
            if e is not None and math.isfinite(e):
                return PldView(atoms=lambda: rr_pair_atoms(float(e)), derived=True)
        return None

    def __repr__(self):
        return f"BoundViews({self.source!r}, {self.proto.describe()!r})"
