"""Result records: never a bare float whose meaning the caller must guess.

Every number carries its kind (``upper`` = a guarantee, ``lower`` = what some
dataset/randomizer provably leaks, ``estimate`` = neither), the class of randomizers it is
valid for, the bound that produced it and how rounds were composed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KINDS", "Candidate", "Result", "RdpCurve", "format_table"]

KINDS = ("upper", "lower", "estimate")


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


@dataclass(frozen=True)
class Candidate:
    """One bound's answer to one question."""

    bound: str
    kind: str
    valid_for: str
    epsilon: float
    delta: float
    seconds: float
    composition: str = "none"
    details: dict = field(default_factory=dict, compare=False)
    default: bool = True   # False: tagged [R]/[U] or otherwise never the accountant's answer

    def to_dict(self) -> dict:
        return _jsonable({"bound": self.bound, "kind": self.kind, "epsilon": self.epsilon,
                          "delta": self.delta, "seconds": self.seconds,
                          "valid_for": self.valid_for, "composition": self.composition,
                          "details": self.details})


@dataclass(frozen=True)
class Result:
    """The accountant's answer: the tightest valid upper bound, and everything else.

    ``question`` is "epsilon" (ε for a given δ) or "delta" (δ for a given ε).
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
        return _jsonable({
            "epsilon": self.epsilon, "delta": self.delta, "rounds": self.rounds,
            "bound": self.bound, "kind": self.kind, "valid_for": self.valid_for,
            "composition": self.composition,
            "protocol": self.protocol.describe() if self.protocol is not None else None,
            "candidates": [c.to_dict() for c in self.candidates],
            "not_applicable": [{"bound": b, "reason": r} for b, r in self.not_applicable],
        })

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def table(self) -> str:
        return format_table(self)

    def __str__(self) -> str:
        return self.table()


@dataclass(frozen=True)
class RdpCurve:
    """An RDP curve: ``values[i]`` bounds D_λ at ``orders[i]`` for ``rounds`` rounds."""

    orders: np.ndarray
    values: np.ndarray
    bound: str
    kind: str
    valid_for: str
    rounds: int = 1
    details: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        return _jsonable({"orders": self.orders, "values": self.values, "bound": self.bound,
                          "kind": self.kind, "valid_for": self.valid_for, "rounds": self.rounds,
                          "details": self.details})


def _fmt(x: float) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "inf"
    if x == 0:
        return "0"
    return f"{x:.6g}" if 1e-4 <= abs(x) < 1e6 else f"{x:.4e}"


def format_table(r: Result) -> str:
    """A readable table of every candidate, the chosen one marked with '*'."""
    head = (f"{r.protocol.describe() if r.protocol is not None else ''}\n"
            f"rounds={r.rounds}  " + (f"delta={_fmt(r.delta)}" if r.question == "epsilon"
                                       else f"epsilon={_fmt(r.epsilon)}"))
    col = "epsilon" if r.question == "epsilon" else "delta"
    rows = [("", "bound", col, "kind", "composition", "seconds", "valid for")]
    order = sorted(r.candidates, key=lambda c: ({"upper": 0, "lower": 1, "estimate": 2}[c.kind],
                                                c.epsilon if r.question == "epsilon" else c.delta))
    for c in order:
        mark = "*" if (c.bound == r.bound and c.kind == r.kind) else ""
        val = c.epsilon if r.question == "epsilon" else c.delta
        tag = c.kind if c.default or c.kind != "upper" else "upper (not default)"
        rows.append((mark, c.bound, _fmt(val), tag, c.composition, f"{c.seconds:.3f}", c.valid_for))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [head, ""]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    val = r.epsilon if r.question == "epsilon" else r.delta
    lines.append("")
    lines.append(f"answer: {col} = {_fmt(val)}  ({r.kind} bound '{r.bound}', valid for {r.valid_for})")
    lo = r.lower
    if lo is not None:
        lv = lo.epsilon if r.question == "epsilon" else lo.delta
        lines.append(f"tightest lower bound: {_fmt(lv)} ('{lo.bound}'); gap x{_fmt(r.gap)}")
    if any(c.kind == "estimate" for c in r.candidates):
        lines.append("estimate rows are neither guarantees nor lower bounds; they are shown for comparison.")
    groups: dict = {}
    for b, why in r.not_applicable:          # one line per reason, in first-seen order
        groups.setdefault(why, []).append(b)
    for why, bs in groups.items():
        lines.append(f"not applicable: {', '.join(bs)}: {why}")
    return "\n".join(lines)
