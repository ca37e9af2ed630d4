r"""Hockey-stick divergence of the clone pair: δ(ε) and its certified inverse ε(δ).

``conditional_hockey`` is the closed form of one slice (also used by the hidden-⊥ pairs,
``pairs/hidden.py``); ``pair_delta`` sums it over the slices of ``slices.py`` with the
tails of C and the floating-point slack charged (an UPPER bound), ``pair_delta_lower``
without them (a value ≤ the true δ). ``threshold_bracket`` is the certified root bracket
that ``pair_epsilon`` and the k-RR lower bound (``bounds/clones.py``) search with.

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ...numerics import half_binom_logpmf, half_binom_pmf_walk, round_up
from .slices import _half_sf, _pair_slices, _window_weights

#: Slack on each slice's closed-form hockey-stick value, relative to the size of its two
#: terms κ·Pr[A = m − 1] and (e^ε − 1)·Pr[A ≥ m]: covers the cancellation between them
#: plus the ~1e-14 relative error of the pmf (Loader) and of scipy's incomplete beta.
_TERM_SLACK = 1e-11
#: Absolute slack per δ evaluation: underflowed terms (each < 1e-300) cannot add more.
_ABS_SLACK = 1e-290
#: Charge on κ's own rounding, relative to the terms it is formed from (see
#: ``conditional_hockey``).
_KAPPA_SLACK = 4.5e-16


def conditional_hockey(c, alpha, eps: float, with_error: bool = False, *, beta, gamma=None,
                       memo=None):
    """H_{e^ε}(P_c ‖ Q_c) for P_c = α Bin(c,½)(x−1) + (1−α) Bin(c,½)(x), Q_c swapped.

    Closed form (derived here, checked against mpmath), vectorised over slices c (and α):
    κ = α − e^ε (1 − α); H = 0 if κ ≤ 0; else r* = (e^ε α − (1−α))/κ,
    t* = (c+1) r*/(1 + r*), m = ⌊t*⌋ + 1 and H = κ Pr[A = m−1] − (e^ε − 1) Pr[A ≥ m].
    Thresholds m − 1, m, m + 1 are all evaluated and the largest value kept: every
    threshold gives a value ≤ the optimum, so the max is exact whatever the rounding of t*.

    With ``with_error`` also returns a bound on the floating-point error of each value.
    ``beta`` = 1 − α given directly (required, keyword-only: 1 − α formed in floating
    point keeps ~8 digits at ε0 ≈ 19 and is 0 from ε0 ≈ 36.7, where the slice would look
    deterministic; ``pairs.law.Bias`` forms both). ``gamma`` = α − β given directly
    (optional): at small ε0 both α and β round to ½ and their difference to 0, so the
    slice would look uninformative; with it κ = γ − (e^ε − 1)β has no cancellation at ε = 0.

    ``memo`` (a ``ThresholdMemo``, optional): the slices' probabilities at the thresholds
    (``_threshold_terms``) are a function of the live slices c and their thresholds m only,
    not of ε; a root search over ε on the same slices finds the same m at most of its late
    steps, and the memo hands back the arrays computed for that (c, m) — the same floats.
    Only for calls on the same c, α, β, γ arrays (the caller keeps one memo per slice set).
    """
    c = np.asarray(c, dtype=np.int64)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), c.shape)
    beta = np.broadcast_to(np.asarray(beta, dtype=float), c.shape)
    E = math.exp(eps)
    em1 = math.expm1(eps)
    if gamma is not None:
        gamma = np.broadcast_to(np.asarray(gamma, dtype=float), c.shape)
        kappa = gamma - em1 * beta
    else:
        kappa = alpha - E * beta
    live = kappa > 0
    val = np.zeros(c.shape)
    err = np.zeros(c.shape)
    if not live.any():
        return (val, err) if with_error else val
    every = bool(live.all())          # the pairs' slices: one α for all, all live or none
    if every:
        cl, al, bl, kl = c, alpha, beta, kappa
        gl = gamma
    else:
        cl, al, bl, kl = c[live], alpha[live], beta[live], kappa[live]
        gl = gamma[live] if gamma is not None else None
    # t* = (c + 1) r*/(1 + r*) = (c + 1)/(1 + 1/r*): 1/r* = κ/(e^ε α − β) cannot
    # overflow (r* itself does when κ is tiny at large ε).
    den = (gl + em1 * al) if gl is not None else (E * al - bl)
    tstar = (cl + 1) / (1.0 + kl / den)
    # t* can exceed c + 1 when r*/(1 + r*) rounds to 1 (α/β near 1/ulp): clip so that
    # m − 1 ≤ c; every threshold in 0..c + 1 is a valid candidate (value ≤ optimum), and
    # x = c + 1 always carries loss log(α/β) > ε when κ > 0.
    m = np.floor(np.minimum(tstar, cl + 0.0)).astype(np.int64) + 1
    if memo is None:
        pm0, pm1, pm2, sf_p1 = _threshold_terms(cl, m)
    else:
        pm0, pm1, pm2, sf_p1 = memo.terms(cl, m, None if every else live)
    sf_0 = sf_p1 + pm0                                            # Pr[A ≥ m]
    sf_m1 = sf_0 + pm1                                            # Pr[A ≥ m−1]
    # Thresholds m − 1, m, m + 1: κ Pr[A = m' − 1] − (e^ε − 1) Pr[A ≥ m'], the largest kept
    # (the first on ties, as argmax would; by selection, so the floats are the same).
    t1 = (kl * pm2, kl * pm1, kl * pm0)
    t2 = (em1 * sf_m1, em1 * sf_0, em1 * sf_p1)
    c0, c1, c2 = t1[0] - t2[0], t1[1] - t2[1], t1[2] - t2[2]
    if np.isnan(c1).any() or np.isnan(c2).any():
        # argmax takes the first NaN; comparisons would not: keep argmax's choice
        best = np.argmax(np.stack([c0, c1, c2]), axis=0)
        b1, b2 = best == 1, best == 2
        top = np.where(b2, c2, np.where(b1, c1, c0))
    else:
        b1 = c1 > c0
        top = np.where(b1, c1, c0)
        b2 = c2 > top
        top = np.where(b2, c2, top)
    h = np.maximum(top, 0.0)
    # κ = α − e^ε β itself cancels when ε is near log(α/β): its rounding error is a few
    # ulps of α + e^ε β, not of κ, so charge that too (times Pr[A = m' − 1] ≤ 1).
    pm_best = np.where(b2, pm0, np.where(b1, pm1, pm2))
    # With γ given, κ = γ − (e^ε − 1)β is formed from two accurate terms (γ to 2u, the
    # product to 3u, the difference u|κ|): at most 4u(γ + (e^ε − 1)β) ≤ 4.5e-16 of
    # them, which is also ≤ the charge on α − e^ε β (γ + (e^ε − 1)β ≤ α + e^ε β).
    kerr = (_KAPPA_SLACK * (gl + em1 * bl) if gl is not None
            else _KAPPA_SLACK * (al + E * bl))
    e = (_TERM_SLACK * (np.where(b2, t1[2], np.where(b1, t1[1], t1[0]))
                        + np.where(b2, t2[2], np.where(b1, t2[1], t2[0])))
         + kerr * pm_best)
    if every:
        val, err = h, e
    else:
        val[live] = h
        err[live] = e
    return (val, err) if with_error else val


def _threshold_terms(cl, m):
    """(Pr[A = m], Pr[A = m − 1], Pr[A = m − 2], Pr[A ≥ m + 1]) for A ~ Bin(c, ½), slice by
    slice (``conditional_hockey``'s thresholds): a function of the arrays c and m alone."""
    # One log-pmf per slice; its neighbours by the exact ratio pmf(k+1)/pmf(k) = (c−k)/(k+1).
    pm1 = half_binom_pmf_walk(cl, m - 1)                               # Pr[A = m−1]
    if pm1 is None:
        pm1 = np.exp(half_binom_logpmf(m - 1, cl))
    with np.errstate(divide="ignore", invalid="ignore"):
        pm0 = np.where((m >= 1) & (m <= cl), pm1 * (cl - m + 1) / np.maximum(m, 1), 0.0)
        pm2 = np.where((m >= 2) & (m - 2 <= cl), pm1 * (m - 1) / np.maximum(cl - m + 2, 1), 0.0)
    # pm1 = 0 below the support (m = 0: never when κ > 0, as t* > 0 there; kept as a
    # guard). Only those entries are evaluated (k = 0 is Loader's exact edge value).
    below = m - 1 < 0
    if below.any():
        pm0 = pm0.copy()
        pm0[below] = np.exp(half_binom_logpmf(m[below], cl[below]))
    sf_p1 = _sf_slices(m + 1, cl, pm0, pm1)                        # Pr[A ≥ m+1]
    return pm0, pm1, pm2, sf_p1


class ThresholdMemo:
    """``_threshold_terms`` of one fixed set of slices c, remembered by their thresholds m.

    The values are recomputed by nothing else: a hit returns the very arrays a fresh call
    on the same (live c, m) returned (the function is deterministic in them; the arrays
    are made read-only). ``conditional_hockey(memo=...)``; the caller keeps one memo per
    set of slices (the hidden pairs' cells, per run). At most ``floats`` array entries are
    kept (oldest dropped first). Safe across threads: a race computes twice, stores once.
    """

    def __init__(self, floats: int = 1_200_000):
        self._floats = int(floats)
        self._store: dict = {}
        self._lock = threading.Lock()
        self.hits = 0

    def terms(self, cl, m, live=None):
        key = (m.tobytes(), None if live is None else live.tobytes())
        got = self._store.get(key)
        if got is not None:
            self.hits += 1
            return got
        got = _threshold_terms(cl, m)
        for a in got:
            a.flags.writeable = False
        cap = max(2, self._floats // max(4 * m.size, 1))
        with self._lock:
            while len(self._store) >= cap:
                self._store.pop(next(iter(self._store)))
            self._store[key] = got
        return got


def slice0_hockey(alpha: float, beta: float, gamma: float, eps: float) -> tuple[float, float]:
    """``conditional_hockey(c=[0], α, ε, with_error=True, beta=β, gamma=γ)`` as floats, in
    closed form: with c = 0 the threshold is m = 1, Pr[A = 0] = 1 and Pr[A ≥ 1] = 0, so
    the value is κ = γ − (e^ε − 1)β when positive (else 0) and its error
    ``_TERM_SLACK``·κ + ``_KAPPA_SLACK``·(γ + (e^ε − 1)β) — the kernel's operations on the
    same values, bit for bit (tests/test_hidden_rdp_floor.py), without its ~0.1 ms of
    small-array calls (the hidden pairs' most informative slice, once per δ(ε))."""
    em1 = math.expm1(eps)
    kappa = gamma - em1 * beta
    if not kappa > 0.0:
        return 0.0, 0.0
    return kappa, _TERM_SLACK * kappa + _KAPPA_SLACK * (gamma + em1 * beta)


#: Slices per anchor of the Pr[A ≥ m] recurrence (exact incomplete beta at every anchor).
_ANCHOR = 1024


def _sf_slices(mp1, c, pm0, pm1):
    """Pr[Bin(c, ½) ≥ m + 1] for consecutive slices c whose thresholds m step by 0 or 1.

    Accurate values (``_half_sf``) at every ``_ANCHOR``-th slice; in between the recurrence
    over c, Pr[A_{c+1} ≥ m] = Pr[A_c ≥ m] + ½ Pr[A_c = m − 1] and
    Pr[A_{c+1} ≥ m + 1] = Pr[A_c ≥ m] − ½ Pr[A_c = m] (A_{c+1} = A_c + a fair bit).
    The recurrence is checked against the next anchor; any disagreement beyond 1e-12
    relative falls back to ``_half_sf`` everywhere. Non-consecutive input: direct.
    """
    m = mp1 - 1
    n = c.size
    anchor = max(64, min(_ANCHOR, n // 4))
    if n < 4 * 64 or np.any(np.diff(c) != 1) or np.any((np.diff(m) < 0) | (np.diff(m) > 1)):
        return _half_sf(mp1, c)
    # S_c = Pr[A_c ≥ m_c]; step d_c from slice c to c + 1.
    step = np.diff(m)
    d = np.where(step == 0, 0.5 * pm1[:-1], -0.5 * pm0[:-1])
    anchors = np.arange(0, n, anchor)
    s_anchor = _half_sf(m[anchors], c[anchors])
    S = np.empty(n)
    for i, a0 in enumerate(anchors):
        a1 = min(a0 + anchor, n)
        seg = np.cumsum(d[a0:a1 - 1])
        S[a0] = s_anchor[i]
        S[a0 + 1:a1] = s_anchor[i] + seg
        if a1 < n:
            pred = S[a1 - 1] + d[a1 - 1]
            exact = s_anchor[i + 1]
            if abs(pred - exact) > 1e-12 * max(exact, 1e-300) + 1e-300:
                return _half_sf(mp1, c)
    return np.maximum(S - pm0, 0.0)


def _delta_sum(pair, eps: float, upper: bool) -> float:
    sl = _pair_slices(pair)
    # g = 0: every slice's α − β is the pair's γ, exact from its log-odds (small ε0)
    gam = pair.gamma if pair.g == 0.0 else None
    h, err = conditional_hockey(sl.c, sl.alpha, eps, with_error=True, beta=sl.beta, gamma=gam)
    total = float(np.dot(sl.w, h))
    if not upper:
        return total
    total += float(np.dot(sl.w, err))
    # Tails of C (spec §1 property 4: H_c is non-increasing in c): above the window every
    # slice is ≤ H at the top edge; below it every slice is ≤ H at c = 0.
    if sl.above > 0:
        total += sl.above * (h[-1] + err[-1])
    if sl.block_c is not None and sl.block_c.size:
        hb, eb = conditional_hockey(sl.block_c, pair.alpha, eps, with_error=True,
                                    beta=pair.beta, gamma=gam)
        total += float(np.dot(sl.block_mass, hb + eb))
    return float(round_up(total + _ABS_SLACK))


def _need_g0(pair, what: str):
    if pair.g > 0.0:
        raise ValueError(
            f"{what} is an upper-bound kernel and the pair has g = {pair.g!r} > 0: a pair "
            "with an uninformative victim is not a reduction (brute force shows it below the truth); "
            "use pair_delta_lower or pair_lower_atoms for its (lower-bound) value")


def pair_delta(pair, eps: float) -> float:
    """δ(ε) = H_{e^ε}(P ‖ Q) of a g = 0 pair: a rigorous UPPER bound (either direction).

    Exact sum over the slices in ±(12 sd(C) + 12), plus the tails of C charged at their
    worst slice value, plus floating-point slack (per-slice cancellation bound, an absolute
    1e-290, and ``round_up``). Symmetric: H(P‖Q) = H(Q‖P) because swapping coordinates
    maps P to Q. Zero for ε ≥ log(a/b).
    """
    _need_g0(pair, "pair_delta")
    if eps >= pair.log_ratio * (1.0 + 1e-15):
        return 0.0
    return min(1.0, _delta_sum(pair, max(eps, 0.0), upper=True))


def pair_delta_lower(pair, eps: float) -> float:
    """Exact δ(ε) of any pair (g ≥ 0) without tails or slack: a value ≤ the true δ(ε).

    For g > 0 (the k-RR marginal pair) this is only ever a LOWER bound on a k-RR instance.
    """
    if eps >= pair.log_ratio * (1.0 + 1e-15):
        return 0.0
    return max(0.0, _delta_sum(pair, max(eps, 0.0), upper=False) * (1.0 - 1e-11))


def pair_delta_floor(pair, eps: float) -> float:
    """A certified LOWER bound on the true δ(ε) of a g = 0 pair (the upper kernel's twin).

    The window's slices only (the tails of C only add), each slice's closed form less its
    floating-point error bound (``conditional_hockey(with_error=True)``: the value at any
    threshold is ≤ the slice's exact H), the sum shrunk by 1e-9 relative (the slice
    weights' ~1e-15 and the dot product's n·u rounding). Used to prove that a member of an
    ε0 search loses to a value already found (``bounds/_common.golden_pruned``): if
    δ_floor(ε) > δ then every certified ε(δ) of the pair is above ε.
    """
    _need_g0(pair, "pair_delta_floor")
    if eps >= pair.log_ratio * (1.0 + 1e-15):
        return 0.0
    cs, w = _window_weights(pair.n, pair.p)
    h, err = conditional_hockey(cs, pair.alpha, max(eps, 0.0), with_error=True,
                                beta=pair.beta, gamma=pair.gamma)
    return max(0.0, float(np.dot(w, np.maximum(h - err, 0.0))) * (1.0 - 1e-9))


def threshold_bracket(ok_delta, lo: float, hi: float, target: float, xtol: float,
          dlo: float | None = None, guess: float | None = None) -> tuple[float, float]:
    """Certified bracket [lo, hi] of the threshold of a non-increasing δ(ε).

    ``ok_delta(e)`` returns δ(e). Invariant: δ(lo) > target ≥ δ(hi). Steps are Illinois
    regula falsi on √(−log δ) (close to linear in ε: the pair's loss has Gaussian-like
    tails, log δ ≈ −a ε²), with bisection while δ(hi) underflows to 0.
    """
    st = math.sqrt(-math.log(target))

    def f(d):                                    # > 0 iff d > target; −∞ when d = 0
        return st - math.sqrt(-math.log(min(d, 1.0))) if d > 0 else -math.inf

    if dlo is None:
        dlo = ok_delta(lo)
    flo = f(dlo)
    fhi = -math.inf
    side = 0
    # A first probe at the caller's guess, then ×4 / ÷4 steps until both ends carry a
    # finite log δ (δ underflows to 0 far above the root, where bisection would waste steps).
    if guess is not None and lo < guess < hi:
        x = guess
        for _ in range(12):
            d = ok_delta(x)
            if d <= target:
                hi = x
                if d > 0:
                    fhi = f(d)
                    break
                x = lo + (x - lo) / 4.0
            else:
                lo, flo = x, f(d)
                x = min(lo + 4.0 * (x - lo) + 1e-300, 0.5 * (lo + hi))
                if x >= hi or x <= lo:
                    break
                if math.isfinite(fhi):
                    break
    for _ in range(200):
        if hi - lo <= xtol:
            break
        width = hi - lo
        if math.isfinite(fhi) and math.isfinite(flo):
            x = hi - fhi * (hi - lo) / (fhi - flo)
            # Keep the probe strictly inside the bracket.
            x = min(max(x, lo + 1e-3 * width), hi - 1e-3 * width)
        else:
            x = 0.5 * (lo + hi)
        if not (lo < x < hi):
            x = 0.5 * (lo + hi)
            if not (lo < x < hi):
                break
        d = ok_delta(x)
        if d <= target:
            hi, fhi = x, f(d)
            if side == -1 and math.isfinite(flo):
                flo *= 0.5                       # Illinois: halve the stale end
            side = -1
        else:
            lo, flo = x, f(d)
            if side == 1 and math.isfinite(fhi):
                fhi *= 0.5
            side = 1
    return lo, hi


def pair_epsilon(pair, delta: float, xtol: float = 1e-11) -> float:
    """Smallest certified ε with ``pair_delta(pair, ε) ≤ delta``, searched on [0, log(a/b)].

    Returns the upper end of a bracket of width ≤ ``xtol`` (≤ 1e-9) whose
    upper end satisfies δ(ε) ≤ δ by evaluation, so it is an upper bound on the pair's ε(δ).
    """
    _need_g0(pair, "pair_epsilon")
    hi = pair.log_ratio * (1.0 + 2e-15) + 1e-300
    d0 = pair_delta(pair, 0.0)
    if d0 <= delta:
        return 0.0
    _, top = threshold_bracket(lambda e: pair_delta(pair, e), 0.0, hi, delta, xtol, dlo=d0,
                   guess=_guess(pair, delta, hi))
    return top


def _guess(pair, delta: float, hi: float) -> float:
    """A starting point for the root: the Gaussian-tail scale of the pair's privacy loss.

    The loss of a slice with c clones has sd ≈ 2(2α − 1)/√c; with c ≈ (n − 1)p, a δ-tail
    sits near √(2 log(1/δ)) sd. Only a starting point: the root finder certifies the answer.
    """
    c = max(1.0, (pair.n - 1) * pair.p)
    g = 2.0 * (2.0 * pair.alpha - 1.0) / math.sqrt(c) * math.sqrt(2.0 * (-math.log(delta)))
    return min(max(g, 1e-12), 0.5 * hi)

