r"""The point sets of the clone pair's Rényi sums: windows, plans, cached chunks.

Which slices c and which x of each slice a Rényi (or PLD) sum evaluates, the block masses
charged to them, and the per-slice x-tails (Hoeffding); ``_rdp_terms`` caches the points
as chunks of (weight, log-ratio) under a byte cap. Shared by ``renyi.py`` (RDP) and
``atoms.py`` (dominating pairs for PLD composition).

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...core._lazy import special  # scipy.special on first use (import time)
from ...core._memo import register
from ...core._parallel import pmap
from ...numerics import REL_SLACK, binom_logpmf, binom_window
from ...numerics.binomial import HalfBinomRuns, row_groups
from .slices import _log_tails

#: Largest number of (slice, x) points one RDP evaluation sums point by point (slices the
#: moment series does not cover). Past it, slices are evaluated every Δ-th c and each block
#: [c_j, c_j + Δ) is charged its first slice's value (valid: slice divergences are
#: non-increasing in c).
RDP_POINT_BUDGET = 4_000_000
#: Orders whose largest loss (λ − 1) log(a/b) is below this use the linear "−1" form.
_LINEAR_MAX = 600.0


def _rdp_window_sds(lam_max: int, log_ratio: float) -> float:
    """√(2((λ − 1) log(a/b) + 60)) + 3 standard deviations."""
    return math.sqrt(2.0 * ((lam_max - 1) * log_ratio + 60.0)) + 3.0


@functools.lru_cache(maxsize=16)
def _rdp_window(n: int, p: float, K: float):
    """Slices c in mean ± (K sd(C) + 3), their probabilities, log bounds on Pr[C < lo] and
    Pr[C > hi] (``_log_tails``), and the slices' log probabilities (which may be below the
    float range where the probabilities underflow). The arrays are read-only views
    (``_window_core``)."""
    m = n - 1
    lo, hi = binom_window(m, p, K, 3)
    cs, w, logw = _window_core(n, p, K)
    log_below, log_above = _log_tails(m, p, lo, hi)
    return cs, w, log_below, log_above, logw


#: The widest slice window formed so far for each (n, p): (lo, hi, c, Pr[C = c], log of
#: it), read-only. A window at any K inside it is its slice: ``binom_logpmf`` and ``exp``
#: are elementwise (each value depends on its own c only; checked in
#: tests/test_clone_windows_same_floats.py), so a slice holds the floats the window's own
#: evaluation would. At most _WIDE_MAX pairs are kept.
_WIDE: dict = register(__name__ + "._WIDE", {})
_WIDE_MAX = 8
#: The widest K a window of n users was asked at (``_window_core``): a new p's window is
#: formed that wide at once when it holds at most _HINT_MAX_SLICES slices. An ε0 search
#: asks every member's pair for the same rungs (K = 20, 24, 32, 40, ..., then 7 and 36 for
#: its floors): one binomial evaluation instead of one per rung. It only decides how
#: wide the stored window is, never a value.
_K_HINT: dict = register(__name__ + "._K_HINT", {})
_HINT_MAX_SLICES = 16_384


def _window_core(n: int, p: float, K: float):
    """(c, Pr[C = c], log Pr[C = c]) for the slices c in mean ± (K sd(C) + 3), C ~ Bin(n − 1,
    p): read-only views of the widest window formed for (n, p) (``_WIDE``), without the
    tails (``_rdp_window`` adds them)."""
    m = n - 1
    lo, hi = binom_window(m, p, K, 3)
    key = (n, p)
    hit = _WIDE.get(key)
    if hit is None or lo < hit[0] or hi > hit[1]:
        wlo, whi = lo, hi
        hint = _K_HINT.get(n, 0.0)
        if hint > K:
            l2, h2 = binom_window(m, p, hint, 3)
            if h2 - l2 + 1 <= _HINT_MAX_SLICES:
                wlo, whi = l2, h2
        if hit is not None:
            wlo, whi = min(wlo, hit[0]), max(whi, hit[1])
        cs = np.arange(wlo, whi + 1)
        logw = _window_logpmf(cs, m, p)
        w = np.exp(logw)
        for a in (cs, w, logw):
            a.setflags(write=False)
        hit = (wlo, whi, cs, w, logw)
        _WIDE.pop(key, None)
        _WIDE[key] = hit
        while len(_WIDE) > _WIDE_MAX:
            _WIDE.pop(next(iter(_WIDE)))
    if K > _K_HINT.get(n, 0.0):
        _K_HINT[n] = K
    i0, i1 = lo - hit[0], hi - hit[0] + 1
    return hit[2][i0:i1], hit[3][i0:i1], hit[4][i0:i1]


#: Slices from which a window's log-pmf is evaluated in two halves (on two threads where
#: there are two): Loader's form costs ~85 ns a slice, 23 ms for the 2.7e5 slices of the
#: PLD atoms' window at n = 1e9.
_SPLIT_SLICES = 1 << 15


def _window_logpmf(cs, m: int, p: float) -> np.ndarray:
    """``binom_logpmf(cs, m, p, 1 − p)``, from ``_SPLIT_SLICES`` slices on in two halves
    (side by side where ``parallel()``; always split, so the floats do not depend on the
    threads). Each value depends on its own c only: the deviance series takes its number of
    terms from the largest argument of its call, and the terms past 1e-18 relative that a
    wider call adds do not change a float (tests/test_clone_windows_same_floats.py checks the
    halves against one call)."""
    if cs.size < _SPLIT_SLICES:
        return binom_logpmf(cs, m, p, 1.0 - p)
    h = cs.size // 2
    return np.concatenate(pmap(lambda a: binom_logpmf(a, m, p, 1.0 - p), (cs[:h], cs[h:])))


def _rdp_plan(pair, K: float, step: int | None, budget: int, jstop: int | None = None,
              want_log_mass: bool = True):
    """Which slices the RDP sum evaluates, their block masses and x-windows.

    Returns (c_eval, mass, log_below, alo, ahi, tails, step, log_mass, log_tails):
    ``mass[j]`` is the probability of the block charged to slice ``c_eval[j]`` (the last
    block absorbs the upper tail of C unless ``jstop`` cuts the window: then slices from
    index ``jstop`` on are left to the series form), ``log_mass`` its log (finite where the
    mass underflows; None without ``want_log_mass``: the PLD atoms take the log of
    ``mass``, and at Δ > 1 it is a ``logaddexp`` over the whole window, 8 ms at n = 1e9),
    ``log_below`` ≥ log Pr[C < lo], ``[alo[j], ahi[j] + 1]`` the x-grid
    of slice j and ``tails[j]`` = e^{log_tails[j]} a bound on the P-mass of slice j outside it.
    """
    cs, w, log_below, log_above, logw = _rdp_window(pair.n, pair.p, K)
    if jstop is not None and jstop < cs.size:
        cs, w, logw, log_above = cs[:jstop], w[:jstop], logw[:jstop], -math.inf
    if step is None:
        step = _step_for(cs, K, budget)
    starts = np.arange(0, cs.size, step)
    mass = np.add.reduceat(w, starts)
    mass[-1] += math.exp(log_above)
    log_mass = None
    if want_log_mass:
        log_mass = (np.logaddexp.reduceat(logw, starts) if step > 1 else logw.copy())
        log_mass[-1] = np.logaddexp(log_mass[-1], log_above)
    c_eval = cs[starts]
    alo, ahi, log_tails = _x_windows(c_eval, K)
    return (c_eval, mass, log_below, alo, ahi, np.exp(log_tails), step, log_mass, log_tails)


def _x_half(c, K: float):
    """Half-width of slice c's x-grid: about K sd(A) = K √c / 2, plus 3."""
    return np.floor(0.5 * K * np.sqrt(np.maximum(c, 1.0))) + 3


def _step_for(cs, K: float, budget: int) -> int:
    """Slice step Δ that keeps the x-grids of the slices ``cs`` within ``budget`` points."""
    width = np.minimum(cs + 2, 2 * _x_half(cs, K) + 2)
    return max(1, int(math.ceil(float(width.sum()) / budget)))


def _x_windows(c_eval, K: float):
    """(alo, ahi, log_tails): slice c's x-grid [alo, ahi + 1] and a bound on the log of its
    P-mass outside (Hoeffding: Pr[|A − c/2| ≥ t] ≤ 2 exp(−2t²/c) for A ~ Bin(c, ½) —
    rigorous, closed form)."""
    h = _x_half(c_eval, K)
    alo = np.maximum(0, np.floor(0.5 * c_eval) - h).astype(np.int64)
    ahi = np.minimum(c_eval, np.ceil(0.5 * c_eval) + h).astype(np.int64)
    t_lo = 0.5 * c_eval - (alo - 1)
    t_hi = (ahi + 1) - 0.5 * c_eval
    cpos = np.maximum(c_eval, 1).astype(float)
    log_tails = np.logaddexp(np.where(alo > 0, -2.0 * t_lo * t_lo / cpos, -np.inf),
                             np.where(ahi < c_eval, -2.0 * t_hi * t_hi / cpos, -np.inf))
    return alo, ahi, log_tails


def _auto_step(pair, K: float, budget: int) -> int:
    """The slice step Δ ``_rdp_plan`` picks for the full window K under ``budget`` points."""
    return _step_for(_rdp_window(pair.n, pair.p, K)[0], K, budget)


def _rdp_points(pair, c_eval, alo, ahi, j0: int, j1: int):
    """Points of slices j0..j1−1: (slice index, log P(x | c), ℓ = log P/Q)."""
    counts = ahi[j0:j1] + 2 - alo[j0:j1]
    jj = np.repeat(np.arange(j0, j1), counts)
    logP = np.empty(jj.size)
    ell = np.empty(jj.size)
    for s0, s1, _, lp, el in _point_groups(pair, c_eval, alo, ahi, j0, j1):
        logP[s0:s1] = lp
        ell[s0:s1] = el
    return jj, logP, ell


def _point_groups(pair, c_eval, alo, ahi, j0: int, j1: int):
    """``_rdp_points`` of slices j0..j1−1 in groups of consecutive slices (about
    ``RUN_GROUP_POINTS`` points each, so that the temporaries stay in the CPU cache):
    yields (s0, s1, slice indices, log P(x | c), ℓ) for the points s0..s1 − 1 of the
    concatenation. Every value is computed elementwise (the half-binomial runs by
    ``HalfBinomRuns``, which gives the same floats in any grouping of its rows), so the
    points equal those of one pass over all slices."""
    pts = _SlicePoints(pair, c_eval, alo, ahi, j0, j1)
    for g0, g1, s0, s1 in pts.groups:
        logP, ell = pts.group(g0, g1)
        yield s0, s1, pts.slice_index(g0, g1), logP, ell


class _SlicePoints:
    """The points of slices j0..j1−1, one group of consecutive slices at a time.

    ``groups``: (g0, g1, s0, s1) — slices j0 + g0 .. j0 + g1 − 1 hold the points s0..s1 − 1
    of the concatenation; ``group(g0, g1)`` returns their (log P(x | c), ℓ). Groups are
    independent (read-only shared state), so they may be evaluated on several threads.
    """

    def __init__(self, pair, c_eval, alo, ahi, j0: int, j1: int):
        self.pair = pair
        self.j0 = j0
        ce, lo_ = c_eval[j0:j1], alo[j0:j1]
        self.counts = counts = ahi[j0:j1] + 2 - lo_           # x from alo to ahi + 1
        self.cf = ce.astype(float)
        self.runs = HalfBinomRuns(self.cf, lo_.astype(float), counts)  # log Bin(c,½)(x)
        self.groups = []
        s0 = 0
        for g0, g1 in row_groups(counts, self.runs.block):
            s1 = s0 + int(counts[g0:g1].sum())
            self.groups.append((g0, g1, s0, s1))
            s0 = s1
        self.total = s0

    def slice_index(self, g0: int, g1: int) -> np.ndarray:
        return np.repeat(np.arange(self.j0 + g0, self.j0 + g1), self.counts[g0:g1])

    def group(self, g0: int, g1: int):
        lv, x = self.runs.rows(g0, g1, want_x=True)
        c = np.repeat(self.cf[g0:g1], self.counts[g0:g1])
        return _point_terms(self.pair, x, c, lv)


def _point_terms(pair, x, c, lv):
    """(log P, ℓ = log P/Q) of the clone pair's points (x, c) from lv = log Bin(c, ½)(x).

    Every value is the float of the expressions as first written (kept in
    tests/test_point_terms_same_floats.py): the same IEEE operations on the same operands
    (a + b and a·b commute exactly), formed in four buffers instead of ~15 temporaries, and
    the two special cases (x = c + 1, x = 0) found as r = c + 1 − x < 1 and x = 0."""
    alpha, beta, gamma = pair.alpha, pair.beta, pair.gamma
    r = c + 1.0
    r -= x                                       # c + 1 − x (an integer ≥ 0)
    den = beta * x
    t = np.multiply(r, alpha)
    den += t                                     # βx + α(c + 1 − x) > 0
    # u(x) = Bin(c,½)(x − 1) = v(x)·x/(c + 1 − x); at x = c + 1, v = 0 and u = 2^−c.
    np.maximum(r, 1.0, out=t)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(t, out=t)
        lu = np.log(x)
    np.add(lv, lu, out=lu)
    np.subtract(lu, t, out=lu)
    # x = c + 1 (r < 1) and x = 0 are a few points at the windows' edges, and none in
    # most groups: one reduction each says whether to look for them (NaN, which cannot
    # occur here, would be looked for too)
    if not float(r.min()) >= 1.0:
        top = np.flatnonzero(r < 1.0)
        lu[top] = -c[top] * math.log(2.0)
    if not float(x.min()) > 0.0:
        lu[np.flatnonzero(x == 0)] = -np.inf
    lu += pair.log_alpha
    np.add(lv, pair.log_beta, out=t)
    logP = np.logaddexp(lu, t, out=lu)
    # ℓ = log1p((2α−1)(r−1)/((1−α)r + α)), r = x/(c+1−x), multiplied through by
    # (c+1−x): no cancellation and finite at x = 0 and x = c + 1.
    arg = np.multiply(x, 2.0, out=t)
    arg -= c
    arg -= 1.0
    arg *= gamma
    arg /= den
    # Near x = 0 the argument tends to −γ/α = β/α − 1, which rounds to −1 when β is
    # tiny (large ε0): there the ratio itself, log(α x + β(c + 1 − x)) − log(den), is
    # accurate.
    if float(arg.min()) > -0.5:
        # (no NaN either: the min would be NaN) max(arg, −0.5) is arg itself everywhere
        return logP, np.log1p(arg, out=r)
    ell = np.maximum(arg, -0.5, out=r)
    np.log1p(ell, out=ell)
    low = ~(arg > -0.5)                          # the other form only where it is used
    if low.any():
        xl, cl = x[low], c[low]
        with np.errstate(divide="ignore"):
            ell[low] = np.log(alpha * xl + beta * (cl + 1.0 - xl)) - np.log(den[low])
    return logP, ell


def _slice_points(pair, K: float, step: int | None = None):
    """All points at once (for ``pair_log_atoms``)."""
    c_eval, mass, log_below, alo, ahi, tails, step, _, _ = _rdp_plan(pair, K, step,
                                                                     RDP_POINT_BUDGET)
    jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
    return c_eval, mass, log_below, jj, logP, ell, tails, step



#: Points per chunk of the RDP sum (bounds memory; the budget bounds time).
_CHUNK_POINTS = 1_000_000


#: Cached point sets of the RDP sum: (pair, K, step, budget) -> terms. At most twelve
#: entries and at most ``_TERMS_CACHE_BYTES`` in all (the most recent entry is always
#: kept): a sweep over many protocols held 12 entries of up to ~150 MB each (1.5 GB peak);
#: one question at n = 1e6, T = 10 uses ~380 MB of them.
_TERMS_CACHE: dict = register(__name__ + "._TERMS_CACHE", {})
_TERMS_CACHE_SIZE = 12
_TERMS_CACHE_BYTES = 600 * 2**20


def _nbytes(obj) -> int:
    """Bytes held by the numpy arrays inside nested tuples, lists and dicts (a deferred
    entry counts the bytes its points will hold, ``_Deferred.nbytes``)."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, DeferredTerms):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(x) for x in obj.values())
    return 0


class DeferredTerms:
    """A point set of ``_rdp_terms`` that has not been built yet (``lazy=True``).

    It takes the cache slot, and counts the bytes, that the built entry would (every
    array of the entry is known from the plan: three float64 values per point — weight,
    log-ratio, log weight — and the plan's five arrays), so the cache's keys, order and
    evictions are those of a run that built it at once. ``terms()`` builds it on first use;
    the entry is a pure function of its key, so the floats are those of that run.
    """

    __slots__ = ("key", "nbytes", "_plan", "_terms")

    def __init__(self, key, plan):
        self.key, self._plan = key, plan
        c_eval, mass, _, alo, ahi, _, _, log_mass, _ = plan
        points = int((ahi + 2 - alo).sum())
        self.nbytes = (24 * points + int(c_eval.nbytes) + int(mass.nbytes) + int(alo.nbytes)
                       + int(ahi.nbytes) + int(log_mass.nbytes))
        self._terms = None

    def terms(self):
        if self._terms is None:
            pair, K, step, budget, jstop = self.key
            self._terms = _build_terms(pair, K, step, budget, jstop, True, self._plan)
            self._plan = None
        return self._terms


def _rdp_terms(pair, K: float, step, budget, jstop: int | None = None,
               want_logw: bool = False, lazy: bool = False):
    """The points of the RDP sum as chunks of (weight, log-ratio), plus the remainders.

    ``jstop``: only the slices before this index of the window (the rest go to the series).
    ``want_logw``: also keep the points' log weights (huge orders need them), made here
    while the points are at hand instead of regenerated by ``_chunk_logw``.
    ``lazy`` (with ``want_logw``): where the entry would be built, a ``DeferredTerms`` is
    cached and returned instead (``renyi.pair_rdp_lazy``); a cached one is returned as it
    is. Without ``lazy`` a cached ``DeferredTerms`` is built on the spot.
    """
    key = (pair, K, step, budget, jstop)
    if key not in _TERMS_CACHE and jstop is None:
        # A cached window up to two rungs wider serves too (wider is still rigorous) when it
        # is summed at the same slice step: a wider window over the point budget is summed
        # every Δ-th slice, looser than this window's own sum (2e-5 relative at n = 1e6).
        own = _auto_step(pair, K, budget) if step is None else step
        for k2 in (K + 4.0, K + 8.0):
            if ((pair, k2, step, budget, None) in _TERMS_CACHE
                    and (step is not None or _auto_step(pair, k2, budget) == own)):
                key = (pair, k2, step, budget, None)
                break
    hit = _TERMS_CACHE.pop(key, None)
    if isinstance(hit, DeferredTerms) and not lazy:
        hit = hit.terms()
    if hit is None:
        plan = _rdp_plan(pair, key[1], step, budget, jstop)
        if lazy and want_logw:
            hit = DeferredTerms(key, plan)
        else:
            hit = _build_terms(pair, key[1], step, budget, jstop, want_logw, plan)
    _TERMS_CACHE[key] = hit                     # most recently used last
    while len(_TERMS_CACHE) > _TERMS_CACHE_SIZE:
        _TERMS_CACHE.pop(next(iter(_TERMS_CACHE)))
    # (sizes measured at eviction time: a hit's memo of log weights may have grown since)
    while len(_TERMS_CACHE) > 1 and sum(map(_entry_nbytes, _TERMS_CACHE.values())) > _TERMS_CACHE_BYTES:
        _TERMS_CACHE.pop(next(iter(_TERMS_CACHE)))
    return hit


def _entry_nbytes(entry) -> int:
    """``_nbytes`` of an entry of ``_TERMS_CACHE`` without walking it generically: the
    arrays of its chunks and plan and of its memo of log weights (the only part that
    grows)."""
    if isinstance(entry, DeferredTerms):
        return entry.nbytes
    chunks, _, log_below, plan, memo = entry
    total = sum(w.nbytes + ell.nbytes for w, ell, _, _ in chunks)
    total += sum(a.nbytes for a in plan) + sum(a.nbytes for a in memo.values())
    return int(total) + _nbytes(log_below)


def _build_terms(pair, K: float, step, budget, jstop, want_logw: bool, plan):
    """The entry of ``_rdp_terms`` for its key, from the key's ``_rdp_plan``."""
    (c_eval, mass, log_below, alo, ahi, _, _, log_mass, log_tails) = plan
    chunks = []
    logw_memo = {}
    counts = ahi + 2 - alo
    j0 = 0
    while j0 < c_eval.size:
        j1 = j0 + 1
        tot = counts[j0]
        while j1 < c_eval.size and tot + counts[j1] <= _CHUNK_POINTS:
            tot += counts[j1]
            j1 += 1
        jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, j0, j1)
        # Points with ℓ ≥ 0 first: their terms are ≥ 0 and the others' ≤ 0, so the sum
        # of absolute values (for the rounding charge) needs no extra pass.
        idx = np.argsort(ell < 0, kind="stable")
        split = int(np.count_nonzero(ell >= 0))
        jj, logP, ell = jj[idx], logP[idx], ell[idx]
        if want_logw:
            logw_memo[(j0, j1)] = log_mass[jj] + logP
        chunks.append((mass[jj] * np.exp(logP),          # block mass × P(x | c_j)
                       ell, split, (j0, j1)))
        j0 = j1
    log_tm = float(special.logsumexp(log_mass + log_tails)) if c_eval.size else -math.inf
    return (chunks, log_tm, log_below, (c_eval, mass, alo, ahi, log_mass), logw_memo)



def _chunk_logw(memo: dict, pair, plan, ell, span) -> np.ndarray:
    """log(block mass × P(x | c)) of a cached chunk's points, in the chunk's order."""
    hit = memo.get(span)
    if hit is None:
        c_eval, alo, ahi, log_mass = plan
        jj, logP, ell2 = _rdp_points(pair, c_eval, alo, ahi, *span)
        idx = np.argsort(ell2 < 0, kind="stable")         # the order ``_rdp_terms`` stored
        hit = log_mass[jj[idx]] + logP[idx]
        if not np.array_equal(ell2[idx], ell):
            raise AssertionError("cached RDP points out of step")   # pragma: no cover
        memo[span] = hit
    return hit


def _log_sum_pos(v: np.ndarray) -> float:
    """log Σ e^{v}, rounded up: one max, one exp pass and a pairwise sum of positive terms.

    The sum's relative error is ≤ (log2 N + 2)·u ≤ 1e-13 for N < 2^40 points; ``REL_SLACK``
    (1e-12) is added on the log scale so the result stays above the exact value.
    """
    m = float(np.max(v)) if v.size else -math.inf
    if not math.isfinite(m):
        return m
    tot = float(np.sum(np.exp(v - m)))
    return m + math.log(tot) + REL_SLACK


def _exp_log_sum(x: float, y: float) -> float:
    """e^{x + y}, 0 for x = −∞ (an empty tail), +∞ past the float range (never capped)."""
    if x == -math.inf:
        return 0.0
    return math.exp(x + y) if x + y < 709.0 else math.inf

