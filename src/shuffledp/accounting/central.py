"""Central (server-side) mechanisms in a ledger, described by ``dp_accounting`` events.

Supported events (the optional extra ``pld`` provides ``dp_accounting``):
``GaussianDpEvent``, ``LaplaceDpEvent``, ``PoissonSampledDpEvent`` of a Gaussian,
``SelfComposedDpEvent`` and ``ComposedDpEvent`` of those. Every entry of a ledger is
analysed under ONE neighbouring relation: **replacement** of one individual's record
(``dp_accounting.NeighboringRelation.REPLACE_ONE``), the relation of the shuffle bounds.
With dp_accounting's convention a ``GaussianDpEvent(z)`` of a query whose add/remove
sensitivity is 1 has replace sensitivity 2 (its PLD is that of N(0, z²) vs N(2, z²)); the
same convention is used for ``LaplaceDpEvent(b)`` (Laplace of scale b, shift 2), which
dp_accounting itself only analyses under add/remove. Events dp_accounting cannot analyse
under REPLACE_ONE (a Poisson-sampled Laplace, for one) are refused with a message naming
the event.

A ledger built with ``relation="add_or_remove_one"`` analyses its central events under
``NeighboringRelation.ADD_OR_REMOVE_ONE`` instead: dp_accounting's own convention, a
``GaussianDpEvent(z)`` is N(0, z²) vs N(1, z²) (sensitivity 1), a ``LaplaceDpEvent(b)`` is
Laplace of scale b shifted by 1, a Poisson-sampled Gaussian is dp_accounting's sampled PLD
with both directions, and so is a Poisson-sampled Laplace (which dp_accounting analyses
only under add/remove; docs/ledger.md, "Add/remove ledgers").
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import NotApplicableError
from ..core.views import DpView, PldView, RdpView

__all__ = ["RELATION", "flatten_event", "EventViews", "event_to_dict", "event_from_dict"]

RELATION = ("replace-one (neighbouring datasets differ in one individual's record, same size; "
            "dp_accounting NeighboringRelation.REPLACE_ONE)")
RELATION_ADD_OR_REMOVE = ("add_or_remove_one (neighbouring datasets differ by one "
                          "individual's presence; dp_accounting "
                          "NeighboringRelation.ADD_OR_REMOVE_ONE)")


def relation_text(relation: str) -> str:
    """The ledger's relation sentence (``LedgerResult.relation``)."""
    return RELATION if relation == "replace_one" else RELATION_ADD_OR_REMOVE


def _nr(relation: str):
    from dp_accounting import NeighboringRelation as NR
    return NR.REPLACE_ONE if relation == "replace_one" else NR.ADD_OR_REMOVE_ONE


def _dpe():
    try:
        from dp_accounting import dp_event
    except Exception as exc:
        raise NotApplicableError("central mechanisms need the optional dependency "
                                 f"dp-accounting (pip install 'shuffledp[pld]'); import failed: {exc}") from None
    return dp_event


def flatten_event(event, count: int = 1, relation: str = "replace_one") -> list:
    """[(elementary event, count)] for Self-/Composed events; refuses unsupported ones."""
    E = _dpe()
    if isinstance(event, E.SelfComposedDpEvent):
        return flatten_event(event.event, count * int(event.count), relation)
    if isinstance(event, E.ComposedDpEvent):
        out = []
        for e in event.events:
            out.extend(flatten_event(e, count, relation))
        return out
    if isinstance(event, E.NoOpDpEvent):
        return []
    _check_supported(event, relation)
    return [(event, count)]


def _check_supported(event, relation: str = "replace_one"):
    E = _dpe()
    name = type(event).__name__
    if isinstance(event, (E.GaussianDpEvent, E.LaplaceDpEvent)):
        if event.noise_multiplier <= 0:
            raise ValueError(f"{name}: noise_multiplier must be > 0 (a noiseless release has "
                             f"no finite privacy guarantee); got {event.noise_multiplier!r}")
        return
    if isinstance(event, E.PoissonSampledDpEvent):
        # Under add/remove dp_accounting analyses a Poisson-sampled Laplace as well.
        ok = ((E.GaussianDpEvent,) if relation == "replace_one"
              else (E.GaussianDpEvent, E.LaplaceDpEvent))
        if not isinstance(event.event, ok):
            raise NotApplicableError(
                f"{name} of {type(event.event).__name__}: not supported in a ledger "
                "(dp_accounting does not analyse it under REPLACE_ONE, and a ledger holds one "
                "relation whichever it is); only a Poisson-sampled GaussianDpEvent is "
                "supported")
        if not 0.0 <= event.sampling_probability <= 1.0:
            raise ValueError(f"{name}: sampling_probability must be in [0, 1]; got "
                             f"{event.sampling_probability!r}")
        _check_supported(event.event, relation)
        return
    raise NotApplicableError(
        f"{name}: not supported in a ledger (supported: GaussianDpEvent, LaplaceDpEvent, "
        "PoissonSampledDpEvent of a Gaussian, SelfComposedDpEvent, ComposedDpEvent)")


def _sensitivity(relation: str) -> float:
    """How far apart a mechanism's two means are for neighbouring inputs under the ledger's
    relation, in units of the clipping norm C: 2 under replace-one (a clipped vector replaced
    by another, diameter 2C), 1 under add/remove (one clipped vector added; dp_accounting's
    own convention)."""
    return 2.0 if relation == "replace_one" else 1.0


def _pld(event, d: float, count: int, relation: str = "replace_one"):
    """dp_accounting's pessimistic PLD of ``count`` compositions of ``event`` under the
    ledger's relation (both directions; under add/remove its own sensitivity-1 convention)."""
    from dp_accounting import NeighboringRelation as NR
    from dp_accounting.pld import privacy_loss_distribution as P
    E = _dpe()
    nr = _nr(relation)
    if isinstance(event, E.GaussianDpEvent):
        # count Gaussians with σ compose exactly to one with σ/√count
        return P.from_gaussian_mechanism(event.noise_multiplier / math.sqrt(count),
                                         value_discretization_interval=d,
                                         neighboring_relation=nr)
    if isinstance(event, E.LaplaceDpEvent):
        # dp_accounting analyses the Laplace under add/remove (its only relation for it):
        # replace-one is add/remove at twice the sensitivity.
        pld = P.from_laplace_mechanism(event.noise_multiplier,
                                       sensitivity=_sensitivity(relation),
                                       value_discretization_interval=d)
        return pld.self_compose(count) if count > 1 else pld
    if isinstance(event, E.PoissonSampledDpEvent):
        if event.sampling_probability == 0.0:
            return P.identity(value_discretization_interval=d)
        if isinstance(event.event, E.LaplaceDpEvent):
            if nr != NR.ADD_OR_REMOVE_ONE:
                # (refused earlier by _check_supported: dp_accounting has no such PLD)
                raise NotApplicableError(f"{type(event).__name__} of LaplaceDpEvent: no PLD "
                                         "under REPLACE_ONE")
            pld = P.from_laplace_mechanism(event.event.noise_multiplier, sensitivity=1.0,
                                           value_discretization_interval=d,
                                           sampling_prob=event.sampling_probability)
        else:
            pld = P.from_gaussian_mechanism(event.event.noise_multiplier,
                                            value_discretization_interval=d,
                                            sampling_prob=event.sampling_probability,
                                            neighboring_relation=nr)
        return pld.self_compose(count) if count > 1 else pld
    raise NotApplicableError(f"{type(event).__name__}: no PLD")


def event_rdp_curve(event, relation: str = "replace_one"):
    """RDP under the ledger's relation where the closed form is known, else None (a
    Poisson-sampled Gaussian: the ledger uses its PLD)."""
    E = _dpe()
    shift = _sensitivity(relation)
    if isinstance(event, E.GaussianDpEvent):
        z = float(event.noise_multiplier)
        # N(0, z²) vs N(shift, z²): D_λ = λ·shift²/(2z²) (Mironov 2017, Prop. 7)
        return lambda o: shift ** 2 / 2.0 * (o.astype(float)) / (z * z) * (1.0 + 1e-12)
    if isinstance(event, E.LaplaceDpEvent):
        b = float(event.noise_multiplier)
        s = shift / b   # shift 2 (replace-one) or 1 (add/remove), scale b

        def lap(o):
            # Mironov 2017 (arXiv:1702.07476), Prop. 6, ratio s = shift/scale, in log space
            lam = o.astype(float)
            a = (lam - 1.0) * s + np.log(lam / (2.0 * lam - 1.0))
            c = -lam * s + np.log((lam - 1.0) / (2.0 * lam - 1.0))
            return np.logaddexp(a, c) / (lam - 1.0) * (1.0 + 1e-12)
        return lap
    return None


class EventViews:
    """Views of ONE occurrence of an elementary dp_accounting event (replace-one)."""

    kind = "upper"

    def __init__(self, event, relation: str = "replace_one"):
        self.event = event
        self.relation = relation
        self.source = type(event).__name__
        self._d1 = 1e-3      # single-occurrence (ε, δ) view: pessimistic, coarse is enough
        self._single = None

    def _one(self):
        if self._single is None:
            self._single = _pld(self.event, self._d1, 1, self.relation)
        return self._single

    @property
    def rdp(self):
        f = event_rdp_curve(self.event, self.relation)
        return None if f is None else RdpView(f, 10**6, "dense")

    @property
    def dp(self):
        from ..compose.pld import delta_of_pld, epsilon_of_pld
        return DpView(lambda d: epsilon_of_pld(self._one(), d, 1.0),
                      lambda e: delta_of_pld(self._one(), e),
                      lambda: epsilon_of_pld(self._one(), 1e-15, 1.0),
                      lambda: None)

    @property
    def pld(self):
        return PldView(build=lambda d, c: _pld(self.event, d, c, self.relation))

    def valid_for(self) -> str:
        rel = "replace-one" if self.relation == "replace_one" else "add/remove"
        return describe_event(self.event) + f" (central; {rel}, dp_accounting convention)"


def describe_event(e) -> str:
    E = _dpe()
    if isinstance(e, E.GaussianDpEvent):
        return f"Gaussian(noise_multiplier={e.noise_multiplier:g})"
    if isinstance(e, E.LaplaceDpEvent):
        return f"Laplace(noise_multiplier={e.noise_multiplier:g})"
    if isinstance(e, E.PoissonSampledDpEvent):
        return f"PoissonSampled({e.sampling_probability:g}, {describe_event(e.event)})"
    if isinstance(e, E.SelfComposedDpEvent):
        return f"{e.count} x {describe_event(e.event)}"
    return type(e).__name__


def event_to_dict(e) -> dict:
    E = _dpe()
    if isinstance(e, E.GaussianDpEvent):
        return {"event": "gaussian", "noise_multiplier": e.noise_multiplier}
    if isinstance(e, E.LaplaceDpEvent):
        return {"event": "laplace", "noise_multiplier": e.noise_multiplier}
    if isinstance(e, E.PoissonSampledDpEvent):
        return {"event": "poisson_sampled", "sampling_probability": e.sampling_probability,
                "of": event_to_dict(e.event)}
    if isinstance(e, E.SelfComposedDpEvent):
        return {"event": "self_composed", "count": e.count, "of": event_to_dict(e.event)}
    if isinstance(e, E.ComposedDpEvent):
        return {"event": "composed", "events": [event_to_dict(x) for x in e.events]}
    raise NotApplicableError(f"{type(e).__name__}: cannot be stored in a ledger file")


def event_from_dict(d: dict):
    E = _dpe()
    if not isinstance(d, dict) or "event" not in d:
        raise ValueError(f"central event must be a table with an 'event' key; got {d!r}")
    k = d["event"]
    if k == "gaussian":
        return E.GaussianDpEvent(float(d["noise_multiplier"]))
    if k == "laplace":
        return E.LaplaceDpEvent(float(d["noise_multiplier"]))
    if k == "poisson_sampled":
        return E.PoissonSampledDpEvent(float(d["sampling_probability"]), event_from_dict(d["of"]))
    if k == "self_composed":
        return E.SelfComposedDpEvent(event_from_dict(d["of"]), int(d["count"]))
    if k == "composed":
        return E.ComposedDpEvent([event_from_dict(x) for x in d["events"]])
    raise ValueError("event must be one of gaussian, laplace, poisson_sampled, self_composed, "
                     f"composed; got {k!r}")
