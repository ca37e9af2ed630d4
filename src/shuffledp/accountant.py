"""The accountant: every applicable bound, the tightest valid one chosen, all shown.

``epsilon`` / ``delta`` / ``rdp`` are the public questions. They validate their
arguments and hand the question to the one selection loop (``shuffledp.select``), which
returns a ``Result`` whose answer is the smallest *upper* bound among the bounds allowed
to be the default answer (reconstructed or unconfirmed formulas and estimates never are).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from . import _validate as v
from . import composers as _composers
from .errors import NotApplicableError
from .protocols import Shuffle
from .relations import REPLACE_ONE, adjacency_text, refuse_everyone_reports
from .relations import relation as _relation
from .results import SCOPE_RANK, RdpCurve, Result
from .select import applicable, bound_failure, named_bound, select, under
from .views import Ask, DeltaAt, EpsilonAt

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


def check_relation(proto, relation) -> str:
    """The canonical relation; add/remove with every user reporting is refused (no finite
    guarantee: the count of reports reveals presence)."""
    rel = _relation(relation)
    if rel != REPLACE_ONE:
        refuse_everyone_reports(proto)
    return rel


def ask_protocol(proto, ask: Ask, rounds, *, bound=None, composition=None,
                 upper_only=False, lower=True, target=None, relation=REPLACE_ONE) -> Result:
    """``select`` after the protocol and relation checks (the public questions' common path)."""
    proto = _check_proto(proto)
    if proto.is_deployment:
        # k reports per user, dummies, colluders: the best over the reductions to plain
        # protocols (shuffledp.deployment, docs/deployments.md).
        from . import deployment
        return deployment.ask(ask_protocol, proto, ask, rounds, bound=bound,
                              composition=composition, upper_only=upper_only, lower=lower,
                              target=target, relation=relation)
    relation = check_relation(proto, relation)
    return select(proto, ask, rounds, bound=bound, composition=composition,
                  upper_only=upper_only, lower=lower, target=target, relation=relation)


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
    return ask_protocol(proto, EpsilonAt(d), rounds, bound=bound, composition=composition,
                lower=_flag(lower), relation=relation)


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
    return ask_protocol(proto, DeltaAt(e), rounds, bound=bound, composition=composition,
                lower=_flag(lower), relation=relation)


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
    relation = check_relation(proto, relation)
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
