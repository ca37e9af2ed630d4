"""The accountant: every applicable bound, the tightest valid one chosen, all shown.

``epsilon`` / ``delta`` / ``rdp`` are the public questions. They validate
their arguments, loop over the bound registry (or the one bound named), compose rounds
through each bound's routes, and return a ``Result`` whose answer is the smallest
*upper* bound among the bounds allowed to be the default answer (reconstructed or
unconfirmed formulas and estimates never are).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from . import _validate as v
from . import composers as _composers
from .bounds import all_bounds, get
from .bounds.base import EXACT_FLOORS, CannotBeat
from .errors import NotApplicableError
from .protocols import Shuffle
from .relations import REPLACE_ONE, adjacency_text, refuse_everyone_reports
from .relations import relation as _relation
from .results import SCOPE_RANK, Candidate, RdpCurve, Result

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["epsilon", "delta", "rdp", "applicable"]

#: Public ``composition=`` values: every registered composer (``shuffledp.composers``).
COMPOSITIONS = tuple(_composers.ids())


def _check_proto(proto) -> Shuffle:
    if not isinstance(proto, Shuffle):
        raise ValueError(f"protocol must be a Shuffle(mechanism, n, sampling=None); got {proto!r}")
    return proto


def _check_common(rounds, composition):
    rounds = v.integer("rounds", rounds, lo=1)
    if composition is not None and composition not in COMPOSITIONS:
        raise ValueError(f"composition must be one of {', '.join(COMPOSITIONS)} or None; "
                         f"got {composition!r}")
    return rounds


def applicable(proto, relation: str = REPLACE_ONE) -> tuple[list, list]:
    """(bounds that apply, [(id, reason)] for those that do not) under ``relation``.

    Under replace-one, bounds derived for add/remove neighbours only are left out of both
    lists (they answer another question); under add/remove every bound not derived for it
    is listed with that reason."""
    if getattr(proto, "is_deployment", False):
        # A bound answers plain protocols only; a deployment goes through its reductions
        # (shuffledp.deployment). Any path that bypasses them gets no bound (never a number
        # that silently ignores k reports, dummies or colluders).
        return [], [(b.id, "a deployment (reports_per_user, dummies or honest set) is "
                     "answered through shuffledp.deployment.reductions, not by a bound "
                     "directly") for b in all_bounds()]
    ok, no = [], []
    for b in all_bounds():
        rel_why = b.relation_reason(relation, named=False)
        if rel_why and relation == REPLACE_ONE:
            continue
        why = rel_why or b.check(proto)
        (no.append((b.id, why)) if why else ok.append(b))
    return ok, no


def _named(proto, bound_id, relation: str = REPLACE_ONE):
    b = get(bound_id)
    why = "; ".join(w for w in (b.check(proto), b.relation_reason(relation)) if w)
    if why:
        ok, _ = applicable(proto, relation)
        raise NotApplicableError(
            f"bound {bound_id!r} does not apply to {proto.describe()}: {why}. "
            f"Bounds that apply: {', '.join(x.id for x in ok) or 'none'}")
    return b


def _check_relation(proto, relation) -> str:
    """The canonical relation; add/remove with every user reporting is refused (no finite
    guarantee: the count of reports reveals presence)."""
    rel = _relation(relation)
    if rel != REPLACE_ONE:
        refuse_everyone_reports(proto)
    return rel


def _failure_what(exc: BaseException) -> str:
    if isinstance(exc, (ArithmeticError, FloatingPointError)):
        return "no certified value could be computed in floating point"
    if isinstance(exc, MemoryError):
        return "the computation needs more memory than is available"
    return "this bound could not be evaluated on this input"


def _failure_reason(exc: BaseException) -> str:
    """A user-facing reason for a bound that failed on this input (not a traceback)."""
    return f"skipped: {_failure_what(exc)} ({type(exc).__name__}); not used"


def _bound_failure(b, proto, exc: BaseException, relation: str = REPLACE_ONE
                   ) -> NotApplicableError:
    ok, _ = applicable(proto, relation)
    others = ", ".join(x.id for x in ok if x.id != b.id) or "none"
    return NotApplicableError(
        f"bound {b.id!r} could not certify a value for {proto.describe()}: "
        f"{_failure_what(exc)} ({type(exc).__name__}). Bounds that apply: {others}")


#: Bounds whose evaluation costs seconds at large n (exact pair sums, instance sums); the
#: accountant tries them after the closed forms so that their floors meet a good answer.
_COSTLY = ("fmt20", "fmt23", "clone-specific", "trimmed-clone", "girgis-lower", "krr-lower")

NOT_ASKED = ("not computed: lower bounds, estimates and comparison-only bounds are "
             "computed on request (lower=True)")


def _can_answer(b) -> bool:
    return b.kind == "upper" and b.default


def _cheap_first(bounds, proto) -> list:
    """Stable order: bounds with closed forms or cheap curves first, exact pair sums last;
    among those, the usually tightest (``Bound.likely_first``), then bounds that may
    dominate others (``Bound.dominance_rank``)."""
    return sorted(bounds, key=lambda b: (bool(b.id in _COSTLY or b.rdp_expensive),
                                         not b.likely_first(proto), b.dominance_rank(proto)))


def _dominated(b, done, proto, floored=(), rounds=1):
    """The reason ``b`` need not run: a bound already answered whose exact curve is at or
    below ``b``'s (``Bound.dominated_by``), or one whose exact value was proven at or
    above the best answer (``floored``: (bound, beat)) and that ``b`` dominates; else None."""
    for other in done:
        why = b.dominated_by(other, proto, rounds)
        if why:
            return why
    for other, beat in floored:
        if b.dominated_by(other, proto, rounds):
            return (f"skipped: cannot beat {beat:.6g}: its exact value is at least "
                    f"{other.id}'s (whose clone pair is a post-processing of this bound's), "
                    f"which was proven at least {beat:.6g}")
    return None


def _split_requested(bounds, lower: bool):
    """(bounds to evaluate, [(id, reason)] for those left out because nobody asked)."""
    if lower:
        return bounds, []
    return [b for b in bounds if _can_answer(b)], [(b.id, NOT_ASKED) for b in bounds
                                                    if not _can_answer(b)]


def _best_so_far(cands, question):
    vals = [c.epsilon if question == "epsilon" else c.delta for c in cands if _can_answer(c)]
    return min(vals) if vals else None


def _ask(proto, x, rounds, bound, composition, question, upper_only=False, lower=True,
         target=None, relation=REPLACE_ONE):
    """The candidate loop. ``target`` (calibration's yes/no question "is the answer ≤
    target?"): stop at the first bound that meets it, and skip bounds that provably cannot;
    the returned value is then ≤ target exactly when the full minimum is."""
    proto = _check_proto(proto)
    if proto.is_deployment:
        # k reports per user, dummies, colluders: the best over the reductions to plain
        # protocols (shuffledp.deployment, docs/deployments.md).
        from . import deployment
        return deployment.ask(_ask, proto, x, rounds, bound, composition, question,
                              upper_only, lower, target, relation)
    relation = _check_relation(proto, relation)
    if bound is not None:
        bounds, skipped = [_named(proto, bound, relation)], []
    else:
        bounds, skipped = applicable(proto, relation)
        bounds = _cheap_first(bounds, proto)
    if upper_only:
        # Calibration needs only the candidates that can be the answer.
        bounds = [b for b in bounds if b.kind == "upper" and b.default]
    elif bound is None:
        bounds, not_asked = _split_requested(bounds, lower)
        skipped.extend(not_asked)
    cands = []
    floors = []
    answered = []           # bound objects whose upper value is a candidate answer
    floored = []            # (bound, beat): its exact value was proven ≥ beat
    for b in bounds:
        if bound is None and _can_answer(b):
            why = _dominated(b, answered, proto, floored, rounds)
            if why:
                skipped.append((b.id, why))
                continue
        if composition is not None and composition not in b.routes(rounds):
            if bound is not None:
                b.epsilon(proto, x, rounds, composition)   # raises the explanation
            skipped.append((b.id, f"does not offer composition {composition!r}"))
            continue
        t0 = time.perf_counter()
        # A bound that can be the answer may skip what provably cannot beat the best so far.
        beat = _best_so_far(cands, question) if bound is None and _can_answer(b) else None
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
        tok = EXACT_FLOORS.set(target is None)
        try:
            if question == "epsilon":
                o = b.epsilon(proto, x, rounds, composition, beat=beat)
                eps, dlt = o.value, x
            else:
                o = b.delta(proto, x, rounds, composition, beat=beat)
                eps, dlt = x, o.value
        except NotApplicableError as exc:
            # Conditions that depend on the question (a closed form's δ-condition).
            if bound is not None:
                raise
            if isinstance(exc, CannotBeat):
                floors.append(exc.floor)
                if getattr(exc, "exact", False) and exc.beat is not None:
                    floored.append((b, exc.beat))
            skipped.append((b.id, str(exc)))
            continue
        except Exception as exc:                        # noqa: BLE001 — one bound's failure
            # must not take the others' answers with it; its internal message (which may
            # name a kernel variable) is kept out of the user-facing text.
            if bound is not None:
                raise _bound_failure(b, proto, exc, relation) from exc
            skipped.append((b.id, _failure_reason(exc)))
            continue
        finally:
            EXACT_FLOORS.reset(tok)
        scope, valid_for = b.label(proto, o.kind)
        if o.kind == "upper" and _can_answer(b):
            answered.append(b)
        cands.append(Candidate(b.id, o.kind, valid_for, eps, dlt,
                               time.perf_counter() - t0, o.composition, o.details,
                               default=b.default, scope=scope, question=question))
    val = (lambda c: c.epsilon) if question == "epsilon" else (lambda c: c.delta)
    if bound is not None:
        chosen = cands[0]
    else:
        ups = [c for c in cands if c.kind == "upper" and c.default]
        if not ups and target is not None and floors:
            raise CannotBeat(min(floors), target)
        if not ups:
            raise NotApplicableError(f"no valid upper bound applies to {proto.describe()}"
                                     + _under(relation, skipped))
        chosen = min(ups, key=val)
    return Result(question, chosen.epsilon, chosen.delta, rounds, chosen.bound, chosen.kind,
                  chosen.valid_for, tuple(cands), tuple(skipped), proto, chosen.composition,
                  notes=_notes(bounds, rounds, composition), adjacency=adjacency_text(relation),
                  relation=relation)


def _under(relation, skipped) -> str:
    """' under add_or_remove_one (why each bound was refused)' — nothing for replace-one."""
    if relation == REPLACE_ONE:
        return ""
    groups: dict = {}
    for b, w in skipped:
        groups.setdefault(w, []).append(b)
    whys = "; ".join(f"{', '.join(bs)}: {w}" for w, bs in groups.items())
    return f" under relation={relation!r}" + (f" ({whys})" if whys else "")


def _notes(bounds, rounds, composition) -> tuple:
    """What the user should know about routes that were not tried."""
    if composition not in (None, "pld"):
        return ()
    # Upper bounds compose their PLD without optional packages (pld_fft); the optimistic
    # PLD of a lower bound over several rounds needs dp_accounting.
    if rounds == 1 or not any(hasattr(b, "pld_atoms") and b.kind != "upper" for b in bounds):
        return ()
    from .composition import pld_unavailable_reason
    why = pld_unavailable_reason()
    if why is None:
        return ()
    return ("the PLD route of the lower bounds was not tried: the optional package "
            "dp-accounting is not installed (pip install 'shuffledp[pld]'); with it, lower "
            "bounds over several rounds are often tighter",)


def epsilon(proto: Shuffle, delta: float, rounds: int = 1, *, bound: str | None = None,
            composition: str | None = None, lower: bool = False,
            relation: object = REPLACE_ONE) -> Result:
    """Smallest certified ε such that ``rounds`` adaptive rounds of ``proto`` are (ε, δ)-DP.

    Neighbouring datasets differ in one user's input (replacement) unless ``relation``
    says otherwise; ε is in nats (the natural-log ε of differential privacy). The bounds tried and what each assumes:
    ``docs/bounds.md``.

    Parameters
    ----------
    proto : Shuffle
        One round: the randomizer, the number of users n and the sampling.
    delta : float
        The δ of the guarantee, in (0, 1).
    rounds : int
        Number of adaptive rounds T ≥ 1 (default 1).
    bound : str, optional
        Only this bound (an id of ``shuffledp.bounds.ids()``); default: every bound that
        applies.
    composition : str, optional
        How rounds are composed: "rdp", "kov15", "pld" or "none"; default: the tightest.
    lower : bool
        Also compute the lower bounds, estimates and comparison-only bounds (default
        False: only the bounds that can be the answer; the others are listed as not
        computed). Candidates that provably cannot beat the best answer found so far are
        skipped either way, with the reason ("skipped: cannot beat X").
    relation : str or dp_accounting ``NeighboringRelation``
        The neighbouring relation: "replace_one" (default) or "add_or_remove_one"
        (docs/relations.md). Under add/remove only bounds derived for it answer, and a
        protocol in which every user reports is refused (no finite guarantee).

    Returns
    -------
    Result
        ``float(r)`` is ε; ``r.bound``, ``r.kind`` (always "upper" for the answer),
        ``r.valid_for`` and every ``r.candidates``.

    Examples
    --------
    >>> import shuffledp as sd
    >>> r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10_000), delta=1e-6, rounds=10)
    >>> f"{r:.4f}", r.kind
    ('0.1819', 'upper')
    """
    d = v.probability("delta", delta)
    rounds = _check_common(rounds, composition)
    return _ask(proto, d, rounds, bound, composition, "epsilon", lower=_flag(lower),
                relation=relation)


def delta(proto: Shuffle, epsilon: float, rounds: int = 1, *, bound: str | None = None,
          composition: str | None = None, lower: bool = False,
          relation: object = REPLACE_ONE) -> Result:
    """Smallest certified δ such that ``rounds`` rounds of ``proto`` are (ε, δ)-DP.

    The inverse question of ``sd.epsilon``, same relations and bounds.

    Parameters
    ----------
    proto : Shuffle
        One round: the randomizer, the number of users n and the sampling.
    epsilon : float
        The ε of the guarantee, ≥ 0 (natural log).
    rounds : int
        Number of adaptive rounds T ≥ 1 (default 1).
    bound : str, optional
        Only this bound (an id of ``shuffledp.bounds.ids()``); default: every bound that
        applies.
    composition : str, optional
        "rdp", "kov15", "pld" or "none"; default: the tightest.
    lower : bool
        Also compute lower bounds, estimates and comparison-only bounds (default False).
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one", as in ``sd.epsilon``.

    Returns
    -------
    Result
        ``float(r)`` is δ; the other fields as for ``sd.epsilon``.

    Examples
    --------
    >>> import shuffledp as sd
    >>> r = sd.delta(sd.Shuffle(sd.LDP(1.0), n=10_000), epsilon=0.5, rounds=10)
    >>> f"{r:.3g}", r.bound
    ('9.34e-27', 'fmt20')
    """
    e = v.real("epsilon", epsilon, lo=0.0)
    rounds = _check_common(rounds, composition)
    return _ask(proto, e, rounds, bound, composition, "delta", lower=_flag(lower),
                relation=relation)


def _flag(lower) -> bool:
    if not isinstance(lower, (bool, np.bool_)):
        raise ValueError(f"lower must be True or False; got {lower!r}")
    return bool(lower)


def rdp(proto: Shuffle, orders: ArrayLike, *, rounds: int = 1,
        bound: str | None = None, relation: object = REPLACE_ONE) -> RdpCurve:
    """RDP curve of ``rounds`` rounds at ``orders`` (each > 1).

    With a named bound: that bound's curve. Without: the pointwise minimum over the
    default upper bounds that have an RDP view; ``details['bound_per_order']`` says which.
    Replace-one neighbours unless ``relation`` says otherwise (under add/remove a
    check-in round has infinite Rényi divergence: refused with that reason); values are
    Rényi divergences D_λ (natural log).

    Parameters
    ----------
    proto : Shuffle
        One round: the randomizer, the number of users n and the sampling.
    orders : float or sequence of float
        Rényi orders λ > 1.
    rounds : int
        Number of adaptive rounds T ≥ 1 (default 1); RDP adds up over rounds.
    bound : str, optional
        Only this bound's curve; default: the pointwise minimum described above.
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one", as in ``sd.epsilon``.

    Returns
    -------
    RdpCurve
        ``curve.values[i]`` bounds D_λ at ``curve.orders[i]``; iterate for pairs.

    Examples
    --------
    >>> import shuffledp as sd
    >>> c = sd.rdp(sd.Shuffle(sd.LDP(1.0), n=10_000), [2, 4], rounds=10)
    >>> [f"{x:.4g}" for x in c.values]
    ['0.002322', '0.004644']
    """
    proto = _check_proto(proto)
    lam = v.orders("orders", orders)
    rounds = v.integer("rounds", rounds, lo=1)
    if proto.is_deployment:
        from . import deployment        # the pointwise best over the reductions
        return deployment.rdp(rdp, proto, lam, rounds, bound, relation)
    relation = _check_relation(proto, relation)
    adj = adjacency_text(relation)
    if bound is not None:
        b = _named(proto, bound, relation)
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
            raise _bound_failure(b, proto, exc, relation) from exc
        return RdpCurve(lam, vals, b.id, b.kind,
                        b.valid_for(proto), rounds, scope=b.scope, adjacency=adj,
                        relation=relation)
    ok, no = applicable(proto, relation)
    ups = [b for b in ok if b.has_rdp and b.kind == "upper" and b.default]
    if not ups:
        whys = [(b.id, b.no_rdp_reason) for b in ok if getattr(b, "no_rdp_reason", None)]
        raise NotApplicableError(f"no RDP upper bound applies to {proto.describe()}"
                                 + _under(relation, whys + no))
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
            skipped[b.id] = str(_bound_failure(b, proto, exc, relation)) if not isinstance(
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
