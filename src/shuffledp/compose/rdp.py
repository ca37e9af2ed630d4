"""``rdp``: RDP curves add order by order (Mironov 2017, arXiv:1702.07476, Prop. 1), then
the sum is converted to (ε, δ) with the order optimised (Canonne, Kamath, Steinke 2020,
arXiv:2004.00010, Prop. 12). Heterogeneous parts: Σ count_i · ε_i(λ) at every order.

A converted *lower* RDP curve is not a lower bound on ε(δ): it is labelled ``estimate``,
and skipped when an exact single-round lower view exists.
"""

from __future__ import annotations

import math

import numpy as np

from . import conversions as _rdp
from ..core.views import EpsilonAt, Outcome
from ._registry import Composer, merge_parts, register

_GRID_RANK = {"dense": 0, "coarse": 1, "sparse": 2}
#: Orders at most at which ``RdpComposer.floor`` evaluates a view's floor curve (the first
#: ~150 at ratio 1.05, then splits where the floor is still below the value to beat).
MAX_FLOOR_ORDERS = 600
#: Ratio of the first grid of ``floor_proves_above`` (coarse; split where needed).
_PROOF_RATIO = 1.5


def _interval_floors(lam, d, rounds: int, delta: float):
    """The floor of the converted ε on each [λ_i, λ_{i+1}] (``RdpComposer.floor``)."""
    lo, hi = lam[:-1], lam[1:]
    conv = np.log1p(-1.0 / lo) - math.log(delta) / (hi - 1.0) - np.log(lo) / (lo - 1.0)
    return rounds * d[:-1] + conv


def _floor_grid(floor, rounds: int, delta: float, top: float, ratio: float):
    """(orders, floors) on a geometric grid of ``ratio`` from 2 to ``top`` (floors clipped
    at 0), or None where the floor curve is unusable (wrong shape, NaN) or cannot rule out
    the conversion's zero (T·D_floor(2) ≤ −log(1 − δ²)): the start of both of
    ``RdpComposer.floor`` and ``floor_proves_above``."""
    count = max(2, int(math.log(top / 2.0) / math.log(ratio)) + 2)
    lam = np.unique(np.append(np.geomspace(2.0, top, count), [2.0, top]))
    d = np.asarray(floor(lam), dtype=float)
    if d.shape != lam.shape or np.any(np.isnan(d)):
        return None
    d = np.maximum(d, 0.0)
    if not rounds * d[0] > -math.log1p(-delta * delta) * (1.0 + 1e-6):
        return None
    return lam, d


def _split(floor, lam, d, lo, hi):
    """(orders, floors) with the intervals [lo, hi] split at their geometric midpoints (the
    floor of each half is at least the whole one's), or None where the floor curve is
    unusable there."""
    mid = np.sqrt(lo * hi)
    dm = np.asarray(floor(mid), dtype=float)
    if dm.shape != mid.shape or np.any(np.isnan(dm)):
        return None
    order = np.argsort(np.append(lam, mid), kind="stable")
    return np.append(lam, mid)[order], np.append(d, np.maximum(dm, 0.0))[order]


def floor_proves_above(floor, rounds: int, delta: float, top: float, beat: float):
    """A certified floor on every order's converted ε (orders in [2, ``top``], the same
    argument as ``RdpComposer.floor``) when it can be shown to be at least ``beat``, else
    None; ``floor(orders)``: certified lower bounds on the exact D(λ).

    Built for the yes/no question only, coarse to fine: a grid of ratio 1.5, intervals
    whose floor is below ``beat`` split at their geometric midpoints. It gives up as soon
    as an order's own floor (the limit of any interval starting there) is below ``beat``,
    or the order budget is spent. A few dozen orders where the answer is clear, instead of
    the ~150 of ``RdpComposer.floor``'s first grid; any partition gives a valid floor."""
    if not (math.isfinite(beat) and beat > 0.0 and top >= 2.0):
        return None
    got = _floor_grid(floor, rounds, delta, top, _PROOF_RATIO)
    if got is None:
        return None
    lam, d = got
    log_delta = math.log(delta)
    while True:
        # each order's own floor: no interval starting there can do better
        point = rounds * d + np.log1p(-1.0 / lam) - (log_delta + np.log(lam)) / (lam - 1.0)
        if float(np.min(point)) < beat:
            return None
        f = _interval_floors(lam, d, rounds, delta)
        split = f < beat
        if not np.any(split):
            break
        lo, hi = lam[:-1][split], lam[1:][split]
        if np.any(hi <= lo * (1.0 + 1e-6)) or lam.size + lo.size > MAX_FLOOR_ORDERS:
            return None
        got = _split(floor, lam, d, lo, hi)
        if got is None:
            return None
        lam, d = got
    # (the top order's own floor is in ``point``)
    fl = float(min(np.min(f), np.min(point))) * (1.0 - 1e-9)
    return fl if fl >= beat else None


def _total_curve(parts):
    def curve(orders):
        orders = np.asarray(orders, dtype=np.int64)
        tot = np.zeros(orders.shape)
        for v, c in parts:
            tot = tot + c * np.asarray(v.rdp.curve(orders), dtype=float)
        return tot
    return curve


def _setup(parts):
    if len(parts) == 1:
        v, c = parts[0]
        return v.rdp.curve, c, v.rdp.max_order, v.rdp.grid, ("upper" if v.kind == "upper" else "estimate")
    grid = max((v.rdp.grid for v, _ in parts), key=lambda g: _GRID_RANK.get(g, 0))
    top = min(v.rdp.max_order for v, _ in parts)
    return _total_curve(parts), 1, top, grid, "upper"


def _details(parts, conv):
    det = {"order": conv.order, "order_limit_hit": conv.limit_hit,
           "max_order_evaluated": conv.max_order}
    if len(parts) > 1:
        o = np.array([max(2, int(round(conv.order)))], dtype=np.int64)
        vals = [float(c * v.rdp.curve(o)[0]) for v, c in parts]
        tot = sum(vals) or 1.0
        det["shares"] = [x / tot for x in vals]
        det["share_basis"] = f"RDP at order {int(o[0])}"
    return det


@register
class RdpComposer(Composer):
    name = "rdp"
    reference = ("Mironov 2017 (arXiv:1702.07476) Prop. 1; conversion: Canonne, Kamath, "
                 "Steinke 2020 (arXiv:2004.00010) Prop. 12")

    def accepts(self, parts):
        parts = merge_parts(parts)
        if any(v.rdp is None for v, _ in parts):
            return "needs an RDP view of every entry"
        if len(parts) > 1 and any(v.kind != "upper" for v, _ in parts):
            return "mixing entries needs upper bounds"
        v, c = parts[0]
        if len(parts) == 1 and v.kind == "lower" and c == 1 and v.dp is not None:
            return "an exact single-round lower view exists (a converted lower RDP curve is only an estimate)"
        return None

    def floor(self, parts, ask, beat):
        """ε question, one entry whose RDP view has a ``floor`` (a certified lower bound
        on the exact Rényi divergence D(λ) that its curve bounds from above): a floor on
        every order's converted ε, so the whole order search is skipped when it is at or
        above ``beat``.

        On [λ_i, λ_{i+1}] the exact D is non-decreasing in λ, so the curve's value there is
        at least D_floor(λ_i), and each part of the conversion term log(1 − 1/λ) −
        (log δ + log λ)/(λ − 1) is monotone, so it is at least log(1 − 1/λ_i) −
        log δ/(λ_{i+1} − 1) − log λ_i/(λ_i − 1). The zero of the conversion
        (T·D ≤ −log(1 − δ²)) cannot occur once T·D_floor(2) exceeds that threshold (the
        curve at any order is at least the exact D(2)). Intervals whose floor is below
        ``beat`` are split (the floor of a part is at least that of the whole: the same
        monotonicity on a narrower interval) until none is, or the order budget is spent."""
        parts = merge_parts(parts)
        if len(parts) != 1 or not isinstance(ask, EpsilonAt):
            return None
        v, rounds = parts[0]
        if v.kind != "upper" or v.rdp is None or v.rdp.floor is None:
            return None
        top = float(v.rdp.max_order)
        if not top >= 2.0:
            return None
        delta = ask.delta
        # The yes/no question first, on a coarse grid refined where needed (a floor at or
        # above ``beat`` skips the route whatever its exact value); where that does not
        # settle it, the floor as before (the same value as without this step).
        quick = floor_proves_above(v.rdp.floor, rounds, delta, top, beat)
        if quick is not None:
            return quick
        got = _floor_grid(v.rdp.floor, rounds, delta, top, 1.05)     # ratio <= 1.05
        if got is None:
            return None
        lam, d = got
        # the top order itself (the search evaluates no order above it)
        f_top = (rounds * d[-1] + math.log1p(-1.0 / top)
                 - (math.log(delta) + math.log(top)) / (top - 1.0))
        while True:
            lo, hi = lam[:-1], lam[1:]
            f = _interval_floors(lam, d, rounds, delta)
            # Intervals whose floor cannot yet rule them out are split (``_split``), within
            # a budget of MAX_FLOOR_ORDERS evaluated orders.
            split = (f < beat) & (hi > lo * (1.0 + 1e-6)) if math.isfinite(beat) else f < -1.0
            if not np.any(split) or lam.size + int(split.sum()) > MAX_FLOOR_ORDERS:
                break
            got = _split(v.rdp.floor, lam, d, lo[split], hi[split])
            if got is None:
                break
            lam, d = got
        fl = float(min(np.min(f), f_top))
        return fl * (1.0 - 1e-9) if math.isfinite(fl) and fl > 0.0 else None

    # ``beat``: the value this answer must beat to matter (one entry, from the bound's
    # search); the order search then skips orders whose conversion term alone is above it.
    def epsilon(self, parts, delta, *, beat=None, **opts):
        parts = merge_parts(parts)
        fn, rounds, top, grid, kind = _setup(parts)
        c = _rdp.search_epsilon(fn, delta, rounds, max_order=top, coarse=grid,
                                beat=beat if len(parts) == 1 else None)
        return Outcome(c.value, kind, self.name, _details(parts, c))

    def delta(self, parts, epsilon, *, beat=None, **opts):
        parts = merge_parts(parts)
        fn, rounds, top, grid, kind = _setup(parts)
        c = _rdp.search_delta(fn, epsilon, rounds, max_order=top, coarse=grid,
                              beat=beat if len(parts) == 1 else None)
        return Outcome(c.value, kind, self.name, _details(parts, c))
