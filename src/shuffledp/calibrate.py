"""Calibration: the inverse questions users actually ask (spec/accounting.md §6).

* ``eps0``   — the largest ε0 (any LDP randomizer, or k-RR with ``k=``) meeting a target;
* ``sigma``  — the smallest Gaussian σ meeting a target;
* ``rounds`` — the largest number of rounds T;
* ``users``  — the smallest number of users n.

Every bound is monotone in these parameters, so each is bracket-and-bisect on the
accountant's certified upper bound. The returned parameter is always on the certified
side: the accountant's ε at it is ≤ the target (the bisection keeps the end where that
was *computed*, never an interpolated one). Relative tolerance on ε: 1e-5 by default.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from . import _validate as v
from .accountant import _ask
from .bounds.base import CannotBeat
from .errors import NotApplicableError
from .mechanisms import Gaussian, LDP, RandomizedResponse
from .protocols import Shuffle

__all__ = ["Calibration", "eps0", "sigma", "rounds", "users"]


@dataclass(frozen=True)
class Calibration:
    """A calibrated parameter with the guarantee that certifies it."""

    parameter: str         # "eps0", "sigma", "rounds" or "users"
    value: float
    epsilon: float         # the certified ε at ``value`` (≤ target)
    target: float
    delta: float
    rounds: int
    bound: str             # the bound that achieved it
    runner_up: str | None  # the next-best upper bound and its ε
    runner_up_epsilon: float | None
    protocol: Shuffle

    def to_dict(self) -> dict:
        return {"parameter": self.parameter, "value": self.value, "epsilon": self.epsilon,
                "target": self.target, "delta": self.delta, "rounds": self.rounds,
                "bound": self.bound, "runner_up": self.runner_up,
                "runner_up_epsilon": self.runner_up_epsilon,
                "protocol": self.protocol.describe()}

    def __str__(self) -> str:
        s = (f"{self.parameter} = {self.value:.8g}  ->  epsilon = {self.epsilon:.6g} <= target "
             f"{self.target:g} at delta = {self.delta:g}, rounds = {self.rounds}\n"
             f"certified by '{self.bound}' ({self.protocol.describe()})")
        if self.runner_up:
            s += f"\nrunner-up: '{self.runner_up}' gives epsilon = {self.runner_up_epsilon:.6g}"
        return s


#: Called once per accountant evaluation (the CLI's progress bar); None: nothing.
_on_step = None


def _step():
    if _on_step is not None:
        _on_step()


@functools.lru_cache(maxsize=64)
def _best(proto, delta, T):
    # Cached: the bracket, the loop's ends and the final record ask the same point again
    # (protocols are frozen and hashable; a Result is never modified).
    _step()
    return _ask(proto, delta, T, None, None, "epsilon", upper_only=True)


def _meets(proto, delta, T, target) -> float:
    """A certified ε that is ≤ target exactly when the accountant's answer is (calibration's
    yes/no question, answered with the cheapest bounds that decide it); inf when every
    candidate provably stays above the target."""
    _step()
    try:
        return _ask(proto, delta, T, None, None, "epsilon", upper_only=True,
                    target=target).epsilon
    except CannotBeat as exc:
        return max(exc.floor, math.nextafter(target, math.inf))


def _finish(param, value, proto, target, delta, T):
    r = _best(proto, delta, T)
    ups = sorted((c for c in r.candidates if c.kind == "upper" and c.default),
                 key=lambda c: c.epsilon)
    ru = ups[1] if len(ups) > 1 else None
    return Calibration(param, value, r.epsilon, target, delta, T, r.bound,
                       ru.bound if ru else None, ru.epsilon if ru else None, proto)


def _bisect_real(ok, lo, hi, want, rel=1e-7, max_iter=100):
    """Bisection on a monotone predicate; keeps the end where ``ok`` was evaluated True."""
    for _ in range(max_iter):
        if hi - lo <= rel * max(abs(lo), abs(hi)):
            break
        mid = math.sqrt(lo * hi) if lo > 0 and hi / lo > 4 else 0.5 * (lo + hi)
        if ok(mid):
            if want == "largest":
                lo = mid
            else:
                hi = mid
        else:
            if want == "largest":
                hi = mid
            else:
                lo = mid
    return lo if want == "largest" else hi


def eps0(n, epsilon, delta, rounds=1, *, k=None, tol=1e-5) -> Calibration:
    """Largest ε0 such that the shuffle of n users meets (epsilon, delta) after ``rounds``.

    ``k=None``: any ε0-LDP randomizer (the bounds proven for all of them); ``k``: k-ary
    randomized response (which unlocks the stronger clone bound).
    """
    n = v.integer("n", n, lo=1)
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)
    tol = v.real("tol", tol, lo=1e-12, hi=0.1)

    def proto(e0):
        return Shuffle(LDP(e0) if k is None else RandomizedResponse(e0, k=k), n)

    def eps_at(e0):
        return _best(proto(e0), d, T).epsilon

    # ε(ε0) ≥ 0 and the trivial bound gives ε ≤ T·ε0, so ε0 = target/T always works.
    lo = target / T
    # A better start from the fast girgis-ub1 (milliseconds per evaluation): whatever it
    # certifies, the accountant certifies too, so its answer is a valid lower end.
    certified = False
    try:
        def ub1(e0):
            return _ask(proto(e0), d, T, "girgis-ub1", None, "epsilon").epsilon
        hi1 = lo * 2
        while ub1(hi1) <= target and hi1 < 700:
            hi1 *= 2
        r1 = _calibrate_loop(ub1, target, hi1 / 2, hi1, "largest", 1e-3)
        if r1 >= lo and ub1(r1) <= target:
            lo, certified = r1, True
    except (NotApplicableError, ValueError, ArithmeticError):
        pass
    if not certified and eps_at(lo) > target:   # cannot happen with a correct trivial bound
        lo = _bisect_real(lambda e0: eps_at(e0) <= target, 0.0, lo, "largest")
    hi = max(1.5 * lo, 1e-3)
    while eps_at(hi) <= target:
        lo, hi = hi, hi * 2
        if hi > 700:
            return _finish("eps0", lo, proto(lo), target, d, T)
    val = _calibrate_loop(eps_at, target, lo, hi, "largest", tol)
    return _finish("eps0", val, proto(val), target, d, T)


def _calibrate_loop(eps_at, target, lo, hi, want, tol):
    """Shrink [lo, hi] until the certified end's ε is within ``tol`` relative of the target.

    Illinois-style regula falsi on log ε (ε is smooth and monotone in each calibrated
    parameter, so this takes ~6 evaluations where bisection takes ~20), with a bisection
    step whenever the interpolation stalls. Only ends whose ε was *computed* ≤ target are
    ever returned.
    """
    good = lo if want == "largest" else hi
    bad = hi if want == "largest" else lo
    e_good, e_bad = eps_at(good), eps_at(bad)
    lt = math.log(target)

    def g(e):   # signed distance in log ε; finite even for ε = 0 or inf
        return max(-50.0, min(50.0, math.log(e) - lt if e > 0 else -50.0))

    f_good, f_bad = g(e_good), g(e_bad)
    side = 0
    for it in range(200):
        # The second test stops bounds that are not exactly monotone (an inner optimisation
        # such as trimmed-clone's ε0) from looping on noise below the parameter's precision.
        if e_good >= target * (1 - tol) or abs(bad - good) <= 1e-10 * max(abs(good), 1.0):
            break
        if it % 4 == 3 or not (f_bad > 0 >= f_good) or f_bad == f_good:
            mid = 0.5 * (good + bad)                  # guaranteed progress
        else:
            t = (-f_good) / (f_bad - f_good)          # fraction of the way from good to bad
            # Aim slightly short of the target so the step tends to land on the certified side.
            t = min(max(t - 0.25 * tol, 1e-3), 1.0 - 1e-3)
            mid = good + t * (bad - good)
        e_mid = eps_at(mid)
        f_mid = g(e_mid)
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
    return good


def sigma(n, epsilon, delta, rounds=1, *, sampling=None, tol=1e-5) -> Calibration:
    """Smallest Gaussian σ such that the protocol meets (epsilon, delta) after ``rounds``."""
    n = v.integer("n", n, lo=1)
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)

    def proto(s):
        return Shuffle(Gaussian(s), n, sampling=sampling)

    def eps_at(s):
        return _best(proto(s), d, T).epsilon

    hi = 1.0
    while eps_at(hi) > target:
        hi *= 2
        if hi > 1e8:
            raise NotApplicableError(f"no sigma up to 1e8 meets epsilon={target:g}")
    lo = hi / 2
    while lo > 1e-3 and eps_at(lo) <= target:
        hi, lo = lo, lo / 2
    val = _calibrate_loop(eps_at, target, lo, hi, "smallest", tol)
    return _finish("sigma", val, proto(val), target, d, T)


def rounds(proto, epsilon, delta, *, max_rounds=10**7) -> Calibration:
    """Largest number of rounds T for which ``proto`` meets (epsilon, delta)."""
    if not isinstance(proto, Shuffle):
        raise ValueError(f"protocol must be a Shuffle(mechanism, n, sampling=None); got {proto!r}")
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)

    def ok(T):
        return _meets(proto, d, T, target) <= target

    memo: dict = {}

    def eps_at(T):
        if T not in memo:
            memo[T] = _meets(proto, d, T, target)
        return memo[T]

    if eps_at(1) > target:
        raise NotApplicableError(f"even one round exceeds epsilon={target:g}: {eps_at(1):.6g}")
    lo, hi = 1, 4
    while eps_at(hi) <= target:
        lo, hi = hi, hi * 4
        if hi > max_rounds:
            return _finish("rounds", lo, proto, target, d, lo)
    lo = _largest_integer(eps_at, target, lo, hi)
    return _finish("rounds", lo, proto, target, d, lo)


def _largest_integer(eps_at, target, lo: int, hi: int) -> int:
    """Largest integer in [lo, hi) with eps_at ≤ target, given eps_at(lo) ≤ target < eps_at(hi).

    Interpolation in (log x, log ε) — ε grows like a power of T or 1/n — with a bisection
    step every third iteration so the bracket always shrinks geometrically.
    """
    it = 0
    while hi - lo > 1:
        it += 1
        el, eh = eps_at(lo), eps_at(hi)
        mid = None
        if it % 3 and el > 0 and eh > el:
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
    return lo


def users(mechanism, epsilon, delta, rounds=1, *, sampling=None, max_users=10**10) -> Calibration:
    """Smallest number of users n for which the shuffle of ``mechanism`` meets the target."""
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)

    def ok(n):
        return _meets(Shuffle(mechanism, n, sampling=sampling), d, T, target) <= target

    if ok(1):
        return _finish("users", 1, Shuffle(mechanism, 1, sampling=sampling), target, d, T)
    lo, hi = 1, 2
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > max_users:
            raise NotApplicableError(f"no n up to {max_users:g} meets epsilon={target:g}")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return _finish("users", hi, Shuffle(mechanism, hi, sampling=sampling), target, d, T)


def add_cli(sub, protocol_args, num, int_like):
    """`shuffledp calibrate eps0|sigma|rounds|users ...`"""
    import json

    from .cli import mechanism_from_spec, protocol_from_args

    p = sub.add_parser("calibrate", help="the parameter that meets a target (epsilon, delta)")
    p.add_argument("what", choices=["eps0", "sigma", "rounds", "users"])
    p.add_argument("--epsilon", type=num, required=True)
    p.add_argument("--delta", type=num, required=True)
    p.add_argument("--n", type=int_like, default=None, help="users per round (eps0, sigma, rounds)")
    p.add_argument("--eps0", type=num, default=None, help="local eps0 (rounds, users)")
    p.add_argument("--k", type=int_like, default=None, help="eps0: calibrate k-ary randomized response")
    p.add_argument("--sigma", type=num, default=None, help="rounds/users with a Gaussian")
    p.add_argument("--mechanism", default="ldp", help="rounds/users: ldp, rr:K, gaussian:SIGMA")
    p.add_argument("--checkin", type=num, default=None, metavar="RATE")
    p.add_argument("--sample-size", type=int_like, default=None, metavar="M")
    p.add_argument("--rounds", type=int_like, default=1)
    p.add_argument("--json", action="store_true")

    def run(a):
        from .protocols import CheckIn, WithoutReplacement
        sampling = (CheckIn(a.checkin) if a.checkin is not None else
                    WithoutReplacement(a.sample_size) if a.sample_size is not None else None)
        if a.what in ("eps0", "sigma", "rounds") and a.n is None:
            raise ValueError(f"--n is required for calibrate {a.what}")
        global _on_step
        from ._progress import Progress
        bar = Progress(None, f"calibrate {a.what}", enabled=None if not a.json else False)
        _on_step = lambda: bar.update(1)   # noqa: E731 — one accountant evaluation
        try:
            return _run_cli(a, sampling)
        finally:
            _on_step = None
            bar.close()

    def _run_cli(a, sampling):
        if a.what == "eps0":
            c = eps0(a.n, a.epsilon, a.delta, a.rounds, k=a.k)
        elif a.what == "sigma":
            c = sigma(a.n, a.epsilon, a.delta, a.rounds, sampling=sampling)
        else:
            spec = f"gaussian:{a.sigma}" if a.sigma is not None else a.mechanism
            mech = mechanism_from_spec(spec, a.eps0)
            if a.what == "rounds":
                c = rounds(Shuffle(mech, a.n, sampling=sampling), a.epsilon, a.delta)
            else:
                c = users(mech, a.epsilon, a.delta, a.rounds, sampling=sampling)
        print(json.dumps(c.to_dict()) if a.json else str(c))
        return 0

    p.set_defaults(func=run)
