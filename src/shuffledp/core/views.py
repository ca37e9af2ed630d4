"""Views of one round: what a bound (or a central mechanism) can tell a composer.

A *view* is one way of describing a single round's privacy: an RDP curve, a single-round
(ε, δ) curve, or a finite dominating pair whose privacy-loss distribution (PLD) can be
convolved. A view carries the kind of the bound that produced it (``upper`` / ``lower`` /
``estimate``); composers (``shuffledp.compose``) decide what they can combine.

``BoundViews`` is an adapter over the methods every ``Bound`` already has (``rdp``,
``max_order``, ``delta_one``, ``epsilon_one``, ``eps_hi``, ``pure_epsilon``,
``pld_atoms``): a bound written in that style gets its views with no change. The
existence of a view is the capability: ``views.rdp is None`` means "no RDP view".
A bound whose pairs come in a family indexed by a parameter (the trimmed victim's ε0) gives
a ``FamilyView`` instead (``views.family``): any composer composes the member the family
chooses for it (``shuffledp.accounting.select.family_answer``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Optional, Union

import numpy as np

__all__ = ["Outcome", "RdpView", "DpView", "PldView", "FamilyView", "BoundViews",
           "rr_pair_atoms", "EpsilonAt", "DeltaAt", "Ask"]


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
    #: A cheap lower bound on the tail mass ``atoms()`` returns (without building them), or
    #: None: the PLD composer's floor (an answer of ∞ when the tails alone exceed δ).
    tail_floor: Optional[Callable[[], float]] = None


def _left_after_charge(member, delta: float, rounds: int) -> float:
    """The δ a T-round ε question leaves to the pair: δ − charge(T), the charge enlarged by
    1e-12 relative (its own floating-point error must never be taken from the pair)."""
    return delta - member.charge(rounds) * (1 + 1e-12)


@dataclass(frozen=True)
class FamilyView:
    """A family of single-round views indexed by one real parameter x, every member valid.

    The trimmed-victim bounds (docs/trimmed-clone.md) give one dominating pair per ε0 of
    the (ε0, δ0)-LDP randomizer, each with its own per-round δ charge; any ε0 gives a valid
    bound, the search only makes it tight. A composer composes one member; which member is
    the bound's saying (``choose``), so every registered composer reaches the family.

    * ``member(x)``: the views of one round at x (``pairs.adapter.PairViews``: rdp / dp /
      pld views and ``charge(T)``), or None where no pair exists at x;
    * ``choose(ask, rounds, route, value)``: the x to compose for ``route`` (a composer's
      name); ``value(x, route=None)`` is the composed T-round value at x with the charge
      included (``route`` None: the composer asked), so a search may rank x by any
      composer's value or by a cheaper proxy of its own;
    * ``probe()``: one member (its views' existence is what composers are asked about);
    * ``left(member, delta, rounds)``: the δ a T-round ε question leaves to the pair
      (default δ − charge(T)·(1 + 1e-12)); a δ question adds ``charge(T)`` (capped at 1);
    * ``details(x)``: what to show with an answer at x (ε0, δ0, ...).

    A bound gives its family for the rounds it will be composed over
    (``Bound.family(proto, rounds)``): it may build the pairs for fewer users when T is
    large (cost; more users only help, so fewer is valid).

    ``cache`` holds composed values by (route, question, rounds, x): the routes of one
    question share their searches' points (the selection loop, ``shuffledp.accounting.select``).
    """

    member: Callable[[float], object]
    choose: Callable[..., float]
    probe: Callable[[], object]
    details: Callable[[float], dict]
    left: Callable[[object, float, int], float] = _left_after_charge
    #: Set: an infinite ε (no ε0 gives a usable pair) refuses the bound with this reason.
    infinite_reason: Optional[str] = None
    cache: dict = field(default_factory=dict, compare=False, repr=False)


def rr_pair_atoms(eps: float):
    """Binary randomized response at ε: a dominating pair of every ε-DP mechanism
    (Kairouz, Oh, Viswanath 2015, arXiv:1311.0776, Thm 2.4 with δ = 0)."""
    la = -math.log1p(math.exp(-eps))      # log(e^ε / (1 + e^ε))
    lb = -math.log1p(math.exp(eps))       # log(1 / (1 + e^ε))
    return np.array([la, lb]), np.array([lb, la]), 0.0


class BoundViews:
    """The views of one round of ``proto`` under ``bound`` (an adapter, computed lazily)."""

    def __init__(self, bound, proto, *, derive_pld: bool = False, rounds: int = 1):
        self.bound = bound
        self.proto = proto
        self.rounds = rounds
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
    def family(self) -> Optional[FamilyView]:
        b = self.bound
        return b.family(self.proto, self.rounds) if hasattr(b, "family") else None

    @property
    def pld(self) -> Optional[PldView]:
        b, p = self.bound, self.proto
        if hasattr(b, "pld_atoms"):
            tf = getattr(b, "pld_tail_floor", None)
            return PldView(atoms=lambda: b.pld_atoms(p),
                           is_instance=bool(getattr(b, "pld_is_instance", False)),
                           symmetric=bool(getattr(b, "pld_symmetric", False)),
                           tail_floor=None if tf is None else (lambda: tf(p)))
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
