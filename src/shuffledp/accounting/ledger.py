"""One privacy budget for a whole deployment: the composition ledger.

>>> import shuffledp as sd
>>> acc = sd.Accountant()
>>> _ = acc.compose(sd.Shuffle(sd.RandomizedResponse(2.0, k=4), n=10_000), rounds=3)
>>> _ = acc.compose(sd.Shuffle(sd.LDP(1.0), n=1_000), rounds=2)
>>> r = acc.epsilon(1e-6)
>>> r.kind
'upper'

A ledger is a list of entries — a shuffled protocol (``Shuffle``) or a central mechanism
given as a ``dp_accounting`` event — each with a number of adaptive rounds. Its answer is
the tightest valid composed *upper* bound over the registered composers
(``shuffledp.compose``). Every entry contributes the views of its valid, default upper
bounds only (estimates and lower bounds never enter):

* RDP: the per-order minimum over the entry's bounds' RDP curves, summed over entries;
* (ε, δ) (KOV15, heterogeneous closed form): the entry's bound with the smallest
  single-round ε;
* PLD: the entry's dominating pair with the smallest single-round ε (for pure ε0-DP
  entries without a pair of their own: binary randomized response at ε0, which dominates
  every ε0-DP mechanism); central events: dp_accounting's pessimistic PLD under
  replace-one. The grid is common to all entries.

A one-entry ledger of a shuffled protocol is exactly ``sd.epsilon(proto, delta, rounds)``
(the same candidate loop). Entries with identical items are merged first (their rounds
summed), so the same rounds get the same answer however they were entered. All entries
are analysed under one neighbouring relation, the ledger's ``relation``: replacement of one
individual's record by default (``central.RELATION``), or ``"add_or_remove_one"`` — shuffled
entries then answered by the bounds derived for add/remove, central events by
dp_accounting under ``NeighboringRelation.ADD_OR_REMOVE_ONE`` (docs/relations.md). A mix of
relations is refused.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import _validate as v
from .central import (EventViews, describe_event, event_from_dict, event_to_dict,
                      flatten_event, relation_text)
from ..core.errors import NotApplicableError
from ..core.protocols import Shuffle
from ..core.relations import adjacency_text
from ..core.results import RdpCurve, jsonable
from ..core.spec import proto_from_dict, proto_to_dict
from .select import bound_answer, compose_parts
from ..core.views import Ask, DeltaAt, EpsilonAt, RdpView

if TYPE_CHECKING:
    from dp_accounting.dp_event import DpEvent
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
    from numpy.typing import ArrayLike

__all__ = ["Accountant", "Entry", "LedgerResult", "EntryShare", "to_dp_accounting"]

#: The ledger-file format (``to_dict`` / ``from_dict``; files: ``shuffledp.interop.ledger_io``).
LEDGER_FORMAT = "shuffledp-ledger"
LEDGER_VERSION = 1


@dataclass(frozen=True)
class Entry:
    """``rounds`` adaptive rounds of ``item`` (a ``Shuffle`` or an elementary dp_accounting event)."""

    item: Any
    rounds: int
    label: str = ""

    @property
    def is_shuffle(self) -> bool:
        return isinstance(self.item, Shuffle)

    def describe(self) -> str:
        s = self.item.describe() if self.is_shuffle else "central " + describe_event(self.item)
        return f"{self.rounds} x {s}"


@dataclass(frozen=True)
class EntryShare:
    """One entry's line in a ledger answer."""

    label: str
    rounds: int
    bound: str           # the bound (or bounds, per order) whose view the winning composer used
    share: float | None  # fraction of the winning composer's budget statistic (see share_basis)
    valid_for: str

    def to_dict(self) -> dict:
        return jsonable({"label": self.label, "rounds": self.rounds, "bound": self.bound,
                          "share": self.share, "valid_for": self.valid_for})


@dataclass(frozen=True)
class LedgerResult:
    """A ledger's answer: the tightest valid composed upper bound, and how it was reached."""

    question: str
    epsilon: float
    delta: float
    composition: str
    kind: str
    valid_for: str
    relation: str
    entries: tuple = ()                 # EntryShare per entry
    composers: tuple = ()               # (name, value or None, reason or None, seconds)
    share_basis: str = ""
    details: dict = field(default_factory=dict, compare=False)

    @property
    def rounds(self) -> int:
        return sum(e.rounds for e in self.entries)

    @property
    def bound(self) -> str:
        """The bounds whose views produced the answer, one per entry (joined by '+')."""
        return "+".join(dict.fromkeys(e.bound for e in self.entries))

    def __float__(self) -> float:
        return float(self.epsilon if self.question == "epsilon" else self.delta)

    def to_dict(self) -> dict:
        return jsonable({
            "question": self.question, "epsilon": self.epsilon, "delta": self.delta,
            "composition": self.composition, "kind": self.kind, "valid_for": self.valid_for,
            "relation": self.relation, "share_basis": self.share_basis,
            "entries": [e.to_dict() for e in self.entries],
            "composers": [{"composer": n, "value": val, "reason": why, "seconds": s}
                          for n, val, why, s in self.composers]})

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def table(self) -> str:
        q = self.question
        lines = [f"ledger of {len(self.entries)} entries, {self.rounds} rounds; relation: {self.relation}",
                 f"answer: {q} = {self.epsilon if q == 'epsilon' else self.delta:.6g} at "
                 f"{'delta' if q == 'epsilon' else 'epsilon'} = "
                 f"{self.delta if q == 'epsilon' else self.epsilon:.6g} "
                 f"({self.kind} bound, composition '{self.composition}')", "",
                 "   composer  value         seconds  note"]
        for n, val, why, s in self.composers:
            mark = "*" if n == self.composition else " "
            vs = f"{val:.6g}" if val is not None else "-"
            lines.append(f"{mark}  {n:8s}  {vs:12s}  {s:7.3f}  {why or ''}")
        # The bound column is as wide as its longest name: a truncated name
        # ("dp_accounting:PoissonSampledDp") cannot be looked up.
        w = max([len("bound"), *(len(e.bound) for e in self.entries)])
        lines += ["", f"   share    rounds  {'bound'.ljust(w)}  entry    "
                      f"(share of {self.share_basis or 'n/a'})"]
        for e in self.entries:
            lines.append(f"   {_share(e.share)}  {e.rounds:6d}  {e.bound.ljust(w)}  {e.label}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _answer(self) -> str:
        q, other = self.question, ("delta" if self.question == "epsilon" else "epsilon")
        return (f"{q}={getattr(self, q):.6g} at {other}={getattr(self, other):.6g}, "
                f"{self.kind} bound, composition={self.composition!r}")

    def __repr__(self) -> str:
        # One line per entry (a dataclass repr was one line of ~1,500 characters).
        import textwrap
        relation = self.relation.split(" (")[0]
        labels = [x.label or "(no label)" for x in self.entries]
        wl = max([0, *map(len, labels)])
        wr = max([0, *(len(str(x.rounds)) for x in self.entries)])
        lines = [f"LedgerResult({self._answer()},",
                 f"  relation={relation!r}, {len(self.entries)} entries, {self.rounds} rounds; "
                 f"shares of {self.share_basis or 'n/a'}:"]
        lines += [f"  {_share(x.share)}  {x.rounds:>{wr}} x {lab.ljust(wl)}  {x.bound}"
                  for x, lab in zip(self.entries, labels)]
        lines += textwrap.wrap(f"valid for: {self.valid_for})", 88, initial_indent="  ",
                               subsequent_indent="    ")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Notebooks: the answer, the composers tried and each entry's share, as tables."""
        import html
        e = html.escape
        bold = " style='font-weight:bold'"
        comp = "".join(
            f"<tr{bold if n == self.composition else ''}>"
            f"<td>{e(n)}</td><td>{e(f'{val:.6g}' if val is not None else '-')}</td>"
            f"<td>{s:.3f}</td><td>{e(why or '')}</td></tr>"
            for n, val, why, s in self.composers)
        ent = "".join(f"<tr><td>{e(x.label)}</td><td>{x.rounds}</td><td>{e(x.bound)}</td>"
                      f"<td>{e(_share(x.share).strip())}</td></tr>" for x in self.entries)
        return (f"<p>ledger of {len(self.entries)} entries, {self.rounds} rounds<br>"
                f"<b>{e(self._answer())}</b><br>valid for {e(self.valid_for)}</p>"
                "<table><tr><th>composer</th><th>value</th><th>seconds</th><th>note</th></tr>"
                f"{comp}</table>"
                "<table><tr><th>entry</th><th>rounds</th><th>bound</th>"
                f"<th>share of {e(self.share_basis or 'n/a')}</th></tr>{ent}</table>"
                f"<p><small>relation: {e(self.relation)}</small></p>")


def _share(share: float | None) -> str:
    return f"{100 * share:6.1f}%" if share is not None and math.isfinite(share) else "    - "


# ------------------------------------------------------------------------------------------
# Entry views for a mixed ledger
# ------------------------------------------------------------------------------------------
class _ShuffleEntryViews:
    """Views of one round of a shuffled protocol, combined over its valid upper bounds."""

    kind = "upper"

    def __init__(self, proto, delta_ref: float, relation: str = "replace_one",
                 rounds: int = 1):
        from .accountant import check_relation
        from .select import applicable, under
        check_relation(proto, relation)
        ok, no = applicable(proto, relation)
        self.proto = proto
        self.bounds = [b for b in ok if b.kind == "upper" and b.default]
        if not self.bounds:
            raise NotApplicableError(f"no valid upper bound applies to {proto.describe()}"
                                     + under(relation, no))
        self._views = {b.id: b.views(proto, derive_pld=True) for b in self.bounds}
        for b in self.bounds:
            if hasattr(b, "ledger_pld_atoms"):
                # A bound whose pair depends on the question (an optimised ε0): the pair
                # it would pick for this entry's rounds at the reference δ.
                self._views[b.id] = _LedgerPairViews(self._views[b.id], b, proto, delta_ref,
                                                     rounds)
        self._rank = {}
        for b in self.bounds:
            try:
                # The single-round answer through the bound's own one-round route (bounds
                # that answer it themselves, e.g. with an optimised eps0, have no usable
                # epsilon_one); only that route, not every route the bound offers.
                self._rank[b.id] = (float(bound_answer(b, proto, EpsilonAt(delta_ref), 1,
                                                       "none").value)
                                    if b.has_dp else math.inf)
            except Exception:                           # noqa: BLE001 — ranking only
                self._rank[b.id] = math.inf
        self.source = None

    def _best(self, attr, exclude_derived=False):
        have = []
        for b in self.bounds:
            try:
                vw = getattr(self._views[b.id], attr)
            except (NotImplementedError, ArithmeticError):
                vw = None
            if vw is None or (exclude_derived and getattr(vw, "derived", False)):
                continue
            have.append((self._rank[b.id], b.id, vw))
        if not have:
            return None, None
        r, bid, vw = min(have, key=lambda t: t[0])
        return (vw, bid) if (attr != "dp" or math.isfinite(r)) else (None, None)

    @property
    def dp(self):
        return self._best("dp")[0]

    @property
    def pld(self):
        vw, _ = self._best("pld", exclude_derived=True)
        return vw if vw is not None else self._best("pld")[0]

    def bound_for(self, composer: str, order=None) -> str:
        if composer == "rdp":
            return ",".join(self.rdp_argmin(order)) if order is not None else "rdp-min"
        if composer == "pld":
            bid = self._best("pld", exclude_derived=True)[1] or self._best("pld")[1]
            derived = bid and getattr(self._views[bid].pld, "derived", False)
            return f"{bid} (RR pair at eps0)" if derived else str(bid)
        return str(self._best("dp")[1])

    def _rdp_bounds(self):
        return [b for b in self.bounds if b.has_rdp]

    def rdp_argmin(self, order):
        o = np.array([max(2, int(round(order)))], dtype=np.int64)
        best, who = math.inf, []
        for b in self._rdp_bounds():
            if o[0] > b.max_order(self.proto):
                continue
            val = float(b.rdp(self.proto, o)[0])
            if val < best:
                best, who = val, [b.id]
        return who

    @property
    def rdp(self):
        bs = self._rdp_bounds()
        if not bs:
            return None
        p = self.proto
        tops = {b.id: int(b.max_order(p)) for b in bs}

        def curve(orders):
            orders = np.asarray(orders, dtype=np.int64)
            out = np.full(orders.shape, math.inf)
            for b in bs:
                m = orders <= tops[b.id]
                if np.any(m):
                    out[m] = np.minimum(out[m], np.asarray(b.rdp(p, orders[m]), dtype=float))
            return out
        grid = "sparse" if any(b.rdp_expensive for b in bs) else "dense"
        return RdpView(curve, max(tops.values()), grid)

    def valid_for(self) -> str:
        # The narrowest class among the entry's bounds (fmt23's class ⊂ any ε0-LDP, ...).
        return min((b.valid_for(self.proto) for b in self.bounds), key=len)

    def valid_for_used(self, composer: str, order=None) -> str:
        """The class the answer holds for: that of the bounds whose views were used."""
        if composer == "rdp":
            ids = self.rdp_argmin(order) if order is not None else [b.id for b in self._rdp_bounds()]
        elif composer == "pld":
            ids = [self._best("pld", exclude_derived=True)[1] or self._best("pld")[1]]
        else:
            ids = [self._best("dp")[1]]
        by_id = {b.id: b for b in self.bounds}
        vals = [by_id[i].valid_for(self.proto) for i in ids if i in by_id]
        return " AND ".join(dict.fromkeys(vals)) if vals else self.valid_for()


class _LedgerPairViews:
    """A bound's views with its PLD view replaced by ``ledger_pld_atoms`` (see there)."""

    def __init__(self, base, bound, proto, delta, rounds):
        self._base, self._b, self._p, self._d, self._T = base, bound, proto, delta, rounds

    @property
    def rdp(self):
        return self._base.rdp

    @property
    def dp(self):
        return self._base.dp

    @functools.cached_property
    def pld(self):
        # cached: the search behind the pair runs once per entry, however often it is asked
        from ..core.views import PldView
        try:
            atoms = self._b.ledger_pld_atoms(self._p, self._d, self._T)
        except (NotApplicableError, ArithmeticError, ValueError):
            return None
        return None if atoms is None else PldView(atoms=lambda: atoms)


class _EventEntryViews(EventViews):
    def bound_for(self, composer: str, order=None) -> str:
        return f"dp_accounting:{self.source}"

    def valid_for_used(self, composer: str, order=None) -> str:
        return self.valid_for()


class Accountant:
    """A privacy ledger: ``compose`` entries, then ask ``epsilon`` / ``delta`` / ``rdp``.

    Parameters
    ----------
    pld_discretization : float, optional
        Grid of the PLD convolution when several entries are mixed (default 2e-4; the ε it
        may cost is at most Σ rounds × grid, usually far less).
    relation : str or dp_accounting ``NeighboringRelation``
        The one neighbouring relation every entry is composed under: "replace_one"
        (default) or "add_or_remove_one" (docs/relations.md). Under add/remove, shuffled
        entries are answered by the bounds derived for it (a protocol in which every user
        reports is refused when composed), central events by dp_accounting under
        ``NeighboringRelation.ADD_OR_REMOVE_ONE``; composing a ledger of another relation
        is refused.
    """

    def __init__(self, *, pld_discretization: float | None = None,
                 answer_only: bool = False, relation: object = "replace_one") -> None:
        from ..core.relations import relation as _relation
        self._entries: list[Entry] = []
        #: The neighbouring relation every entry is composed under (docs/relations.md).
        self.relation = _relation(relation)
        #: True: skip lower bounds and estimates (they never change the answer; faster).
        self.answer_only = bool(answer_only)
        self.pld_discretization = (None if pld_discretization is None else
                                   v.real("pld_discretization", pld_discretization,
                                          lo=0.0, lo_open=True, hi=1.0))

    # ----- building ------------------------------------------------------------------
    def compose(self, item: Shuffle | DpEvent | Accountant, rounds: int = 1, *,
                label: str | None = None) -> Accountant:
        """Add ``rounds`` adaptive rounds of ``item``: a ``Shuffle``, a dp_accounting event,
        or another ledger of the same relation (its entries, each repeated ``rounds``
        times)."""
        rounds = v.integer("rounds", rounds, lo=1)
        if isinstance(item, Shuffle):
            if self.relation != "replace_one":
                from ..core.relations import refuse_everyone_reports
                refuse_everyone_reports(item)
            self._entries.append(Entry(item, rounds, label or item.describe()))
            return self
        if isinstance(item, Accountant):
            if item.relation != self.relation:
                raise ValueError(
                    f"cannot compose a ledger under relation={item.relation!r} into a ledger "
                    f"under relation={self.relation!r}: every entry of a ledger is analysed "
                    "under one neighbouring relation, and numbers under different relations "
                    "do not compose (docs/relations.md)")
            for e in item.entries:
                self._entries.append(Entry(e.item, e.rounds * rounds, label or e.label))
            return self
        if type(item).__module__.startswith("dp_accounting"):
            for e, c in flatten_event(item, rounds, self.relation):
                self._entries.append(Entry(e, c, label or "central " + describe_event(e)))
            return self
        raise ValueError("item must be a Shuffle(...) or a dp_accounting DpEvent "
                         f"(GaussianDpEvent, LaplaceDpEvent, PoissonSampledDpEvent, ...); got {item!r}")

    @property
    def entries(self) -> tuple:
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    # ----- questions -----------------------------------------------------------------
    def epsilon(self, delta: float) -> LedgerResult:
        """Smallest certified ε such that the whole ledger is (ε, δ)-DP (under the ledger's
        ``relation``)."""
        return self._ask(EpsilonAt(v.probability("delta", delta)))

    def delta(self, epsilon: float) -> LedgerResult:
        """Smallest certified δ such that the whole ledger is (ε, δ)-DP (under the ledger's
        ``relation``)."""
        return self._ask(DeltaAt(v.real("epsilon", epsilon, lo=0.0)))

    def _need_entries(self):
        if not self._entries:
            raise ValueError("the ledger is empty: call compose(protocol_or_event, rounds) first")

    def _merged(self) -> list[tuple[Entry, tuple]]:
        """The entries with identical items merged: [(entry, the entries it stands for)].

        T1 + T2 adaptive rounds of one protocol (or one central event) are T1 + T2 rounds of
        it, whichever way they were entered; composing them as separate entries
        (heterogeneous composition, a common PLD grid) could only change the answer by how
        they were entered. Items are identical when their records are equal; the merged
        entries keep the order of first appearance and the first entry's label.
        """
        groups: list[list[Entry]] = []
        for e in self._entries:
            for g in groups:
                if _same_item(g[0].item, e.item):
                    g.append(e)
                    break
            else:
                groups.append([e])
        return [(g[0] if len(g) == 1 else Entry(g[0].item, sum(m.rounds for m in g), g[0].label),
                 tuple(g)) for g in groups]

    def _ask(self, ask: Ask) -> LedgerResult:
        self._need_entries()
        merged = self._merged()
        if len(merged) == 1 and merged[0][0].is_shuffle:
            return self._one_shuffle(ask, *merged[0])
        if any(e.is_shuffle and e.item.is_deployment for e, _ in merged):
            from . import deployment    # every combination of the entries' reductions
            return deployment.ledger_ask(self, ask)
        R = sum(e.rounds for e in self._entries)
        dref = (ask.delta if isinstance(ask, EpsilonAt) else 1e-6) / (2.0 * R)
        views = []
        for e, _ in merged:
            views.append(_ShuffleEntryViews(e.item, dref, self.relation, e.rounds) if e.is_shuffle
                         else _EventEntryViews(e.item, self.relation))
        parts = [(vw, e.rounds) for vw, (e, _) in zip(views, merged)]
        best, rows = compose_parts(parts, ask, discretization=self.pld_discretization)
        if best is None:
            raise NotApplicableError("no composer accepts this ledger: " +
                                     "; ".join(f"{n}: {w}" for n, _, w, _ in rows))
        shares = best.details.get("shares") or [None] * len(parts)
        order = best.details.get("order") if best.composition == "rdp" else None
        # One line per entry as composed; a merged entry's share is split by rounds.
        ents = tuple(EntryShare(m.label, m.rounds, vw.bound_for(best.composition, order),
                                _split_share(s, m.rounds, e.rounds),
                                vw.valid_for_used(best.composition, order))
                     for (e, members), vw, s in zip(merged, views, shares) for m in members)
        valid = " AND ".join(dict.fromkeys(en.valid_for for en in ents))
        eps, dlt = ((best.value, ask.delta) if isinstance(ask, EpsilonAt)
                    else (ask.epsilon, best.value))
        return LedgerResult(ask.solves, eps, dlt, best.composition, "upper", valid,
                            relation_text(self.relation),
                            ents, tuple(rows), best.details.get("share_basis", ""),
                            dict(best.details))

    def _one_shuffle(self, ask: Ask, e, members):
        # A one-entry ledger is the single-protocol question (the same loop).
        from . import accountant as _acc
        r = _acc.ask_protocol(e.item, ask, e.rounds, upper_only=self.answer_only, lower=False,
                      relation=self.relation)
        ch = r.chosen
        val = r.epsilon if isinstance(ask, EpsilonAt) else r.delta
        routes = (ch.details.get("routes") if ch else None) or {r.composition: val}
        rows = tuple((n, float(val), None, 0.0) for n, val in routes.items())
        ent = tuple(EntryShare(m.label, m.rounds, r.bound, m.rounds / e.rounds, r.valid_for)
                    for m in members)
        return LedgerResult(ask.solves, r.epsilon, r.delta, r.composition, r.kind, r.valid_for,
                            relation_text(self.relation), ent, rows,
                            "the only entry" if len(members) == 1 else
                            "rounds (identical entries merged into one)",
                            {"result": r, "candidates": r.candidates})

    def rdp(self, orders: ArrayLike) -> RdpCurve:
        """RDP curve of the whole ledger at ``orders`` (> 1): per entry the per-order minimum
        over its valid upper bounds, times its rounds, summed over entries."""
        self._need_entries()
        lam = v.orders("orders", orders)
        total = np.zeros(lam.shape)
        per_entry = []
        from . import accountant as _acc
        for e in self._entries:
            if e.is_shuffle:
                c = _acc.rdp(e.item, lam, rounds=e.rounds, relation=self.relation)
                vals, who = np.asarray(c.values, dtype=float), c.bound
            else:
                f = _rdp_curve_event(e.item, self.relation)
                if f is None:
                    raise NotApplicableError(
                        f"{type(e.item).__name__}: no RDP view in a ledger (dp_accounting's RDP "
                        "accountant supports a Poisson-sampled Gaussian only under "
                        "ADD_OR_REMOVE_ONE, and this library composes it through its PLD); "
                        "ask the ledger's epsilon or delta instead")
                vals, who = e.rounds * _real_orders(f, lam), "dp_accounting:" + type(e.item).__name__
            total = total + vals
            per_entry.append({"label": e.label, "bound": who, "values": vals})
        return RdpCurve(lam, total, "ledger", "upper",
                        " AND ".join(dict.fromkeys(
                            _valid_for_static(e, self.relation) for e in self._entries)),
                        sum(e.rounds for e in self._entries),
                        {"entries": per_entry, "relation": relation_text(self.relation)},
                        adjacency=adjacency_text(self.relation), relation=self.relation)

    def to_dp_accounting(self, *, discretization: float = 1e-4) -> PrivacyLossDistribution:
        """The whole ledger as one dp_accounting ``PrivacyLossDistribution`` (pessimistic,
        on the grid ``discretization``; see ``shuffledp.to_dp_accounting``), under the
        ledger's relation: compose it with PLDs of the same ``NeighboringRelation``."""
        self._need_entries()
        if any(e.is_shuffle and e.item.is_deployment for e in self._entries):
            from . import deployment    # each deployment entry as its best reduction
            from .accountant import ask_protocol as plain_ask
            return deployment.plain_ledger(self, plain_ask).to_dp_accounting(
                discretization=discretization)
        from ..compose.pld import compose_parts
        R = sum(e.rounds for e in self._entries)
        parts = [((_ShuffleEntryViews(e.item, 1e-6 / (2.0 * R), self.relation, e.rounds)
                   if e.is_shuffle
                   else _EventEntryViews(e.item, self.relation)), e.rounds)
                 for e, _ in self._merged()]
        for vw, _ in parts:
            if vw.pld is None:
                raise NotApplicableError(f"{vw.bound_for('pld')}: no dominating pair (PLD view)")
        return compose_parts(parts, v.real("discretization", discretization, lo=0.0,
                                           lo_open=True, hi=1.0))[0]

    # ----- state -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The ledger as plain data (the ledger-file format, ``docs/ledger.md``)."""
        entries: list[dict] = []
        out: dict = {"format": LEDGER_FORMAT, "version": LEDGER_VERSION,
                     "relation": ("replace-one" if self.relation == "replace_one"
                                  else self.relation),
                     "entries": entries}
        if self.pld_discretization is not None:
            out["pld_discretization"] = self.pld_discretization
        for e in self._entries:
            row = {"rounds": e.rounds, "label": e.label}
            if e.is_shuffle:
                row["shuffle"] = proto_to_dict(e.item)
            else:
                row["central"] = event_to_dict(e.item)
            entries.append(row)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Accountant":
        """A ledger from ``to_dict``'s data (or a parsed ledger file)."""
        if not isinstance(d, dict):
            raise ValueError(f"a ledger must be a table/object; got {type(d).__name__}")
        if d.get("format", LEDGER_FORMAT) != LEDGER_FORMAT:
            raise ValueError(f"format must be {LEDGER_FORMAT!r}; got {d.get('format')!r}")
        if int(d.get("version", LEDGER_VERSION)) != LEDGER_VERSION:
            raise ValueError(f"version must be {LEDGER_VERSION}; got {d.get('version')!r}")
        from ..core.relations import relation as _relation
        entries = d.get("entries")
        if not isinstance(entries, list) or not entries:
            raise ValueError("entries must be a non-empty list of tables with 'rounds' and "
                             "either 'shuffle' or 'central'")
        # One relation for the whole file: the top-level key, and any entry that names one
        # must name the same (a mix of relations does not compose).
        named = {}
        if "relation" in d:
            named["relation"] = _relation(d["relation"])
        for i, row in enumerate(entries):
            if isinstance(row, dict) and "relation" in row:
                named[f"entries[{i}].relation"] = _relation(row["relation"])
        if len(set(named.values())) > 1:
            raise ValueError("a ledger is composed under one neighbouring relation; this one "
                             "names several: " + ", ".join(f"{k} = {x!r}"
                                                           for k, x in named.items()))
        rel = next(iter(named.values()), "replace_one")
        acc = cls(pld_discretization=d.get("pld_discretization"), relation=rel)
        for i, row in enumerate(entries):
            if not isinstance(row, dict) or ("shuffle" in row) == ("central" in row):
                raise ValueError(f"entries[{i}] must have exactly one of 'shuffle' or 'central'; got {row!r}")
            item = proto_from_dict(row["shuffle"]) if "shuffle" in row else event_from_dict(row["central"])
            acc.compose(item, row.get("rounds", 1), label=row.get("label"))
        return acc

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def describe(self) -> str:
        return "ledger: " + "; ".join(e.describe() for e in self._entries)

    def __repr__(self):
        rel = "" if self.relation == "replace_one" else f"relation={self.relation!r}, "
        return f"Accountant({rel}{len(self._entries)} entries: " + "; ".join(
            e.describe() for e in self._entries) + ")"


def _same_item(a, b) -> bool:
    """Equal records of the same type (protocols, dp_accounting events)."""
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except (ValueError, TypeError):       # a record holding arrays: not merged (always safe)
        return False


def _split_share(share, rounds: int, total: int):
    return None if share is None else share * rounds / total


def _valid_for_static(e: Entry, relation: str = "replace_one") -> str:
    if e.is_shuffle and e.item.is_deployment:
        from . import deployment
        return deployment.valid_for(
            e.item, lambda p: _valid_for_static(Entry(p, 1, ""), relation))
    if e.is_shuffle:
        from .accountant import applicable
        ok, _ = applicable(e.item, relation)
        ups = [b for b in ok if b.kind == "upper" and b.default]
        return min((b.valid_for(e.item) for b in ups), key=len) if ups else "none"
    return describe_event(e.item) + " (central)"


def _rdp_curve_event(event, relation: str = "replace_one"):
    from .central import event_rdp_curve
    return event_rdp_curve(event, relation)


def _real_orders(f, lam):
    """Event RDP at real orders: closed forms accept any real λ > 1."""
    return np.asarray(f(np.asarray(lam, dtype=float).astype(np.float64).view(np.ndarray)),
                      dtype=float)


def to_dp_accounting(proto: Shuffle, rounds: int = 1, *, discretization: float = 1e-4,
                     relation: object = "replace_one") -> PrivacyLossDistribution:
    """``rounds`` adaptive rounds of ``proto`` as a dp_accounting ``PrivacyLossDistribution``.

    The PLD is that of the dominating pair of the protocol's tightest valid upper bound
    that has one (``fmt23`` where it applies, else ``fmt20``; a pure ε0-DP protocol with no
    pair: binary randomized response at ε0), both directions, losses rounded *up* to the
    grid ``discretization`` (pessimistic: its δ(ε) is an upper bound; the rounding costs at
    most ``rounds × discretization`` in ε) and truncated mass charged as infinite loss.
    Neighbouring relation: ``relation`` (default replacement; ``"add_or_remove_one"``: the
    add/remove pair of the bounds derived for it, both directions). Compose it with your own
    dp_accounting PLDs built on the same grid (``value_discretization_interval``) and with
    the same ``NeighboringRelation`` (``REPLACE_ONE`` or ``ADD_OR_REMOVE_ONE``); add
    ``composition.PLD_ABS_SLACK`` to any δ read from it for the FFT's floating-point error.
    """
    if not isinstance(proto, Shuffle):
        raise ValueError(f"protocol must be a Shuffle(mechanism, n, sampling=None); got {proto!r}")
    return Accountant(relation=relation).compose(proto, rounds).to_dp_accounting(
        discretization=discretization)
