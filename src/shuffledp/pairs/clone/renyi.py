r"""Rényi divergence of the clone pair at integer orders (rigorous upper bounds).

``pair_rdp`` groups the orders, picks a window per group on a ladder of standard
deviations, and sums each group by the moment series (``rdp_series.py``) where it is
accurate and point by point (``rdp_points.py``) elsewhere, with every remainder charged.

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import math

import numpy as np

from ...core._lazy import special  # scipy.special on first use (import time)
from ...core._memo import register
from ...numerics import round_up
from .hockey import _need_g0
from .rdp_points import (RDP_POINT_BUDGET, _LINEAR_MAX, DeferredTerms, _chunk_logw,
                         _exp_log_sum, _log_sum_pos, _rdp_terms, _rdp_window, _rdp_window_sds)
from .rdp_series import _series_part

#: Off only in benchmarks (to time the point sum it replaces).
_SERIES_ENABLED = True


def pair_rdp(pair, orders, step: int | None = None,
             budget: int | None = None) -> np.ndarray:
    """D_λ(P ‖ Q) of a g = 0 pair at integer orders ≥ 2: rigorous UPPER bounds, rounded up.

    e^{(λ−1)D_λ} − 1 = Σ_c Pr[C = c] Σ_x P(x|c) [(P/Q)(x|c)^{λ−1} − 1], summed in
    the "−1" form (expm1) so that relative precision survives answers of 1e−7. Windows of
    √(2((λ−1) log(a/b) + 60)) + 3 standard deviations in c and in x; remainders: the x-tail
    of a slice adds at most t·((a/b)^{λ−1} − 1), the lower c-tail its mass times the value at
    c = 0, the upper c-tail its mass times the value at the window edge. Symmetric in the
    direction (swap = P ↔ Q).

    By default each slice whose moment series is accurate (``_series_part``: every term
    non-negative, remainder bounded rigorously and added) is summed in closed form, in
    O(number of series terms) instead of O(√c) points: at large n·p that is every slice,
    and a 64-order curve at n = 1e6 takes well under a second. The remaining slices (small
    c, or orders with (λ − 1) log(a/b) > 600) are summed point by point; when that sum would
    exceed ``budget`` points (default ``RDP_POINT_BUDGET``), slices are evaluated every Δ-th
    c and each block charged its first slice's value: still a valid upper bound, but looser
    by a relative ~Δ/(2 E[C]). ``step`` (an int) forces the point sum everywhere with that
    Δ; ``step=1`` is the exact point sum.
    """
    return _pair_rdp(pair, orders, step, budget, None)[0]


def pair_rdp_lazy(pair, orders, decide, budget: int | None = None):
    """``pair_rdp(pair, orders, budget=budget)`` where the caller may not need some values.

    ``decide(candidates, got)`` is asked, once the cheaper orders of an order group are
    summed, which of that group's huge orders ((λ − 1) log(a/b) > 600: log-space sums over
    every point of the window) the caller can do without for now (booleans, one per
    candidate); ``got`` holds the values of this call's orders computed so far (as
    returned). They are left out only if all of them may be and their points are not built
    yet. Returns (values, forcers): the values are ``pair_rdp``'s, NaN where left out, and
    ``forcers[order]()`` gives each such order's value later — the same float ``pair_rdp``
    would have returned in this call (the points are built then as this call would have
    built them, ``rdp_points.DeferredTerms``, and the caches hold what they would have
    held). Every other value, and every later ``pair_rdp`` value, is the float it would
    have been without ``decide``.
    """
    return _pair_rdp(pair, orders, None, budget, decide)


def pair_rdp_huge(pair, orders) -> np.ndarray:
    """Which orders ``pair_rdp`` sums in log space over every point ((λ − 1) log(a/b) >
    600): the only ones ``pair_rdp_lazy`` may leave out."""
    return (np.asarray(orders, dtype=float) - 1.0) * pair.log_ratio > _LINEAR_MAX


def _pair_rdp(pair, orders, step, budget, decide):
    _need_g0(pair, "pair_rdp")
    lam = np.asarray(orders)
    if lam.size == 0:
        return np.zeros(0), {}
    if np.any(lam != np.round(lam)) or np.any(lam < 2):
        raise ValueError(f"orders must be integers >= 2; got {orders!r}")
    lam = lam.astype(np.int64)
    out = np.empty(lam.shape, dtype=float)
    lr = pair.log_ratio
    if lr == 0.0:
        return np.zeros(lam.shape), {}
    flat = lam.ravel()
    res = np.empty(flat.shape)
    lazy = None if decide is None else (decide, frozenset(flat.tolist()), {})
    # Orders are processed in groups of similar size so that the window fits each group.
    order_idx = np.argsort(flat)
    groups = []
    cur = [order_idx[0]]
    for i in order_idx[1:]:
        if flat[i] > 2 * flat[cur[0]] + 8:
            groups.append(cur)
            cur = [i]
        else:
            cur.append(i)
    groups.append(cur)
    for grp in groups:
        g_orders = flat[grp]
        # Windows on a ladder of 4 standard deviations: a wider window is still rigorous
        # (its remainders are computed for the window used) and the points of one rung
        # are cached, so the order search's later calls reuse them.
        K = 4.0 * math.ceil(_rdp_window_sds(int(g_orders.max()), lr) / 4.0)
        res[grp] = _rdp_group(pair, g_orders, K, step, budget or RDP_POINT_BUDGET, lazy)
    out[...] = res.reshape(lam.shape)
    return round_up(out), ({} if lazy is None else lazy[2])



#: Per-pair memo of computed orders: (pair, step, budget) -> {order: value}. Any window
#: gives a rigorous upper value, so a value is reused whatever window produced it.
_VALUES: dict = register(__name__ + "._VALUES", {})


class _Deferred:
    """The value of one huge order left out by ``pair_rdp_lazy``: computed on first use from
    its group's point set (``DeferredTerms``, or the cached entry it found), by the same
    per-order log-space sum as the group's own call (each order's sum is independent of
    the others'), so the float is the one that call would have produced."""

    __slots__ = ("pair", "order", "K", "step", "budget", "entry", "value")

    def __init__(self, pair, order, K, step, budget, entry):
        self.pair, self.order, self.K, self.step, self.budget = pair, order, K, step, budget
        self.entry, self.value = entry, None

    def force(self) -> float:
        if self.value is None:
            self.value = float(_rdp_group_sum(self.pair, np.array([self.order], dtype=np.int64),
                                              self.K, self.step, self.budget,
                                              terms=self.entry.terms())[0])
            self.entry = None
        return self.value

    def __call__(self) -> float:
        """The value as ``pair_rdp`` returns it (rounded up like the rest of its array)."""
        return float(round_up(np.array([self.force()]))[0])


def _rdp_group(pair, orders: np.ndarray, K: float, step, budget, lazy=None) -> np.ndarray:
    vkey = (pair, step, budget)
    done = _VALUES.pop(vkey, None) or {}
    _VALUES[vkey] = done
    while len(_VALUES) > 64:
        _VALUES.pop(next(iter(_VALUES)))
    todo = np.array(sorted({int(o) for o in orders} - set(done)), dtype=np.int64)
    # Orders past the linear regime take the log-space path over every slice; the others
    # may use the series, so the two kinds are summed separately.
    lin = (todo - 1) * pair.log_ratio <= _LINEAR_MAX
    for huge, part in ((False, todo[lin]), (True, todo[~lin])):
        if not part.size:
            continue
        if huge and lazy is not None and _may_defer(lazy, part, done):
            # Huge orders the caller can do without (``pair_rdp_lazy``): their point set is
            # looked up as the sum below would; only where it would be built is it deferred.
            entry = _rdp_terms(pair, K, step, budget, None, want_logw=True, lazy=True)
            if isinstance(entry, DeferredTerms):
                for o in part.tolist():
                    done[o] = lazy[2][o] = _Deferred(pair, o, K, step, budget, entry)
                continue
            vals = _rdp_group_sum(pair, part, K, step, budget, terms=entry)
        else:
            vals = _rdp_group_sum(pair, part, K, step, budget)
        done.update(zip(part.tolist(), vals.tolist()))
    out = np.empty(orders.shape, dtype=float)
    for i, o in enumerate(orders.tolist()):
        v = done[o]
        if isinstance(v, _Deferred):
            if lazy is not None and lazy[2].get(o) is v:
                v = math.nan                    # left out by this call
            else:
                v = done[o] = v.force()
        out[i] = v
    return out


def _may_defer(lazy, part, done) -> bool:
    """Whether the caller of ``pair_rdp_lazy`` can do without every order of ``part``."""
    decide, block, _ = lazy
    got = [(o, v) for o, v in done.items() if o in block and not isinstance(v, _Deferred)]
    got = dict(zip([o for o, _ in got],
                   round_up(np.array([v for _, v in got], dtype=float)).tolist()))
    return bool(np.all(decide(part, got)))



def _rdp_group_sum(pair, orders: np.ndarray, K: float, step, budget, terms=None) -> np.ndarray:
    """The group's values; ``terms``: its point set when the caller has looked it up already
    (``_rdp_terms`` with no ``jstop``; only for huge orders, which do not use the series)."""
    lr = pair.log_ratio
    A = (orders - 1).astype(float)
    linear = A * lr <= _LINEAR_MAX
    g_sum = np.zeros(orders.shape)
    g_abs = np.zeros(orders.shape)
    jstop = None
    if step is None and _SERIES_ENABLED and np.all(linear):
        # Slices from index jstop on are summed in closed form (moment series); the exact
        # point sum only covers the slices below it, if any.
        jstop, ser = _series_part(pair, orders, K)
        g_sum += ser
        if jstop >= _rdp_window(pair.n, pair.p, K)[0].size:
            jstop = None                                  # no series: the full window
        elif jstop == 0:
            chunks, log_tm = [], -math.inf
            log_below = _rdp_window(pair.n, pair.p, K)[2]
    logw_memo = {}
    if jstop is None or jstop > 0:
        chunks, log_tm, log_below, (c_eval, mass, alo, ahi, log_mass), logw_memo = (
            terms if terms is not None else
            _rdp_terms(pair, K, step, budget, jstop, want_logw=not np.all(linear)))
    log_parts = [[] for _ in orders]
    for wpt, ell, split, (j0, j1) in chunks:
        buf = np.empty_like(ell)
        for i, a in enumerate(A):
            if linear[i]:
                np.multiply(ell, a, out=buf)
                np.expm1(buf, out=buf)
                np.multiply(buf, wpt, out=buf)
                pos = float(buf[:split].sum())     # pairwise sums: error ~log2(N)·u·Σ|t|
                neg = float(buf[split:].sum())
                g_sum[i] += pos + neg
                g_abs[i] += pos - neg
        if not np.all(linear):
            # Huge orders: log weights are needed where the weights underflow. They are
            # made once per cached point set (on the first huge order, aligned with ``ell``)
            # so that an order search's single-order calls do not regenerate the points.
            logw = _chunk_logw(logw_memo, pair, (c_eval, alo, ahi, log_mass), ell, (j0, j1))
            for i, a in enumerate(A):
                if not linear[i]:
                    np.multiply(ell, a, out=buf)
                    np.add(buf, logw, out=buf)
                    log_parts[i].append(_log_sum_pos(buf))
    out = np.empty(orders.shape)
    for i, a in enumerate(A):
        if linear[i]:
            # Terms of both signs cancel to a second-order quantity (amplification ~ √c/λ):
            # charge 1e-12 of their absolute sum for the ~1e-15 relative error of each.
            g = g_sum[i] + 1e-12 * g_abs[i]
            # Remainders from their logs (exact bounds, no absolute floors: a floor here
            # would be multiplied by e^{(λ−1) log(a/b)}); 1e-300 covers their underflow.
            xa = a * lr
            g += _exp_log_sum(log_tm, math.log(math.expm1(xa)))
            # α(e^x − 1) + β(e^−x − 1) = (1 − e^−x)(α e^x − β): two positive factors, no
            # cancellation at small x.
            g += _exp_log_sum(log_below, math.log(-math.expm1(-xa))
                              + math.log(pair.alpha * math.exp(xa) - pair.beta))
            g += 1e-300
            out[i] = math.log1p(max(g, 0.0)) / a
        else:
            # Huge values: every term of 1 + G is positive; sum them in log space.
            terms = list(log_parts[i])
            terms.append(log_tm + a * lr)
            terms.append(log_below + float(np.logaddexp(pair.log_alpha + a * lr,
                                                        pair.log_beta - a * lr)))
            # Complete without a "1": window points exactly, x-tails at the largest loss,
            # c below the window at c = 0, c above it in the last block (monotone in c).
            out[i] = max(float(special.logsumexp(terms)), 0.0) / a
    return out


