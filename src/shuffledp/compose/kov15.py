"""``kov15``: approximate-DP composition of single-round (ε, δ) views.

Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015
(arXiv:1311.0776v4). One entry (T identical rounds): Thm 3.3 (optimal homogeneous) and
Thm 3.4 (closed form), the per-round / composition δ split optimised
(``composition.compose_epsilon`` / ``compose_delta``). Several entries: Thm 3.5
(heterogeneous closed form): for any δ̃, (ε̃, 1 − (1 − δ̃) Π(1 − δ_ℓ))-DP with

    ε̃ = min{ Σε_ℓ, Σ ε_ℓ tanh(ε_ℓ/2) + √(2 Σε_ℓ² log(e + √(Σε_ℓ²)/δ̃)),
             Σ ε_ℓ tanh(ε_ℓ/2) + √(2 Σε_ℓ² log(1/δ̃)) },

every round getting the same δ_ℓ (the split between rounds and δ̃ optimised on a grid
and refined; the pure end δ_ℓ = 0 tried when every entry is pure DP). Composition
theorems give upper bounds only.
"""

from __future__ import annotations

import math

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)

from . import composition as _comp
from ..core._memo import memo, register as _memo_register
from ..core.errors import NotApplicableError
from ..numerics import bisect_certified, falling_root_certified, golden_min, round_up
from ..core.views import EpsilonAt, Outcome
from ._registry import Composer, merge_parts, register


def _details(best, results) -> dict:
    d = {"statement": best.statement, "eps_round": best.eps_round,
         "delta_round": best.delta_round}
    d.update({k: v for k, v in best.details.items() if k not in d})
    d["statements"] = {r.statement: r.value for r in results}
    d["splits"] = {r.statement: dict(r.details) for r in results}
    return d


@memo(maxsize=512)
def _plain_k(e: float, rounds: int, delta: float) -> float:
    """K(e) of ``_homogeneous_floor``: KOV15's T-round ε at δ with no per-round δ, a pure
    function of (e, T, δ), kept: a kept e* (``_reusable_e_star``) is judged by its K, and
    floors at the same T, δ and value to beat take the same search steps. Each K is a
    binomial window and a certified root (~0.5-1 ms at T in the tens)."""
    return _comp.kov15_epsilon(e, 0.0, rounds, delta)


#: The e* ``_homogeneous_floor``'s search found, per (T, δ) (K(e*) is in ``_plain_k``).
#: The floors of one question aim at values a relative 1e-12 apart (a route's floor and the
#: bound's), so their searches, each ~5-10 evaluations of K, rarely meet at the same points;
#: an e* found for one aim serves another when its K is at or above that aim (within
#: 1e-4), which is all the floor's argument asks of e*. It only decides whether a floor is
#: proven (and the floor value then reported), never a bound's value.
_E_STARS: dict = _memo_register(__name__ + "._E_STARS", {})
_E_STARS_MAX = 64


def _reusable_e_star(rounds: int, delta: float, aim: float) -> float | None:
    """The smallest kept e* of (T, δ) with aim ≤ K(e*) ≤ aim·(1 + 1e-4), or None."""
    if len(_E_STARS) > _E_STARS_MAX:
        _E_STARS.clear()
    best = None
    for e in _E_STARS.get((rounds, delta), ()):
        k = _plain_k(e, rounds, delta)
        if aim <= k <= aim * (1.0 + 1e-4) and (best is None or e < best):
            best = e
    return best


def _homogeneous_floor(dp, delta, rounds, target) -> float:
    """A floor on the T-round KOV15 answer that is ≥ ``target`` when one can be proven,
    else −inf (one entry of T identical rounds).

    Every split (δ1 per round, δ' for the composition) has (1 − δ1)^T (1 − δ') = 1 − δ with
    δ' > 0, so δ1 < δ1max = 1 − (1 − δ)^{1/T} ≈ δ/T, hence ε1(δ1) ≥ ε1(δ1max) (the
    single-round curve is non-increasing), and δ' ≤ δ. The answer is therefore at least
    K(ε1(δ1max)), K(e) = KOV15 with δ1 = 0 at the whole δ, and K is non-decreasing. Rather
    than the single-round root (a bisection of δ1(ε), seconds at large n), find e* with
    K(e*) ≥ target on the cheap K and evaluate δ1 once: δ1(e*) > δ1max means
    ε1(δ1max) > e*, so the floor K(e*) ≥ target. A view whose ε1(δ) is a closed form
    (``cheap_epsilon``) reads K(ε1(δ1max)) directly.
    """
    if not math.isfinite(target):
        return -math.inf
    d1_max = -math.expm1(math.log1p(-delta) / rounds)
    if dp.cheap_epsilon:
        try:
            e1 = float(dp.epsilon_of(d1_max))
        except (NotImplementedError, NotApplicableError, ValueError, ArithmeticError):
            e1 = math.nan                    # outside its condition: the bisection below
        if math.isfinite(e1) and e1 >= 0.0:
            k = _plain_k(e1, rounds, delta)
            return k if k >= target else -math.inf
    hi = dp.eps_hi()
    if hi is None or not math.isfinite(hi) or hi <= 0.0:
        return -math.inf

    seen: dict = {}

    def K(e):
        if e not in seen:
            seen[e] = _plain_k(e, rounds, delta)
        return seen[e]

    e_star = None
    # Aim a hair above the target: the caller keeps the floor less 1e-9 relative.
    aim = target * (1.0 + 1e-7)
    reuse = _reusable_e_star(rounds, delta, aim) if target > 0.0 else None
    if reuse is not None and reuse <= hi:
        e_star = reuse                       # (so K(hi) ≥ K(e*) ≥ aim: K is non-decreasing)
    elif not K(hi) >= target:
        return -math.inf
    elif target > 0.0 and K(hi) >= aim:
        # e* without a bisection from 0 (~28 evaluations of K, each a binomial window):
        # the closed form bounds K ≤ T e tanh(e/2) + e √(2T log(1/δ)) ≤ T e²/2 + e s (KOV15
        # Thm 3.4 with δ̃ = δ; the optimal statement is never above it), so at the root e0
        # of T e²/2 + e s = aim, K(e0) ≤ aim; the chord of K from 0 brackets the root from
        # above, and nudged secant steps close in (``_secant_up``): ~5 evaluations. Only
        # the bracket is heuristic: the e* returned had K(e*) ≥ aim evaluated.
        s = math.sqrt(2.0 * rounds * -math.log(delta))
        below = 2.0 * aim / (s + math.sqrt(s * s + 2.0 * rounds * aim))
        if K(below) >= aim:
            e_star = below
        else:
            # K(0) = 0 and K is about convex: the chord through the origin and (below,
            # K(below)) reaches the aim at or after the root; steps of 1.5 if not
            kb = K(below)
            top = min(hi, below * (aim / kb) * 1.0001) if kb > 0.0 else min(hi, below * 1.5)
            for _ in range(60):
                if K(top) >= aim or top >= hi:
                    break
                below, top = top, min(hi, top * 1.5)
            if K(top) >= aim:
                e_star = _secant_up(K, aim, below, top)
        if e_star is not None:
            kept = _E_STARS.setdefault((rounds, delta), [])
            kept.append(e_star)
            del kept[:-32]
    if e_star is None:
        e_star = bisect_certified(lambda e: K(e) >= target, 0.0, hi, want="smallest",
                                  xtol=1e-12, rtol=1e-4)
    if dp.delta_of(e_star) > d1_max * (1.0 + 1e-6):
        return K(e_star)
    return -math.inf


def _secant_up(K, aim, a, b, tol=5e-5, nudge=1e-5, steps=10):
    """An e with K(e) ≥ ``aim`` evaluated, within about ``tol`` of the root of K = aim, from
    a bracket K(a) < aim ≤ K(b) of an increasing K: secant steps nudged up by ``nudge``
    (K is convex in e here, so the plain secant lands just below the root; the nudge puts
    the last steps above it). The end returned is always the upper end, where K ≥ aim."""
    ka, kb = K(a), K(b)
    for _ in range(steps):
        if kb - aim <= tol * aim or not (math.isfinite(kb) and kb > ka):
            break
        w = b - a
        x = (a + (aim - ka) * w / (kb - ka)) * (1.0 + nudge)
        x = min(max(x, a + 1e-3 * w), b - 1e-3 * w)
        kx = K(x)
        if kx >= aim:
            b, kb = x, kx
        else:
            a, ka = x, kx
    return b


def _eps_max(dp) -> float:
    hi = dp.eps_hi()
    if hi is None or not math.isfinite(hi) or hi <= 0.0:
        raise NotApplicableError("no finite single-round epsilon bracket for KOV15 composition")
    return float(hi)


def hetero_closed(eps_counts, dtilde: float) -> float:
    """Thm 3.5's ε̃ for rounds with ε_ℓ repeated count_ℓ times, at δ̃ (rounded up)."""
    s1 = sum(c * e for e, c in eps_counts)
    s2 = sum(c * e * e for e, c in eps_counts)
    lin = sum(c * e * math.tanh(e / 2.0) for e, c in eps_counts)
    cands = [s1]
    if dtilde > 0.0 and s2 > 0.0:
        cands.append(lin + math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / dtilde)))
        if dtilde < 1.0:
            cands.append(lin + math.sqrt(2.0 * s2 * -math.log(dtilde)))
    return float(round_up(min(cands)))


def hetero_epsilon(parts, delta: float, refine: int = 14) -> Outcome:
    """Several entries: Thm 3.5 with the δ split optimised (every round the same δ_ℓ)."""
    R = sum(c for _, c in parts)
    L = math.log1p(-delta)
    cache: dict = {}

    def eps_at(d1):
        if d1 not in cache:
            if d1 == 0.0:
                pe = [v.dp.pure_epsilon() for v, _ in parts]
                cache[d1] = None if any(p is None for p in pe) else [float(p) for p in pe]
            else:
                cache[d1] = [float(v.dp.epsilon_of(d1)) for v, _ in parts]
        return cache[d1]

    def split(z):
        if z == -math.inf:
            return 0.0, delta
        f = float(special.expit(z))
        return -math.expm1(f * L / R), -math.expm1((1.0 - f) * L)

    def val(z):
        d1, dt = split(z)
        es = eps_at(d1)
        if es is None or not all(math.isfinite(e) for e in es):
            return math.inf
        return hetero_closed([(e, c) for e, (_, c) in zip(es, parts)], dt)

    pts = [(val(z), z) for z in _comp._GRID_Z]
    pts.append((val(-math.inf), -math.inf))
    best, bz = min(pts, key=lambda t: t[0])
    if math.isfinite(best) and math.isfinite(bz) and refine > 0:
        z, v2 = golden_min(val, bz - 1.0, bz + 1.0, refine)
        if v2 < best:
            best, bz = v2, z
    d1, dt = split(bz)
    es = eps_at(d1) or []
    tot = sum(e * c for e, (_, c) in zip(es, parts)) or 1.0
    return Outcome(float(best), "upper", "kov15",
                   {"statement": "kov15-closed-heterogeneous", "delta_round": d1,
                    "delta_composition": dt, "eps_rounds": es,
                    "shares": [e * c / tot for e, (_, c) in zip(es, parts)],
                    "share_basis": "sum of per-round epsilons"})


def _dtilde_for(eps_counts, epsilon):
    """Smallest δ̃ (certified end of a bisection on log δ̃) with Thm 3.5's ε̃ ≤ epsilon;
    0 when Σε_ℓ ≤ epsilon already, None when no δ̃ < 1 works."""
    if hetero_closed(eps_counts, 0.0) <= epsilon:
        return 0.0
    hi = math.log1p(-1e-12)
    if hetero_closed(eps_counts, math.exp(hi)) > epsilon:
        return None
    lo = -745.0
    if hetero_closed(eps_counts, math.exp(lo)) <= epsilon:
        return math.exp(lo)
    t = bisect_certified(lambda t: hetero_closed(eps_counts, math.exp(t)) <= epsilon, lo, hi,
                         want="smallest", xtol=1e-6, rtol=1e-9)
    return math.exp(t)


def hetero_delta(parts, epsilon: float, refine: int = 10) -> Outcome:
    """Several entries: Thm 3.5 inverted. Every round gets the same δ_ℓ = δ1 (grid in
    log δ1, refined); for each δ1 the smallest δ̃ meeting ε; δ = 1 − (1 − δ̃)(1 − δ1)^R."""
    R = sum(c for _, c in parts)
    cache: dict = {}

    def total(x):
        d1 = 0.0 if x == -math.inf else 10.0 ** x
        if d1 not in cache:
            if d1 == 0.0:
                pe = [v.dp.pure_epsilon() for v, _ in parts]
                es = None if any(p is None for p in pe) else [float(p) for p in pe]
            else:
                es = [float(v.dp.epsilon_of(d1)) for v, _ in parts]
            if es is None or not all(math.isfinite(e) for e in es):
                cache[d1] = (1.0, None)
            else:
                dt = _dtilde_for([(e, c) for e, (_, c) in zip(es, parts)], epsilon)
                val = 1.0 if dt is None else -math.expm1(math.log1p(-dt) + R * math.log1p(-d1))
                cache[d1] = (min(1.0, float(round_up(val))), es)
        return cache[d1][0]

    xs = list(np.linspace(-16.0, -1.0, 16)) + [-math.inf]
    best, bx = min(((total(x), x) for x in xs), key=lambda t: t[0])
    if math.isfinite(bx) and best < 1.0 and refine > 0:
        x, v2 = golden_min(total, bx - 1.0, min(bx + 1.0, -1e-9), refine)
        if v2 < best:
            best, bx = v2, x
    if math.isfinite(bx) and best < 1.0:
        x = _basic_corner(parts, epsilon, cache, bx)
        if x is not None and total(x) < best:
            best, bx = total(x), x
    d1 = 0.0 if bx == -math.inf else 10.0 ** bx
    es = cache[d1][1] or []
    tot = sum(e * c for e, (_, c) in zip(es, parts)) or 1.0
    return Outcome(float(best), "upper", "kov15",
                   {"statement": "kov15-closed-heterogeneous", "delta_round": d1, "eps_rounds": es,
                    "shares": [e * c / tot for e, (_, c) in zip(es, parts)] if es else None,
                    "share_basis": "sum of per-round epsilons"})


def _basic_corner(parts, epsilon, cache, bx):
    """The smallest log10 δ1 at or below ``bx`` with Σ count_ℓ ε_ℓ(δ1) ≤ ε, when ``bx`` is
    there (δ̃ = 0: basic composition); else None.

    At that δ1 the total δ jumps: below it Σε_ℓ > ε and δ̃ must pay for the gap through the
    square-root terms (δ̃ near 1/2 in the contract's mixed example), above it δ = 1 −
    (1 − δ1)^R grows. The golden search only creeps up to a jump (1 % short after its
    steps), so δ(ε(δ)) could exceed δ where the ε question had found the corner; the corner
    is found here by a certified regula falsi on the smooth Σε_ℓ(δ1)."""
    def sum_at(x):
        es = cache[10.0 ** x][1] if 10.0 ** x in cache else None
        if es is None:
            es = [float(v.dp.epsilon_of(10.0 ** x)) for v, _ in parts]
        return hetero_closed([(e, c) for e, (_, c) in zip(es, parts)], 0.0) - epsilon

    top = cache.get(10.0 ** bx)
    if top is None or top[1] is None or sum_at(bx) > 0.0:
        return None
    below = [math.log10(d1) for d1, (_, es) in cache.items()
             if 0.0 < d1 < 10.0 ** bx and es is not None and all(math.isfinite(e) for e in es)
             and hetero_closed([(e, c) for e, (_, c) in zip(es, parts)], 0.0) > epsilon]
    if not below:
        return None
    return falling_root_certified(sum_at, max(below), bx, xtol=1e-12, rtol=1e-12)


@register
class Kov15Composer(Composer):
    name = "kov15"
    reference = "Kairouz, Oh, Viswanath 2015 (arXiv:1311.0776v4), Thms 3.3-3.5"

    def accepts(self, parts):
        parts = merge_parts(parts)
        if any(v.kind != "upper" for v, _ in parts):
            return "composition theorems give upper bounds only"
        if any(v.dp is None for v, _ in parts):
            return "needs a single-round (epsilon, delta) view of every entry"
        if sum(c for _, c in parts) < 2:
            return "one round: nothing to compose"
        return None

    costly = True

    def floor(self, parts, ask, beat):
        if not isinstance(ask, EpsilonAt):
            return None
        parts = merge_parts(parts)
        x = ask.delta
        if len(parts) == 1:
            v, c = parts[0]
            try:
                f = _homogeneous_floor(v.dp, x, c, beat)
            except (ValueError, ArithmeticError, NotImplementedError):
                return None
        else:
            # Each round's ε at the whole δ (no δ left per round, ε_ℓ can only be larger)
            # and δ̃ = δ (the statement only gets worse with less): Thm 3.5 is monotone in
            # both.
            f = hetero_closed([(float(v.dp.epsilon_of(x)), c) for v, c in parts], x)
        # less a relative 1e-9 for the floating-point rounding of the closed forms
        return f * (1.0 - 1e-9) if math.isfinite(f) else None

    def epsilon(self, parts, delta, **opts):
        parts = merge_parts(parts)
        if len(parts) == 1:
            v, c = parts[0]
            best, results = _comp.compose_epsilon(v.dp.epsilon_of, c, delta,
                                                  pure_eps=v.dp.pure_epsilon())
            return Outcome(float(best.value), "upper", self.name, _details(best, results))
        return hetero_epsilon(parts, delta)

    def delta(self, parts, epsilon, **opts):
        parts = merge_parts(parts)
        if len(parts) == 1:
            v, c = parts[0]
            best, results = _comp.compose_delta(v.dp.delta_of, c, epsilon,
                                                eps_max=_eps_max(v.dp))
            return Outcome(float(best.value), "upper", self.name, _details(best, results))
        return hetero_delta(parts, epsilon)
