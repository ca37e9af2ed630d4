"""The contract every bound obeys, and the registry the accountant loops over.

A bound is a small object with an id, a kind and a reference. It answers "do I apply to
this protocol, and if not, why?" (``check``) and offers one or more *views*:

* an RDP view: ``rdp(proto, orders)`` — per-round values at integer orders ≥ 2;
* a single-round (ε, δ) view: ``delta_one(proto, eps)`` and ``epsilon_one(proto, delta)``.

* a dominating pair: ``pld_atoms(proto) -> (logp, logq, tail_mass)`` (optional method).

* a family of pairs indexed by ε0 (trimmed victims): ``family(proto, rounds)`` returning a
  ``shuffledp.core.views.FamilyView`` (optional method).

``views(proto)`` wraps those methods as the views of ``shuffledp.core.views`` (the adapter: a
bound written against the methods above needs nothing more). How T rounds combine is not
decided here: the one selection loop (``shuffledp.accounting.select``) asks every registered composer
(``shuffledp.compose``) whether it accepts the bound's views, runs the routes, and picks
the answer. A bound only *says* things to it: ``preferred_route``, ``order_routes``,
``proven_floor``, ``route_cost_reason``, ``route_details``, ``dominated_by``,
``annotate``, and routes of its own (``extra_routes`` answered by ``own_route``).
Composition theorems give upper bounds only: the composers refuse lower and estimate views
(the PLD composer takes a lower bound's ``pld_atoms`` only when ``pld_is_instance`` says
they are one instance's output pair).

Kinds: ``upper`` is a guarantee, rounded up; ``lower`` is what
some dataset/randomizer provably leaks; ``estimate`` is neither. A converted RDP *lower*
curve is not a lower bound on ε(δ) — it is labelled ``estimate`` ("the best any RDP analysis
could do").
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..compose import conversions as _rdp
from ..core.views import Ask, Outcome
from ..core.errors import NotApplicableError
from ..numerics import bisect_certified

__all__ = ["Bound", "PairBound", "Outcome", "CannotBeat", "register", "get", "all_bounds", "ids"]


#: Largest T at which the default search evaluates the KOV15 and PLD routes (cost bounds).
KOV15_MAX_ROUNDS = 10**5
PLD_MAX_ROUNDS = 10**6


class CannotBeat(NotApplicableError):
    """Every route of a bound was skipped: a proven floor on its value is above ``beat``."""

    def __init__(self, floor: float, beat: float | None, why: str | None = None,
                 exact: bool = False):
        # ``exact``: the floor is on the bound's exact value (its pair's own curve), not
        # only on its routes' values, so bounds it dominates are at or above it too.
        self.floor, self.beat, self.exact = float(floor), beat, exact
        if why is not None:
            msg = f"skipped: cannot beat {beat:.6g}: {why}"
        elif beat is not None:
            msg = f"skipped: cannot beat {beat:.6g} (its value is at least {floor:.6g})"
        else:
            msg = f"skipped: its value is at least {floor:.6g}"
        super().__init__(msg)


class Bound:
    """Base class; see the module docstring."""

    id: ClassVar[str] = ""
    kind: ClassVar[str] = "upper"
    #: False for bounds that may never be the accountant's answer ([R]/[U] tags, estimates).
    default: ClassVar[bool] = True
    title: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    #: Short name of the class of randomizers the bound's numbers hold for (a key of
    #: ``shuffledp.core.results.SCOPES``). ``valid_for`` must never claim more than it; the
    #: contract tests check every registered bound against it.
    scope: ClassVar[str] = ""
    #: Neighbouring relations the bound is derived for (``shuffledp.core.relations``). A bound
    #: is refused under any other relation (``relation_reason``).
    relations: ClassVar[tuple] = ("replace_one",)

    def relation_reason(self, relation: str, named: bool = True) -> str | None:
        """None when the bound is derived for ``relation``, else the reason it is refused
        ("<bound> is derived for ... only"; ``named=False`` drops the bound's id, so that a
        table lists every refused bound on one line)."""
        if relation in self.relations:
            return None
        rels = ("replace-one" if self.relations == ("replace_one",)
                else " and ".join(self.relations))
        return (f"{self.id} is " if named else "") + f"derived for {rels} neighbours only"

    # ----- applicability -------------------------------------------------------------
    def check(self, proto) -> str | None:
        """None if the bound applies to ``proto``, otherwise a short reason."""
        raise NotImplementedError

    def valid_for(self, proto) -> str:
        """The class of randomizers (and datasets) the result is valid for."""
        raise NotImplementedError

    def label(self, proto, kind: str) -> tuple[str, str]:
        """(scope, valid_for) of an outcome of ``kind`` produced by this bound.

        Normally the bound's own. A lower bound's RDP curve converted to (ε, δ) is only an
        estimate (e.g. for T > 1 without an instance PLD): it must not keep the lower
        bound's "this much leaks" sentence.
        """
        if kind == self.kind or kind == "upper":
            return self.scope, self.valid_for(proto)
        if self.kind == "lower" and kind == "estimate":
            return ("rdp-estimate",
                    "estimate: the RDP curve of a lower-bound instance converted to "
                    "(epsilon, delta) — the best any RDP-based analysis could certify for that "
                    f"instance, not a lower bound ({self.valid_for(proto).split(':')[0]})")
        return kind, f"{kind}: {self.valid_for(proto)}"

    # ----- dominance -----------------------------------------------------------------
    def dominated_by(self, other: "Bound", proto, rounds: int = 1, ask=None) -> str | None:
        """Why ``other``'s exact privacy curve is at or below this bound's for ``proto``
        over ``rounds`` rounds (the accountant then does not evaluate this bound once
        ``other`` has answered), or None. ``ask``: the question (``EpsilonAt`` or
        ``DeltaAt``; None: any), for claims measured on one kind only. Default: no such
        relation is known."""
        return None

    def dominance_rank(self, proto) -> float:
        """Sort key among equally costly bounds: bounds that may dominate others first."""
        return 0.0

    #: True when ``epsilon_one`` is a closed form (microseconds): the KOV15 composer's floor
    #: (``composers.kov15._homogeneous_floor``) then evaluates it at the per-round δ cap
    #: instead of bisecting.
    cheap_epsilon_one: ClassVar[bool] = False

    #: True when evaluating the bound costs up to seconds at large n (exact pair sums,
    #: instance sums): the selection loop tries it after the closed forms and cheap curves,
    #: so that its proven floor meets a good answer first (``select._cheap_first``).
    costly: ClassVar[bool] = False
    #: True when the bound's T-round value (T > 1) comes from the optimal composition of its
    #: per-round (ε, δ) curve (``kov15``: a search over δ splits, 10–30 ms at T in the
    #: thousands) and the exact pair bounds beat it by far on almost every question: for
    #: T > 1 rounds of every user, without a target, the loop asks it after those, where
    #: kov15's proven floor meets the good answer and skips it (``select._cheap_first``).
    after_exact: ClassVar[bool] = False

    def likely_first(self, proto) -> bool:
        """Order only: True when this bound is usually the tightest for ``proto``, so that
        it runs before the other costly bounds and their proven floors meet its answer.
        Which bound runs first never changes the answer (every skip is proven)."""
        return False

    # ----- views ---------------------------------------------------------------------
    # A view's existence is the capability: a bound has an RDP view when it defines
    # ``rdp``, a single-round (ε, δ) view when it defines ``delta_one`` (no flags to keep
    # in step with the methods).
    @property
    def has_rdp(self) -> bool:
        return type(self).rdp is not Bound.rdp

    @property
    def has_dp(self) -> bool:
        return type(self).delta_one is not Bound.delta_one

    def rdp(self, proto, orders: np.ndarray) -> np.ndarray:
        """Per-round RDP at integer orders ≥ 2 (upper bounds already rounded up)."""
        raise NotImplementedError(f"bound {self.id!r} has no RDP view")

    def max_order(self, proto) -> int:
        """Largest order the RDP view accepts for this protocol."""
        return _rdp.DEFAULT_MAX_ORDER

    def delta_one(self, proto, eps: float) -> float:
        """Single-round δ at ε."""
        raise NotImplementedError(f"bound {self.id!r} has no (epsilon, delta) view")

    def eps_hi(self, proto) -> float:
        """An ε at which the single-round δ is known to be 0 (bracket for root finding);
        inf when there is none (mechanisms without a finite ε0, e.g. the Gaussian)."""
        return math.inf if proto.eps0 is None else float(proto.eps0)

    def epsilon_one(self, proto, delta: float) -> float:
        """Single-round ε for a δ, at the certified end of a bisection on ``delta_one``.

        Upper bounds: the smallest ε found with δ(ε) ≤ δ. Lower bounds: the largest ε found
        with δ(ε) > δ (no mechanism containing the instance is (ε', δ)-DP for ε' below it).
        """
        hi = self.eps_hi(proto)
        if self.kind == "lower":
            if self.delta_one(proto, 0.0) <= delta:
                return 0.0
            return bisect_certified(lambda e: self.delta_one(proto, e) > delta, 0.0, hi,
                                    want="largest", xtol=1e-12, rtol=1e-10)
        if self.delta_one(proto, 0.0) <= delta:
            return 0.0
        return bisect_certified(lambda e: self.delta_one(proto, e) <= delta, 0.0, hi,
                                want="smallest", xtol=1e-12, rtol=1e-10)

    # ----- the accountant's questions ------------------------------------------------
    def views(self, proto, **kw):
        """The views of one round of ``proto`` (an adapter over the methods above)."""
        from ..core.views import BoundViews
        return BoundViews(self, proto, **kw)

    def extra_routes(self, rounds: int) -> list[str]:
        """Routes of the bound's own beside the composers (answered by ``own_route``)."""
        return []

    def own_route(self, proto, ask: Ask, rounds: int, route: str) -> Outcome:
        """One of ``extra_routes``: the raw value, before rounding."""
        raise NotImplementedError(f"bound {self.id!r} has no route {route!r} of its own")

    def route_details(self, details: dict, proto, ask: Ask, rounds: int, route: str,
                      value: float) -> None:
        """Add what a route's outcome should show beside the composer's own details (e.g.
        the engine's certified error); ``value`` is the route's raw value."""

    def order_routes(self, routes: list[str]) -> list[str]:
        """The order the default search tries the routes in (default: the registry's). Order
        never changes the answer; a route that usually answers best, tried first, gives the
        others a value to beat (their floors then skip them)."""
        return routes

    def pure_epsilon(self, proto) -> float | None:
        """The single-round ε at δ = 0 when finite (the output is pure DP), else None.

        Default: ``eps_hi(proto)`` if ``delta_one`` is exactly 0 there. KOV15 then also
        tries δ1 = 0 per round (its optimal homogeneous statement with pure-DP rounds).
        """
        if not self.has_dp:
            return None
        hi = self.eps_hi(proto)
        if hi is None or not math.isfinite(hi):
            return None
        return float(hi) if self.delta_one(proto, float(hi)) == 0.0 else None

    #: Lower bounds only: True when ``pld_atoms`` is the output pair of one instance (a
    #: dataset pair), so its T-fold product is exactly what T rounds leak on that instance.
    pld_is_instance: bool = False
    #: The swap of the victim's inputs maps P to Q: one PLD direction suffices.
    pld_symmetric: bool = False

    #: True when one RDP order costs ~0.1 s (exact pair sums): the search uses the sparse grid.
    rdp_expensive: bool = False

    def _order_grid(self) -> str:
        if self.rdp_expensive:
            return "sparse"
        return "dense" if self.kind == "upper" else "coarse"

    def preferred_route(self, rounds: int) -> str | None:
        """The one route the default search uses for ``rounds`` rounds, when the bound knows
        it is below every other (e.g. one round of an exact curve is below any conversion of
        it); None: try every route."""
        return None

    def proven_floor(self, proto, ask: Ask, rounds: int, beat: float):
        """``(reason, exact)`` when this bound's value is proven at or above ``beat`` before
        any route runs (``exact``: the proof is on the bound's exact curve, so bounds it
        dominates are at or above it too), else None. The selection loop asks it only for
        the default search with an explicit value to beat (never during calibration's
        yes/no questions, where a floor at the target gives the search no information)."""
        return None

    def annotate(self, details: dict, proto, rounds: int) -> None:
        """Add what a user should know about how the answer was computed (e.g. the number
        of users the pair was built for) to the chosen outcome's ``details``."""

    def route_cost_reason(self, proto, rounds: int, route: str) -> str | None:
        """Why a route is not evaluated for this (protocol, rounds) although it applies: its
        cost would be unbounded here (the other routes and bounds answer). None: evaluate.
        Only the default search consults it; a route asked for by name always runs."""
        if route == "kov15" and rounds > KOV15_MAX_ROUNDS:
            return (f"not evaluated for rounds > {KOV15_MAX_ROUNDS:.0e}: its split search "
                    "costs ~30 root finds over a window of ~sqrt(T) terms")
        if route == "pld" and rounds > PLD_MAX_ROUNDS:
            return (f"not evaluated for rounds > {PLD_MAX_ROUNDS:.0e}: the composed grid "
                    "outgrows its bin budget")
        return None

    def rdp_curve(self, proto, orders: np.ndarray) -> np.ndarray:
        """RDP at arbitrary real orders > 1 (integer orders exactly, others by convexity)."""
        orders = np.asarray(orders, dtype=float)
        ints = orders == np.round(orders)
        out = np.empty(orders.shape)
        if np.any(ints):
            out[ints] = self.rdp(proto, orders[ints].astype(np.int64))
        if np.any(~ints):
            if self.kind != "upper":
                raise NotApplicableError(
                    f"bound {self.id!r} is a {self.kind} bound: the convexity chord between "
                    "integer orders only interpolates upper bounds; ask for integer orders")
            real = orders[~ints]
            lo = np.maximum(np.floor(real), 2).astype(np.int64)
            hi = np.maximum(np.ceil(real), 2).astype(np.int64)
            grid = np.unique(np.concatenate([lo, hi]))
            out[~ints] = _rdp.at_real_orders(grid, self.rdp(proto, grid), real)
        return out



class PairBound(Bound):
    """A bound whose single-round numbers are one dominating pair's own (the Pair protocol,
    ``shuffledp.pairs.base``): ``pair(proto)`` builds it (cached by the pair's module), and
    δ(ε), ε(δ), the bracket ``eps_hi`` and the PLD atoms are the pair's, so every bound
    given by a pair answers them the same way (clone pairs, add/remove pairs)."""

    def pair(self, proto):
        raise NotImplementedError

    def delta_one(self, proto, eps):
        return self.pair(proto).delta(eps)

    def epsilon_one(self, proto, delta):
        return self.pair(proto).epsilon(delta)

    def eps_hi(self, proto):
        return self.pair(proto).eps_hi()

    def pld_atoms(self, proto):
        return self.pair(proto).pld_atoms()


_REGISTRY: dict[str, Bound] = {}


def register(cls):
    """Class decorator: add one instance of the bound to the registry."""
    if not cls.id or cls.id in _REGISTRY:
        raise RuntimeError(f"bound id {cls.id!r} is empty or registered twice")
    if cls.kind not in ("upper", "lower", "estimate"):
        raise RuntimeError(f"bound {cls.id!r} has kind {cls.kind!r}")
    _REGISTRY[cls.id] = cls()
    return cls


def ids() -> list[str]:
    return list(_REGISTRY)


def all_bounds() -> list[Bound]:
    return list(_REGISTRY.values())


def get(bound_id: str) -> Bound:
    try:
        return _REGISTRY[bound_id]
    except KeyError:
        raise ValueError(f"bound must be one of {', '.join(_REGISTRY)}; got {bound_id!r}") from None
