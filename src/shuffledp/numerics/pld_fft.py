r"""Certified T-fold composition of a privacy-loss distribution by one tilted FFT power.

For a dominating pair (P, Q) of one round, T adaptive rounds are dominated by (P^T, Q^T)
(Zhu, Dong, Wang 2022, Thm 10), whose hockey-stick divergence is

    δ_T(ε) = P^T(some round has Q = 0) + E_{Q^T}[(e^{S} − e^{ε})_+],   S = L_1 + … + L_T,

with L = log(P/Q) the privacy loss (Koskela, Jälkö, Honkela 2020, arXiv:1906.03049 for
the PLD view). Every step below only increases that value, so the result is an upper bound:

1. **Spread, not round.** x ↦ (e^x − e^ε)_+ is convex and non-decreasing, so each round's
   loss (under Q) may be replaced by one larger in increasing convex order. Each loss is
   split onto its two neighbouring points of d·ℤ with the same mean (after a
   floating-point nudge upward); losses below a floor are raised to it. Rounding every
   loss up (dp_accounting's pessimistic PLD) shifts the sum by up to T·d; the spread adds
   only d²/4 variance per round, so a coarse grid stays accurate at any T.
2. **Exponential tilt.** With q̃ the normalised lattice law, M(φ) = E e^{φJ} and Q_φ the
   T-fold law of the tilted atoms, Q(S = s) = M(φ)^T e^{−φs} Q_φ(s). φ centres Q_φ at the
   ε being asked about, so the terms that make δ are computed with small *relative*
   error (δ down to 1e-300), where an untilted FFT has only an absolute error of ~1e-16.
3. **One FFT power** (``numerics.fft_power``) of the tilted atoms on a window of ±``_SDS``
   standard deviations (the one-round law folded modulo the length when longer).
   Wrap-around only adds non-negative mass to window points.
4. **Tails.** Above the window: E[e^{dS}; S > s_hi] ≤ min_ψ M(ψ)^T e^{−(ψ−d)(s_hi+1)}
   (Chernoff, ψ ≥ d). Below it the weight is 0 whenever ε ≥ d·(s_lo − 1), which the search
   enforces (otherwise it re-tilts).
5. **Floating point.** The FFT error (a posteriori, Cauchy–Schwarz against the weights),
   relative atom errors as (1 + η)^T, the weights' own rounding.

Unlike ``dp_accounting``'s FFT composition, whose rounding error is not bounded (a fixed
1e-12 allowance was added to it), every error here is bounded; and it needs numpy only
(dp_accounting's import costs ~1.5 s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core._parallel import parallel, pmap
from . import bisect, circular_run, falling_root, fft_power, next_fast_len, round_up
from .rounding import pairwise_combine, pairwise_leaves

__all__ = ["LossLattice", "lattice", "loss_lattice", "auto_step", "composed_delta",
           "composed_epsilon", "fft_length_estimate", "MAX_FFT"]

_U = 2.0 ** -53
#: A loss log A − log B formed in floating point is within _LOG_ERR·(|log A| + |log B| + 1)
#: of the loss the stored logs stand for (their own rounding and the subtraction's, with
#: margin): every lattice nudges losses up by it (down, for floors).
_LOG_ERR = 4e-16
#: Losses below this are rounded up to it (safe: P-mass at loss L is ≤ e^L).
_LOSS_FLOOR = -40.0
#: Q-mass of the lowest losses that ``loss_lattice`` raises to the loss above them.
_FLOOR_MASS = 1e-60
#: Largest FFT (memory ~ 24 bytes each), and largest one-round lattice.
MAX_FFT = 1 << 24
MAX_SUPPORT = 1 << 21
#: Half-width of the window in standard deviations of the tilted sum.
_SDS = 9.0
#: Default grid: the loss's standard deviation over NU (the spread adds ≤ 1/(4·NU²) of the
#: variance per round).
NU = 32.0
#: A tilt is accepted when its certified allowances are below this fraction of δ.
_PRECISE = 1e-7
#: Heavy rare losses are cut (and charged) at up to this fraction of δ when that makes the
#: tilted law much narrower and the FFT would otherwise exceed _WIDE_MIN_L points
#: (``_Tilt``); ε moves by ≲ 1e-4/(2 log(1/δ)) relative.
_WIDE_CAP = 1e-4
_WIDE_MIN_L = 1 << 16


@dataclass(frozen=True)
class LossLattice:
    """One round's privacy loss under P, rounded up onto d·ℤ.

    ``q[i]`` is the P-mass at loss ``(lo + i)·d``; ``inf`` the mass at +∞ (≥ 1 − Σq).
    """

    lo: int
    q: np.ndarray
    inf: float
    d: float

    @property
    def hi(self) -> int:
        return self.lo + self.q.size - 1


def _dense(la, lb, d: float, extra: float, pessimistic: bool):
    """(lowest index, dense P-masses from it, infinity mass) of the loss log(A/B) on d·ℤ."""
    pa = np.exp(la)
    live = pa > 0.0
    inf_mass = float(np.sum(pa[live & ~np.isfinite(lb)]))
    fin = live & np.isfinite(lb)
    # The nudge covers floating error in the subtraction and the division.
    nudge = _LOG_ERR * (np.abs(la[fin]) + np.abs(lb[fin]) + 1.0)
    if pessimistic:
        inf_mass += max(extra, 1.0 - float(np.sum(pa[live])))
        loss = np.maximum(la[fin] - lb[fin], _LOSS_FLOOR)
        idx = np.ceil((loss + nudge) / d).astype(np.int64)
    else:
        idx = np.floor((la[fin] - lb[fin] - nudge) / d).astype(np.int64)
    if idx.size == 0:
        return 0, np.zeros(1), min(1.0, inf_mass)
    lo = int(idx.min())
    return lo, np.bincount(idx - lo, weights=pa[fin]), min(1.0, inf_mass)


def lattice(la, lb, d: float, extra: float = 0.0, pessimistic: bool = True):
    """(indices, P-masses, infinity mass) of the loss log(A/B) on d·ℤ (non-zero indices).

    Pessimistic (upper bounds): losses rounded up, P-mass not listed (or ``extra``, the
    larger) charged as +∞. Optimistic (lower bounds): rounded down, unlisted mass dropped.
    Atoms with B = 0 are real infinite-loss mass either way.
    """
    lo, q, inf = _dense(la, lb, d, extra, pessimistic)
    nz = np.flatnonzero(q)
    return nz + lo, q[nz], inf


class LossPair:
    """The arrays both loss directions of one pair (A, B) share, each computed once.

    A pair's two directions (A‖B, B‖A) and its two grids (``composition._finer_step``) read
    the same e^{log A}, e^{log B}, log A − log B (the other direction's is its exact
    negation: IEEE subtraction rounds symmetrically) and floating-point nudge; the loss
    moments of each direction are kept once computed. Every array is the one the stand-alone
    functions compute, so the results are bit-identical; only the usual all-finite case is
    shared (``shared``), anything else takes the stand-alone paths.
    """

    def __init__(self, la, lb, exp_a=None, exp_b=None, store: dict | None = None):
        self.la = np.asarray(la, dtype=float)
        self.lb = np.asarray(lb, dtype=float)
        self._shared = None
        self._exp = [exp_a, exp_b]
        self._diff = self._nudge = None
        # moments and lattices (small) in ``store``: a caller that knows the pair has not
        # changed (``composition``'s cache of read-only atoms) passes the same dict again
        self.store = {} if store is None else store
        self.moments = self.store.setdefault("moments", {})
        # per direction, the lattice's first pass (``_Pass1``; its nudged losses do not
        # depend on the grid step): kept for this object only, never in ``store``
        self._pass1 = {}

    @property
    def shared(self) -> bool:
        """Every atom finite in both logs (the arrays are shared only then)."""
        if self._shared is None:
            self._shared = self.la.size > 0 and all(
                math.isfinite(float(x)) for a in (self.la, self.lb) for x in (a.min(), a.max()))
        return self._shared

    def exp(self, i: int) -> np.ndarray:
        """e^{log A} (i = 0) or e^{log B} (i = 1)."""
        if self._exp[i] is None:
            self._exp[i] = np.exp(self.lb if i else self.la)
        return self._exp[i]

    def diff(self, flip: bool) -> np.ndarray:
        """log A − log B, or log B − log A when ``flip`` (the same values as subtracting)."""
        if self._diff is None:
            self._diff = self.la - self.lb
        return -self._diff if flip else self._diff

    def nudge(self) -> np.ndarray:
        """4e-16·(|log A| + |log B| + 1), symmetric in the two directions."""
        if self._nudge is None:
            self._nudge = _LOG_ERR * (np.abs(self.la) + np.abs(self.lb) + 1.0)
        return self._nudge

    def loss_moments(self, flip: bool):
        """``loss_moments`` of the direction (log B, log A) when ``flip``, else (log A, log B)."""
        if flip not in self.moments:
            if self.shared:
                self.moments[flip] = _blocked_moments(self.la, self.lb, flip,
                                                      self.exp(int(flip)))
            else:
                a, b = (self.lb, self.la) if flip else (self.la, self.lb)
                self.moments[flip] = loss_moments(a, b)
        return self.moments[flip]

    def auto_step(self, flip: bool) -> float:
        return _step_of(self.loss_moments(flip))

    def lattice(self, flip: bool, d: float | None = None, extra: float = 0.0) -> "LossLattice":
        """``loss_lattice`` of the direction, from the shared arrays (kept in ``store``,
        read-only)."""
        if d is None:
            if flip not in self.moments and self._fused(flip):
                # the loss moments that size the grid and the lattice's first pass, read
                # from one pass over the atoms (``_pass1``)
                self._pass1[flip] = _pass1(self.la, self.lb, flip, self.exp(int(not flip)),
                                           self.exp(int(flip)), moments=True)
                self.moments[flip] = self._pass1[flip].moments()
            d = self.auto_step(flip)
        lats = self.store.setdefault("lattices", {})
        key = (bool(flip), float(d), float(extra))
        lat = lats.get(key)
        if lat is None:
            lat = self._lattice(flip, d, extra)
            lat.q.setflags(write=False)
            lats[key] = lat
        return lat

    def has_lattice(self, flip: bool, d: float | None = None, extra: float = 0.0) -> bool:
        """The lattice is kept already (no shared array needs computing for it)."""
        if d is None:
            if flip not in self.moments:
                return False
            d = self.auto_step(flip)
        return (bool(flip), float(d), float(extra)) in self.store.get("lattices", {})

    def _lattice(self, flip, d, extra):
        a, b = (self.lb, self.la) if flip else (self.la, self.lb)
        if not self.shared:
            return loss_lattice(a, b, d, extra)
        # Q-weights e^{log B}, P-masses e^{log A} of the direction
        w, pa = self.exp(int(not flip)), self.exp(int(flip))
        p1 = self._pass1.get(flip)
        w_min = p1.w_min if p1 is not None else float(w.min())
        if not w_min > 0.0:                  # atoms to drop: the stand-alone path
            return _lattice_from(self.diff(flip) + self.nudge(), w, pa, d, extra, True, 0.0)
        if p1 is None and self._fused(flip):
            p1 = self._pass1[flip] = _pass1(self.la, self.lb, flip, w, pa, moments=False)
        return _blocked_lattice(self.la, self.lb, flip, w, pa, d, extra, p1)

    def _fused(self, flip: bool) -> bool:
        """The lattice's passes go through ``_pass1`` (on two threads where there are
        two): a large pair whose arrays are shared."""
        return self.la.size >= _PASS_THREADED and self.shared


#: Atoms per block of the passes over a pair's atoms (``_blocked_moments``,
#: ``_blocked_lattice``): a block's temporaries stay in the CPU cache, where a full-length
#: temporary of a clone pair's 1.5 million atoms (12 MB) goes to memory and back.
_BLOCK = 1 << 16


def _pairwise_sum(n: int, leaf) -> float:
    """The sum of n values exactly as ``np.sum`` forms it from a contiguous array, with
    the values made block by block: ``leaf(s, e)`` is ``np.sum`` of values s..e − 1.

    numpy sums a contiguous float64 array pairwise: n > 128 values are split into halves
    at ⌊n/2⌋ rounded down to a multiple of 8 and the halves' sums added (``pairwise_sum``
    in numpy's loops), so cutting that recursion at blocks of at most ``_BLOCK`` values
    and summing each block with ``np.sum`` gives the same float (the test of this module
    checks it against ``np.sum``; the recursion is ``rounding.pairwise_combine``)."""
    return pairwise_combine(lambda s, e: float(leaf(s, e)), 0, n, _BLOCK)


def _leaves(n: int) -> list:
    """The blocks [s, e) at which ``_pairwise_sum`` cuts numpy's pairwise recursion over n
    values, in order (each at most ``_BLOCK`` values)."""
    return pairwise_leaves(n, _BLOCK)


def _halves(leaves: list) -> list:
    """``leaves`` cut into two runs of consecutive blocks with about half the values each
    (one run when there is one block)."""
    if len(leaves) < 2:
        return [leaves]
    n = leaves[-1][1]
    k = min(range(1, len(leaves)), key=lambda i: abs(2 * leaves[i][0] - n))
    return [leaves[:k], leaves[k:]]


def _on_threads(job, runs: list) -> list:
    """``[job(run) for run in runs]``, side by side where ``parallel()`` allows (each job
    writes only its own blocks; every value is the one the serial loop forms)."""
    return pmap(job, runs) if len(runs) > 1 and parallel() else [job(r) for r in runs]


#: Atoms from which ``LossPair`` takes its lattice through ``_pass1`` (and its two threads).
_PASS_THREADED = 200_000


class _Pass1:
    """The first pass of ``_blocked_lattice`` over a pair's atoms, with (``moments``) the
    sums of ``_blocked_moments``' first pass read in the same blocks: the nudged losses
    (their extremes and the low cut's first candidate) and, per pairwise block, the sums
    Σw·max(±(la − lb), floor) and Σw of the loss moments (and their loss extremes)."""

    __slots__ = ("la", "lb", "flip", "w_mom", "loss", "lo", "hi", "t0", "w_min", "mom_sums",
                 "tot_sums", "mlo", "mhi", "wm_min", "leaves")

    def moments(self):
        """``_blocked_moments(la, lb, flip, w_mom)``, bit for bit: the same block sums
        added in numpy's pairwise order, then the second pass (on two threads)."""
        n = self.la.size
        tot = _pairwise_sum(n, lambda s, e: self.tot_sums[s])
        mu = _pairwise_sum(n, lambda s, e: self.mom_sums[s]) / tot if tot > 0 else 0.0
        la, lb, flip, w = self.la, self.lb, self.flip, self.w_mom

        def second(run):
            return {s: _square_dev_sum(la, lb, s, e, flip, w, mu) for s, e in run}

        sums = {}
        for part in _on_threads(second, _halves(self.leaves)):
            sums.update(part)
        var = _pairwise_sum(n, lambda s, e: sums[s]) / tot if tot > 0 else 0.0
        return mu, var, self.mhi - self.mlo


def _nudged_loss(la, lb, s: int, e: int, flip: bool, out):
    """Block [s, e) of the direction's loss (log A − log B, negated when ``flip``): returns
    (the plain difference, a scratch array; the loss nudged up by 4e-16·(|log A| + |log B|
    + 1) for the float error of the two logs and their difference, written into
    ``out[s:e]``). The one home of that nudge (the fused first pass and the plain one)."""
    x = np.subtract(la[s:e], lb[s:e])
    if flip:
        np.negative(x, out=x)
    t = np.abs(la[s:e])
    t += np.abs(lb[s:e])
    t += 1.0
    t *= _LOG_ERR
    return x, np.add(x, t, out=out[s:e])


def _pass1(la, lb, flip: bool, w, w_mom, moments: bool) -> _Pass1:
    """``_Pass1`` of the direction (− when ``flip``): w the lattice's weights (e^{log B} of
    the direction), w_mom the moments' (e^{log A}); the blocks in two halves on two
    threads (elementwise operations on disjoint slices; extremes are exact in any order)."""
    n = la.size
    loss = np.empty(n)
    leaves = _leaves(n)

    def first(run):
        ext = [math.inf, -math.inf, math.inf, math.inf, math.inf, -math.inf, math.inf]
        ms, ts = {}, {}
        for s, e in run:
            x, y = _nudged_loss(la, lb, s, e, flip, loss)
            ext[0] = min(ext[0], float(y.min()))
            ext[1] = max(ext[1], float(y.max()))
            ext[2] = min(ext[2], float(np.min(y, where=w[s:e] > _FLOOR_MASS, initial=math.inf)))
            ext[3] = min(ext[3], float(w[s:e].min()))
            if moments:
                np.maximum(x, _LOSS_FLOOR, out=x)
                ext[4] = min(ext[4], float(x.min()))
                ext[5] = max(ext[5], float(x.max()))
                ms[s] = np.sum(np.multiply(w_mom[s:e], x, out=x))
                ts[s] = np.sum(w_mom[s:e])
                ext[6] = min(ext[6], float(w_mom[s:e].min()))
        return ext, ms, ts

    res = _on_threads(first, _halves(leaves))
    p = _Pass1()
    p.la, p.lb, p.flip, p.w_mom, p.loss, p.leaves = la, lb, flip, w_mom, loss, leaves
    p.lo = min(r[0][0] for r in res)
    p.hi = max(r[0][1] for r in res)
    p.t0 = min(r[0][2] for r in res)
    p.w_min = min(r[0][3] for r in res)
    p.mlo = min(r[0][4] for r in res)
    p.mhi = max(r[0][5] for r in res)
    p.wm_min = min(r[0][6] for r in res)
    p.mom_sums, p.tot_sums = {}, {}
    for _, ms, ts in res:
        p.mom_sums.update(ms)
        p.tot_sums.update(ts)
    return p


def _blocked_moments(la, lb, flip: bool, w):
    """``_moments(np.maximum(±(la − lb), _LOSS_FLOOR), w)`` (− when ``flip``), bit for bit,
    in blocks (``_pairwise_sum``): no full-length temporary."""
    tot = float(np.sum(w))
    ext = [math.inf, -math.inf]

    def first(s, e):
        x = _floored_loss(la, lb, s, e, flip)
        ext[0] = min(ext[0], float(x.min()))
        ext[1] = max(ext[1], float(x.max()))
        return np.sum(np.multiply(w[s:e], x, out=x))

    mu = _pairwise_sum(la.size, first) / tot if tot > 0 else 0.0
    var = (_pairwise_sum(la.size, lambda s, e: _square_dev_sum(la, lb, s, e, flip, w, mu))
           / tot if tot > 0 else 0.0)
    return mu, var, ext[1] - ext[0]


def _floored_loss(la, lb, s: int, e: int, flip: bool):
    """Block [s, e) of max(±(la − lb), _LOSS_FLOOR) (− when ``flip``), a new array."""
    x = np.subtract(la[s:e], lb[s:e])
    if flip:
        np.negative(x, out=x)
    return np.maximum(x, _LOSS_FLOOR, out=x)


def _square_dev_sum(la, lb, s: int, e: int, flip: bool, w, mu: float):
    """np.sum of w·(loss − mu)² over block [s, e): the variance pass's block sum (of
    ``_blocked_moments`` and of ``_Pass1.moments``)."""
    x = _floored_loss(la, lb, s, e, flip)
    x -= mu
    np.square(x, out=x)                      # (loss − mu) ** 2
    return np.sum(np.multiply(w[s:e], x, out=x))


def _moments(loss, w):
    tot = float(np.sum(w))
    mu = float(np.sum(w * loss)) / tot if tot > 0 else 0.0
    var = float(np.sum(w * (loss - mu) ** 2)) / tot if tot > 0 else 0.0
    return mu, var, float(np.ptp(loss))


def loss_moments(la, lb):
    """(mean, variance, span) of the finite loss log(A/B) (floored at ``_LOSS_FLOOR``)
    under A, or None when no atom has a finite loss. Sizes the loss grids."""
    la = np.asarray(la, dtype=float)
    lb = np.asarray(lb, dtype=float)
    fin = np.isfinite(la) & np.isfinite(lb)
    if not fin.all():             # (all finite, the usual case: no copies)
        if not np.any(fin):
            return None
        la, lb = la[fin], lb[fin]
    return _moments(np.maximum(la - lb, _LOSS_FLOOR), np.exp(la))


def _step_of(mom) -> float:
    if mom is None:
        return 1e-4
    _, var, span = mom
    return max(math.sqrt(var) / NU, span / (MAX_SUPPORT - 2), 1e-12)


def auto_step(la, lb) -> float:
    """Grid step for ``loss_lattice``: sd(L under A)/NU, at least span/MAX_SUPPORT."""
    return _step_of(loss_moments(la, lb))


def loss_lattice(la, lb, d: float | None = None, extra: float = 0.0) -> LossLattice:
    """The Q-law (B-law) of the loss L = log(A/B), spread onto d·ℤ in convex order.

    δ_T(ε) = P(some round infinite) + E_{Q^T}[(e^{S} − e^{ε})_+], S = ΣL_t, and
    s ↦ (e^s − e^ε)_+ is convex and non-decreasing. So every loss may be replaced by a
    variable that is larger in increasing convex order, independently per round, and the
    value only grows: each loss is split onto its two neighbouring grid points with the
    same mean (L = d(m + f) → dm w.p. 1 − f, d(m + 1) w.p. f) after a floating-point
    nudge upward, and losses below ``_LOSS_FLOOR`` (or below the top loss minus
    ``MAX_SUPPORT`` steps) are raised to that floor. Unlike rounding up, the spread has no
    drift: it adds at most d²/4 variance per round. P-mass with B = 0, P-mass not listed
    and ``extra`` (the larger of those two) form the infinity mass.
    """
    la = np.asarray(la, dtype=float)
    lb = np.asarray(lb, dtype=float)
    if d is None:
        d = auto_step(la, lb)
    pa = np.exp(la)
    fin = np.isfinite(lb)
    all_fin = bool(fin.all())
    a, b = (la, lb) if all_fin else (la[fin], lb[fin])
    ok = np.isfinite(a)
    if ok.all():
        loss = a - b + _LOG_ERR * (np.abs(a) + np.abs(b) + 1.0)
    else:
        loss = np.full(a.shape, -np.inf)
        loss[ok] = a[ok] - b[ok] + _LOG_ERR * (np.abs(a[ok]) + np.abs(b[ok]) + 1.0)
    inf_fin = 0.0 if all_fin else float(np.sum(pa[(pa > 0.0) & ~fin]))
    return _lattice_from(loss, np.exp(b), pa, d, extra, all_fin, inf_fin)


def _lattice_from(loss, w, pa, d, extra, all_fin, inf_fin) -> LossLattice:
    """``loss_lattice`` from its loss (nudged up), Q-weights w = e^{log B} of the finite
    atoms and the P-masses pa = e^{log A} of all atoms (``inf_fin``: P-mass with B = 0,
    True when ``all_fin`` says there is none)."""
    # The usual case — every atom alive — skips the masked copy (the same values, summed
    # in the same order).
    # (one reduction each instead of a mask and its .all(): pa, w ≥ 0, never NaN)
    all_live = pa.size == 0 or float(pa.min()) > 0.0
    inf = (float(inf_fin) if not all_fin else 0.0) + max(
        extra, 1.0 - float(np.sum(pa if all_live else pa[pa > 0.0])))
    if w.size and not float(w.min()) > 0.0:
        keep = w > 0.0
        loss, w = loss[keep], w[keep]
    if w.size == 0:
        return LossLattice(0, np.zeros(1), min(1.0, inf), d)
    # losses are finite or −inf (log A ≤ 0, log B finite): the max is finite unless all
    # are −inf
    top = float(np.max(loss))
    if not math.isfinite(top):
        top = _LOSS_FLOOR
    floor = max(_LOSS_FLOOR, top - MAX_SUPPORT * d)
    # Raising a loss is always allowed (see above); losses whose whole lower tail weighs
    # ≤ _FLOOR_MASS (a dominating pair's far atoms, e.g. a clone pair's c = 0 slice) are
    # raised to the lowest loss above that tail, so that they do not stretch the grid. The
    # change to δ is at most T·_FLOOR_MASS.
    cut = _low_cut(loss, w, _FLOOR_MASS)
    if cut is not None:
        floor = max(floor, cut)
    x = np.maximum(loss, floor)
    x /= d
    m = np.floor(x)
    f = np.subtract(x, m, out=x)
    mi = m.astype(np.int64)
    lo = int(mi.min())
    K = int(mi.max()) - lo + 2
    mi -= lo
    # the upper neighbours' bincount is the lower one shifted by a bin (the same sums in
    # the same order)
    up = np.zeros(K)
    up[1:] = np.bincount(mi, weights=w * f, minlength=K - 1)
    np.subtract(1.0, f, out=f)
    q = np.bincount(mi, weights=np.multiply(w, f, out=m), minlength=K) + up
    return LossLattice(lo, q, min(1.0, inf), d)


def floor_losses(a, b):
    """The losses a − b of finite atoms (log A, log B), lowered by their floating-point
    margin: at or below every exact loss the stored logs stand for (for LOWER bounds)."""
    loss = a - b
    return loss - (_LOG_ERR * (np.abs(a) + np.abs(b) + 1.0) + 1e-12 * (1.0 + np.abs(loss)))


def _blocked_lattice(la, lb, flip: bool, w, pa, d: float, extra: float,
                     p1: _Pass1 | None = None) -> LossLattice:
    """``_lattice_from(±(la − lb) + nudge, w, pa, d, extra, True, 0.0)`` (− when ``flip``;
    nudge = 4e-16·(|la| + |lb| + 1), every w > 0), bit for bit, in blocks of ``_BLOCK``
    atoms: the nudged losses in one pass that also finds their extremes and the low cut's
    first candidate, then the spread onto the grid block by block.

    The grid indices run from ⌊max(min loss, floor)/d⌋ to ⌊max(max loss, floor)/d⌋
    (maximum, division by d > 0 and ⌊·⌋ are each non-decreasing, so the extremes of the
    indices are those of the losses), and ``np.add.at`` adds the blocks' weights into the
    lattice in atom order, the same additions in the same order as one ``np.bincount`` over
    all atoms. ``p1``: the first pass done already (``_pass1``, with pa its w_mom); the
    spread then runs on two threads (``_spread``)."""
    n = la.size
    if p1 is not None and p1.tot_sums and p1.w_mom is pa:
        # Σpa is the moments' Σw: the same blocks' sums added in numpy's pairwise order
        all_live = p1.wm_min > 0.0
        psum = _pairwise_sum(n, lambda s, e: p1.tot_sums[s]) if all_live else None
    else:
        all_live = float(pa.min()) > 0.0
        psum = None
    if psum is None:
        psum = float(np.sum(pa if all_live else pa[pa > 0.0]))
    inf = 0.0 + max(extra, 1.0 - psum)
    if p1 is not None:
        loss, ext = p1.loss, [p1.lo, p1.hi, p1.t0]
    else:
        loss = np.empty(n)
        ext = [math.inf, -math.inf, math.inf]    # min, max loss; lowest loss of a heavy atom
        for s in range(0, n, _BLOCK):
            e = min(n, s + _BLOCK)
            _, x = _nudged_loss(la, lb, s, e, flip, loss)
            ext[0] = min(ext[0], float(x.min()))
            ext[1] = max(ext[1], float(x.max()))
            ext[2] = min(ext[2], float(np.min(x, where=w[s:e] > _FLOOR_MASS,
                                              initial=math.inf)))
    top = ext[1]
    floor = max(_LOSS_FLOOR, top - MAX_SUPPORT * d)
    cut = _low_cut(loss, w, _FLOOR_MASS, t0=ext[2])
    if cut is not None:
        floor = max(floor, cut)
    lo = math.floor(max(ext[0], floor) / d)
    K = math.floor(max(top, floor) / d) - lo + 2
    # Both neighbours' weights in one complex array (w·f real, w·(1 − f) imaginary):
    # complex addition adds the two parts separately, so one np.add.at forms both
    # bincounts' sums, and nearly every atom falls in its predecessor's bin (the additions
    # wait on each other), so one pass of pairs costs about what one pass of reals did.
    acc = np.zeros(K - 1, dtype=complex)
    blocks = [(s, min(n, s + _BLOCK)) for s in range(0, n, _BLOCK)]

    def spread(run, into):
        """Each block's grid indices and weight pairs; added to ``acc`` at once when
        ``into``, else returned (for the caller to add after the blocks before them)."""
        pairs = np.empty(min(n, _BLOCK), dtype=complex) if into else None
        kept = []
        for s, e in run:
            x = np.maximum(loss[s:e], floor)
            x /= d
            m = np.floor(x)
            f = np.subtract(x, m, out=x)
            mi = m.astype(np.int64)
            mi -= lo
            if int(mi.min()) < 0 or int(mi.max()) > K - 2:    # (cannot happen: see above)
                raise ArithmeticError("a loss fell outside the lattice's index range")
            v = pairs[:e - s] if into else np.empty(e - s, dtype=complex)
            np.multiply(w[s:e], f, out=v.real)
            np.subtract(1.0, f, out=f)
            np.multiply(w[s:e], f, out=v.imag)
            if into:
                np.add.at(acc, mi, v)
            else:
                kept.append((mi, v))
        return kept

    if p1 is not None and len(blocks) > 1 and parallel():
        # The first half's blocks are spread and added by the calling thread while the
        # other thread forms the second half's indices and pairs; those are added after
        # the first half's, so every bin receives the same additions in the same order.
        runs = _halves(blocks)
        later = pmap(lambda r: spread(r[0], r[1]), [(runs[0], True), (runs[1], False)])[1]
        for mi, v in later:
            np.add.at(acc, mi, v)
    else:
        spread(blocks, True)
    # q = (lower neighbours' sums) + (upper neighbours' sums shifted by a bin), as before
    q = np.zeros(K)
    q[:-1] = acc.imag
    q[1:] += acc.real
    return LossLattice(lo, q, min(1.0, inf), d)


def floor_lattice(la, lb, d: float | None = None) -> LossLattice:
    """The Q-law of the loss L = log(A/B) rounded DOWN onto d·ℤ, for LOWER bounds.

    Each term of δ_T(ε) = P(some round infinite) + E_{Q^T}[(e^S − e^ε)_+] only shrinks when
    a loss is lowered or an atom left out, so: losses are lowered by a floating-point
    margin and rounded down; atoms whose loss is below the top loss minus ``MAX_SUPPORT``
    steps, or whose whole lower tail weighs ≤ ``_FLOOR_MASS``, are dropped; P-mass with
    B = 0 is the infinity mass (exact), mass not listed is not charged. The Q-masses are
    taken as given (callers scale them down by their own error first).
    """
    la = np.asarray(la, dtype=float)
    lb = np.asarray(lb, dtype=float)
    if d is None:
        d = auto_step(la, lb)
    live = np.isfinite(la)
    inf = float(np.sum(np.exp(la[live & ~np.isfinite(lb)])))
    fin = live & np.isfinite(lb)
    a, b = la[fin], lb[fin]
    w = np.exp(b)
    loss = floor_losses(a, b)
    keep = w > 0.0
    loss, w = loss[keep], w[keep]
    if w.size == 0:
        return LossLattice(0, np.zeros(1), min(1.0, inf), d)
    low = float(np.max(loss)) - (MAX_SUPPORT - 2) * d
    cut = _low_cut(loss, w, _FLOOR_MASS)
    if cut is not None:
        low = max(low, cut)
    ok = loss >= low
    mi = np.floor(loss[ok] / d).astype(np.int64)
    lo = int(mi.min())
    q = np.bincount(mi - lo, weights=w[ok])
    return LossLattice(lo, q, min(1.0, inf), d)


def composed_delta_floor(lat: LossLattice, T: int, eps: float) -> float:
    """Certified LOWER bound on δ_T(ε) of one direction of a ``floor_lattice``.

    The tilted FFT of ``composed_delta`` read the other way: the window's sum of weights
    times the computed law, minus the FFT error (‖w‖₂·err), minus the mass the circular
    convolution aliased onto the window (at most the tilted law's mass outside it, a
    Chernoff bound on both sides, times the largest weight), each relative error divided
    out; everything outside the window is left out. 0 when no tilt is usable.
    """
    p = lat.inf
    inf = -math.expm1(T * math.log1p(-p)) * (1.0 - 1e-12) if 0.0 < p < 1.0 else float(p >= 1.0)
    if float(lat.q.sum()) <= 0.0 or inf >= 1.0:
        return inf
    d = lat.d
    if eps >= d * T * lat.hi:
        return inf
    try:
        tilt = _Tilt(lat, T, eps / d)
    except ArithmeticError:
        return inf
    terms = tilt._window_sum(eps, 600.0)
    if terms is None or not math.isfinite(terms[0]):
        return inf
    main, l2, _, w_max, wr = terms
    fft = l2 * tilt.err
    alias = 0.0
    full = T * (lat.q.size - 1) + 1
    if tilt.L < full:                         # a window, not the whole support: aliasing
        alias = w_max * tilt.outside_mass()
    fin = (main - fft - alias) / ((1.0 + tilt.rel) * (1.0 + wr))
    return inf + max(fin, 0.0) * (1.0 - 1e-12)


def _low_cut(loss, w, mass: float, t0: float | None = None):
    """The loss of the first atom, in increasing order of loss, at which the cumulative
    weight exceeds ``mass`` (None when that is the first atom or none).

    An atom heavier than ``mass`` on its own ends that prefix, so the answer is at most the
    lowest loss t0 among such atoms, and only the atoms with loss ≤ t0 (a prefix of the
    sorted order, ties included) need sorting: usually a handful, found in two linear
    passes. When they are many, the lowest ~1/64 of the atoms are sorted (a partition
    finds them in linear time); the full sort is the fallback when they weigh ≤ ``mass``.
    Same value as sorting everything: ties share their loss."""
    def first_over(idx):
        order = idx[np.argsort(loss[idx])]
        cum = np.cumsum(w[order])
        k = int(np.searchsorted(cum, mass, side="right"))
        return k, order

    m = max(1024, loss.size // 64)
    if t0 is None:                           # (``t0``: the caller found it already)
        with np.errstate(invalid="ignore"):
            t0 = float(np.min(np.where(w > mass, loss, np.inf))) if loss.size else np.inf
    if t0 < np.inf:
        idx = np.flatnonzero(loss <= t0)
        if idx.size <= m:
            k, order = first_over(idx)       # k < idx.size: the atom at t0 is heavy
            return float(loss[order[k]]) if k > 0 else None
    if m < loss.size:
        part = np.argpartition(loss, m - 1)[:m]
        k, order = first_over(part)
        if k < m:
            return float(loss[order[k]]) if k > 0 else None
    k, order = first_over(np.arange(loss.size))
    return float(loss[order[k]]) if 0 < k < order.size else None


def _inf_part(lat: LossLattice, T: int) -> float:
    """P(some round has infinite loss) = 1 − (1 − p∞)^T, rounded up."""
    p = lat.inf
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return min(1.0, float(-math.expm1(T * math.log1p(-p))) * (1.0 + 1e-13) + 1e-300)


def _lattice_memo(lat: LossLattice) -> dict:
    """Values derived from a lattice alone, kept on it (the lattices of read-only atoms are
    themselves kept across questions, ``LossPair.lattice``): every tilt and every question
    on the lattice reads them instead of recomputing them from its K masses."""
    memo = lat.__dict__.get("_memo")
    if memo is None:
        memo = {}
        object.__setattr__(lat, "_memo", memo)   # (a frozen dataclass: not a field)
    return memo


def _lattice_stats(lat: LossLattice):
    """From z = log q + d·j (the P-law's log-masses up to a constant) and e^{z − max z},
    once per lattice: ``_cut_heavy``'s (zmax, log M(d), log of the mass above each index)
    — the suffix sums of e^{z − zmax}, independent of T and of the cap — and
    ``_start_centre``'s mean and standard deviation of the index under the P-law."""
    memo = _lattice_memo(lat)
    hit = memo.get("stats")
    if hit is None:
        q = lat.q
        j = lat.lo + np.arange(q.size, dtype=float)
        with np.errstate(divide="ignore"):
            z = np.log(q) + lat.d * j
        zmax = float(np.max(z))
        w = np.exp(z - zmax)
        suf = np.cumsum(w[::-1])[::-1]
        log_md = zmax + math.log(float(suf[0]))
        above = np.append(suf[1:], 0.0)          # mass (scaled) of the indices above i
        with np.errstate(divide="ignore"):
            log_above = np.log(above)
        log_above.setflags(write=False)
        w /= w.sum()
        mu = float(np.sum(w * j))
        sd = math.sqrt(max(float(np.sum(w * (j - mu) ** 2)), 0.0))
        hit = memo["stats"] = (zmax, log_md, log_above, mu, sd)
    return hit


def _cut_heavy(lat: LossLattice, T: int, cap: float):
    """(lattice law without its heaviest losses, their charge ≤ ``cap``).

    E[(e^{dS} − e^ε)_+; some round above index b] ≤ T·E[e^{dJ}; J > b]·E[e^{dJ}]^{T−1}
    (a union bound over the rounds; (e^{dS} − e^ε)_+ ≤ e^{dS}), so the losses above b can
    be dropped from the lattice and that charge added instead. Rare large losses (a
    clone pair's far slices) otherwise set the width of the tilted law and of the FFT.
    """
    q = lat.q
    if cap <= 0.0 or q.size < 3:
        return q, 0.0
    zmax, log_md, log_above = _lattice_stats(lat)[:3]
    lh = math.log(T) + zmax + log_above + (T - 1) * log_md
    ok = np.flatnonzero(lh <= math.log(cap) - 1e-9)
    i = int(ok[0]) if ok.size else q.size - 1
    if i >= q.size - 1:
        return q, 0.0
    return q[: i + 1], float(math.exp(lh[i])) * (1.0 + 1e-9)


def _est_len(K: int, T: int, sd_t: float, sds: float) -> int:
    """The FFT length ``_Tilt`` will use (before rounding to a fast length): the window, or
    the whole support when that is short."""
    win = 2 * int(sds * math.sqrt(T) * sd_t + 8.0) + 3
    full = T * (K - 1) + 1
    return full if full <= max(1 << 18, 2 * win) else win


def fft_length_estimate(moments, T: int, d: float) -> int:
    """About the FFT length composing T rounds of a loss with ``moments`` (``loss_moments``:
    mean, variance, span) on the grid d needs (``_est_len`` with the untilted spread); sizes
    grids before a lattice is built."""
    _, var, span = moments
    return _est_len(int(span / d) + 2, T, math.sqrt(var) / d, _SDS)


class _Tilt:
    """The T-fold finite (Q-)lattice law, tilted to be centred at ``centre`` (a sum index).

    Q(S = s) = M(φ)^T e^{−φs} Q_φ(s), so the finite part of δ_T(ε) is
    Σ_{s > ε/d} e^{log_scale + (d − φ)s} (1 − e^{ε − sd}) Q_φ(s)."""

    def __init__(self, lat: LossLattice, T: int, centre: float, sds: float = _SDS,
                 low: float | None = None, heavy_cap: float = 0.0, wide_cap: float = 0.0):
        q, self.heavy = _cut_heavy(lat, T, heavy_cap)
        self.lat, self.T = lat, T
        phi = self._set_law(q, centre)
        if wide_cap > heavy_cap:
            # Rare heavy losses (a pair's far slices carried at its largest loss) can make
            # the tilted law, and so the FFT, a hundred times wider than its bulk. Cutting
            # them at the larger charge ``wide_cap`` (still a small fraction of δ, added to
            # the value) is then the better trade when the FFT is long: try it, keep it if at
            # least twice shorter.
            qw, hw = _cut_heavy(lat, T, wide_cap)
            len_keep = _est_len(q.size, T, self._tilted_sd(phi), sds)
            if qw.size < q.size and len_keep > _WIDE_MIN_L:
                phi_w = self._set_law(qw, centre)
                if _est_len(qw.size, T, self._tilted_sd(phi_w), sds) * 2 < len_keep:
                    q, phi, self.heavy = qw, phi_w, hw
                else:                        # rare: adopt the uncut law again
                    phi = self._set_law(q, centre)
        self._finish(q, phi, sds, low)

    def _tilted_sd(self, phi):
        return math.sqrt(max(self._mean(phi)[1], 0.0))

    def _set_law(self, q, centre):
        """Adopt ``q`` as the (cut) lattice law; return the tilt centring it at ``centre``."""
        lat, T = self.lat, self.T
        m = float(q.sum())
        self.j_hi = lat.lo + q.size - 1
        self.log_m = math.log(m)
        live = q > 0
        jl = (lat.lo + np.flatnonzero(live)).astype(float)
        lqn = np.log(q[live]) - self.log_m
        self._jl, self._lqn = jl, lqn
        jmax, jmin = float(jl.max()), float(jl.min())
        target = centre / T
        phi = 0.0
        if target > self._mean(0.0)[0] and jmax > jmin:
            # Newton on the convex log-MGF (its derivative, the tilted mean, increases with
            # variance as slope), safeguarded by bisection.
            target = min(target, jmax - 1e-9 * max(1.0, jmax - jmin))
            lo_, hi_ = 0.0, 1.0 / max(jmax - jmin, 1.0)
            while self._mean(hi_)[0] < target and hi_ < 1e6:
                lo_, hi_ = hi_, hi_ * 2.0
            phi = hi_
            for _ in range(100):
                mu, var = self._mean(phi)
                if mu > target:
                    hi_ = phi
                else:
                    lo_ = phi
                if abs(mu - target) <= 1e-9 * (1.0 + math.sqrt(var)) or hi_ - lo_ <= 1e-15 * hi_:
                    break
                step = phi - (mu - target) / var if var > 0 else 0.5 * (lo_ + hi_)
                phi = step if lo_ < step < hi_ else 0.5 * (lo_ + hi_)
        return phi

    def _finish(self, q, phi, sds, low):
        lat, T = self.lat, self.T
        live = q > 0
        jl, lqn = self._jl, self._lqn
        self.phi = phi
        self.lM = self._log_mgf(phi)
        K = q.size
        j = lat.lo + np.arange(K, dtype=float)
        qt = np.zeros(K)
        qt[live] = np.exp(lqn + phi * jl - self.lM)
        mu_t = float(np.sum(qt * j))
        sd_t = math.sqrt(max(float(np.sum(qt * (j - mu_t) ** 2)), 0.0))
        c = T * mu_t
        w = sds * math.sqrt(T) * sd_t + 8.0
        s_lo = int(math.floor(c - w))
        s_top = int(math.ceil(c + w))
        if low is not None:                  # extend the window down to the sum index `low`
            s_lo = min(s_lo, int(math.floor(low)) - 1)
        full = T * (K - 1) + 1
        if full <= max(1 << 18, 2 * (s_top - s_lo + 1)):
            s_lo = T * lat.lo                # the whole support: no tails, no wrap-around
            s_top = s_lo + full - 1
        L = next_fast_len(max(s_top - s_lo + 1, 2))
        if L > MAX_FFT:
            raise ArithmeticError(f"the PLD composition needs an FFT of length {L} > {MAX_FFT}")
        s_hi = s_lo + L - 1
        if K > L:
            # Fold the one-round law modulo L: residues are kept, so the circular power is
            # unchanged and far mass only aliases onto window points (adds, never removes).
            qt = np.bincount(np.arange(K) % L, weights=qt, minlength=L)
        Q, self.err = fft_power(qt, T, L)
        self.Q = np.maximum(circular_run(Q, s_lo - T * lat.lo, s_hi - s_lo + 1), 0.0)
        if max(abs(s_lo), abs(s_hi)) < 2 ** 52:
            # the sum indices as floats, formed directly: numpy fills a float range as
            # start + i·1, exact for integers below 2^53 (the values of the int64 range
            # converted, without it)
            self.s = np.arange(float(s_lo), float(s_hi + 1))
        else:
            self.s = np.arange(s_lo, s_hi + 1, dtype=np.int64).astype(float)
        self.s_lo, self.s_hi, self.L = s_lo, s_hi, L
        self.sd_t = sd_t
        # log Q(S = s) = log_scale − φ s + log Q_φ(s); the weight adds e^{sd}
        self.log_scale = T * (self.log_m + self.lM)
        self.slope = lat.d - phi
        eta = 32.0 * _U * (1.0 + float(np.max(np.abs(phi * jl))) + abs(self.lM))
        self.rel = math.expm1(T * eta)
        self.right = self._right_tail()

    def _mean(self, phi):
        z = self._lqn + phi * self._jl
        w = np.exp(z - z.max())
        w /= w.sum()
        mu = float(np.sum(w * self._jl))
        return mu, float(np.sum(w * (self._jl - mu) ** 2))

    def _log_mgf(self, psi):
        psi = np.atleast_1d(np.asarray(psi, dtype=float))
        z = self._lqn[None, :] + psi[:, None] * self._jl[None, :]
        top = z.max(axis=1)
        r = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
        return float(r[0]) if r.size == 1 else r

    def _right_tail(self) -> float:
        """Chernoff: E[e^{dS}; S > s_hi] ≤ M(ψ)^T e^{−(ψ − d)(s_hi + 1)} for ψ ≥ d (times m^T)."""
        if self.s_hi + 1 > self.T * self.j_hi:
            return 0.0
        d = self.lat.d
        base = 1.0 / max(math.sqrt(self.T) * max(self.sd_t, 1e-3), 1e-12)
        psis = max(self.phi, d) + base * np.geomspace(0.05, 200.0, 24)
        lt = min(self.T * self._log_mgf(float(p)) - (float(p) - d) * (self.s_hi + 1)
                 for p in psis)
        lt += self.T * self.log_m
        return math.exp(min(lt, 0.0)) * (1.0 + 1e-12) if lt > -745 else 0.0

    def outside_mass(self) -> float:
        """Upper bound on the tilted T-fold law's mass outside [s_lo, s_hi] (Chernoff on
        each side, the best ψ on a grid), for the (normalised) kept law."""
        base = 1.0 / max(math.sqrt(self.T) * max(self.sd_t, 1e-3), 1e-12)
        psis = base * np.geomspace(0.05, 200.0, 32)
        up = self.T * (self._log_mgf(self.phi + psis) - self.lM) - psis * (self.s_hi + 1)
        dn = self.T * (self._log_mgf(self.phi - psis) - self.lM) + psis * (self.s_lo - 1)
        tot = sum(math.exp(min(float(np.min(x)), 0.0)) for x in (up, dn)
                  if float(np.min(x)) > -745.0)
        return min(1.0, tot * (1.0 + 1e-9))

    def steer(self, lo: float):
        """An uncertified but fast δ_finite(ε) for ε ≥ ``lo`` (suffix sums, O(log L) per ε)
        for steering a search, or None when the weights overflow; answers are re-checked
        by ``delta_finite``."""
        d = self.lat.d
        k0 = int(np.searchsorted(self.s, lo / d, side="right"))
        s = self.s[k0:]
        if s.size == 0:
            return None
        lw = self._weights()[0][k0:]
        Q = self.Q[k0:]
        # e^{lw} alone may overflow where Q is tiny (far below the tilt's centre); their
        # product is a weight ≤ ~1, so form it in logs (Q ≤ 0 from rounding: weight 0).
        # (in place: the operations of lw + log(max(Q, 0)), e^{that} and A·e^{−(s − s0)d}
        # as written, two buffers instead of nine temporaries of the window's length)
        sums = _steer_sums(lw, Q, s, d, s.size >= _WINDOW_THREADED and parallel())
        if sums is None:
            return None
        A, SA, SB = sums
        s0, right = float(s[0]), self.right + self.heavy

        # Σ_{s > ε/d} A_s e^{ε − sd} from the suffix sums of B = A·e^{−(s − s0)d}, unless the
        # window spans more than ~650 in loss: then B underflows far from s0 (and e^{ε−s0·d}
        # overflows), so the sum is taken directly over the ~745/d points where e^{ε−sd}
        # is not negligible.
        wide = d * (float(s[-1]) - s0) > 650.0
        m = int(745.0 / d) + 2

        def tilted_b(k, eps):
            if wide:
                return float(np.sum(A[k:k + m] * np.exp(eps - s[k:k + m] * d)))
            sb = float(SB[k])
            return 0.0 if sb <= 0.0 else math.exp(eps - s0 * d + math.log(sb))

        def approx(eps):
            k = int(np.searchsorted(s, eps / d, side="right"))
            if k >= s.size:
                return right
            return max(float(SA[k]) - tilted_b(k, eps), 0.0) + right

        def slope(eps):
            # −dδ/dε of the window part: Σ_{s > ε/d} e^{lw} Q e^{ε − sd} (δ is convex in ε)
            k = int(np.searchsorted(s, eps / d, side="right"))
            return 0.0 if k >= s.size else tilted_b(k, eps)
        approx.slope = slope
        return approx

    def covers(self, eps: float) -> bool:
        """The window has no weight below it at ε (else a re-tilt is needed)."""
        return eps >= self.lat.d * (self.s_lo - 1)

    def _window_sum(self, eps: float, top_max: float):
        """The window's part of E[(e^{dS} − e^ε)_+] in the tilted form, Σ_{s > ε/d} w_s·Q(s)
        with w_s = e^{log_scale + (d − φ)s}(1 − e^{ε − sd}): (that sum, ‖w‖₂, how many
        weights below e^-700 were left out, the largest kept weight, the weights' relative
        rounding). None when no window point is above ε/d; the sum is inf when the largest
        log weight exceeds ``top_max`` (the tilt is too far from ε). Weights below e^-700
        are left out: computing them would produce subnormal numbers, ~100x slower."""
        d = self.lat.d
        k = int(np.searchsorted(self.s, eps / d, side="right"))
        if k >= self.s.size:
            return None
        lw_all, sd_all, a, b, ew = self._weights()
        # lw = log_scale + (d − φ)s is monotone in s (so is its rounding): its largest value
        # and largest magnitude on s[k:] are at the two ends, and the kept weights
        # (lw > −700) are one run [a, b) of the window, their e^{lw} computed once per tilt.
        lw0, lw1 = float(lw_all[k]), float(lw_all[-1])
        if max(lw0, lw1) > top_max:
            return math.inf, math.inf, 0, math.inf, math.inf
        ka = max(a, k)
        if b - ka >= _WINDOW_THREADED and parallel():
            main, l2sq, w_top = _window_terms_threaded(eps, sd_all[ka:b], ew[ka - a:],
                                                       self.Q[ka:b])
            l2 = math.sqrt(l2sq)
            wr = 8.0 * _U * (4.0 + max(abs(lw0), abs(lw1)) + abs(eps) + float(self.s[-1]) * d)
            return main, l2, int(self.s.size - k - (b - ka)), w_top, wr
        if ka < b:
            # w = e^{lw}·(−expm1(min(ε − s·d, 0))), its products with Q and itself: the
            # operations as written, in two buffers
            w = np.subtract(eps, sd_all[ka:b])
            np.minimum(w, 0.0, out=w)
            np.expm1(w, out=w)
            np.negative(w, out=w)
            np.multiply(ew[ka - a:], w, out=w)
            u = np.multiply(w, self.Q[ka:b])
            main = float(np.sum(u))
            l2 = math.sqrt(float(np.sum(np.multiply(w, w, out=u))))
        else:
            w = ew[:0]
            main = float(np.sum(w * self.Q[ka:b]))
            l2 = math.sqrt(float(np.sum(w * w)))
        # weights: exp/expm1 and the products φ·s, ε − s·d each carry a few ulps relative
        wr = 8.0 * _U * (4.0 + max(abs(lw0), abs(lw1)) + abs(eps) + float(self.s[-1]) * d)
        return (main, l2, int(self.s.size - k - w.size),
                float(np.max(w)) if w.size else 0.0, wr)

    def _weights(self):
        """Per tilt: lw = log_scale + (d − φ)s and s·d on the window, the run [a, b) where
        lw > −700 and e^{lw} there (the same values ``_window_sum`` formed per ε)."""
        c = self.__dict__.get("_wts")
        if c is None:
            lw = self.log_scale + self.slope * self.s
            run = _run_above(lw, -700.0, self.slope)
            if run is None:
                idx = np.flatnonzero(lw > -700.0)
                a, b = (int(idx[0]), int(idx[-1]) + 1) if idx.size else (0, 0)
                if b - a != idx.size:        # not one run (cannot happen: lw is monotone)
                    raise ArithmeticError("the tilted weights are not monotone in s")
            else:
                a, b = run
            with np.errstate(over="ignore"):     # lw > top_max: never read (see above)
                ew = np.exp(lw[a:b])
            c = self._wts = (lw, self.s * self.lat.d, a, b, ew)
        return c

    def delta_finite(self, eps: float):
        """(certified upper bound on E[(1 − e^{ε−dS})_+; all finite], its allowance).

        Remembered per ε: the searches ask again at the ends they have already checked."""
        memo = self.__dict__.setdefault("_memo", {})
        hit = memo.get(eps)
        if hit is None:
            hit = memo[eps] = self._delta_finite(eps)
        return hit

    def _delta_finite(self, eps: float):
        d = self.lat.d
        if eps >= d * self.T * self.j_hi:
            return self.heavy, self.heavy
        if not self.covers(eps):
            return math.inf, math.inf
        terms = self._window_sum(eps, 300.0)
        if terms is None:                    # only the tail above the window is left
            return self.right + self.heavy, self.right + self.heavy
        main, l2, dropped, _, wr = terms
        if not math.isfinite(main):          # the tilt is far from ε: re-tilt
            return math.inf, math.inf
        # weights below e^-700 are charged in bulk (≤ e^-700 each, Q ≤ 1 + its error)
        fft = l2 * self.err + 2.0 * math.exp(-700.0) * dropped
        total = (main + fft) * (1.0 + self.rel) * (1.0 + wr) + self.right + self.heavy
        return total, total - main


def _run_above(lw, cut: float, slope: float):
    """(a, b): the run of indices where lw > cut, (0, 0) when there is none, found by
    binary search, or None (the caller then scans). lw = c + slope·s over increasing s is
    monotone in floating point too (a product and a sum, each rounded monotonically), so
    that set is a suffix (slope > 0), a prefix (slope < 0) or all or nothing; the run's
    ends are checked against their neighbours."""
    n = lw.size
    if n == 0 or not (math.isfinite(slope) and math.isfinite(float(lw[0]))
                      and math.isfinite(float(lw[-1]))):
        return None
    if slope > 0.0:
        a, b = int(np.searchsorted(lw, cut, side="right")), n
    elif slope < 0.0:
        a, b = 0, n - int(np.searchsorted(lw[::-1], cut, side="right"))
    else:
        return None
    if a >= b:
        a, b = 0, 0
        ok = not (lw[0] > cut or lw[-1] > cut)
    else:
        ok = (lw[a] > cut and lw[b - 1] > cut and (a == 0 or not lw[a - 1] > cut)
              and (b == n or not lw[b] > cut))
    return (a, b) if ok else None


#: Window points from which ``_Tilt._window_sum`` forms its weights and sums on two threads.
_WINDOW_THREADED = 1 << 17


def _window_terms_threaded(eps: float, sd, ew, Q):
    """(Σ w·Q, Σ w², max w) of ``_Tilt._window_sum``, w = ew·(−expm1(min(ε − sd, 0))),
    bit for bit, with the two halves of the window on two threads: each weight is formed
    by the same elementwise operations, and each sum is numpy's pairwise sum of the whole
    array put together from its blocks (``_leaves``, ``_pairwise_sum``; a run of whole
    blocks per thread). The maximum is exact in any order."""
    n = sd.size
    leaves = _leaves(n)

    def half(run):
        h0, h1 = run[0][0], run[-1][1]
        w = np.subtract(eps, sd[h0:h1])
        np.minimum(w, 0.0, out=w)
        np.expm1(w, out=w)
        np.negative(w, out=w)
        np.multiply(ew[h0:h1], w, out=w)
        u = np.multiply(w, Q[h0:h1])
        main = {s: np.sum(u[s - h0:e - h0]) for s, e in run}
        np.multiply(w, w, out=u)
        sq = {s: np.sum(u[s - h0:e - h0]) for s, e in run}
        return main, sq, float(np.max(w))

    main, sq, top = {}, {}, -math.inf
    for m, q, t in _on_threads(half, _halves(leaves)):
        main.update(m)
        sq.update(q)
        top = max(top, t)
    return (_pairwise_sum(n, lambda s, e: main[s]), _pairwise_sum(n, lambda s, e: sq[s]),
            top)


def _steer_weights(lw, Q):
    """``_Tilt.steer``'s weights A = e^{lw + log max(Q, 0)} in place of one buffer, or None
    when they overflow."""
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        A = np.where(Q > 0.0, Q, 0.0)
        np.log(A, out=A)
        np.add(lw, A, out=A)                 # la
        if float(np.max(A)) > 600.0:
            return None
        np.exp(A, out=A)
    return A


def _steer_decay(s, d: float):
    """e^{−(s − s0)d} in place of one buffer."""
    with np.errstate(under="ignore"):
        B = np.subtract(s, s[0])
        np.negative(B, out=B)
        B *= d
        np.exp(B, out=B)
    return B


def _steer_sums(lw, Q, s, d: float, threaded: bool):
    """``_Tilt.steer``'s weights A and suffix sums (A, SA, SB) with B = A·e^{−(s − s0)d}, or
    None when the weights overflow. ``threaded``: the two exponential chains side by side,
    then the two suffix sums side by side (a cumulative sum into a new array releases the
    GIL); the same operations either way, so the same floats."""
    def suffix(which, A, B):
        if which:
            with np.errstate(under="ignore"):
                np.multiply(A, B, out=B)
            return np.cumsum(B[::-1])[::-1]
        return np.cumsum(A[::-1])[::-1]

    if threaded:
        A, B = pmap(lambda f: f(), [lambda: _steer_weights(lw, Q), lambda: _steer_decay(s, d)])
        if A is None:
            return None
        SA, SB = pmap(lambda w: suffix(w, A, B), [False, True])
    else:
        A = _steer_weights(lw, Q)
        if A is None:
            return None
        B = _steer_decay(s, d)
        SA, SB = suffix(False, A, B), suffix(True, A, B)
    return A, SA, SB


def _start_centre(lat: LossLattice, T: int, budget: float) -> float:
    """A first guess of the sum index where δ_T is decided: the normal approximation of
    the loss under P (the Q-law tilted by e^L)."""
    mu, sd = _lattice_stats(lat)[3:]          # (independent of T and δ)
    zq = math.sqrt(2.0 * max(math.log(1.0 / max(budget, 1e-300)), 0.0))
    return T * mu + zq * math.sqrt(T) * sd


def composed_delta(lat: LossLattice, T: int, eps: float):
    """Certified upper bound on δ_T(ε) of one direction; returns (δ, details)."""
    inf = _inf_part(lat, T)
    if float(lat.q.sum()) <= 0.0:
        return inf, {"method": "infinite mass only"}
    cap = 1e-40
    for _ in range(3):
        tilt = _Tilt(lat, T, eps / lat.d, heavy_cap=cap)
        fin, allow = tilt.delta_finite(eps)
        if not math.isfinite(fin):           # ε below the bulk: no tilt, window down to ε
            tilt = _Tilt(lat, T, -math.inf, low=eps / lat.d, heavy_cap=cap)
            fin, allow = tilt.delta_finite(eps)
            if not math.isfinite(fin):
                fin, allow = 1.0, 1.0
        if tilt.heavy <= 1e-9 * fin or cap <= 1e-300:
            break
        cap = max(1e-300, 1e-10 * (fin - tilt.heavy))   # the charge must stay negligible
    val = min(1.0, inf + fin)
    return val, {"method": "tilted FFT", "fft_length": tilt.L, "tilt": tilt.phi / lat.d,
                 "allowance": allow}


def composed_epsilon(lat: LossLattice, T: int, delta: float):
    """Smallest certified ε with ``composed_delta(lat, T, ε) ≤ δ`` (inf if none); (ε, details)."""
    inf = _inf_part(lat, T)
    budget = delta - inf
    d = lat.d
    det = {"infinite_mass_part": inf}
    if budget <= 0.0:
        det["reason"] = "the infinite-loss mass (charged tails, Q = 0 atoms) exceeds delta"
        return math.inf, det
    if float(lat.q.sum()) <= 0.0:
        return 0.0, det
    top = d * T * lat.hi                      # here the finite part is exactly 0
    if top <= 0.0:
        return 0.0, det
    centre = _start_centre(lat, T, budget)
    eps, low = None, None
    for it in range(6):
        tilt = _Tilt(lat, T, centre, low=low, heavy_cap=1e-9 * budget,
                     wide_cap=_WIDE_CAP * budget)
        lo = max(0.0, d * (tilt.s_lo - 1))
        hi = min(top, d * tilt.s_hi)
        # (each end's certified value only where its test can pass: at ε = 0, a window
        # reaching down to it, that is the longest window sum of the tilt, and the search
        # below asks for it only if the fast form says it might pass)
        if hi < top and tilt.delta_finite(hi)[0] > budget:
            centre = tilt.s_hi + 0.5 * (tilt.s_hi - tilt.s_lo)   # the answer lies above
            continue
        if lo > 0.0 and tilt.delta_finite(lo)[0] <= budget:       # ... or below the window
            if tilt.phi == 0.0:               # below the untilted bulk: widen down to ε = 0
                low = 0.0
            centre = tilt.s_lo - 0.5 * (tilt.s_hi - tilt.s_lo)
            continue
        eps = _search_steered(tilt, budget, lo, hi)
        fin, allow = tilt.delta_finite(eps)
        det.update({"method": "tilted FFT", "fft_length": tilt.L, "tilt": tilt.phi / d,
                    "allowance": allow, "tilts": it + 1})
        if allow <= _PRECISE * budget or abs(eps / d - centre) <= 0.5 * tilt.sd_t * math.sqrt(T):
            break
        centre = eps / d                      # re-centre on the answer for precision
    if eps is None:                           # no window found (should not happen): safe end
        eps = top
        det["method"] = "support end"
    return eps, det


def _search_steered(tilt: "_Tilt", budget: float, lo: float, hi: float) -> float:
    """Smallest certified ε in [lo, hi] for one tilt: bisection on the fast suffix-sum
    form, then Newton and regula-falsi steps on the certified ``delta_finite`` from that
    root (every end returned is checked)."""
    exact = (lambda e: tilt.delta_finite(e)[0])
    fast = tilt.steer(lo)
    if fast is None:
        return _search(exact, budget, lo, hi)
    # The certified value at lo is only needed when the fast form says it might pass.
    if fast(lo) <= 2.0 * budget and exact(lo) <= budget:
        return lo
    eps = _search(fast, budget, lo, hi, certify=False)
    tot = exact(eps)
    if tot <= budget or eps >= hi:
        return eps
    if tot > 1.01 * budget:
        # the allowances are not small here (a window far from the answer, re-tilted by
        # the caller): the fast form's slope says little about the certified value
        return _step_up(exact, budget, eps, hi)
    # The certified value adds its allowances (and the fast form's rounding) to the fast
    # form, so its root is above the fast root. From the failing fast root: Newton steps
    # on the certified value with the fast form's slope (δ is convex and decreasing in ε:
    # the tangent's root is at or below the certified one, so each step is lengthened a
    # little, more after each failure) until one passes; then regula falsi. Every end
    # returned is one where the certified value was checked. Typically 3–5 evaluations
    # instead of ~12 for geometric steps.
    f_e, f_g = eps, tot - budget
    p_e = None
    grow = 1e-3
    for _ in range(8):
        g = fast.slope(f_e)
        if not g > 0.0:
            break
        c = min(hi, f_e + (f_g / g) * (1.0 + grow) + 1e-14 * f_e)
        t = exact(c) - budget
        if t <= 0.0:
            p_e = c
            break
        f_e, f_g = c, t
        grow *= 8.0
        if c >= hi:
            break
    if p_e is None:
        return _step_up(exact, budget, f_e, hi)
    # The bracket is narrowed by regula falsi (numerics.falling_root; both ends
    # are remembered by the tilt, so it re-reads them for free) until it is 1e-10 of ε, or
    # the passing end's value is within 1e-12 of the budget (δ is resolved only to a few
    # ulps there).
    return falling_root(lambda e: exact(e) - budget, f_e, p_e, xtol=0.0, rtol=4e-10, max_iter=8,
                        gtol=1e-12 * budget).x


def _step_up(exact, budget: float, eps: float, hi: float) -> float:
    """Step up geometrically from a failing ε until the certified value holds, then a few
    bisection steps (the end returned is always one where it was checked)."""
    rel = 1e-10
    fail = None
    while eps < hi and exact(eps) > budget:
        fail = eps
        eps = min(hi, eps * (1.0 + rel) + 1e-15)
        rel *= 4.0
    if fail is not None:
        eps = bisect(exact, fail, eps, target=budget, xtol=0.0, rtol=1e-10, max_iter=6,
                     check_end=False).x
    return eps


def _search(ev, budget: float, lo: float, hi: float, certify: bool = True) -> float:
    """Smallest ε in [lo, hi] with ev(ε) ≤ budget (ev non-increasing; ev(hi) ≤ budget, the
    caller's bracket); ``certify``: return lo when ev(lo) ≤ budget already."""
    r = bisect(ev, lo, hi, target=budget, xtol=1e-12, rtol=1e-11, check_end=False,
               try_other_end=certify)
    return r.x if r.certified_end == "lo" else float(round_up(r.x))
