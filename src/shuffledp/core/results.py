"""Result records: never a bare float whose meaning the caller must guess.

Every number carries its kind (``upper`` = a guarantee, ``lower`` = what some
dataset/randomizer provably leaks, ``estimate`` = neither), the class of randomizers it is
valid for, the bound that produced it and how rounds were composed.

Results behave like numbers where that is safe: ``float(r)`` is the answer (ε for
``epsilon``, δ for ``delta``), ``f"{r:.3f}"`` formats it, and ``<``/``<=``/``>``/``>=``
compare it with numbers or other results. ``str(r)`` is the full table, ``repr(r)`` one
line, and notebooks show ``_repr_html_``.

Vocabulary (one meaning per field):

* ``kind``: ``upper`` | ``lower`` | ``estimate`` (``KINDS``);
* ``composition``: how the rounds were composed — ``none`` (one round, nothing composed),
  ``rdp``, ``kov15``, ``pld``, ``exact`` (a closed form that is exact for the mechanism's
  T-fold composition, e.g. the Gaussian's σ/√T) (``COMPOSITIONS``);
* ``scope``: a short name of the class of randomizers the number is valid for (``SCOPES``);
  ``valid_for`` is the full sentence.

Neighbouring datasets differ in one user's input (replace-one neighbours).
``Gaussian(sigma)`` is noise per unit ℓ2 *diameter* of the input set, i.e. noise
multiplier 2σ for inputs clipped to ℓ2 norm C (``ADJACENCY``; docs/conventions.md); a
Gaussian protocol's table and JSON state both.
"""

from __future__ import annotations

import html
import json
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KINDS", "COMPOSITIONS", "SCOPES", "ADJACENCY", "Candidate", "Result", "RdpCurve",
           "format_table", "noise_units"]

KINDS = ("upper", "lower", "estimate")

#: Every value the ``composition`` field can take, with its meaning.
COMPOSITIONS = {
    "none": "one round: the single-round bound, nothing composed",
    "rdp": "per-round RDP summed over rounds, then converted to (epsilon, delta)",
    "kov15": "per-round (epsilon, delta) composed by the optimal homogeneous theorem "
             "(Kairouz-Oh-Viswanath 2015), delta split optimised",
    "pld": "privacy-loss distribution of the pair composed numerically (dp_accounting)",
    "exact": "closed form exact for the T-fold composition of this mechanism",
}

#: Short names of the classes a number can be valid for, broadest first within a family
#: (console tables show these; ``valid_for`` holds the full sentence).
SCOPES = {
    "ldp": "any eps0-LDP randomizer",
    "class-S": "randomizers in class S(eps0) (k-RR, 2-input randomizers, matrices passing "
               "the finite check)",
    "this-randomizer": "the given randomizer only",
    "l2": "the Gaussian mechanism on any inputs of l2 diameter <= 1",
    "instance": "a lower bound: one named randomizer and dataset pair leaks this",
    "homogeneous": "an estimate: homogeneous neighbouring datasets only",
    "approximation": "an estimate: constants not confirmed",
    "rdp-estimate": "an estimate: a lower-bound instance's RDP curve converted",
}

#: Rank of a scope inside its family: larger = narrower (fewer randomizers covered).
SCOPE_RANK = {"ldp": 0, "class-S": 1, "this-randomizer": 2, "l2": 0}

ADJACENCY = ("neighbouring datasets: replace-one neighbours (replacement: one user's input "
             "replaced by another, n fixed); Gaussian(sigma) = sigma per unit l2 diameter of the inputs = "
             "noise multiplier 2*sigma for inputs clipped to l2 norm C (Opacus, dp_accounting: "
             "Gaussian.from_noise_multiplier(z) is Gaussian(z/2))")
# (``relations.adjacency_text("replace_one")`` is this sentence; a result under another
# relation carries that relation's sentence in ``adjacency`` and its name in ``relation``.)


def noise_units(protocol) -> str | None:
    """'noise: sigma = 2.5 per unit l2 diameter = noise multiplier 5 ...' for a Gaussian
    protocol (None otherwise): the footer line that says which σ a table means."""
    units = getattr(getattr(protocol, "mechanism", None), "units", None)
    return f"noise: {units()}" if callable(units) else None


class NumberRecord:
    """Mix-in: a record whose ``_value()`` is the number it stands for."""

    def _value(self) -> float:
        raise NotImplementedError

    def __float__(self) -> float:
        return float(self._value())

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        return format(float(self), spec)

    @staticmethod
    def _other(o):
        if isinstance(o, NumberRecord):
            return float(o)
        if isinstance(o, (int, float, np.floating, np.integer)) and not isinstance(o, bool):
            return float(o)
        return None

    def __lt__(self, o):
        x = self._other(o)
        return NotImplemented if x is None else float(self) < x

    def __le__(self, o):
        x = self._other(o)
        return NotImplemented if x is None else float(self) <= x

    def __gt__(self, o):
        x = self._other(o)
        return NotImplemented if x is None else float(self) > x

    def __ge__(self, o):
        x = self._other(o)
        return NotImplemented if x is None else float(self) >= x


def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


@dataclass(frozen=True)
class Candidate(NumberRecord):
    """One bound's answer to one question (``float(c)`` is its ε, or its δ for a δ question
    — see ``question``)."""

    bound: str
    kind: str
    valid_for: str
    epsilon: float
    delta: float
    seconds: float
    composition: str = "none"
    details: dict = field(default_factory=dict, compare=False)
    default: bool = True   # False: reconstructed/unconfirmed or an estimate: never the answer
    scope: str = ""        # short class name (SCOPES); "" when the bound declares none
    question: str = "epsilon"

    def _value(self):
        return self.epsilon if self.question == "epsilon" else self.delta

    def __repr__(self) -> str:
        return (f"Candidate({self.bound!r}, {self.kind}, {self.question}={_fmt(self._value())}, "
                f"composition={self.composition!r})")

    def to_dict(self) -> dict:
        return jsonable({"bound": self.bound, "kind": self.kind, "epsilon": self.epsilon,
                          "delta": self.delta, "seconds": self.seconds,
                          "valid_for": self.valid_for, "scope": self.scope,
                          "composition": self.composition, "details": self.details})


@dataclass(frozen=True)
class Result(NumberRecord):
    """The accountant's answer: the tightest valid upper bound, and everything else.

    ``question`` is "epsilon" (ε for a given δ) or "delta" (δ for a given ε); ``float(r)``
    is that answer. ``notes`` are things the user should know about how it was computed
    (for instance that the PLD route is missing because ``dp_accounting`` is not
    installed). ``adjacency`` states the neighbouring relation the numbers use.

    >>> import shuffledp as sd
    >>> r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10_000), delta=1e-6)
    >>> f"{r:.3f}", r < 1.0
    ('0.053', True)
    """

    question: str
    epsilon: float
    delta: float
    rounds: int
    bound: str
    kind: str
    valid_for: str
    candidates: tuple = ()
    not_applicable: tuple = ()          # ((bound id, reason), ...)
    protocol: Any = None
    composition: str = "none"
    notes: tuple = ()
    adjacency: str = ADJACENCY
    relation: str = "replace_one"

    def _value(self):
        return self.epsilon if self.question == "epsilon" else self.delta

    @property
    def scope(self) -> str:
        c = self.chosen
        return c.scope if c is not None else ""

    def __repr__(self) -> str:
        other = (f"delta={_fmt(self.delta)}" if self.question == "epsilon"
                 else f"epsilon={_fmt(self.epsilon)}")
        return (f"Result({self.question}={_fmt(self._value())}, {self.kind}, "
                f"bound={self.bound!r}, {other}, rounds={self.rounds}, "
                f"valid for: {self.scope or self.valid_for})")

    def _repr_html_(self) -> str:
        return format_html(self)

    @property
    def chosen(self) -> Candidate | None:
        for c in self.candidates:
            if c.bound == self.bound and c.kind == self.kind:
                return c
        return None

    @property
    def lower(self) -> Candidate | None:
        """The tightest lower bound among the candidates (None if there is none)."""
        lows = [c for c in self.candidates if c.kind == "lower"]
        if not lows:
            return None
        key = (lambda c: c.epsilon) if self.question == "epsilon" else (lambda c: c.delta)
        return max(lows, key=key)

    @property
    def gap(self) -> float | None:
        """Ratio of the chosen upper bound to the tightest lower bound (None without one)."""
        lo = self.lower
        if lo is None or self.kind != "upper":
            return None
        a, b = ((self.epsilon, lo.epsilon) if self.question == "epsilon" else (self.delta, lo.delta))
        return a / b if b > 0 else math.inf

    def to_dict(self) -> dict:
        return jsonable({
            "epsilon": self.epsilon, "delta": self.delta, "rounds": self.rounds,
            "bound": self.bound, "kind": self.kind, "valid_for": self.valid_for,
            "composition": self.composition, "scope": self.scope, "adjacency": self.adjacency,
            "relation": self.relation,
            "notes": list(self.notes),
            "protocol": self.protocol.describe() if self.protocol is not None else None,
            **_noise_dict(self.protocol),
            "candidates": [c.to_dict() for c in self.candidates],
            "not_applicable": [{"bound": b, "reason": r} for b, r in self.not_applicable],
        })

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def table(self, details: bool = False) -> str:
        """The candidates as a console table (≤ 100 columns); ``details=True`` adds the
        full validity sentence and the route details of every row."""
        return format_table(self, details=details)

    def __str__(self) -> str:
        return self.table()


@dataclass(frozen=True)
class RdpCurve:
    """An RDP curve: ``values[i]`` bounds D_λ at ``orders[i]`` for ``rounds`` rounds.

    ``curve.table()`` (also ``str(curve)``) is an order/value table; notebooks show
    ``_repr_html_``; ``len(curve)`` and iteration give (order, value) pairs.
    """

    orders: np.ndarray
    values: np.ndarray
    bound: str
    kind: str
    valid_for: str
    rounds: int = 1
    details: dict = field(default_factory=dict, compare=False)
    scope: str = ""
    adjacency: str = ADJACENCY
    relation: str = "replace_one"

    def __len__(self) -> int:
        return len(self.orders)

    def __iter__(self):
        return iter(zip((float(o) for o in self.orders), (float(x) for x in self.values)))

    def __repr__(self) -> str:
        return (f"RdpCurve({self.bound!r}, {self.kind}, {len(self)} orders "
                f"{_fmt(float(np.min(self.orders)))}..{_fmt(float(np.max(self.orders)))}, "
                f"rounds={self.rounds}, valid for: {self.scope or self.valid_for})")

    def rows(self) -> list[dict]:
        per = self.details.get("bound_per_order")
        return [{"order": o, "rdp": v, **({"bound": per[i]} if per else {})}
                for i, (o, v) in enumerate(self)]

    def table(self) -> str:
        per = self.details.get("bound_per_order")
        lines = [f"{self.kind} RDP curve '{self.bound}', rounds={self.rounds}",
                 f"valid for: {self.valid_for}", "",
                 f"{'order':>10}  {'RDP epsilon':>14}" + ("  bound" if per else "")]
        for i, (o, v) in enumerate(self):
            lines.append(f"{o:>10g}  {_fmt(v):>14}" + (f"  {per[i]}" if per else ""))
        lines += ["", _wrap(self.adjacency)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        e = html.escape
        per = self.details.get("bound_per_order")
        head = "<tr><th>order</th><th>RDP epsilon</th>" + ("<th>bound</th>" if per else "") + "</tr>"
        body = "".join(f"<tr><td>{o:g}</td><td>{e(_fmt(v))}</td>"
                       + (f"<td>{e(str(per[i]))}</td>" if per else "") + "</tr>"
                       for i, (o, v) in enumerate(self))
        return (f"<p><b>{e(self.kind)}</b> RDP curve <code>{e(self.bound)}</code>, "
                f"rounds = {self.rounds}; valid for {e(self.valid_for)}</p>"
                f"<table>{head}{body}</table><p><small>{e(self.adjacency)}</small></p>")

    def to_dict(self) -> dict:
        return jsonable({"orders": self.orders, "values": self.values, "bound": self.bound,
                          "kind": self.kind, "valid_for": self.valid_for, "scope": self.scope,
                          "rounds": self.rounds, "adjacency": self.adjacency,
                          "relation": self.relation,
                          "details": self.details})


def _noise_dict(protocol) -> dict:
    """JSON: a Gaussian protocol's noise in both units (nothing for other mechanisms)."""
    m: Any = getattr(protocol, "mechanism", None)
    if getattr(m, "units", None) is None:
        return {}
    return {"noise": {"sigma_per_unit_diameter": m.sigma, "noise_multiplier": m.noise_multiplier,
                      "meaning": m.units()}}


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "inf"
    if x == 0:
        return "0"
    return f"{x:.6g}" if 1e-4 <= abs(x) < 1e6 else f"{x:.4e}"


WIDTH = 100


def _wrap(text: str, indent: str = "") -> str:
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent=indent or "  ",
                                   break_on_hyphens=False))


def _short_scope(c: Candidate) -> str:
    return c.scope or c.valid_for[:24]


def _rows(r: Result):
    order = sorted(r.candidates, key=lambda c: ({"upper": 0, "lower": 1, "estimate": 2}[c.kind],
                                                c.epsilon if r.question == "epsilon" else c.delta))
    for c in order:
        mark = "*" if (c.bound == r.bound and c.kind == r.kind) else ""
        val = c.epsilon if r.question == "epsilon" else c.delta
        tag = c.kind if c.default or c.kind != "upper" else "upper (not default)"
        yield c, mark, val, tag


def format_table(r: Result, details: bool = False) -> str:
    """A readable table of every candidate, the chosen one marked with '*'.

    Lines fit in 100 columns: the validity column holds the short class name (see
    ``SCOPES``); ``details=True`` lists each row's full validity sentence below the table.
    """
    head = (f"{_wrap(r.protocol.describe()) if r.protocol is not None else ''}\n"
            f"rounds={r.rounds}  " + (f"delta={_fmt(r.delta)}" if r.question == "epsilon"
                                       else f"epsilon={_fmt(r.epsilon)}"))
    col = "epsilon" if r.question == "epsilon" else "delta"
    rows = [("", "bound", col, "kind", "composition", "seconds", "valid for")]
    for c, mark, val, tag in _rows(r):
        rows.append((mark, c.bound, _fmt(val), tag, c.composition, f"{c.seconds:.3f}",
                     _short_scope(c)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [head, ""]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    val = r.epsilon if r.question == "epsilon" else r.delta
    lines.append("")
    lines.append(_wrap(f"answer: {col} = {_fmt(val)}  ({r.kind} bound '{r.bound}', valid for "
                       f"{r.valid_for})"))
    lo = r.lower
    if lo is not None:
        lv = lo.epsilon if r.question == "epsilon" else lo.delta
        lines.append(f"tightest lower bound: {_fmt(lv)} ('{lo.bound}'); gap x{_fmt(r.gap)}")
    if any(c.kind == "estimate" for c in r.candidates):
        lines.append("estimate rows are neither guarantees nor lower bounds; they are shown "
                     "for comparison.")
    if details:
        lines += ["", "valid for (full):"]
        for c, _, _, _ in _rows(r):
            lines.append(_wrap(f"  {c.bound} ({c.kind}): {c.valid_for}", "      "))
    groups: dict = {}
    for b, why in r.not_applicable:          # one line per reason, in first-seen order
        groups.setdefault(why, []).append(b)
    for why, bs in groups.items():
        lines.append(_wrap(f"not applicable: {', '.join(bs)}: {why}"))
    for note in r.notes:
        lines.append(_wrap(f"note: {note}"))
    lines.append(_wrap(r.adjacency))
    units = noise_units(r.protocol)
    if units:
        lines.append(_wrap(units))
    return "\n".join(lines)


def format_html(r: Result) -> str:
    """An HTML table of the candidates (notebooks: ``Result._repr_html_``)."""
    e = html.escape
    col = "epsilon" if r.question == "epsilon" else "delta"
    val = r.epsilon if r.question == "epsilon" else r.delta
    head = "".join(f"<th>{h}</th>" for h in ("", "bound", col, "kind", "composition",
                                               "valid for"))
    body = []
    for c, mark, v, tag in _rows(r):
        style = " style='font-weight:bold'" if mark else ""
        body.append(f"<tr{style}><td>{mark}</td><td>{e(c.bound)}</td><td>{e(_fmt(v))}</td>"
                    f"<td>{e(tag)}</td><td>{e(c.composition)}</td>"
                    f"<td title='{e(c.valid_for)}'>{e(_short_scope(c))}</td></tr>")
    desc = e(r.protocol.describe()) if r.protocol is not None else ""
    other = (f"delta = {_fmt(r.delta)}" if r.question == "epsilon"
             else f"epsilon = {_fmt(r.epsilon)}")
    notes = "".join(f"<br>note: {e(n)}" for n in r.notes)
    units = noise_units(r.protocol)
    if units:
        notes += f"<br>{e(units)}"
    return (f"<p>{desc}, rounds = {r.rounds}, {e(other)}<br><b>{col} = {e(_fmt(val))}</b> "
            f"({e(r.kind)} bound <code>{e(r.bound)}</code>, valid for {e(r.valid_for)})</p>"
            f"<table><tr>{head}</tr>{''.join(body)}</table>"
            f"<p><small>{e(r.adjacency)}{notes}</small></p>")
