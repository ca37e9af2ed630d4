"""The certified 1-D searches every module uses: one result record, one NaN guard.

Modelled on SciPy's ``optimize/_zeros_py.py`` (shared tolerances, one ``RootResults``, a
check that refuses a NaN instead of bisecting on it), without importing scipy.optimize
(~0.4 s). Every primitive has the one shape
``primitive(f, lo, hi, *, target=…, want=…, <tolerances>) -> SearchResult`` (``target`` and
``want`` where they apply):

* ``bisect`` — a monotone predicate; returns the *certified end*: the end of the final
  bracket where the predicate was evaluated True (the smallest ε with δ(ε) ≤ δ, the
  largest ε0 meeting a target).
* ``falling_root`` — the smallest x with g(x) ≤ 0 for g non-increasing (Illinois regula
  falsi on g's values, bisection when it stalls); certified end ``hi``.
* ``target_root`` — the end of a bracket whose f is certified ≤ a target and within a
  relative tolerance of it (Illinois on log f with secant aims; calibration).
* ``integer_search`` — the same on the integers (log–log interpolation or bisection).
* ``golden`` / ``golden_integer`` — golden-section minimisation on the reals / integers
  (any point is valid; not certified).
* ``illinois_root`` — a root of an increasing function (any point near it is valid).

``certified_end`` in the record says which end carries the guarantee (``"lo"``/``"hi"``)
or ``None`` for the two uncertified searches. A NaN from ``f`` (or a predicate) raises
``SearchError`` (an ``ArithmeticError``): a NaN compared with a threshold is silently
False, which would steer a bisection to a wrong end or loop to ``max_iter``.

The older names (``bisect_certified``, ``falling_root_certified``, ``golden_min``,
``increasing_root``) are thin wrappers kept for their callers; they return plain floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

__all__ = [
    "XTOL", "RTOL", "MAX_ITER", "SearchResult", "SearchError",
    "bisect", "falling_root", "falling_log_root", "target_root", "integer_search", "golden",
    "golden_integer", "illinois_root", "illinois_steps",
    "bisect_certified", "falling_root_certified", "golden_min", "increasing_root",
]

#: Shared default tolerances: stop once hi − lo ≤ max(XTOL, RTOL·|certified end|).
XTOL = 1e-12
RTOL = 1e-10
#: Shared iteration cap (bisection halves a bracket of 1e300 to 1e-300 in < 2100 steps; the
#: relative tolerance stops it after ~35).
MAX_ITER = 200


class SearchError(ArithmeticError):
    """A search cannot return a certified answer (NaN value, predicate False at the end)."""


@dataclass(frozen=True)
class SearchResult:
    """Outcome of a 1-D search.

    ``x`` is the answer (the certified end, the minimiser or the root); ``lo`` / ``hi`` the
    final bracket; ``iterations`` the evaluations of ``f`` made; ``certified_end`` is
    ``"lo"`` or ``"hi"`` — the end where the condition was checked to hold (``x`` is that
    end) — or ``None`` when the search certifies nothing (golden, illinois_root); ``fx``
    the value of ``f`` at ``x`` when known (the minimum for ``golden``), else NaN.
    """

    x: float
    lo: float
    hi: float
    iterations: int
    certified_end: str | None
    fx: float = math.nan

    def __float__(self) -> float:
        return float(self.x)


def _nan(v) -> bool:
    try:
        return bool(v != v)
    except (TypeError, ValueError):      # not a number (an array is not a search value)
        return False


class _Counted:
    """``f`` with an evaluation counter and the NaN guard."""

    __slots__ = ("f", "n", "name")

    def __init__(self, f, name: str):
        self.f, self.n, self.name = f, 0, name

    def __call__(self, x):
        self.n += 1
        v = self.f(x)
        _guard(self.name, x, v)
        return v


def _guard(name: str, x, v) -> None:
    """The NaN guard: a NaN cannot be compared with a target."""
    if _nan(v):
        raise SearchError(f"{name}: the function is NaN at x={x!r} (a NaN cannot "
                          "be compared with the target; fix the function, not the search)")


class _Threshold:
    """The predicate f(x) ≤ target of a counted, NaN-guarded f."""

    __slots__ = ("f", "target")

    def __init__(self, f: _Counted, target: float):
        self.f, self.target = f, target

    @property
    def n(self) -> int:
        return self.f.n

    def __call__(self, x) -> bool:
        return self.f(x) <= self.target


# ----------------------------------------------------------------------------------------
# Bisection on a monotone predicate
# ----------------------------------------------------------------------------------------
def bisect(ok: Callable[[float], bool], lo: float, hi: float, *, want: str = "smallest",
           target: float | None = None, xtol: float = XTOL, rtol: float = RTOL,
           max_iter: int = MAX_ITER, check_end: bool = True, try_other_end: bool = False,
           geometric: bool = False) -> SearchResult:
    """Bisection on a monotone predicate; ``x`` is the certified end.

    The predicate is ``ok(x)``, or ``ok(x) <= target`` when a ``target`` is given — prefer
    that form: a NaN value then raises ``SearchError`` (a predicate written as a comparison
    turns a NaN into a silent False).

    ``want="smallest"``: ``ok`` is False below a threshold and True above; the end returned
    is ``hi`` (the safe end for "smallest ε with δ(ε) ≤ δ"). ``want="largest"``: ``ok`` is
    True below the threshold; the end returned is ``lo`` (the safe end for "largest ε0
    meeting a target"). Stops when hi − lo ≤ max(xtol, rtol·|returned end|), when the
    midpoint is no longer strictly inside (the floats are exhausted) or after ``max_iter``.

    ``check_end``: evaluate ``ok`` at the end that may come back unchanged and raise
    ``SearchError`` if it is False (off only where the caller has just evaluated it).
    ``try_other_end``: evaluate ``ok`` at the other end first and return it if True (a
    bracket whose lower end already holds). ``geometric``: bisect in log space while
    0 < lo and hi/lo > 4 (brackets spanning decades).
    """
    if want not in ("smallest", "largest"):
        raise ValueError(f"want must be 'smallest' or 'largest', got {want!r}")
    small = want == "smallest"
    f = _Counted(ok, f"bisect(want={want!r})")
    if target is not None:
        f = _Threshold(f, target)
    end = "hi" if small else "lo"
    if try_other_end and f(lo if small else hi):
        x = lo if small else hi
        return SearchResult(x, lo, hi, f.n, "lo" if small else "hi")
    # The returned end must be certified: check the bracket end that may be returned
    # unchanged (otherwise an uncertified bracket end would come back silently).
    if check_end and not f(hi if small else lo):
        raise SearchError(f"bisect_certified(want={want!r}): the predicate is False at "
                          f"{end}={hi if small else lo!r}, so no certified point exists "
                          "in the bracket")
    for _ in range(max_iter):
        if hi - lo <= max(xtol, rtol * abs(hi if small else lo)):
            break
        mid = math.sqrt(lo * hi) if geometric and lo > 0 and hi / lo > 4 else 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if bool(f(mid)) == small:
            hi = mid
        else:
            lo = mid
    return SearchResult(hi if small else lo, lo, hi, f.n, end)


def bisect_certified(ok: Callable[[float], bool], lo: float, hi: float, *,
                     want: str = "smallest", xtol: float = 1e-10, rtol: float = 1e-10,
                     max_iter: int = MAX_ITER) -> float:
    """``bisect(...).x`` with this name's historical tolerances (1e-10 both)."""
    return bisect(ok, lo, hi, want=want, xtol=xtol, rtol=rtol, max_iter=max_iter).x


# ----------------------------------------------------------------------------------------
# Roots of monotone functions
# ----------------------------------------------------------------------------------------
def falling_root(g: Callable[[float], float], lo: float, hi: float, *,
                 xtol: float = XTOL, rtol: float = 1e-8, max_iter: int = MAX_ITER,
                 gtol: float | None = None) -> SearchResult:
    """Smallest x (to tolerance) with g(x) ≤ 0, for g non-increasing with g(lo) > 0 ≥ g(hi):
    the certified end ``hi`` of a bracket, like ``bisect(lambda x: g(x) <= 0, …)``.

    Illinois regula falsi on the values of g (a log δ(ε) − log δ is nearly linear in ε, so a
    few evaluations replace the ~30 of bisection); a step that does not shrink the bracket
    by half, or a non-finite value, falls back to bisection. The returned x always had
    g(x) ≤ 0 evaluated, and the bracket is narrowed to a quarter of the bisection tolerance
    — or, with ``gtol``, until the returned end has −gtol ≤ g ≤ 0 (g resolved no finer).
    """
    g = _Counted(g, "falling_root")
    glo, ghi = g(lo), g(hi)
    if not ghi <= 0.0:
        raise SearchError(f"falling_root_certified: g(hi={hi!r}) = {ghi!r} is not <= 0")
    if glo <= 0.0:
        return SearchResult(lo, lo, hi, g.n, "lo", glo)
    side = 0
    for _ in range(max_iter):
        width = hi - lo
        if width <= 0.25 * max(xtol, rtol * abs(hi)) or (gtol is not None and -ghi <= gtol):
            break
        if math.isfinite(glo) and math.isfinite(ghi) and glo > ghi:
            x = hi - ghi * width / (ghi - glo)
            # keep x strictly inside, away from the ends by a sliver
            x = min(max(x, lo + 1e-3 * width), hi - 1e-3 * width)
        else:
            x = 0.5 * (lo + hi)
        if x <= lo or x >= hi:
            break
        gx = g(x)
        if gx <= 0.0:
            hi, ghi = x, gx
            if side == -1:
                glo *= 0.5                # Illinois: halve the stale end's weight
            side = -1
        else:
            lo, glo = x, gx
            if side == 1:
                ghi *= 0.5
            side = 1
        if hi - lo > 0.5 * width:         # slow progress: one bisection step
            m = 0.5 * (lo + hi)
            gm = g(m)
            if gm <= 0.0:
                hi, ghi = m, gm
            else:
                lo, glo = m, gm
            side = 0
    return SearchResult(hi, lo, hi, g.n, "hi")


def falling_root_certified(g: Callable[[float], float], lo: float, hi: float, *,
                           xtol: float = XTOL, rtol: float = 1e-8, max_iter: int = MAX_ITER,
                           gtol: float | None = None) -> float:
    """``falling_root(...).x``."""
    return falling_root(g, lo, hi, xtol=xtol, rtol=rtol, max_iter=max_iter, gtol=gtol).x


def log_gap(d: float, target: float, log_target: float) -> float:
    """log d − log target, carrying the sign of d − target exactly: ≤ 0 if and only if
    d ≤ target (−inf for d ≤ 0). log rounds, so for d a few ulps above target log d can
    equal log target; a root search that certifies "g ≤ 0" on the plain difference would
    then certify an ε whose δ(ε) exceeds the target. Such a d gets the smallest positive
    float instead (and a d ≤ target whose log rounds above log target gets 0)."""
    if not d > 0.0:
        return -math.inf
    g = math.log(d) - log_target
    if d > target:
        return g if g > 0.0 else 5e-324
    return g if g <= 0.0 else 0.0


def falling_log_root(delta_at: Callable[[float], float], target: float, lo: float,
                     hi: float, *, xtol: float = XTOL, rtol: float = 1e-8,
                     max_iter: int = MAX_ITER) -> float:
    """The smallest certified x in [lo, hi] with ``delta_at(x) ≤ target``, for δ(x)
    non-increasing with δ(lo) > target ≥ δ(hi): ``falling_root`` on log δ(x) − log target
    (nearly linear in ε for a hockey-stick curve, so a few evaluations), its sign taken from
    δ(x) − target itself (``log_gap``): the returned x had δ(x) ≤ target evaluated."""
    lt = math.log(target)
    return falling_root(lambda x: log_gap(delta_at(x), target, lt), lo, hi, xtol=xtol,
                        rtol=rtol, max_iter=max_iter).x


def illinois_root(f, lo: float, hi: float, *, xtol: float = 1e-14, rtol: float = 1e-13,
                  max_iter: int = MAX_ITER) -> SearchResult:
    """Root of an increasing function with f(lo) ≤ 0 ≤ f(hi): regula falsi with the Illinois
    modification (superlinear), bisection when it stalls. Not a certified end: callers use
    it where any point near the root is valid (a tilt, a refinement)."""
    steps = illinois_steps(lo, hi, xtol=xtol, rtol=rtol, max_iter=max_iter)
    try:
        x = next(steps)
        while True:
            x = steps.send(f(x))
    except StopIteration as stop:
        return stop.value


def illinois_steps(lo: float, hi: float, *, xtol: float = 1e-14, rtol: float = 1e-13,
                   max_iter: int = MAX_ITER):
    """``illinois_root`` as a generator: yields each x, receives f(x) (NaN-guarded here),
    returns the ``SearchResult`` — for callers that run many root searches side by side
    and evaluate their functions in one batch (``numerics.steps``)."""
    n = 0

    def got(x, v):
        nonlocal n
        n += 1
        _guard("illinois_root", x, v)
        return v

    a, b = lo, hi
    fa = got(a, (yield a))
    fb = got(b, (yield b))
    if fa >= 0.0:
        return SearchResult(a, a, b, n, None, fa)
    if fb <= 0.0:
        return SearchResult(b, a, b, n, None, fb)
    side = 0
    for _ in range(max_iter):
        if b - a <= max(xtol, rtol * max(abs(a), abs(b))):
            break
        x = (a * fb - b * fa) / (fb - fa)
        if not a < x < b:
            x = 0.5 * (a + b)
        fx = got(x, (yield x))
        if fx > 0.0:
            b, fb = x, fx
            if side == -1:
                fa *= 0.5
            side = -1
        elif fx < 0.0:
            a, fa = x, fx
            if side == 1:
                fb *= 0.5
            side = 1
        else:
            return SearchResult(x, a, b, n, None, fx)
    return SearchResult(0.5 * (a + b), a, b, n, None)


def increasing_root(f, a: float, b: float, *, xtol: float = 1e-14, rtol: float = 1e-13,
                    max_iter: int = MAX_ITER) -> float:
    """``illinois_root(...).x``."""
    return illinois_root(f, a, b, xtol=xtol, rtol=rtol, max_iter=max_iter).x


# ----------------------------------------------------------------------------------------
# A value within a relative tolerance below a target (calibration)
# ----------------------------------------------------------------------------------------
def target_root(f, lo: float, hi: float, *, target: float, want: str, rtol: float,
                max_iter: int = MAX_ITER) -> SearchResult:
    """Shrink [lo, hi] until the certified end's f is within ``rtol`` relative below
    ``target``; f ≥ 0 monotone, ≤ target at the good end (``lo`` for ``want="largest"``,
    ``hi`` for ``"smallest"``) and > target at the other.

    Illinois-style regula falsi on log f (f = ε is smooth and monotone in each calibrated
    parameter, so this takes ~6 evaluations where bisection takes ~20), with a bisection
    step whenever the interpolation stalls. Only ends whose f was *computed* ≤ target are
    ever returned (``fx`` is that value).
    """
    if want not in ("smallest", "largest"):
        raise ValueError(f"want must be 'smallest' or 'largest', got {want!r}")
    eps_at = _Counted(f, "target_root")
    good = lo if want == "largest" else hi
    bad = hi if want == "largest" else lo
    e_good, e_bad = eps_at(good), eps_at(bad)
    lt = math.log(target)
    # The secant steps converge fast near the target: stop at a tenth of the tolerance
    # (usually one evaluation more), so the parameter returned is as close as the bracket's
    # slower steps used to land by chance.
    tol = 0.1 * rtol

    def g(e):   # signed distance in log ε; finite even for ε = 0 or inf
        return max(-50.0, min(50.0, math.log(e) - lt if e > 0 else -50.0))

    f_good, f_bad = g(e_good), g(e_bad)
    side = 0
    seen = [(good, f_good), (bad, f_bad)]       # every (x, g) evaluated, for interpolation
    widths = []
    for it in range(max_iter):
        # The second test stops functions that are not exactly monotone (an inner
        # optimisation such as trimmed-clone's ε0) from looping on noise below the
        # parameter's precision.
        if e_good >= target * (1 - tol) or abs(bad - good) <= 1e-10 * max(abs(good), 1.0):
            break
        widths.append(abs(bad - good))
        # Guaranteed progress: bisect when three steps have not halved the bracket.
        stalled = len(widths) > 3 and widths[-1] > 0.5 * widths[-4]
        q = (_closest_secant(seen, good, bad, -0.05 * tol)
             if len(seen) >= 3 and not stalled else None)
        if q is not None:
            # The secant through the two evaluations closest to the target (log ε is smooth
            # in the parameter), aimed 5 % of the tolerance short of it: once both are near,
            # it lands on the certified side within the tolerance, where the bracket's
            # secant — one end still far — creeps.
            mid = q
        elif stalled or not (f_bad > 0 >= f_good) or f_bad == f_good:
            mid = 0.5 * (good + bad)                  # guaranteed progress
        else:
            t = (-f_good) / (f_bad - f_good)          # fraction of the way from good to bad
            # Aim slightly short of the target so the step tends to land on the certified side.
            t = min(max(t - 0.25 * tol, 1e-3), 1.0 - 1e-3)
            mid = good + t * (bad - good)
        e_mid = eps_at(mid)
        f_mid = g(e_mid)
        seen.append((mid, f_mid))
        if e_mid <= target:
            good, e_good, f_good = mid, e_mid, f_mid
            if side == -1:
                f_bad *= 0.5                          # Illinois: keep the far end moving
            side = -1
        else:
            bad, e_bad, f_bad = mid, e_mid, f_mid
            if side == 1:
                f_good *= 0.5
            side = 1
    a, b = min(good, bad), max(good, bad)
    return SearchResult(good, a, b, eps_at.n, "lo" if want == "largest" else "hi", e_good)


def _closest_secant(seen, good, bad, aim=0.0):
    """Where the secant through the two evaluated (x, g) closest to g = 0 reaches g = aim,
    when that falls strictly inside (good, bad); else None."""
    pts = sorted((p for p in seen if math.isfinite(p[1]) and abs(p[1]) < 50.0),
                 key=lambda p: abs(p[1]))[:2]
    if len(pts) < 2 or pts[0][1] == pts[1][1] or pts[0][0] == pts[1][0]:
        return None
    (x0, f0), (x1, f1) = pts
    x = x0 + (aim - f0) * (x1 - x0) / (f1 - f0)
    lo, hi = min(good, bad), max(good, bad)
    return x if math.isfinite(x) and lo < x < hi else None


def integer_search(f, lo: float, hi: float, *, target: float, want: str = "largest",
                   interpolate: bool = True) -> SearchResult:
    """The integer threshold of f ≤ target on [lo, hi], f monotone (``lo`` and ``hi`` are
    whole numbers, possibly held as floats: the midpoints keep their type).

    ``want="largest"``: the largest integer in [lo, hi) with f ≤ target, given
    f(lo) ≤ target < f(hi) (f increasing); ``interpolate`` steps in (log x, log f) — ε grows
    like a power of T or 1/n — with a bisection step every third iteration so the bracket
    always shrinks geometrically. ``want="smallest"``: the smallest integer in (lo, hi]
    with f ≤ target, given f(lo) > target ≥ f(hi) (f decreasing), by bisection.
    """
    if want not in ("smallest", "largest"):
        raise ValueError(f"want must be 'smallest' or 'largest', got {want!r}")
    eps_at = _Counted(f, "integer_search")
    if want == "smallest":
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if eps_at(mid) <= target:
                hi = mid
            else:
                lo = mid
        return SearchResult(hi, lo, hi, eps_at.n, "hi")
    it = 0
    while hi - lo > 1:
        it += 1
        mid = None
        if interpolate and it % 3:
            el, eh = eps_at(lo), eps_at(hi)
            if el > 0 and eh > el:
                t = (math.log(target) - math.log(el)) / (math.log(eh) - math.log(el))
                x = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
                mid = int(math.floor(x))
                if mid <= lo or mid >= hi:
                    mid = None
        if mid is None:
            mid = (lo + hi) // 2
        if eps_at(mid) <= target:
            lo = mid
            # Probe just above: the interpolation usually lands within one step.
            if mid + 1 < hi and eps_at(mid + 1) > target:
                hi = mid + 1
        else:
            hi = mid
    return SearchResult(lo, lo, hi, eps_at.n, "lo")


# ----------------------------------------------------------------------------------------
# Golden-section minimisation
# ----------------------------------------------------------------------------------------
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def golden(f, lo: float, hi: float, *, max_iter: int, loses=None) -> SearchResult:
    """Golden-section search for a minimum of a (roughly unimodal) f on [lo, hi].

    ``x`` / ``fx`` are the best point seen and its value (ties: the smaller x); an infinite
    value is allowed (a point where the bound does not exist), a NaN raises. ``max_iter``
    steps after the first two evaluations; ``lo`` / ``hi`` the final bracket.

    ``loses(x, fp)``, optional: True is a PROOF that f(x) > fp, where fp is the value of the
    one point the search keeps when it compares x with it (it must return False when it
    cannot prove it, never guess). Such a point is then not evaluated: it loses the same
    comparison, so the search visits the same points and returns the same x (same floats)
    as without ``loses``, bit for bit (for the trimmed ε0 searches a proof is one
    lower-bound δ evaluation instead of a root search, ``bounds._common.golden_pruned``).
    """
    f = _Counted(f, "golden")

    def value(x, partner):
        if (loses is not None and partner is not None and math.isfinite(partner)
                and loses(x, partner)):
            return math.inf               # proven > partner: the same comparison outcome
        return f(x)

    a, b = lo, hi
    c = b - _GOLDEN * (b - a)
    d = a + _GOLDEN * (b - a)
    fc = value(c, None)
    fd = value(d, fc)
    best = min((fc, c), (fd, d))
    for _ in range(max_iter):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = value(c, fd)
            best = min(best, (fc, c))
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = value(d, fc)
            best = min(best, (fd, d))
    return SearchResult(best[1], a, b, f.n, None, best[0])


def golden_min(f, a: float, b: float, iters: int):
    """``golden``: returns (x, f(x)), the best point seen."""
    r = golden(f, a, b, max_iter=iters)
    return r.x, r.fx


def golden_integer(f, lo: int, hi: int) -> SearchResult:
    """Golden-section minimisation of a (roughly unimodal) f over the integers in [lo, hi]:
    the bracket shrinks until at most 4 integers remain, which are all evaluated.

    ~log(hi − lo)/log(1.618) evaluations instead of every integer (``f`` should cache if
    it is expensive: the retained point is asked again). ``x`` / ``fx`` the best integer
    evaluated in the final bracket [``lo``, ``hi``] (ties: the smaller); a NaN raises.
    """
    f = _Counted(f, "golden_integer")
    a, b = int(lo), int(hi)
    while b - a > 3:
        m1 = a + int(round((b - a) * 0.381966))
        m2 = b - int(round((b - a) * 0.381966))
        if m1 >= m2:
            break
        if f(m1) <= f(m2):
            b = m2
        else:
            a = m1
    best = min((f(o), o) for o in range(a, b + 1))
    return SearchResult(best[1], a, b, f.n, None, best[0])
