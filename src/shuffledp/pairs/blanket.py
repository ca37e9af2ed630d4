r"""The privacy-blanket bound for one concrete randomizer, computed with certified error.

Balle, Bell, Gascón, Nissim, "The privacy blanket of the shuffle model", CRYPTO 2019
(arXiv:1903.02837), in the exact form of Su, Cheng, Wang, IEEE S&P 2026 (arXiv:2504.07414,
the generalized privacy-amplification random variable): for an ordered victim pair
(x, x') and G_i i.i.d. copies of G = A − e^ε B (``shuffledp.pairs.gparv``),

    δ_{x,x'}(ε) ≤ E[(G_1 + … + G_n)_+] / n,

and the protocol's δ(ε) is the maximum over ordered victim pairs. This is the exact
hockey-stick divergence of a dominating pair (P̂, Q̂) = (μ·U/n, μ·V/n) on the blanket
draws' category counts (μ their multinomial law, U = ΣA_i, V = ΣB_i), and the shuffled
output is a post-processing of it: the bound therefore composes over rounds (RDP, PLD),
even when each round's randomizer is chosen adaptively. It does *not* cover randomizers
that change within a round (only FMT20 does): valid for "this randomizer (non-adaptive
within a round)". Replacement adjacency.

Views
-----
* δ(ε): ``iid.positive_part`` (certified: lattice spread, tilt, one FFT power,
  a-posteriori FFT error, Chernoff tails). ε(δ): secant steps on log δ started from the
  Gaussian approximation, bracketed, returning the certified end.
* PLD and RDP: from the certified curve H(t) = E[(U − tV)_+]/n at a grid of ε (both
  signs), its lower convex hull in t is the hockey-stick curve of a finite pair
  (P*, Q*) with one atom per vertex, which dominates (P̂, Q̂) in both directions
  (H_t(Q‖P) = t·H_{1/t}(P‖Q) + 1 − t); (P̂, Q̂) is then a garbling of (P*, Q*)
  (Blackwell), so every Rényi divergence of (P*, Q*) bounds that of (P̂, Q̂) as well.
* Check-in sampling CheckIn(γ): the randomizer R_γ = γR + (1 − γ)⊥, ⊥ joins the blanket.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import gparv
from ..core._lazy import special  # scipy.special on first use (import time)
from ..numerics import increasing_root, round_up
from ..core.protocols import CheckIn
from . import iid

__all__ = ["BlanketPair", "blanket_pairs", "blanket_delta", "blanket_epsilon", "fdp_pair"]

#: The mass in each far tail of the pair charged as infinite loss instead of being listed
#: (the composed PLD sizes its own grid: ``pld_fft``).
PLD_TAIL = 1e-15
#: Points per sign of ε on the certified curve behind the PLD/RDP pair, and the engine's
#: lattice resolution there (density of the curve matters more than each point's last digit).
CURVE_POINTS = 100
CURVE_NU = 20.0
#: Above this n each point costs ~0.1 s: a sparser, coarser curve (still valid, ~0.1 % looser).
CURVE_LARGE_N = 200_000
CURVE_POINTS_LARGE = 60
CURVE_NU_LARGE = 12.0
#: Largest RDP order of the pair's curve.
MAX_ORDER = 4096
#: Orders per vectorised Rényi sum (``BlanketPair.rdp``; memory: orders × atoms).
_RDP_BLOCK = 256


def _key(proto):
    rate = proto.sampling.rate if isinstance(proto.sampling, CheckIn) else 1.0
    return proto.mechanism, int(proto.n), float(rate)


@functools.lru_cache(maxsize=128)
def _pairs_cached(mech, rate):
    ps = gparv.pairs_of(mech)
    return tuple(gparv.with_checkin(p, rate) for p in ps)


def blanket_pairs(proto) -> tuple:
    """The blanket pairs (one per distinct ordered victim pair) of the protocol's round."""
    mech, _, rate = _key(proto)
    return _pairs_cached(mech, rate)


def _hs_atoms(pair, eps, top=None):
    """(values, probs, errors) of the summand whose positive part, /n, is H_{e^ε}(P̂‖Q̂)
    (ε ≥ 0), or None where H is 0. ``top``: the pair's ``max_log_ratio()`` if known."""
    if eps >= (pair.max_log_ratio() if top is None else top):
        return None
    return pair.atoms(eps)


def _excess_atoms(pair, eps, top=None):
    """Same for R = H_{e^ε}(P̂‖Q̂) − (1 − e^ε) = E[(e^ε V − U)_+]/n (ε ≤ 0), taken directly (no
    subtraction of nearly equal numbers)."""
    if -eps >= (pair.max_log_ratio() if top is None else top):
        return None
    vals, probs, err = pair.atoms_at([math.exp(eps)], excess=True)
    return vals[0], probs, err[0]


#: Curve points whose Chernoff bound is below this are not summed exactly (see
#: ``_max_over_pairs``).
CHERNOFF_ENOUGH = 1e-40


def _pair_atoms(pairs, eps, excess, tops=None):
    """Every pair's summand at ε (``tops``: the pairs' ``max_log_ratio()``, computed once
    for a whole curve)."""
    f = _excess_atoms if excess else _hs_atoms
    if tops is None:
        return [f(p, eps) for p in pairs]
    return [f(p, eps, t) for p, t in zip(pairs, tops)]


def _curve_atoms(pairs, eps_list, tops):
    """``[_pair_atoms(pairs, e, e < 0, tops) for e in eps_list]``, each pair's rows formed in
    one array (``BlanketPair.atoms_at``: the same operations as ``atoms`` and
    ``_excess_atoms`` elementwise), None where H is 0. The probabilities are one shared
    array per pair (nothing writes to them)."""
    out = [[None] * len(pairs) for _ in eps_list]
    for c, (pair, top) in enumerate(zip(pairs, tops)):
        for excess in (False, True):
            rows = [r for r, e in enumerate(eps_list)
                    if (e < 0) == excess and (-e if excess else e) < top]
            if not rows:
                continue
            vals, probs, err = pair.atoms_at([math.exp(eps_list[r]) for r in rows], excess)
            for k, r in enumerate(rows):
                out[r][c] = (vals[k], probs, err[k])
    return out


def _max_over_pairs(pairs, n, eps, nu=None, excess=False, atoms=None, cher=None):
    """(certified upper value of max over pairs, index of the pair it came from, details).

    Pairs are summed exactly (``iid.positive_part``) in decreasing order of their
    Chernoff bound (``iid.chernoff_positive_part``, microseconds); a pair whose Chernoff
    bound is already at or below the largest certified value so far cannot raise the
    maximum and is not summed. The value is a valid upper bound for every pair either way,
    and never above the maximum of every pair's exact-engine value — except where every
    pair's Chernoff bound is below ``CHERNOFF_ENOUGH`` and is returned as it is.
    """
    if atoms is None:
        atoms = _pair_atoms(pairs, eps, excess)
    if cher is None:
        cher = iid.chernoff_positive_parts(atoms, n) / n

    def exact(i):
        vals, probs, err = atoms[i]
        return iid.positive_part(vals, probs, n, value_err=err, nu=nu)

    # The leading pairs (the top one and those whose Chernoff bound is at least
    # ``PREFETCH_FRACTION`` of its) usually all need their exact sum: they are summed in one
    # batch first (``iid.positive_parts``: tilts, bands and remainders in shared arrays, the
    # same floats as one at a time). The steps below then decide exactly as before which
    # ones count (a sum they would have skipped is not used).
    pre = {}
    order = _order(cher)
    if cher[order[0]] > CHERNOFF_ENOUGH and atoms[order[0]] is not None:
        lead = [order[0]] + _prefetch(atoms, cher, order[0])
        if len(lead) > 1:
            pre = dict(zip(lead, iid.positive_parts([atoms[i] for i in lead], n, nu=nu)))
    steps = _max_steps(atoms, n, cher)
    try:
        i = next(steps)
        while True:
            i = steps.send(pre[i] if i in pre else exact(i))
    except StopIteration as stop:
        return stop.value


def _order(cher):
    return sorted(range(len(cher)), key=lambda i: -cher[i])


def _max_steps(atoms, n, cher):
    """``_max_over_pairs``'s decisions as a step generator: yields the index of each pair
    to sum exactly, receives its ``SumBound``, returns (value, index, details)."""
    order = _order(cher)
    best, arg, det = 0.0, order[0], {}
    if cher[order[0]] <= CHERNOFF_ENOUGH:
        # Every pair is certified below 1e-40 (a curve point far out in ε): no composed δ of
        # interest (≥ 1e-15 after 1e6 rounds) can see the difference from the exact sum.
        return cher[order[0]], order[0], {"chernoff": True}
    for i in order:
        if atoms[i] is None or (i != order[0] and cher[i] <= best):
            continue
        r = yield i
        v = min(r.upper / n, cher[i])
        if v > best or i == order[0]:
            best, arg, det = max(best, v), i, r.details
    return best, arg, det


def _max_over_pairs_many(n, nu, atoms_rows, cher_rows) -> list:
    """``_max_over_pairs(...)[0]`` at many curve points at once: each round, every point's
    next exact sum joins one ``iid.positive_parts`` batch (the same decisions and floats as
    point by point)."""
    gens = [_max_steps(a, n, c) for a, c in zip(atoms_rows, cher_rows)]
    out = [0.0] * len(gens)
    pending = {}
    for r, g in enumerate(gens):
        try:
            pending[r] = next(g)
        except StopIteration as stop:
            out[r] = stop.value[0]
    # Each batch has a fixed cost (its tilt, band and remainder rounds: ~1.5–3 ms), and a
    # point usually needs the sums of every pair whose Chernoff bound is near its top
    # pair's: those are summed in the first batch with the top pairs. The decisions are the
    # generators' own (a sum they do not ask for is dropped), so the values are the same.
    ready = {}
    pre = [(r, i) for r in pending for i in _prefetch(atoms_rows[r], cher_rows[r], pending[r])]
    while pending:
        idx = [r for r in pending if (r, pending[r]) not in ready]
        keys = [(r, pending[r]) for r in idx] + pre
        pre = []
        if keys:
            sums = iid.positive_parts([atoms_rows[r][i] for r, i in keys], n, nu=nu)
            ready.update(zip(keys, sums))
        now, pending = pending, {}
        for r, i in now.items():
            try:
                pending[r] = gens[r].send(ready.pop((r, i)))
            except StopIteration as stop:
                out[r] = stop.value[0]
    return out


#: A point's pairs summed with its top pair (``_max_over_pairs_many``): those whose Chernoff
#: bound is at least this fraction of the top pair's.
PREFETCH_FRACTION = 0.5


def _prefetch(atoms, cher, first):
    """The pairs of one curve point, besides ``first`` (its top pair), summed in the first
    batch: Chernoff bound at least ``PREFETCH_FRACTION`` of the top pair's (a heuristic: the
    pairs the point's steps usually ask for next)."""
    cut = PREFETCH_FRACTION * cher[first]
    return [i for i in range(len(atoms)) if i != first and atoms[i] is not None
            and cher[i] >= cut]


@functools.lru_cache(maxsize=4096)
def _delta_cached(mech, n, rate, eps):
    pairs = _pairs_cached(mech, rate)
    val, i, det = _max_over_pairs(pairs, n, eps)
    return min(1.0, val), pairs[i].label, det


def blanket_delta(proto, eps: float) -> tuple[float, dict]:
    """Certified δ(ε) (max over victim pairs) and details (pair used, engine errors)."""
    mech, n, rate = _key(proto)
    val, which, det = _delta_cached(mech, n, rate, float(eps))
    return val, {"victim_pair": which, "certified_relative_error": det.get(
        "certified_relative_error", 0.0), "lattice_step": det.get("lattice_step")}


def _gauss_mu(pairs, n):
    """μ of the Gaussian approximation, μ² = Σ_y (R(x)(y) − R(x')(y))²/(γω(y)) / n
    (an estimate used only to start the search)."""
    mu = 0.0
    for p in pairs:
        mu = max(mu, float(np.sum(p.w * (p.a - p.b) ** 2)))
    return math.sqrt(mu / n)


def _gauss_eps(mu, delta):
    if mu <= 0:
        return 0.0

    def f(e):
        return math.exp(_gauss_logdelta(mu, e)) - delta

    hi = min(mu * 50 + 1.0, 700.0)
    if f(0.0) <= 0:
        return 0.0
    return increasing_root(lambda e: -f(e), 0.0, hi, xtol=1e-12, rtol=4e-16)


def _gauss_logdelta(mu, e):
    a = special.log_ndtr(-e / mu + mu / 2)
    b = e + special.log_ndtr(-e / mu - mu / 2)
    return float(a + math.log(-math.expm1(b - a))) if b < a else -math.inf


def blanket_epsilon(proto, delta: float, rtol: float = 2e-5) -> tuple[float, dict]:
    """Smallest certified ε with δ(ε) ≤ δ (the certified end of the search) and details."""
    mech, n, rate = _key(proto)
    return _epsilon(mech, n, rate, delta, rtol)


def _epsilon(mech, n, rate, delta: float, rtol: float = 2e-5) -> tuple[float, dict]:
    pairs = _pairs_cached(mech, rate)
    top = max(p.max_log_ratio() for p in pairs)

    def d(e):
        return _delta_cached(mech, n, rate, float(e))[0]

    if top <= 0.0 or d(0.0) <= delta:
        return 0.0, {"evaluations": 1}
    lo, hi = 0.0, top                      # d(lo) > δ ≥ d(hi) = 0
    llo, lhi = math.log(d(0.0)), -math.inf
    ld = math.log(delta)
    evals = 1

    def visit(x):
        nonlocal lo, hi, llo, lhi, evals
        v = d(x)
        evals += 1
        if v > delta:
            lo, llo = x, math.log(v)
            return True
        hi, lhi = x, (math.log(v) if v > 0 else -math.inf)
        return False

    mu = _gauss_mu(pairs, n)

    def model_slope(x):
        # d log δ / dε of the Gaussian approximation (steers the first steps only)
        hstep = 1e-4 * max(x, mu)
        g1, g2 = _gauss_logdelta(mu, x), _gauss_logdelta(mu, x + hstep)
        sl = (g2 - g1) / hstep
        return sl if math.isfinite(sl) and sl < 0 else -1.0 / max(mu, 1e-12)

    x = min(max(_gauss_eps(mu, delta), 1e-9), 0.5 * top)
    last_low = visit(x)
    while evals < 60:
        if math.isfinite(lhi) and hi < top and lo > 0.0:
            xs = lo + (llo - ld) * (hi - lo) / (llo - lhi)       # secant root on log δ
            if hi - xs <= rtol * hi or hi - lo <= rtol * hi:
                break
            xs = xs * (1.0 + 0.5 * rtol) if not last_low else xs * (1.0 + 0.25 * rtol)
        else:
            # one side only: Newton step with the Gaussian model's slope, aimed past the root
            lv = llo if last_low else lhi
            xs = x - (lv - ld) / model_slope(x)
            xs *= (1.0 + 2 * rtol) if last_low else (1.0 - 2 * rtol)
        w = hi - lo
        if not lo < xs < hi:
            xs = 0.5 * (lo + hi)
        elif w > 0 and not (lo + 1e-4 * w < xs < hi - 1e-4 * w):
            xs = min(max(xs, lo + 1e-4 * w), hi - 1e-4 * w)
        x = xs
        last_low = visit(x)
    _, which, det = _delta_cached(mech, n, rate, float(hi))
    return float(hi), {"evaluations": evals, "victim_pair": which, "bracket": [lo, hi],
                       "certified_relative_error_of_delta": det.get("certified_relative_error", 0.0)}


# ----------------------------------------------------------------------------------------
# A finite dominating pair from the certified curve (PLD and RDP views)
# ----------------------------------------------------------------------------------------
def _eps_grid(pairs, n, points):
    top = max(p.max_log_ratio() for p in pairs)
    mu = max(_gauss_mu(pairs, n), 1e-12)
    c = min(mu / 3.0, top / 4.0)
    U = math.asinh(top / c)
    u = np.linspace(0.0, U, points + 1)
    pos = c * np.sinh(u)
    pos[-1] = top
    return np.unique(np.concatenate([-pos[::-1], pos])), top


@functools.lru_cache(maxsize=32)
def _fdp_cached(mech, n, rate, points, nu):
    pairs = _pairs_cached(mech, rate)
    grid, top = _eps_grid(pairs, n, points)
    # Store R(t) = H(t) − (1 − t) for t ≤ 1 and H(t) for t ≥ 1 (the small quantity each side).
    small = np.zeros(grid.size)
    todo = [i for i, e in enumerate(grid) if abs(e) < top]   # else H = 1 − t or H = 0 exactly
    tops = [p.max_log_ratio() for p in pairs]
    atoms = _curve_atoms(pairs, [float(grid[i]) for i in todo], tops)
    # Every point's Chernoff bounds in one vectorised search (they order and prune the sums)
    flat = iid.chernoff_positive_parts([a for row in atoms for a in row], n) / n
    cher = flat.reshape(len(todo), len(pairs)) if todo else flat

    # Every point's next exact sum in one batch (``iid.positive_parts``): the Fourier
    # inversions' node bands and the tilt searches in shared arrays, the FFT sums side by
    # side on the thread pool (``iid._fft_jobs``). Each sum chooses its engine itself and
    # its floats are the same as point by point.
    small[todo] = _max_over_pairs_many(n, nu, atoms, [list(c) for c in cher])
    return grid, small


def _point_masses(g, t, sm):
    """Q-mass at each point of the piecewise-linear curve through the points: the jump of
    its slope in t. Segments left of t = 1 are in R-form (slope of H + 1), the others in
    H-form. A segment crossing t = 1 (the hull dropped the point ε = 0) takes its slope in
    H-form from H = R + (1 − t) at its left end; differencing the stored R there directly
    against H at the right end would mis-state that slope by (1 − t)/Δt."""
    dt = np.diff(t)
    ds = np.diff(sm) / dt
    is_r = g[1:] <= 0.0                        # segment i = [i, i+1] lies in t ≤ 1
    cross = (g[:-1] < 0.0) & ~is_r
    if np.any(cross):
        h_left = sm[:-1][cross] - np.expm1(g[:-1][cross])
        ds[cross] = (sm[1:][cross] - h_left) / dt[cross]
    # slope of H on each side of each point, expressed so that differences stay accurate:
    # left of the first point H = 1 − t (R-form, slope 0), right of the last H = 0 (H-form,
    # slope 0). The same operations point by point as a loop over the points, in arrays.
    left_r = np.concatenate(([True], is_r))
    right_r = np.concatenate((is_r, [False]))
    left = np.concatenate(([0.0], ds))
    right = np.concatenate((ds, [0.0]))
    q = right - left
    mixed = left_r != right_r                   # R-form on the left, H-form on the right
    q[mixed] = right[mixed] + 1.0 - left[mixed]
    return q


def _hull_masses(grid, small):
    """Atoms (loss ε_i, Q_i) of the pair whose hockey-stick curve is the lower convex hull
    (in t = e^ε) of the certified points; P_i = e^{ε_i} Q_i. A point above the chord of its
    neighbours is dropped (the chord still lies above the true curve, which is convex and
    below every certified point), one at a time until the slopes increase."""
    keep = np.arange(grid.size)
    t = np.exp(grid)
    while True:
        q = _point_masses(grid[keep], t[keep], small[keep])
        bad = np.flatnonzero(q[1:-1] < 0.0) + 1
        if bad.size == 0:
            break
        keep = np.delete(keep, bad[np.argmin(q[bad])])
    return grid[keep], np.maximum(q, 0.0)


@functools.lru_cache(maxsize=128)
def _sparse_curve(mech, n, rate) -> bool:
    """Whether the blanket's curve at n is summed by the sparse engine (``iid._sparse_sum``):
    its laws' non-zero atoms and their masses do not depend on ε (only their values do),
    so one law decides, here at ε = 1 (a law at 0 may have two atoms at 0)."""
    nu = _curve_nu(n)
    for pair in _pairs_cached(mech, rate):
        got = _hs_atoms(pair, min(1.0, 0.5 * pair.max_log_ratio()))
        if got is None:
            return False
        v, p = iid._prep(*got)
        if not iid._sparse_first(v, p, int(n), nu, 7.0):
            return False
    return True


def fdp_pair(proto, points: int | None = None):
    """(losses, log P, log Q, grid) of the finite dominating pair built from the certified
    curve at ``2·points + 1`` values of ε."""
    return _fdp(*_key(proto), points)


def _fdp(mech, n, rate, points: int | None = None):
    if points is None:
        points = CURVE_POINTS_LARGE if n > CURVE_LARGE_N else CURVE_POINTS
    return _fdp_hull(mech, n, rate, int(points), _curve_nu(n))


def _curve_nu(n) -> float:
    """The lattice resolution ν of the blanket's curve at n users."""
    return CURVE_NU_LARGE if n > CURVE_LARGE_N else CURVE_NU


@functools.lru_cache(maxsize=32)
def _fdp_hull(mech, n, rate, points, nu):
    """``_fdp``'s pair, kept with its curve: the PLD and RDP views and the order search ask
    for it many times per question (the hull is ~30 passes over the curve). Read-only
    arrays, the same for every caller."""
    grid, small = _fdp_cached(mech, n, rate, points, nu)
    g, q = _hull_masses(grid, small)
    live = q > 0
    g, q = g[live], q[live]
    with np.errstate(divide="ignore"):
        lq = np.log(q)
    lp = lq + g
    for a in (g, lp, lq):
        a.setflags(write=False)
    return g, lp, lq, grid


@dataclass(frozen=True)
class BlanketPair:
    """The dominating pair of one round of ``Shuffle(mech, n)`` (check-in rate ``rate``) by
    the privacy blanket, as a ``Pair``: the maximum over ordered victim pairs of the
    certified δ(ε) = E[(ΣG_i)_+]/n; its RDP and PLD views from the finite pair of the
    certified curve's convex hull (``fdp_pair``). Upper bounds, nats."""

    mech: object
    n: int
    rate: float = 1.0

    @classmethod
    def of(cls, proto) -> "BlanketPair":
        return cls(*_key(proto))

    #: Adding and removing a blanket draw differ: a PLD composes both directions.
    pld_symmetric = False

    def delta(self, eps: float) -> float:
        return _delta_cached(self.mech, self.n, self.rate, float(eps))[0]

    def epsilon(self, delta: float) -> float:
        return _epsilon(self.mech, self.n, self.rate, float(delta))[0]

    def eps_hi(self) -> float:
        return max(p.max_log_ratio() for p in _pairs_cached(self.mech, self.rate))

    def pld_atoms(self):
        """(log P, log Q, charged mass) of the dominating pair for PLD composition.

        Atoms in the far tails are dropped and their mass charged as infinite privacy loss
        in both directions (P-mass of losses above L, Q-mass of losses below −L, each at
        most ``PLD_TAIL``): pessimistic, and it keeps the loss grid (1e−5) short.
        """
        g, lp, lq, _ = _fdp(self.mech, self.n, self.rate)
        p, q = np.exp(lp), np.exp(lq)
        order = np.argsort(g)
        # P-mass strictly above each atom, Q-mass strictly below it
        p_above = np.cumsum(p[order][::-1])[::-1] - p[order]
        q_below = np.cumsum(q[order]) - q[order]
        # A curve of exact sums (``_sparse_curve``) keeps its tails: its far points are the
        # exact ones, far below the lattice engines' (whose allowances kept those masses
        # above the threshold), and dropping them would charge as infinite loss, in every
        # round, mass that sits at a loss within ±ε0 (the loss grid covers that anyway).
        tail = 0.0 if _sparse_curve(self.mech, self.n, self.rate) else PLD_TAIL
        keep = np.zeros(g.size, dtype=bool)
        keep[order] = (p_above + p[order] > tail) & (q_below + q[order] > tail)
        dropped = max(float(np.sum(p[~keep])), float(np.sum(q[~keep])))
        lp, lq = lp[keep], lq[keep]
        # The composer charges 1 − ΣP as infinite loss (``pld_fft``: mass not listed), and
        # the hull's masses, exact in sum up to the dropped tails (charged above), add up
        # in floating point to 1 − a few ulps: times T rounds that noise alone can be 15 %
        # of a small δ (and it flips with the last bits of the curve). An extra outcome
        # with P = m, Q = m·e^{1e-9} fills it instead: the T-fold hockey-stick sum of the
        # larger pair is the old pair's plus non-negative terms, so the composed δ can only
        # grow (both directions). Its loss −1e-9 stays at grid point 0 (a loss of exactly 0
        # is nudged up by the composer, to the next point). m covers the deficit of either
        # measure and the rounding of the composer's own sum.
        # (Only where that noise exceeds the charged tails, which already cover it.)
        def deficit(a, b):
            return max(1.0 - float(np.sum(np.exp(a))), 1.0 - float(np.sum(np.exp(b))))

        short = deficit(lp, lq)
        if short > dropped:
            for k in range(1, 4):
                m = short + 2.0 ** (1 - 53) * k * k
                lp2 = np.append(lp, math.log(m))
                lq2 = np.append(lq, math.log(m) + 1e-9)
                if deficit(lp2, lq2) <= dropped:
                    lp, lq = lp2, lq2
                    break
        return lp, lq, dropped

    def rdp(self, orders):
        g, lp, lq, _ = _fdp(self.mech, self.n, self.rate)
        lam = np.asarray(orders, dtype=float)
        flat = lam.ravel()
        out = np.empty(flat.shape)
        # Σ P^λ Q^{1−λ} = Σ Q e^{λ ε};  Σ Q^λ P^{1−λ} = Σ Q e^{(1−λ) ε}: a block of orders
        # per call (one row each: the row's sums are those of the order alone)
        for s in range(0, flat.size, _RDP_BLOCK):
            a = flat[s:s + _RDP_BLOCK]
            f = special.logsumexp(lq + a[:, None] * g, axis=1)
            r = special.logsumexp(lq + (1.0 - a)[:, None] * g, axis=1)
            out[s:s + a.size] = np.maximum(np.maximum(f, r), 0.0) / (a - 1.0)
        return round_up(np.minimum(out.reshape(lam.shape), float(self.mech.eps0)) + 1e-15)

    def max_order(self) -> int:
        return MAX_ORDER
