"""Rényi-DP machinery shared by every bound with an RDP view.

* ``eps_from_rdp`` / ``delta_from_rdp``: RDP → (ε, δ) by Canonne–Kamath–Steinke 2020,
  Prop. 12 (arXiv:2004.00010), with the KL shortcut δ ≤ sqrt(1 − e^{−ε_RDP}) that gives
  ε = 0 for large δ.
* ``at_real_orders``: the convexity chord of (λ − 1) ε(λ) (the privacy loss's cumulant
  generating function) between evaluated integer orders; every point of a chord is a valid
  upper bound.
* ``search_epsilon`` / ``search_delta``: the conversion optimised over orders. Integer
  orders 2…256 first, then geometric blocks that grow ×4 while the optimum sits at the top
  of what has been evaluated, then every integer near the best order, then real orders on
  the chord. The result says which order won and whether a limit stopped the search.

An RDP function here is ``f(orders: int ndarray) -> ndarray`` giving the *per-round* upper
bound; T adaptive rounds compose to ``T * f`` (Mironov 2017, Prop. 1).
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from ..numerics import golden_integer, golden_min

__all__ = [
    "RdpFunction",
    "eps_from_rdp",
    "delta_from_rdp",
    "at_real_orders",
    "Conversion",
    "search_epsilon",
    "search_delta",
    "DEFAULT_MAX_ORDER",
]

RdpFunction = Callable[[np.ndarray], np.ndarray]

#: Orders beyond this are not searched unless a bound asks for more. A single shuffled
#: round at n = 1e9 wants orders in the 1e5 range; the cost is the bound's.
DEFAULT_MAX_ORDER = 1_000_000

_FIRST_BLOCK = 256
_GROWTH = 4
_GRID_RATIO = 1.01


def eps_from_rdp(orders, values, delta: float) -> np.ndarray:
    """ε(δ) at each order (CKS20 Prop. 12), clipped at 0; ``values`` are RDP at ``orders``.

    ε = ε_RDP(λ) + log(1 − 1/λ) − (log δ + log λ)/(λ − 1); and ε = 0 wherever
    δ² ≥ 1 − e^{−ε_RDP(λ)} (Pinsker/Bretagnolle–Huber through KL ≤ D_λ).
    """
    lam = np.asarray(orders, dtype=float)
    r = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        eps = r + np.log1p(-1.0 / lam) - (math.log(delta) + np.log(lam)) / (lam - 1.0)
        kl_zero = delta * delta + np.expm1(-r) >= 0.0
    eps = np.where(kl_zero, 0.0, eps)
    eps = np.where(np.isnan(eps), np.inf, eps)
    return np.maximum(eps, 0.0)


def delta_from_rdp(orders, values, eps: float) -> np.ndarray:
    """δ(ε) at each order (CKS20 Prop. 12), capped by sqrt(1 − e^{−ε_RDP}) and by 1."""
    lam = np.asarray(orders, dtype=float)
    r = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logd = (lam - 1.0) * (r - eps) + (lam - 1.0) * np.log1p(-1.0 / lam) - np.log(lam)
        d = np.exp(np.minimum(logd, 0.0))
        kl = np.sqrt(-np.expm1(-r))
    d = np.minimum(d, kl)
    d = np.where(np.isnan(d), 1.0, d)
    return np.minimum(d, 1.0)


def at_real_orders(int_orders, int_values, lam) -> np.ndarray:
    """Upper bound at real orders from values at (sorted, distinct) integer orders.

    (λ − 1) ε(λ) is convex, so on [l1, l2] it lies below its chord; orders in (1, 2) take
    ε(2). Orders outside the evaluated range give +inf.
    """
    x = np.asarray(int_orders, dtype=float)
    y = (x - 1.0) * np.asarray(int_values, dtype=float)
    lam = np.atleast_1d(np.asarray(lam, dtype=float))
    out = np.full(lam.shape, np.inf)
    below2 = lam < 2.0
    if np.any(below2) and x[0] == 2.0:
        out[below2] = int_values[0]
    inside = (lam >= x[0]) & (lam <= x[-1]) & ~below2
    if np.any(inside):
        li = lam[inside]
        j = np.clip(np.searchsorted(x, li, side="right") - 1, 0, len(x) - 2) if len(x) > 1 else np.zeros(li.shape, int)
        if len(x) == 1:
            out[inside] = int_values[0]
        else:
            x1, x2 = x[j], x[j + 1]
            w = (li - x1) / (x2 - x1)
            f = (1.0 - w) * y[j] + w * y[j + 1]
            out[inside] = f / (li - 1.0)
            exact = li == x1
            out[inside] = np.where(exact, np.asarray(int_values)[j], out[inside])
    return out


@dataclass(frozen=True)
class Conversion:
    """Result of an order search: the value, the order that achieved it, and flags."""

    value: float          # ε (search_epsilon) or δ (search_delta)
    order: float          # the (possibly real) order that achieved it
    limit_hit: bool       # the optimum sat at the largest order the bound allows
    max_order: int        # the largest order evaluated
    orders_evaluated: int


def _blocks(max_order: int, first: int = _FIRST_BLOCK, ratio: float = _GRID_RATIO,
            growth: int = _GROWTH, start: int = 2):
    """Integer orders in blocks: start…first in full, then geometric blocks growing ×growth
    (the same arrays for the same arguments: formed once, ``_block_list``)."""
    for block in _block_list(int(max_order), first, ratio, growth, int(start)):
        yield block.copy()


@functools.lru_cache(maxsize=64)
def _block_list(max_order: int, first: int, ratio: float, growth: int, start: int):
    out = []
    if start <= first:
        hi = min(first, max_order)
        out.append(np.arange(start, hi + 1, dtype=np.int64))
    else:
        hi = start
        out.append(np.array([start], dtype=np.int64))
    lo = hi
    while lo < max_order:
        hi = min(lo * growth, max_order)
        n_pts = max(2, int(math.ceil(math.log(hi / lo) / math.log(ratio))))
        grid = np.unique(np.round(np.geomspace(lo + 1, hi, n_pts)).astype(np.int64))
        out.append(grid)
        lo = hi
    return tuple(out)


#: Order grids of the search. "dense": every integer to 256 (cheap closed-form curves);
#: "coarse": for curves whose conversion is only an estimate; "sparse": for curves that
#: cost ~0.1 s per order (the clone pairs' exact sums; there blocks grow ×2, not ×4, so the
#: search stops soon after the optimum instead of paying for orders up to 4× past it — high
#: orders are the costly ones). Every grid is followed by the fill
#: of all integers between the best order's neighbours, so a unimodal objective reaches
#: its integer optimum on any of them; every evaluated order is exact either way.
_GRIDS = {"dense": (_FIRST_BLOCK, _GRID_RATIO, _GROWTH), "coarse": (32, 1.05, _GROWTH),
          "sparse": (8, 1.15, 2)}


@functools.lru_cache(maxsize=32)
def _useful_order_grid(top: int) -> np.ndarray:
    """The orders ``first_useful_order`` checks up to ``top`` (read-only; formed once)."""
    lam = np.unique(np.concatenate([np.arange(2, min(top, 4096) + 1),
                                    np.geomspace(4096, max(top, 4096), 4000).astype(np.int64)]))
    lam = lam[(lam >= 2) & (lam <= top)]
    lam.flags.writeable = False
    return lam


def first_useful_order(floor, max_order: int, beat: float) -> int | None:
    """Smallest integer order at which the conversion could still give less than ``beat``.

    ``floor(orders)``: what the conversion gives at each order with an RDP value of 0 (the
    conversion is non-decreasing in the RDP value). Orders whose floor is already ≥ ``beat``
    cannot win and are never evaluated (their RDP would cost the bound's time for
    nothing). None when no order up to ``max_order`` can beat it. The KL shortcut (ε = 0
    or δ ≤ sqrt(1 − e^{−T·RDP}) when the RDP is below ~δ²) is left out of the floor: it
    needs an RDP so small that the bound that set ``beat`` would be ~0 too.
    """
    if beat is None or not math.isfinite(beat):
        return 2
    lam = _useful_order_grid(int(max_order))
    fl = np.asarray(floor(lam), dtype=float)
    ok = np.flatnonzero(fl < beat)
    if ok.size == 0:
        return None
    i = int(ok[0])
    # Between grid points the floor is not known to be monotone: start at the grid point
    # before the first useful one (orders below it were each checked to be useless).
    return int(lam[i - 1]) + 1 if i > 0 and lam[i] - lam[i - 1] > 1 else int(lam[i])


def _search(rdp_fn: RdpFunction, score, max_order: int, coarse=False, start: int = 2,
            lazy=None) -> Conversion:
    """Shared search: ``score(orders, rdp_values) -> objective`` (smaller is better).

    ``coarse``: False/"dense", True/"coarse" or "sparse" (see ``_GRIDS``). ``start``: the
    smallest order worth evaluating (``first_useful_order``).

    ``lazy`` = (rdp_floor, rdp_lazy): ``rdp_floor(orders)`` certified lower bounds on the
    values ``rdp_fn`` returns (NaN where none); ``rdp_lazy(block, decide)`` is the call
    ``rdp_fn(block)`` that may leave out (NaN) orders ``decide(candidates, got)`` allows,
    returning (values, {order: forcer}); ``got`` are the block's values computed so far.
    An order is allowed when the objective at its floor (the objective is non-decreasing
    in the RDP value) is above the best value already found (among orders that stay in
    the search's set): its own value is then above the minimum, so it is never the best
    order, and the search visits the same orders, keeps the same best and returns the
    same numbers. A left-out value is computed (by its forcer: the same float) if the
    search needs it after all (a neighbour of the best order, an order the integer
    refinement compares).
    """
    orders = np.empty(0, dtype=np.int64)
    values = np.empty(0)
    limit_hit = False
    grid = {False: "dense", True: "coarse"}.get(coarse, coarse)
    if grid not in _GRIDS:
        raise ValueError(f"grid must be one of {', '.join(_GRIDS)}; got {coarse!r}")
    pending: dict = {}                  # order -> forcer of a value left out (``lazy``)

    def objective(o, v):
        obj = score(o, v)
        if pending:
            obj = np.where(np.isin(o, list(pending)), np.inf, obj)
        return obj

    def force(idx):
        for i in idx:
            o = int(orders[i])
            if o in pending:
                values[i] = pending.pop(o)()

    blocks = _blocks(max_order, *_GRIDS[grid], start=max(2, int(start)))
    def decide(cand, got):
        # The best value so far: over the orders evaluated before this block and those of
        # the block already computed (every one of them stays in the search's set).
        o = np.concatenate([orders, np.array(list(got), dtype=np.int64)])
        v = np.concatenate([values, np.array(list(got.values()), dtype=float)])
        beat = float(np.min(objective(o, v))) if o.size else math.inf
        cand = np.asarray(cand, dtype=np.int64)
        if not math.isfinite(beat):
            return np.zeros(cand.shape, dtype=bool)
        fl = np.asarray(lazy[0](cand), dtype=float)
        known = np.isfinite(fl)
        return known & (score(cand, np.where(known, fl, 0.0)) > beat)

    for block in blocks:
        if lazy is not None:
            vals, forcers = lazy[1](block, decide)
            pending.update(forcers)
        else:
            vals = rdp_fn(block)
        vals = np.asarray(vals, dtype=float)
        orders = np.concatenate([orders, block])
        values = np.concatenate([values, vals])
        obj = objective(orders, values)
        best = int(np.argmin(obj))
        # Extend only while the best order is in the top 5 % of the evaluated range and
        # the objective is still finite there (an infinite tail cannot improve).
        if orders[best] < 0.95 * orders[-1] or not np.isfinite(obj[best]):
            break
    else:
        limit_hit = True
    obj = objective(orders, values)
    best = int(np.argmin(obj))
    if limit_hit and orders[best] < 0.95 * orders[-1]:
        limit_hit = False
    # Fill in every integer between the grid neighbours of the best order.
    lo_o = orders[best - 1] if best > 0 else orders[best]
    hi_o = orders[best + 1] if best + 1 < len(orders) else orders[best]
    if grid == "sparse" and hi_o - lo_o > 8:
        orders, values = _integer_refine(rdp_fn, score, orders, values, int(lo_o), int(hi_o),
                                         pending)
        obj = objective(orders, values)
        best = int(np.argmin(obj))
    elif hi_o - lo_o > 2:
        fill = np.setdiff1d(np.arange(lo_o, hi_o + 1, dtype=np.int64), orders)
        if fill.size:
            orders = np.concatenate([orders, fill])
            values = np.concatenate([values, np.asarray(rdp_fn(fill), dtype=float)])
            idx = np.argsort(orders)
            orders, values = orders[idx], values[idx]
            obj = objective(orders, values)
            best = int(np.argmin(obj))
    best_val = float(obj[best])
    best_order = float(orders[best])
    # Real orders on the chord between the best order's neighbours.
    if 0 < best < len(orders) - 1 and np.isfinite(best_val):
        force((best - 1, best + 1))
        a, b = float(orders[best - 1]), float(orders[best + 1])
        f = _chord_objective(orders, values, score)

        # Any order is valid: the refinement only has to find a better one, not the best.
        x, fx = golden_min(f, a, b, max(8, int(math.ceil(math.log(max(b - a, 1e-6) / (1e-6 * b))
                                                    / -math.log(0.618034)))))
        if x is not None and np.isfinite(fx) and fx < best_val:
            best_val, best_order = float(f(x)), float(x)
    return Conversion(best_val, best_order, limit_hit, int(orders[-1]), int(orders.size))


def _chord_objective(orders, values, score):
    """``lam -> score(lam, at_real_orders(orders, values, lam))`` for one real order inside
    the evaluated range (the golden refinement's ~20 evaluations), without the array
    set-up of ``at_real_orders`` at each call: the chord is formed with the same IEEE
    operations on the same floats (+, −, ×, ÷ round the same in numpy and Python), so the
    value is the same."""
    xs = np.asarray(orders, dtype=float).tolist()
    vals = np.asarray(values, dtype=float).tolist()
    last = len(xs) - 2

    def f(lam: float) -> float:
        lam = float(lam)
        if not (2.0 <= xs[0] <= lam <= xs[-1]):             # not the refinement's case
            return float(score(np.array([lam]), at_real_orders(orders, values, lam))[0])
        j = min(max(bisect.bisect_right(xs, lam) - 1, 0), last)
        x1, x2 = xs[j], xs[j + 1]
        if lam == x1:
            r = vals[j]
        else:
            w = (lam - x1) / (x2 - x1)
            r = ((1.0 - w) * ((x1 - 1.0) * vals[j]) + w * ((x2 - 1.0) * vals[j + 1])) / (lam - 1.0)
        return float(score(np.array([lam]), np.array([r]))[0])

    return f


def _integer_refine(rdp_fn, score, orders, values, lo: int, hi: int, pending=None):
    """Golden-section search over the integers in [lo, hi] for expensive curves.

    ~log(hi − lo)/log(1.618) single-order evaluations instead of every integer; the
    objective of a convex RDP curve is unimodal in the order, and if it were not, the
    answer would still be valid (every evaluated order is) — only less refined.
    ``pending``: forcers of values left out (``_search``'s ``lazy``), computed when compared.
    """
    known = dict(zip(orders.tolist(), values.tolist()))
    pending = {} if pending is None else pending

    def val(o: int) -> float:
        if o not in known:
            known[o] = float(np.asarray(rdp_fn(np.array([o], dtype=np.int64)), dtype=float)[0])
        elif o in pending:
            known[o] = pending.pop(o)()
        return float(score(np.array([o]), np.array([known[o]]))[0])

    golden_integer(val, lo, hi)                  # every order it evaluates is in ``known``
    o = np.array(sorted(known), dtype=np.int64)
    return o, np.array([known[k] for k in o.tolist()])


class CannotBeatOrders(ArithmeticError):
    """No order up to the bound's limit can give less than ``beat`` (``floor`` is the best
    any order could give, whatever the RDP curve)."""

    def __init__(self, floor: float, beat: float):
        self.floor, self.beat = floor, beat
        super().__init__(f"no order can beat {beat:.6g}: the conversion alone is at least {floor:.6g}")


def _pruned_search(rdp_fn, score, floor, max_order, coarse, beat, beat_score, tiny=None,
                   lazy=None):
    start = first_useful_order(floor, max_order, beat_score) if beat is not None else 2
    if start is not None and coarse == "sparse":
        # Expensive curves: evaluating the low orders in one call is cheaper than the
        # scattered high orders a shifted start would visit (the pair kernel shares work
        # across the orders of one call), so only the whole-route skip below applies.
        start = 2
    if start != 2 and tiny is not None:
        # The floor leaves out the KL shortcut (ε = 0 when T·RDP ≤ −log(1 − δ²)); RDP grows
        # with the order, so one look at order 2 tells whether it can apply anywhere.
        if tiny(float(np.asarray(rdp_fn(np.array([2], dtype=np.int64)), dtype=float)[0])):
            start = 2
    if start is None:
        lam = np.unique(np.geomspace(2, max(int(max_order), 2), 10**5).astype(np.int64))
        raise CannotBeatOrders(float(np.min(floor(lam))), beat)
    return _search(rdp_fn, score, max_order, coarse, start=start, lazy=lazy), start


def _eps_floor(delta):
    def floor(o):
        lam = np.asarray(o, dtype=float)
        return np.maximum(np.log1p(-1.0 / lam) - (math.log(delta) + np.log(lam)) / (lam - 1.0), 0.0)
    return floor


def _logdelta_floor(eps):
    def floor(o):
        lam = np.asarray(o, dtype=float)
        return np.minimum(-(lam - 1.0) * eps + (lam - 1.0) * np.log1p(-1.0 / lam) - np.log(lam), 0.0)
    return floor


def search_epsilon(rdp_fn: RdpFunction, delta: float, rounds: int = 1,
                   max_order: int = DEFAULT_MAX_ORDER, coarse=False, *,
                   beat: float | None = None, lazy=None) -> Conversion:
    """Smallest ε over orders such that T rounds of ``rdp_fn`` are (ε, δ)-DP.

    ``beat``: an ε known from elsewhere; orders that cannot give less are not evaluated
    (``CannotBeatOrders`` if none can). ``lazy`` = (rdp_floor, rdp_lazy): orders whose
    floor proves they cannot be the best are left out where ``rdp_lazy`` saves work; the
    result is the same Conversion (``_search``).
    """

    def score(o, v):
        return eps_from_rdp(o, rounds * v, delta)

    kl = -math.log1p(-delta * delta)
    c, _ = _pruned_search(rdp_fn, score, _eps_floor(delta), max_order, coarse, beat, beat,
                          tiny=lambda v2: rounds * v2 <= kl * (1.0 + 1e-6), lazy=lazy)
    return c


def search_delta(rdp_fn: RdpFunction, eps: float, rounds: int = 1,
                 max_order: int = DEFAULT_MAX_ORDER, coarse=False, *,
                 beat: float | None = None) -> Conversion:
    """Smallest δ over orders such that T rounds of ``rdp_fn`` are (ε, δ)-DP.

    The search minimises log δ so that tiny δ values stay distinguishable. ``beat``: a δ
    known from elsewhere (orders that cannot give less are not evaluated).
    """

    def score(o, v):
        with np.errstate(divide="ignore"):
            return np.log(delta_from_rdp(o, rounds * v, eps))

    # No order pruning for δ: the Pinsker cap sqrt(1 − e^{−T·RDP}) can make any order's δ
    # small, so no floor holds without the curve's values. (``beat`` is accepted for
    # symmetry.)
    c, _ = _pruned_search(rdp_fn, score, _logdelta_floor(eps), max_order, coarse, None, None)
    return Conversion(float(math.exp(c.value)), c.order, c.limit_hit, c.max_order, c.orders_evaluated)
