"""The one selection loop: every question of the accountant is answered here.

``sd.epsilon`` / ``sd.delta`` (a one-entry ledger), a ledger of several entries
(``sd.Accountant``) and calibration's yes/no questions all come to ``select``: it loops over
the registered bounds × the registered composers (``shuffledp.bounds``,
``shuffledp.compose``), skips what provably cannot beat the best answer so far, and
returns a ``Result`` (one entry) or the composers' rows (several entries).

Everything that steers the search is an explicit argument: ``beat`` (the value an answer
must beat to matter), ``target`` (calibration's "is the answer ≤ target?"), ``exact_floors``
(whether a bound's proven floor on its exact value may skip it). The question is an
``EpsilonAt(delta)`` or ``DeltaAt(epsilon)`` record (``shuffledp.core.views``).

Composition theorems give upper bounds only; the answer is the smallest *upper* bound among
the bounds allowed to be the default answer (reconstructed or unconfirmed formulas and
estimates never are), and every candidate is shown with its kind and class.
"""

from __future__ import annotations

import contextlib
import math
import time

from dataclasses import replace

import numpy as np

from .. import compose as _composers
from ..compose import conversions as _rdp
from ..bounds import all_bounds, get
from ..core._blas import single_threaded_blas
from ..numerics import keep_freed_memory
from ..bounds.base import Bound, CannotBeat
from ..core.errors import NotApplicableError
from ..numerics import round_up
from ..core.relations import REPLACE_ONE, adjacency_text, refuse_everyone_reports
from ..core.relations import relation as _relation
from ..core.results import SCOPE_RANK, Candidate, RdpCurve, Result
from ..core.views import Ask, EpsilonAt, Outcome

__all__ = ["bound_answer", "family_answer", "routes_of", "select", "select_rdp",
           "checked_relation", "applicable", "named_bound", "failure_reason",
           "bound_failure", "under", "NOT_ASKED"]


# ------------------------------------------------------------------------------------------
# One bound: its routes (composers, or routes of its own), floors, the tightest of its kind
# ------------------------------------------------------------------------------------------
def bound_answer(b: Bound, proto, ask: Ask, rounds: int = 1, composition: str | None = None,
                 *, beat: float | None = None, exact_floors: bool = True) -> Outcome:
    """``rounds`` rounds of ``proto`` under bound ``b``: the tightest route of the bound's kind
    (upper values rounded up). ``composition`` names one route; ``beat``: the best upper
    answer known elsewhere — routes whose proven floor is at or above it are skipped, and
    ``CannotBeat`` is raised if every route is. ``exact_floors`` (False during
    calibration's yes/no questions): whether the bound's proven floor on its own exact value
    may skip it before any route runs."""
    if composition is None:
        composition_used = b.preferred_route(rounds)
    else:
        composition_used = composition
    searching = composition_used is None
    if (searching and exact_floors and beat is not None and math.isfinite(beat)
            and beat > 0.0):
        proof = b.proven_floor(proto, ask, rounds, beat)
        if proof is not None:
            why, exact = proof
            raise CannotBeat(beat, beat, why=why, exact=exact)
    o = _run_routes(b, proto, ask, rounds, composition_used, beat, searching)
    b.annotate(o.details, proto, rounds)
    if o.kind == "upper":
        v = float(round_up(o.value))
        o = Outcome(v if isinstance(ask, EpsilonAt) else min(1.0, v), o.kind,
                    o.composition, o.details)
    return o


def routes_of(b: Bound, proto, rounds: int, views=None) -> list[str]:
    """The routes ``b`` offers for ``rounds`` rounds of ``proto``: the registered composers
    that accept its views of one round (for a family of views, a member's: every member has
    the same views), then the routes of the bound's own, in the order the bound says."""
    views = views or b.views(proto, rounds=rounds)
    fam = views.family
    one = views if fam is None else fam.probe()
    parts = [(one, rounds)]
    r = ([] if one is None else
         [c.name for c in _composers.all_composers() if c.accepts(parts) is None])
    r.extend(x for x in b.extra_routes(rounds) if x not in r)
    return b.order_routes(r)


def _run_routes(b, proto, ask, rounds, composition, beat, searching) -> Outcome:
    views = b.views(proto, rounds=rounds)
    routes = routes_of(b, proto, rounds, views)
    if composition is not None:
        if composition not in routes:
            raise NotApplicableError(
                f"bound {b.id!r} does not offer composition {composition!r} for "
                f"rounds={rounds}; it offers {routes or 'none'}")
        routes = [composition]
    if not routes:
        raise NotApplicableError(f"bound {b.id!r} offers no route for rounds={rounds}")
    prune_ok = b.kind == "upper" and searching
    fam = views.family
    outs, pruned, costly = [], {}, {}
    for r in routes:
        why = b.route_cost_reason(proto, rounds, r) if searching else None
        if why:
            costly[r] = why
            continue
        target = _smallest_upper(outs, beat) if prune_ok else None
        own = r not in _composers.ids()
        if target is not None and fam is None and not own:
            # a composer's floor speaks for its own answer over the bound's views
            comp, parts = _composers.get(r), [(views, rounds)]
            fl = _floor(comp, parts, ask, target) if comp.accepts(parts) is None else None
            if fl is not None:
                pruned[r] = (fl, target)
                continue
        try:
            if own:
                o = b.own_route(proto, ask, rounds, r)
            elif fam is not None:
                try:
                    o = family_answer(_composers.get(r), fam, ask, rounds, beat=target,
                                      floor_beat=target)
                except NotApplicableError as exc:
                    # this route found no usable member (the other routes may)
                    costly[r] = str(exc)
                    continue
            else:
                o = _composers.get(r).answer([(views, rounds)], ask, beat=target)
                o = Outcome(o.value, o.kind, o.composition, dict(o.details))
                b.route_details(o.details, proto, ask, rounds, r, o.value)
        except _rdp.CannotBeatOrders as exc:
            pruned[r] = (exc.floor, exc.beat)
            continue
        if not (isinstance(o.value, float) and not math.isnan(o.value)):
            raise ArithmeticError(f"bound {b.id!r} route {r!r} produced {o.value!r}")
        outs.append(o)
    if not outs:
        if pruned:
            raise CannotBeat(min(f for f, _ in pruned.values()), beat)
        raise NotApplicableError("; ".join(f"route {k}: {v}" for k, v in costly.items()))
    best = _pick(b, outs)
    if pruned or costly:
        best.details["routes_skipped"] = {
            k: f"skipped: cannot beat {t:.6g} (its value is at least {f:.6g})"
            for k, (f, t) in pruned.items()}
        best.details["routes_skipped"].update(costly)
    return best


# ------------------------------------------------------------------------------------------
# A family of views (one member per parameter): any composer composes a member
# ------------------------------------------------------------------------------------------
#: Composed values a family keeps at most (one question's searches use a few dozen).
_FAMILY_CACHE_MAX = 4096


def _member_value(fam, comp, x: float, ask: Ask, rounds: int, beat=None):
    """(T-round value at member x with its charge, the composer's Outcome or None).

    ε question: the composer's ε at the δ the charge leaves (∞ when none is left or no
    pair exists at x). δ question: the composer's δ plus the charge, capped at 1 (1 when no
    pair exists). Kept in ``fam.cache``: a search and the routes after it reuse the points."""
    key = (comp.name, ask, rounds, x)
    hit = fam.cache.get(key)
    if hit is not None:
        return hit
    solves_eps = isinstance(ask, EpsilonAt)
    m = fam.member(x)
    o = None
    if m is None:
        val = math.inf if solves_eps else 1.0
    elif solves_eps:
        left = fam.left(m, ask.delta, rounds)
        if left <= 0:
            val = math.inf
        else:
            o = comp.epsilon([(m, rounds)], left, beat=beat)
            val = float(o.value)
    else:
        o = comp.delta([(m, rounds)], ask.epsilon)
        val = float(o.value)
        if m.charged:
            val = min(1.0, val + m.charge(rounds))
    if len(fam.cache) >= _FAMILY_CACHE_MAX:
        fam.cache.clear()           # a long calibration: keep memory bounded
    fam.cache[key] = (val, o)
    return val, o


def family_answer(comp, fam, ask: Ask, rounds: int, *, beat: float | None = None,
                  floor_beat: float | None = None) -> Outcome:
    """``rounds`` rounds of a family of views (``views.FamilyView``) composed by ``comp``:
    the member the family chooses for this composer, composed, its charge added; the value
    rounded up (ε; δ capped at 1). Any member is valid, so the choice costs tightness only.
    ``beat`` (ε questions) lets the composer stop where the chosen member cannot beat it;
    ``floor_beat``: the composer's proven floor on the chosen member is asked first, and
    ``CannotBeatOrders`` raised when it is at or above ``floor_beat``."""
    def value(x, route=None):
        c = comp if route is None else _composers.get(route)
        return _member_value(fam, c, x, ask, rounds)[0]

    x = fam.choose(ask, rounds, comp.name, value)
    if floor_beat is not None and isinstance(ask, EpsilonAt) and \
            (comp.name, ask, rounds, x) not in fam.cache:
        m = fam.member(x)
        if m is not None:
            left = fam.left(m, ask.delta, rounds)
            parts = [(m, rounds)]
            if left > 0 and comp.accepts(parts) is None:
                fl = _floor(comp, parts, EpsilonAt(left), floor_beat)
                if fl is not None:
                    raise _rdp.CannotBeatOrders(fl, floor_beat)
    val, o = _member_value(fam, comp, x, ask, rounds,
                           beat=beat if isinstance(ask, EpsilonAt) else None)
    if isinstance(ask, EpsilonAt) and math.isinf(val) and fam.infinite_reason:
        raise NotApplicableError(fam.infinite_reason)
    det = dict(o.details) if o is not None else {}
    det.update(fam.details(x))
    if isinstance(ask, EpsilonAt):
        val = float(round_up(val)) if math.isfinite(val) else math.inf
    else:
        val = float(min(1.0, round_up(val)))
    return Outcome(val, "upper", comp.name, det)


def _floor(composer, parts, ask, target) -> float | None:
    """The composer's proven floor when it is at or above ``target`` (the composer then
    cannot beat it), else None."""
    try:
        fl = composer.floor(parts, ask, target)
    except (NotApplicableError, ArithmeticError, NotImplementedError, ValueError):
        return None
    return fl if fl is not None and fl >= target else None


def _smallest_upper(outs, beat):
    """The smallest upper value known (this bound's routes so far, other bounds' ``beat``)."""
    vals = [o.value for o in outs if o.kind == "upper"]
    if beat is not None:
        vals.append(beat)
    return min(vals) if vals else None


def _pick(b, outcomes: list[Outcome]) -> Outcome:
    """The tightest outcome of the bound's own kind; estimates only if nothing else."""
    own = [o for o in outcomes if o.kind == b.kind]
    pool = own or outcomes
    if b.kind == "lower" and own:
        best = max(pool, key=lambda o: o.value)
    else:
        best = min(pool, key=lambda o: o.value)
    details = dict(best.details)
    if len(outcomes) > 1:
        details["routes"] = {o.composition: o.value for o in outcomes}
    return Outcome(best.value, best.kind, best.composition, details)


# ------------------------------------------------------------------------------------------
# Which bounds: applicability, relation, order, dominance
# ------------------------------------------------------------------------------------------
def applicable(proto, relation: str = REPLACE_ONE) -> tuple[list, list]:
    """(bounds that apply, [(id, reason)] for those that do not) under ``relation``.

    Under replace-one, bounds derived for add/remove neighbours only are left out of both
    lists (they answer another question); under add/remove every bound not derived for it
    is listed with that reason."""
    if getattr(proto, "is_deployment", False):
        # A bound answers plain protocols only; a deployment goes through its reductions
        # (shuffledp.accounting.deployment). Any path that bypasses them gets no bound (never a number
        # that silently ignores k reports, dummies or colluders).
        return [], [(b.id, "a deployment (reports_per_user, dummies or honest set) is "
                     "answered through shuffledp.accounting.deployment.reductions, not by a bound "
                     "directly") for b in all_bounds()]
    ok, no = [], []
    for b in all_bounds():
        rel_why = b.relation_reason(relation, named=False)
        if rel_why and relation == REPLACE_ONE:
            continue
        why = rel_why or b.check(proto)
        (no.append((b.id, why)) if why else ok.append(b))
    return ok, no


def named_bound(proto, bound_id, relation: str = REPLACE_ONE):
    """The bound ``bound_id`` if it applies to ``proto`` under ``relation``, else an error
    saying why and which bounds do."""
    b = get(bound_id)
    why = "; ".join(w for w in (b.check(proto), b.relation_reason(relation)) if w)
    if why:
        ok, _ = applicable(proto, relation)
        raise NotApplicableError(
            f"bound {bound_id!r} does not apply to {proto.describe()}: {why}. "
            f"Bounds that apply: {', '.join(x.id for x in ok) or 'none'}")
    return b


def _failure_what(exc: BaseException) -> str:
    if isinstance(exc, (ArithmeticError, FloatingPointError)):
        return "no certified value could be computed in floating point"
    if isinstance(exc, MemoryError):
        return "the computation needs more memory than is available"
    return "this bound could not be evaluated on this input"


def failure_reason(exc: BaseException) -> str:
    """A user-facing reason for a bound that failed on this input (not a traceback)."""
    return f"skipped: {_failure_what(exc)} ({type(exc).__name__}); not used"


def bound_failure(b, proto, exc: BaseException, relation: str = REPLACE_ONE
                  ) -> NotApplicableError:
    ok, _ = applicable(proto, relation)
    others = ", ".join(x.id for x in ok if x.id != b.id) or "none"
    return NotApplicableError(
        f"bound {b.id!r} could not certify a value for {proto.describe()}: "
        f"{_failure_what(exc)} ({type(exc).__name__}). Bounds that apply: {others}")


NOT_ASKED = ("not computed: lower bounds, estimates and comparison-only bounds are "
             "computed on request (lower=True)")


def can_answer(b) -> bool:
    """True for the bounds that may be the accountant's answer (valid, default, upper)."""
    return b.kind == "upper" and b.default


def _cheap_first(bounds, proto, rounds=1, target=None) -> list:
    """Stable order: bounds with closed forms or cheap curves first, costly ones
    (``Bound.costly``, ``Bound.rdp_expensive``: exact pair sums) last; among those, the
    usually tightest (``Bound.likely_first``), then bounds that may dominate others
    (``Bound.dominance_rank``). For T > 1 rounds of every user, and no target, the
    ``Bound.after_exact`` bounds go last: the answer is the same (the minimum over the same
    candidates, each skipped one proven at or above it). Not when a target is given
    (calibration): there the first bound that meets the target ends the loop, and these are
    the cheap ones to try first. Not with sampled rounds either: there fmt20-closed's value
    (amplified by the sampling) is what skips the unsampled fmt20's exact pair (0.15 s at
    n = 10¹², check-in 0.01, T = 10)."""
    late = rounds > 1 and target is None and getattr(proto, "sampling", None) is None
    return sorted(bounds, key=lambda b: (late and b.after_exact,
                                         bool(b.costly or b.rdp_expensive),
                                         not b.likely_first(proto), b.dominance_rank(proto)))


def _dominated(b, done, proto, floored=(), rounds=1, ask=None):
    """The reason ``b`` need not run: a bound already answered whose exact curve is at or
    below ``b``'s (``Bound.dominated_by``), or one whose exact value was proven at or
    above the best answer (``floored``: (bound, beat)) and that ``b`` dominates; else None."""
    for other in done:
        why = b.dominated_by(other, proto, rounds, ask)
        if why:
            return why
    for other, beat in floored:
        if b.dominated_by(other, proto, rounds, ask):
            return (f"skipped: cannot beat {beat:.6g}: its exact value is at least "
                    f"{other.id}'s (whose clone pair is a post-processing of this bound's), "
                    f"which was proven at least {beat:.6g}")
    return None


def under(relation, skipped) -> str:
    """' under add_or_remove_one (why each bound was refused)' — nothing for replace-one."""
    if relation == REPLACE_ONE:
        return ""
    groups: dict = {}
    for b, w in skipped:
        groups.setdefault(w, []).append(b)
    whys = "; ".join(f"{', '.join(bs)}: {w}" for w, bs in groups.items())
    return f" under relation={relation!r}" + (f" ({whys})" if whys else "")


# ------------------------------------------------------------------------------------------
# The loop
# ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _answering():
    """What every question runs under: freed memory kept for reuse (once per process) and
    BLAS on one thread (see ``select``)."""
    keep_freed_memory()
    with single_threaded_blas():
        yield


def select(proto, ask: Ask, rounds: int, *, bound: str | None = None,
           composition: str | None = None, upper_only: bool = False, lower: bool = True,
           target: float | None = None, relation: str = REPLACE_ONE) -> Result:
    """The loop (``_select``) with BLAS on one thread (``core._blas``) and freed memory
    kept for reuse from the first question on (``numerics.keep_freed_memory``: the largest
    arrays, a clone pair's PLD atoms, come before the first certified FFT that used to
    set it; once per process, ``SHUFFLEDP_MALLOC=system`` opts out)."""
    with _answering():
        return _select(proto, ask, rounds, bound=bound, composition=composition,
                       upper_only=upper_only, lower=lower, target=target, relation=relation)


def _select(proto, ask: Ask, rounds: int, *, bound: str | None = None,
            composition: str | None = None, upper_only: bool = False, lower: bool = True,
            target: float | None = None, relation: str = REPLACE_ONE) -> Result:
    """``rounds`` rounds of one protocol: every applicable bound (or the one named) × its
    routes, the tightest valid upper bound chosen, every candidate shown.

    ``upper_only``: only the candidates that can be the answer (calibration). ``lower``:
    also lower bounds, estimates and comparison-only bounds. ``target`` (calibration's
    yes/no question "is the answer ≤ target?"): stop at the first bound that meets it, and
    skip bounds that provably cannot; the returned value is then ≤ target exactly when the
    full minimum is (``CannotBeat`` when every candidate provably stays above it).
    ``relation`` must already be canonical and checked against the protocol, except for a
    deployment (``reports_per_user``, ``dummies`` or ``honest`` set): its reductions to
    plain protocols (``shuffledp.accounting.deployment``) are the loop's outer candidates, each
    reduction's protocol checked against ``relation`` in turn."""
    if getattr(proto, "is_deployment", False):
        return _select_reductions(proto, ask, rounds, bound=bound, composition=composition,
                                  upper_only=upper_only, lower=lower, target=target,
                                  relation=relation)
    if bound is not None:
        bounds, skipped = [named_bound(proto, bound, relation)], []
    else:
        bounds, skipped = applicable(proto, relation)
        bounds = _cheap_first(bounds, proto, rounds, target)
    if upper_only:
        bounds = [b for b in bounds if can_answer(b)]
    elif bound is None and not lower:
        skipped.extend((b.id, NOT_ASKED) for b in bounds if not can_answer(b))
        bounds = [b for b in bounds if can_answer(b)]
    solves_eps = isinstance(ask, EpsilonAt)
    cands, floors = [], []
    answered = []           # bound objects whose upper value is a candidate answer
    floored = []            # (bound, beat): its exact value was proven ≥ beat
    for b in bounds:
        if bound is None and can_answer(b):
            why = _dominated(b, answered, proto, floored, rounds, ask)
            if why:
                skipped.append((b.id, why))
                continue
        if composition is not None and composition not in routes_of(b, proto, rounds):
            if bound is not None:
                bound_answer(b, proto, ask, rounds, composition)   # raises the explanation
            skipped.append((b.id, f"does not offer composition {composition!r}"))
            continue
        t0 = time.perf_counter()
        # A bound that can be the answer may skip what provably cannot beat the best so far.
        beat = _best_so_far(cands, solves_eps) if bound is None and can_answer(b) else None
        if beat == 0.0 and target is None:
            # A certified 0 (ε = 0, or δ = 0 at this ε) is the smallest value any bound can
            # return: nothing after it can change the answer.
            skipped.append((b.id, "skipped: cannot beat 0 (an earlier bound certified 0)"))
            continue
        if target is not None:
            if beat is not None and beat <= target:
                skipped.append((b.id, f"not computed: an earlier bound already meets {target:.6g}"))
                continue
            beat = target if beat is None else min(beat, target)
        try:
            o = bound_answer(b, proto, ask, rounds, composition, beat=beat,
                             exact_floors=target is None)
        except NotApplicableError as exc:
            # Conditions that depend on the question (a closed form's δ-condition).
            if bound is not None:
                raise
            if isinstance(exc, CannotBeat):
                floors.append(exc.floor)
                if exc.exact and exc.beat is not None:
                    floored.append((b, exc.beat))
            skipped.append((b.id, str(exc)))
            continue
        except Exception as exc:                        # noqa: BLE001 — one bound's failure
            # must not take the others' answers with it; its internal message (which may
            # name a kernel variable) is kept out of the user-facing text.
            if bound is not None:
                raise bound_failure(b, proto, exc, relation) from exc
            skipped.append((b.id, failure_reason(exc)))
            continue
        eps, dlt = (o.value, ask.delta) if solves_eps else (ask.epsilon, o.value)
        scope, valid_for = b.label(proto, o.kind)
        if o.kind == "upper" and can_answer(b):
            answered.append(b)
        cands.append(Candidate(b.id, o.kind, valid_for, eps, dlt,
                               time.perf_counter() - t0, o.composition, o.details,
                               default=b.default, scope=scope, question=ask.solves))
    val = (lambda c: c.epsilon) if solves_eps else (lambda c: c.delta)
    if bound is not None:
        chosen = cands[0]
    else:
        ups = [c for c in cands if c.kind == "upper" and c.default]
        if not ups and target is not None and floors:
            raise CannotBeat(min(floors), target)
        if not ups:
            raise NotApplicableError(f"no valid upper bound applies to {proto.describe()}"
                                     + under(relation, skipped))
        chosen = min(ups, key=val)
    return Result(ask.solves, chosen.epsilon, chosen.delta, rounds, chosen.bound, chosen.kind,
                  chosen.valid_for, tuple(cands), tuple(skipped), proto, chosen.composition,
                  notes=_notes(bounds, rounds, composition), adjacency=adjacency_text(relation),
                  relation=relation)


def _best_so_far(cands, solves_eps: bool):
    vals = [c.epsilon if solves_eps else c.delta for c in cands if can_answer(c)]
    return min(vals) if vals else None


def _notes(bounds, rounds, composition) -> tuple:
    """What the user should know about routes that were not tried."""
    if composition not in (None, "pld"):
        return ()
    # Upper bounds compose their PLD without optional packages (pld_fft); the optimistic
    # PLD of a lower bound over several rounds needs dp_accounting.
    if rounds == 1 or not any(hasattr(b, "pld_atoms") and b.kind != "upper" for b in bounds):
        return ()
    from ..compose.composition import pld_unavailable_reason
    why = pld_unavailable_reason()
    if why is None:
        return ()
    return ("the PLD route of the lower bounds was not tried: the optional package "
            "dp-accounting is not installed (pip install 'shuffledp[pld]'); with it, lower "
            "bounds over several rounds are often tighter",)


def checked_relation(proto, relation) -> str:
    """The canonical relation; add/remove with every user reporting is refused (no finite
    guarantee: the count of reports reveals presence)."""
    rel = _relation(relation)
    if rel != REPLACE_ONE:
        refuse_everyone_reports(proto)
    return rel


# ------------------------------------------------------------------------------------------
# Deployments: the reductions to plain protocols are the loop's outer candidates
# ------------------------------------------------------------------------------------------
def _select_reductions(proto, ask: Ask, rounds: int, *, bound=None, composition=None,
                       upper_only=False, lower=True, target=None,
                       relation=REPLACE_ONE) -> Result:
    """A deployment: every valid reduction (``shuffledp.accounting.deployment.reductions``) answered by
    the loop over its plain protocol, every candidate labelled '<reduction>/<bound>'; the
    smallest valid upper bound among them is the answer. Each reduction's candidates are
    all computed (what each reduction gives is shown, docs/deployments.md)."""
    from . import deployment as _deployment     # deployments only: not at import (CLI start)
    cands, skipped, notes, floors = [], [], [], []
    skipped += [(r, w) for r, w in _deployment.refusals(proto)]
    for red in _deployment.reductions(proto):
        p, mult = red.protocol, red.multiplier
        try:
            r = select(p, ask, rounds * mult, bound=bound, composition=composition,
                       upper_only=upper_only, lower=lower, target=target,
                       relation=checked_relation(p, relation))
        except CannotBeat as exc:
            floors.append(exc.floor)
            skipped.append((red.label, str(exc)))
            continue
        except NotApplicableError as exc:
            skipped.append((red.label, str(exc)))
            continue
        for c in r.candidates:
            if c.kind != "upper" and red.lower is None:
                skipped.append((f"{red.label}/{c.bound}",
                                f"a {c.kind} of {p.describe()} says nothing about the "
                                f"deployment: reduction {red.label!r} is an upper bound only"))
                continue
            vf = c.valid_for if c.kind == "upper" else f"{c.valid_for} ({red.lower})"
            cands.append(replace(c, bound=f"{red.label}/{c.bound}",
                                 valid_for=_deployment.label_for(red, vf)))
        skipped += [(f"{red.label}/{b}", w) for b, w in r.not_applicable]
        notes += [n for n in r.notes if n not in notes]
        notes.append(f"reduction {red.label!r}: {red.reason} -> {p.describe()}"
                     + (f", {mult} rounds per deployment round" if mult != 1 else ""))
    direct, why = _deployment.direct_dummies(proto, ask, rounds, bound, relation)
    if direct is not None:
        cands.append(direct)
        notes.append("reduction 'dummies-blanket': one round of the blanket with each dummy a "
                     "blanket draw with probability min_y nu(y)/omega(y) (docs/dummies.md)")
    elif why is not None:
        skipped.append(why)
    val = (lambda c: c.epsilon) if ask.solves == "epsilon" else (lambda c: c.delta)
    ups = [c for c in cands if c.kind == "upper" and c.default]
    if bound is not None:
        ups = [c for c in cands if c.kind == "upper"] or cands
    if not ups:
        if target is not None and floors:
            raise CannotBeat(min(floors), target)
        head = (f"bound {bound!r} does not apply to any reduction of" if bound is not None
                else "no valid upper bound applies to")
        raise NotApplicableError(f"{head} {proto.describe()}: "
                                 + "; ".join(f"{b}: {w}" for b, w in skipped))
    ch = min(ups, key=val)
    return Result(ask.solves, ch.epsilon, ch.delta, rounds, ch.bound, ch.kind, ch.valid_for,
                  tuple(cands), tuple(skipped), proto, ch.composition, notes=tuple(notes),
                  adjacency=adjacency_text(relation), relation=relation)


# ------------------------------------------------------------------------------------------
# RDP curves: the bounds' RDP views (the rdp composer's), pointwise best
# ------------------------------------------------------------------------------------------
def select_rdp(proto, lam: np.ndarray, rounds: int, bound: str | None = None,
               relation=REPLACE_ONE) -> RdpCurve:
    """``_select_rdp`` with BLAS on one thread (``core._blas``), memory as ``select``."""
    with _answering():
        return _select_rdp(proto, lam, rounds, bound, relation)


def _select_rdp(proto, lam: np.ndarray, rounds: int, bound: str | None = None,
                relation=REPLACE_ONE) -> RdpCurve:
    """``rounds`` rounds of ``proto`` at Rényi orders ``lam`` (validated, > 1): the named
    bound's RDP view, or the pointwise minimum over the default upper bounds' RDP views
    (the views the rdp composer composes); a deployment: the pointwise minimum over its
    reductions. ``relation`` is checked here (for a deployment, against each reduction)."""
    if getattr(proto, "is_deployment", False):
        return _rdp_reductions(proto, lam, rounds, bound, relation)
    relation = checked_relation(proto, relation)
    adj = adjacency_text(relation)
    if bound is not None:
        b = named_bound(proto, bound, relation)
        if not b.has_rdp:
            raise NotApplicableError(f"bound {bound!r} has no RDP view"
                                     + (f": {b.no_rdp_reason}" if getattr(b, "no_rdp_reason",
                                                                          None) else ""))
        top = b.max_order(proto)
        if np.any(np.ceil(lam) > top):
            raise NotApplicableError(f"bound {bound!r} accepts orders up to {top} here; "
                                     f"got {lam.max():g}")
        try:
            vals = rounds * b.rdp_curve(proto, lam)
        except NotApplicableError:
            raise
        except Exception as exc:                        # noqa: BLE001
            raise bound_failure(b, proto, exc, relation) from exc
        return RdpCurve(lam, vals, b.id, b.kind,
                        b.valid_for(proto), rounds, scope=b.scope, adjacency=adj,
                        relation=relation)
    ok, no = applicable(proto, relation)
    ups = [b for b in ok if b.has_rdp and b.kind == "upper" and b.default]
    if not ups:
        whys = [(b.id, b.no_rdp_reason) for b in ok if getattr(b, "no_rdp_reason", None)]
        raise NotApplicableError(f"no RDP upper bound applies to {proto.describe()}"
                                 + under(relation, whys + no))
    best = np.full(lam.shape, math.inf)
    who = np.array([""] * lam.size, dtype=object)
    skipped = {}
    for b in ups:
        vals = np.full(lam.shape, math.inf)
        try:
            top = b.max_order(proto)
            mask = np.ceil(lam) <= top
            if not np.any(mask):
                skipped[b.id] = f"accepts orders up to {top} here"
                continue
            vals[mask] = b.rdp_curve(proto, lam[mask])
        except Exception as exc:                        # noqa: BLE001 — the others answer
            # never silent: the curve's details name the bound and why it did not answer
            skipped[b.id] = str(bound_failure(b, proto, exc, relation)) if not isinstance(
                exc, NotApplicableError) else str(exc)
            continue
        vals = np.where(np.isnan(vals), math.inf, vals)
        better = vals < best
        best = np.where(better, vals, best)
        who[better] = b.id
    used = [b for b in ups if b.id in set(who)]
    if not used:
        raise NotApplicableError(f"no RDP upper bound applies to {proto.describe()} at orders "
                                 f"{lam.tolist()}")
    # The pointwise minimum holds only for the randomizers every contributing bound covers:
    # label it with the narrowest class among them (never a broader one).
    narrow = max(used, key=lambda b: SCOPE_RANK.get(b.scope, len(SCOPE_RANK)))
    det: dict[str, object] = {"bound_per_order": list(who)}
    if skipped:
        det["skipped"] = skipped
    return RdpCurve(lam, rounds * best, "min(" + ",".join(sorted(set(who))) + ")", "upper",
                    narrow.valid_for(proto), rounds, det, scope=narrow.scope, adjacency=adj,
                    relation=relation)


def _rdp_reductions(proto, lam, rounds, bound, relation) -> RdpCurve:
    """A deployment's RDP curve: the pointwise minimum over its reductions (each
    reduction's curve times its rounds multiplier)."""
    from . import deployment as _deployment     # deployments only: not at import (CLI start)
    best = np.full(lam.shape, math.inf)
    who = np.array([""] * lam.size, dtype=object)
    curves, skipped = {}, dict(_deployment.refusals(proto))
    for red in _deployment.reductions(proto):
        try:
            c = select_rdp(red.protocol, lam, rounds * red.multiplier, bound, relation)
        except NotApplicableError as exc:
            skipped[red.label] = str(exc)
            continue
        vals = np.asarray(c.values, dtype=float)
        curves[red.label] = c
        better = vals < best
        best = np.where(better, vals, best)
        who[better] = red.label
    if not curves:
        raise NotApplicableError(f"no RDP upper bound applies to {proto.describe()}: "
                                 + "; ".join(f"{r}: {w}" for r, w in skipped.items()))
    used = [curves[label] for label in dict.fromkeys(who) if label]
    narrow = max(used, key=lambda c: SCOPE_RANK.get(c.scope, len(SCOPE_RANK)))
    red_of = {red.label: red for red in _deployment.reductions(proto)}
    det = {"reduction_per_order": list(who),
           "bound_per_order": [f"{w}/{curves[w].bound}" for w in who],
           "reductions": {lb: red_of[lb].reason for lb in curves}}
    if skipped:
        det["skipped"] = skipped
    label = "+".join(dict.fromkeys(f"{w}/{curves[w].bound}" for w in who))
    return RdpCurve(lam, best, label, "upper",
                    _deployment.label_for(red_of[who[0]], narrow.valid_for), rounds, det,
                    scope=narrow.scope, adjacency=narrow.adjacency, relation=relation)


# ------------------------------------------------------------------------------------------
# Several entries: the composers over the entries' combined views
# ------------------------------------------------------------------------------------------
def compose_parts(parts, ask: Ask, *, discretization: float | None = None):
    """Every registered composer over ``parts`` = [(views, rounds)] (a ledger of several
    entries): (best upper Outcome or None, rows) with rows = (name, value or None,
    reason or None, seconds). A costly composer runs after the others and is skipped when
    its proven floor cannot beat their best."""
    rows, outs = [], []
    order = sorted(_composers.all_composers(), key=lambda c: bool(c.costly))
    for c in order:
        why = c.accepts(parts)
        if why:
            rows.append((c.name, None, why, 0.0))
            continue
        if outs and c.costly:
            beat = min(o.value for o in outs)
            fl = _floor(c, parts, ask, beat)
            if fl is not None:
                rows.append((c.name, None,
                             f"skipped: cannot beat {beat:.6g} (its value is at least {fl:.6g})",
                             0.0))
                continue
        t0 = time.perf_counter()
        try:
            kw = {"discretization": discretization} if discretization else {}
            o = c.answer(parts, ask, **kw)
        except (NotApplicableError, ArithmeticError, FloatingPointError, MemoryError,
                NotImplementedError) as exc:
            rows.append((c.name, None, f"failed: {exc}", time.perf_counter() - t0))
            continue
        if o.kind != "upper" or not isinstance(o.value, float) or math.isnan(o.value):
            rows.append((c.name, None, f"not an upper bound ({o.kind}, {o.value!r})",
                         time.perf_counter() - t0))
            continue
        rows.append((c.name, o.value, None, time.perf_counter() - t0))
        outs.append(o)
    best = min(outs, key=lambda o: o.value) if outs else None
    return best, rows
