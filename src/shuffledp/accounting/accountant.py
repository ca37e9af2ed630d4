"""The accountant: every applicable bound, the tightest valid one chosen, all shown.

``epsilon`` / ``delta`` / ``rdp`` are the public questions. They validate their
arguments and hand the question to the one selection loop (``shuffledp.accounting.select``), which
returns a ``Result`` whose answer is the smallest *upper* bound among the bounds allowed
to be the default answer (reconstructed or unconfirmed formulas and estimates never are).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import _validate as v
from .. import compose as _composers
from ..core.protocols import Shuffle
from ..core.relations import REPLACE_ONE
from ..core.results import RdpCurve, Result
from .select import applicable, checked_relation, select, select_rdp
from ..core.views import Ask, DeltaAt, EpsilonAt

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["epsilon", "delta", "rdp", "applicable"]

#: Public ``composition=`` values: every registered composer (``shuffledp.compose``).
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
    return checked_relation(proto, relation)


def ask_protocol(proto, ask: Ask, rounds, *, bound=None, composition=None,
                 upper_only=False, lower=True, target=None, relation=REPLACE_ONE) -> Result:
    """``select`` after the protocol and relation checks (the public questions' common path).
    A deployment (k reports per user, dummies, colluders) goes to the same loop, which takes
    its reductions to plain protocols as candidates and checks the relation against each
    (shuffledp.accounting.deployment, docs/deployments.md)."""
    proto = _check_proto(proto)
    if not proto.is_deployment:
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
    return select_rdp(proto, lam, rounds, bound, relation)
