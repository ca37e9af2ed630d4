r"""ONE adapter from any ``Pair`` (``pairs/base.py``) to the views composers read.

``views_of(pair, kind=...)`` returns the views of ONE round (``shuffledp.core.views``): an
``RdpView`` when the pair has ``rdp``, a ``DpView`` always, a ``PldView`` when it has
``pld_atoms``; a view's existence is the capability. The numbers are the pair's own,
unchanged (the adapter wraps, never recomputes), so a composer given these views composes
exactly the pair. The trimming charge is NOT folded into any view: ``PairViews.charge(T)``
is added once to a T-round δ (a pair without one charges 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from ..core.views import DpView, PldView, RdpView
from .base import ChargedPair, PldPair, RdpPair

__all__ = ["PairViews", "views_of", "pure_epsilon_of"]

KINDS = ("upper", "lower", "estimate")


@dataclass(frozen=True)
class PairViews:
    """The views of one round of a pair, its kind and its per-T charge."""

    pair: object
    kind: str
    rdp: Optional[RdpView]
    dp: Optional[DpView]
    pld: Optional[PldView]
    charge: Callable[[int], float]

    @property
    def charged(self) -> bool:
        """True when the pair's rounds carry a δ charge (``ChargedPair``)."""
        return self.charge is not _no_charge


def pure_epsilon_of(pair) -> float | None:
    """The pair's own ``pure_epsilon()`` when it has one; else ``eps_hi()`` when finite and
    δ is exactly 0 there (the bounds' default, ``Bound.pure_epsilon``); else None."""
    own = getattr(pair, "pure_epsilon", None)
    if own is not None:
        return own()
    hi = pair.eps_hi()
    if hi is None or not math.isfinite(hi):
        return None
    return float(hi) if pair.delta(float(hi)) == 0.0 else None


def _no_charge(rounds: int) -> float:
    return 0.0


def views_of(pair, kind: str = "upper", *, grid: str = "dense") -> PairViews:
    """The views of one round of ``pair`` (a ``Pair``) as a bound of ``kind`` gives them.

    ``grid`` is the RDP order-search grid ("dense" | "coarse" | "sparse"; costly curves
    such as the clone pairs' use "sparse"). A ``kind="lower"`` pair's atoms are an
    instance's law (``PldView.is_instance``), composed optimistically.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
    rdp = None
    if isinstance(pair, RdpPair):
        rdp = RdpView(pair.rdp, int(pair.max_order()), grid)
    dp = DpView(pair.epsilon, pair.delta, pair.eps_hi, lambda: pure_epsilon_of(pair))
    pld = None
    if isinstance(pair, PldPair):
        pld = PldView(atoms=pair.pld_atoms, is_instance=(kind == "lower"),
                      symmetric=bool(pair.pld_symmetric))
    charge = pair.charge if isinstance(pair, ChargedPair) else _no_charge
    return PairViews(pair, kind, rdp, dp, pld, charge)
