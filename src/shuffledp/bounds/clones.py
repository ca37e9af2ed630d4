r"""Clone-reduction bounds: FMT20, FMT23 (with its errata), randomizer-specific, k-RR lower.

Every bound here is an instance of the one generic pair of ``shuffledp.pairs.clone``
; they differ only in the clone probability p, the victim's probabilities
and — most importantly — in the class of randomizers they are valid for:

* ``fmt20`` / ``fmt20-closed`` — Feldman, McMillan, Talwar, "Hiding among the clones: a
  simple and nearly optimal analysis of privacy amplification by shuffling", FOCS 2021,
  arXiv:2012.12803 (Thm 3.1, Lemma 3.3; closed form Thm 3.1 as in the authors' code).
  Valid for **every** adaptive sequence of ε0-LDP randomizers [V].
* ``fmt23`` / ``fmt23-closed`` — Feldman, McMillan, Talwar, "Stronger privacy amplification
  by shuffling for Rényi and approximate differential privacy", SODA 2023,
  arXiv:2208.04591v3 (Thm 3.1, closed form Thm 3.2). The **errata** (Section 7) restricts
  them to a class of randomizers; this library proves the class S(ε0): R(x) ≥ (R(x⁰) + R(x¹))/
  (e^ε0 + 1). k-RR and every 2-input randomizer are in it. On ``sd.LDP`` they refuse.
* ``clone-specific`` — the generic pair with p = p_R computed from a given matrix
  [D]: valid for that one randomizer, between FMT20 and FMT23.
* ``krr-lower`` — what k-RR provably leaks on one instance [D]: k = 2 the exact
  2RR instance (both directions); k ≥ 3 the k-RR marginal pair (g > 0, a LOWER bound only)
  and, for small n, the exact value of the "others at the victim's first value" instance.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)

from ..pairs import clone as cp
from ..core.errors import NotApplicableError
from ..core.mechanisms import ENCODERS, LDP, RandomizedResponse, Randomizer
from ..numerics import hockey_stick, round_up
from ._common import ldp_reason, no_sampling_reason, pld_first_kov15_last
from ..core.views import EpsilonAt
from .base import Bound, PairBound, register

__all__ = ["fmt20_closed_epsilon", "fmt23_closed_epsilon", "fmt20_closed_condition",
           "fmt23_closed_condition", "krr_first_value_delta", "OutsideCondition",
           "ERRATA_REASON"]

FMT20_REF = ("Feldman, McMillan, Talwar, Hiding among the clones, FOCS 2021, "
             "arXiv:2012.12803")
FMT23_REF = ("Feldman, McMillan, Talwar, Stronger privacy amplification by shuffling, "
             "SODA 2023, arXiv:2208.04591v3 (with errata, Sec. 7)")

ERRATA_REASON = (
    "the FMT23 stronger-clone bound is valid only for randomizers in the restricted class "
    "S(eps0) (R(x) >= (R(x0) + R(x1))/(e^eps0 + 1)); the FMT23 errata (arXiv:2208.04591v3, "
    "Sec. 7) withdrew it for arbitrary eps0-LDP randomizers, so it cannot be applied to "
    "'any eps0-LDP randomizer'. Use fmt20 (valid for every eps0-LDP randomizer), or pass the "
    "concrete randomizer (RandomizedResponse(eps0, k) or Randomizer(matrix))")


class OutsideCondition(NotApplicableError, ArithmeticError):
    """A closed form asked outside its validity condition (depends on δ, so not in check).

    Also an ``ArithmeticError`` so that the accountant's loop over all bounds records it as
    skipped instead of stopping; asked by name it reaches the user as a NotApplicableError.
    """


def _clone_check(proto):
    # A sampled round is a post-processing of the round with all n users reporting (keep
    # each shuffled report w.p. γ, or a uniform m of them), so these upper bounds at n
    # hold for sampled protocols too; the hidden-⊥ pairs (bounds/sampled.py) add the gain.
    return ldp_reason(proto)


# ----------------------------------------------------------------------------------------
# Closed forms
# ----------------------------------------------------------------------------------------
def _fmt20_closed_max_eps0(n: int, delta: float) -> float:
    """log(n / (16 log(4/δ))): the largest ε0 the FMT20 closed form is valid for."""
    return math.log(n / (16.0 * (math.log(4.0) - math.log(delta))))


def fmt20_closed_condition(eps0: float, n: int, delta: float) -> bool:
    """ε0 ≤ log(n / (16 log(4/δ))) (the condition in the authors' public code)."""
    return eps0 <= _fmt20_closed_max_eps0(n, delta)


def fmt20_closed_epsilon(eps0: float, n: int, delta: float) -> float:
    """FMT20 closed form as in the authors' public code [V], NOT rounded.

    a' = 8 √(e^ε0 log(4/δ)/n), c' = 8 e^ε0/n, ε' = log(1 + a' + c'),
    ε = log(1 + (1 − e^−ε0)/(1 + e^(−ε0−ε')) · (a' + c')). Raises ``OutsideCondition``
    outside ε0 ≤ log(n/(16 log(4/δ))).
    """
    if not fmt20_closed_condition(eps0, n, delta):
        raise OutsideCondition(
            f"fmt20-closed is not applicable: it needs eps0 <= log(n/(16 log(4/delta))) = "
            f"{_fmt20_closed_max_eps0(n, delta):.6g}; got eps0 = {eps0!r}")
    ap = 8.0 * math.sqrt(math.exp(eps0) * (math.log(4.0) - math.log(delta)) / n)
    cpr = 8.0 * math.exp(eps0) / n
    epr = math.log1p(ap + cpr)
    return math.log1p(-math.expm1(-eps0) / (1.0 + math.exp(-eps0 - epr)) * (ap + cpr))


def _fmt23_closed_min_n(eps0: float, delta: float) -> float:
    """8 (e^ε0 + 1) log(4/δ): the FMT23 closed form needs more users than this."""
    return 8.0 * (math.exp(eps0) + 1.0) * (math.log(4.0) - math.log(delta))


def fmt23_closed_condition(eps0: float, n: int, delta: float) -> bool:
    """n > 8 (e^ε0 + 1) log(4/δ) (FMT23, arXiv:2208.04591, Thm 3.2; reconstructed, never the default answer)."""
    return n > _fmt23_closed_min_n(eps0, delta)


def fmt23_closed_epsilon(eps0: float, n: int, delta: float) -> float:
    """FMT23 Theorem 3.2 [R], NOT rounded; ``OutsideCondition`` outside it.

    ε = log(1 + (e^ε0 − 1)/(e^ε0 + 1) · (√(32 (e^ε0 + 1) log(4/δ)/(n − 1))
        + 4 (e^ε0 + 1)/(n − 1))).
    """
    if not fmt23_closed_condition(eps0, n, delta):
        raise OutsideCondition(
            f"fmt23-closed is not applicable: it needs n > 8 (e^eps0 + 1) log(4/delta) = "
            f"{_fmt23_closed_min_n(eps0, delta):.6g}; got n = {n}")
    e = math.exp(eps0)
    lg = (math.log(4.0) - math.log(delta))
    return math.log1p(math.tanh(eps0 / 2.0) * (math.sqrt(32.0 * (e + 1.0) * lg / (n - 1))
                                               + 4.0 * (e + 1.0) / (n - 1)))


def _closed_delta(eps_of_delta, eps: float) -> float:
    """Smallest certified δ with closed_eps(δ) ≤ ε, by bisection on log δ (δ ≤ 0.5).

    The closed forms are non-increasing in δ and their condition holds for large δ only, so
    the set of good δ is an interval [δ*, 0.5]. Returns the certified (larger) end.
    """
    def good(ld):
        try:
            return eps_of_delta(math.exp(ld)) <= eps
        except OutsideCondition:
            return False

    lo, hi = math.log(1e-300), math.log(0.5)
    if not good(hi):
        raise OutsideCondition(
            f"the closed form gives no delta <= 0.5 with epsilon <= {eps!r} inside its "
            "validity condition")
    if good(lo):
        return 1e-300
    for _ in range(200):
        if hi - lo <= 1e-12 * abs(hi) + 1e-12:
            break
        mid = 0.5 * (lo + hi)
        if good(mid):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


# ----------------------------------------------------------------------------------------
# Class S(ε0)
# ----------------------------------------------------------------------------------------
def _stronger_reason(proto) -> str | None:
    """None if the mechanism is known to be in S(ε0); otherwise why not."""
    m = proto.mechanism
    if isinstance(m, RandomizedResponse):
        return None                            # k-RR is in S(ε0) for every k [D]
    if isinstance(m, Randomizer):
        if m.inputs == 2:
            return None                        # every 2-input randomizer is in S(ε0)
        if cp.in_stronger_class(m.array, m.eps0):
            return None
        return ("this randomizer is not in the class S(eps0) that the FMT23 errata "
                f"restricts the stronger clone to (its p_R = {cp.specific_p(m.array):.6g} < "
                f"2/(e^eps0 + 1) = {2.0 * special.expit(-m.eps0):.6g}); use clone-specific "
                "(the same pair with this randomizer's p_R) or fmt20")
    if isinstance(m, LDP):
        return ERRATA_REASON
    if isinstance(m, ENCODERS):
        # Small domains: decide from the full matrix; otherwise refuse (unary encodings
        # with d >= 3 break the condition at an output where the victim's bit is 0 and
        # two others' are 1).
        if m.n_outputs() <= 4096 and cp.in_stronger_class(m.matrix(), m.eps0):
            return None
        return (f"{m.describe()} is not known to be in the class S(eps0) that the FMT23 "
                "errata restricts the stronger clone to (unary encodings with d >= 3 are "
                "not); use blanket (this randomizer) or fmt20")
    return f"unknown mechanism {m!r}"


# ----------------------------------------------------------------------------------------
# Pair-based upper bounds
# ----------------------------------------------------------------------------------------
class _PairBound(PairBound):
    """A bound given by one g = 0 clone pair: δ(ε), ε(δ), PLD atoms (``PairBound``: the
    pair's own; the atoms are a dominating pair of coarsened slices,
    ``pairs.clone.pair_pld_atoms``) and RDP of the pair."""

    kind = "upper"
    rdp_expensive = True
    #: Clone pairs are symmetric (swapping the victim's two types maps P to Q): their PLD
    #: route composes one direction (``composition.pld_delta``).
    pld_symmetric = True

    def pair(self, proto) -> cp.ClonePair:
        raise NotImplementedError

    def rdp(self, proto, orders):
        return self.pair(proto).rdp(orders)

    def rdp_floor(self, proto, orders):
        """Certified lower bounds on the exact pair's D(λ) at real orders λ ≥ 2 (the RDP
        composer's floor, docs/latency.md): the Rényi sum of a pair the clone pair dominates
        (``cp.pair_floor_atoms``; data processing and the atoms left out only lower
        Σ p^λ q^(1−λ)), less 1e-9·(1 + λ) on its log for the floating-point error of the
        atoms and of the sum (the sum of ≤ 20 000 positive terms is within 1e-11 relative;
        an error e in each atom's log P and log Q moves a term's exponent by ≤ (2λ − 1)·e,
        and the atoms' logs are far more accurate than 5e-10). A constant of 1e-6 here
        made the floor 0 wherever D(2) < 1e-6 (n = 1e6, eps0 = 0.5), so the route it
        exists to skip always ran."""
        return pair_rdp_floor(self.pair(proto), orders)

    def dominated_by(self, other, proto, rounds=1, ask=None):
        # Two clone pairs with the same n, a and b and clone probabilities p ≤ p': the p'
        # pair is a post-processing of the p pair — the output tells how many of the n − 1
        # others are not clones (n − A − B), and turning each into a clone with probability
        # (p' − p)/(1 − p), reporting a fair bit, gives exactly the p' pair under either
        # dataset. By data processing every hockey-stick curve, Rényi divergence and T-fold
        # composition of the p' pair is at or below this one's (FMT20's p = e^−ε0 ≤ FMT23's
        # 2/(e^ε0 + 1) for every ε0).
        if not isinstance(other, _PairBound) or other is self:
            return None
        try:
            mine, theirs = self.pair(proto), other.pair(proto)
        except (ValueError, ArithmeticError, NotApplicableError):
            return None
        if (theirs.n == mine.n and theirs.a == mine.a and theirs.b == mine.b
                and theirs.p >= mine.p and (theirs.p, other.id) != (mine.p, self.id)):
            return (f"not computed: {other.id}'s clone pair (clone probability "
                    f"{theirs.p:.6g}) is a post-processing of this bound's (p = {mine.p:.6g}, "
                    f"same n and victim), so this bound's exact value is at least the one "
                    f"{other.id} certifies")
        return None

    def dominance_rank(self, proto):
        try:
            return -self.pair(proto).p
        except (ValueError, ArithmeticError, NotApplicableError):
            return 0.0

    def pld_tail_floor(self, proto):
        # The tail those atoms charge, at most (pairs.clone.pair_pld_tail_floor): milliseconds.
        return self.pair(proto).pld_tail_floor()

    def order_routes(self, routes):
        # PLD first, KOV15 last: their floors then meet PLD's value (_common.py).
        return pld_first_kov15_last(routes)

    def route_cost_reason(self, proto, rounds, route):
        # One RDP order of the exact pair costs ~0.1 s at n = 1e6 and grows like sqrt(n);
        # a KOV15 split search needs ~30 single-round roots of ~40 pair sums each.
        # Over T > 1 rounds PLD runs first (order_routes) and the RDP and KOV15 routes only
        # where their floors can beat it; above PAIR_RDP_MAX_N only PLD runs.
        if rounds == 1 and route == "rdp":
            return "one round: the exact pair delta(eps) is below any RDP conversion of it"
        # (PLD is kept at one round for n above PAIR_EXACT_MAX_N, where the exact root is
        # too costly.)
        if rounds == 1 and route == "pld" and proto.n <= PAIR_EXACT_MAX_N:
            return "one round: the exact pair delta(eps) is below any PLD discretisation of it"
        if route == "none" and proto.n > PAIR_EXACT_MAX_N:
            return (f"not evaluated for n > {PAIR_EXACT_MAX_N:.0e}: the root search needs "
                    "~40 exact pair sums of seconds each (the PLD route answers)")
        if route == "rdp" and proto.n > PAIR_RDP_MAX_N:
            return (f"not evaluated for n > {PAIR_RDP_MAX_N:.0e}: one order of the exact pair "
                    "costs seconds there (the PLD route and the other bounds answer)")
        if route == "kov15" and proto.n > PAIR_EXACT_MAX_N:
            return (f"not evaluated for n > {PAIR_EXACT_MAX_N:.0e}: its split search needs "
                    "~1000 exact pair sums (the PLD route and the other bounds answer)")
        return super().route_cost_reason(proto, rounds, route)

    def proven_floor(self, proto, ask, rounds, beat):
        # One round below PAIR_EXACT_MAX_N: the exact root runs (cheap); above it the PLD
        # route answers at ~0.3-1 s, so the floor (~0.05 s) is worth asking first.
        one = rounds == 1 and proto.n > PAIR_EXACT_MAX_N
        if rounds > 1 and self._be_floor_beats(proto, ask, rounds, beat):
            return (f"the {rounds}-round {ask.solves} of this bound's clone pair itself is "
                    f"at least {beat:.6g} (a certified lower bound on it by the Berry–Esseen "
                    "inequality for the loss of a pair the clone pair dominates), and every "
                    "route is at or above that"), True
        if (one or 1 < rounds <= FLOOR_MAX_ROUNDS) and self._floor_beats(proto, ask, rounds,
                                                                          beat):
            return (f"the {rounds}-round {ask.solves} of this bound's clone pair itself is "
                    f"at least {beat:.6g} (a certified lower bound on it, from a pair the "
                    "clone pair dominates), and every route is at or above that"), True
        return None

    def annotate(self, details, proto, rounds):
        if pair_users(proto) < proto.n:
            details["evaluated_at_n"] = pair_users(proto)
            details["coarse"] = (f"pair built for n' = {pair_users(proto):.0e} of the "
                                 f"{proto.n:.3g} users (valid: more users only help; the "
                                 "exact sums at this n would cost minutes)")

    def _be_floor_beats(self, proto, ask, rounds, beat) -> bool:
        """True when the Berry–Esseen floor (``numerics.berry_esseen``) on the T-fold δ of a
        pair the clone pair dominates (the screening floor pair, ``_be_moments``) shows the
        clone pair's exact T-fold value at or above ``beat``. Milliseconds once the floor
        pair is built (cached per pair); it decides where the pair's value is far above
        the best answer so far, at any number of rounds."""
        from ..numerics import berry_esseen as be
        solves_eps, x = isinstance(ask, EpsilonAt), ask.given
        try:
            m = _be_moments(self.pair(proto))
        except (ValueError, ArithmeticError, NotApplicableError):
            return False
        if m is None:
            return False
        v = be.composed_delta_floor_be(m, rounds, beat if solves_eps else x)
        return v > x if solves_eps else v >= beat

    def _floor_beats(self, proto, ask, rounds, beat) -> bool:
        """True when the clone pair's exact T-fold value is provably at or above ``beat``:
        then no route of this bound (each at or above that exact value) can beat it.

        A lower bound on the pair's δ_T(ε): a pair it dominates (``cp.pair_floor_atoms``),
        its losses rounded down (``pld_fft.floor_lattice``), composed by the tilted FFT
        with every error subtracted (``pld_fft.composed_delta_floor``). ε question: if that
        δ_T(beat) exceeds δ, the pair's ε_T(δ) is above beat. δ question: if it is at
        least beat at the asked ε. ~0.05–0.2 s; decides only what is skipped.
        """
        from ..numerics import pld_fft as pf
        solves_eps, x = isinstance(ask, EpsilonAt), ask.given
        try:
            pair = self.pair(proto)
            if solves_eps:
                # Worth trying only if the pair likely loses: its Gaussian approximation (the
                # T-fold loss as a Gaussian mechanism's with σ = 1/μ, μ² = T·Var L) is not
                # clearly below beat. (A heuristic that only saves the attempt; the floor
                # decides.) Var L from a coarser floor pair (FLOOR_SCREEN_ATOMS: within
                # 0.2 % of the full one's, 4-30x cheaper to build).
                from ..pairs.gaussian_rdp import gaussian_epsilon
                m = _floor_moments(pair)
                if m is None or m[1] <= 0.0:
                    return False
                if gaussian_epsilon(1.0 / math.sqrt(rounds * m[1]), x) < 0.8 * beat:
                    return False
        except (ValueError, ArithmeticError, NotApplicableError):
            return False
        eps = beat if solves_eps else x
        # Every floor pair and every grid step gives a certified lower bound, and most
        # attempts pass by a wide margin (the floor pair's δ_T at the value to beat is
        # 10-1e8 times δ). So the cheapest are tried first: on ε questions the screening
        # pair (its moments are at hand; ~1e4 atoms, slices merged in wider blocks), then
        # the full floor pair. Where the FFT of a step is long (many rounds), a step
        # FLOOR_COARSE times coarser (drift up to 0.4 of the sum's spread, an FFT that many
        # times shorter) comes first; the full pair's own step is always tried last, so
        # every attempt that decided before still decides. (How far below a coarse floor
        # is says little about the fine one: 4e-7 of δ against 107 δ for 4-RR(7.5) at
        # n = 2568, T = 820.)
        for screen in ((True, False) if solves_eps else (False,)):
            try:
                lp, lq = _floor_screen_pair(pair) if screen else _floor_atoms(pair)
            except (ValueError, ArithmeticError, NotApplicableError):
                return False
            mom = m if screen else pf.loss_moments(lp, lq)
            if mom is None or mom[1] <= 0.0:
                return False
            # Rounding losses down drifts the T-fold sum by up to T·d: a step of 0.05/√T
            # loss standard deviations keeps that within 0.05 of the sum's own spread,
            # unless the FFT window (±9 sd of the sum) would exceed FLOOR_FFT points.
            sd, root = math.sqrt(mom[1]), math.sqrt(rounds)
            d = max(sd * min(1.0 / 32.0, 0.05 / root), 18.0 * root * sd / FLOOR_FFT,
                    mom[2] / (pf.MAX_SUPPORT - 2))
            steps = [d]
            if pf.fft_length_estimate(mom, rounds, d) > FLOOR_COARSE_FFT:
                steps = [FLOOR_COARSE * d] if screen else [FLOOR_COARSE * d, d]
            for step in steps:
                # One direction (P‖Q) is already a lower bound on the pair's δ_T, which is
                # the larger of the two directions (clone pairs are symmetric: they are equal).
                try:
                    v = pf.composed_delta_floor(pf.floor_lattice(lp, lq, step), rounds, eps)
                except (ValueError, ArithmeticError, MemoryError):
                    continue
                if v > x if solves_eps else v >= beat:
                    return True
        return False

    def max_order(self, proto):
        # The windows grow like √(λ ε0) standard deviations; past 1e5 orders the slices
        # are coarse and the bound only gets looser (still valid).
        return cp.MAX_ORDER


#: Cost bounds of the exact pair sums (latency). The default search skips the pair's RDP
#: route above PAIR_RDP_MAX_N users (one order costs ~0.1 s at 1e6 and grows like √n), and
#: its single-round root and KOV15 split search above PAIR_EXACT_MAX_N (each needs tens to
#: a thousand exact δ(ε) sums); the PLD route (coarsened atoms, ~0.3 s at any n) answers
#: there, for one round too. Above PAIR_MAX_N the float slices lose resolution, so the
#: pair is built for PAIR_MAX_N users: a certified, coarser answer, valid because more
#: users only help (the others' reports can be simulated by the adversary, so the shuffle
#: of n reports is a post-processing of the shuffle of any n' ≤ n of them plus known
#: reports; every bound here is for fixed neighbouring datasets).
PAIR_RDP_MAX_N = 2 * 10**6
#: The pair floor (``_PairBound._floor_beats``) is tried up to this many rounds (beyond,
#: the rounding drift of a lattice that fits FLOOR_FFT points exceeds the sum's spread
#: and the floor would rarely decide anything), with FFTs of at most FLOOR_FFT points.
FLOOR_MAX_ROUNDS = 10**5
FLOOR_FFT = 1 << 21
#: Where the floor's FFT would exceed FLOOR_COARSE_FFT points, a step FLOOR_COARSE times
#: coarser is tried first (``_PairBound._floor_beats``).
FLOOR_COARSE_FFT = 1 << 16
FLOOR_COARSE = 8.0
PAIR_EXACT_MAX_N = 10**7
PAIR_MAX_N = 10**9


def pair_users(proto) -> int:
    """The number of users the exact pair is built for (≤ n; see PAIR_MAX_N)."""
    return int(min(int(proto.n), PAIR_MAX_N))


@functools.lru_cache(maxsize=8)
def _floor_atoms(pair):
    return cp.pair_floor_atoms(pair)


#: Atom budget of the floor pair whose loss variance screens floor attempts.
FLOOR_SCREEN_ATOMS = 20_000


@functools.lru_cache(maxsize=8)
def _floor_screen_pair(pair):
    """(log P, log Q) of the coarser floor pair (FLOOR_SCREEN_ATOMS atoms)."""
    return cp.pair_floor_atoms(pair, FLOOR_SCREEN_ATOMS)


@functools.lru_cache(maxsize=8)
def _floor_screen_atoms(pair):
    """(log P, log P − log Q) of the coarser floor pair (FLOOR_SCREEN_ATOMS atoms)."""
    lp, lq = _floor_screen_pair(pair)
    return lp, lp - lq


def pair_rdp_floor(pair, orders):
    """Certified lower bounds on a clone pair's exact D(λ) at real orders λ ≥ 2 (see
    ``_PairBound.rdp_floor``): the Rényi sum of its floor pair, less 1e-9·(1 + λ) on its log."""
    lp, ell = _floor_screen_atoms(pair)
    lam = np.asarray(orders, dtype=float)
    out = np.empty(lam.shape)
    # A few orders at a time, in one buffer of at most 2^18 floats: lp + x·ℓ, its row
    # maxima m and Σ e^{t − m} (each row summed on its own, so the same floats as the
    # expressions written out for 32 orders at once). The floor pair has up to ~1.3e5
    # atoms (n = 1e9): 32 rows made temporaries of 34 MB, each mapped and faulted in anew.
    rows = max(1, min(32, (1 << 18) // max(lp.size, 1)))
    buf = np.empty((min(rows, lam.size), lp.size))
    for i in range(0, lam.size, rows):
        x = lam[i:i + rows, None] - 1.0
        t = np.multiply(x, ell[None, :], out=buf[:x.shape[0]])
        t += lp[None, :]
        m = np.max(t, axis=1)
        t -= m[:, None]
        np.exp(t, out=t)
        log_sum = m + np.log(np.sum(t, axis=1))
        out[i:i + rows] = (log_sum - 1e-9 * (1.0 + lam[i:i + rows])) / x[:, 0]
    return out


@functools.lru_cache(maxsize=8)
def _floor_moments(pair):
    from ..numerics import pld_fft as pf
    lp, ell = _floor_screen_atoms(pair)
    return pf.loss_moments(lp, lp - ell)


@functools.lru_cache(maxsize=8)
def _be_moments(pair):
    """Certified loss moments (``berry_esseen.LossMoments``) of a pair the clone pair
    dominates: the screening floor pair's atoms (``_floor_screen_atoms``), losses lowered
    by their floating-point margin (``pld_fft.floor_losses``, as the FFT floor does), Q as
    given, and log P = log Q + loss lowered by the rounding of that sum — each atom's P and
    Q then shrink by the same factor, so every term of the T-fold hockey-stick sum only
    shrinks."""
    from ..numerics import berry_esseen as be
    from ..numerics import pld_fft as pf
    lp, ell = _floor_screen_atoms(pair)
    lq = lp - ell
    loss = pf.floor_losses(lp, lq)
    s = lq + loss
    log_p = s - 2.0 * 2.0 ** -53 * (np.abs(lq) + np.abs(loss) + np.abs(s))
    return be.loss_moments_bounds(log_p, loss)


@functools.lru_cache(maxsize=256)
def _fmt20(eps0, n):
    return cp.fmt20_pair(eps0, n)


@functools.lru_cache(maxsize=256)
def _fmt23(eps0, n):
    return cp.fmt23_pair(eps0, n)


@register
class FMT20(_PairBound):
    id = "fmt20"
    costly = True
    scope = "ldp"
    title = "FMT20 clone pair, exact numerics"
    reference = FMT20_REF + ", Thm 3.1 / Lemma 3.3"

    def check(self, proto):
        return _clone_check(proto)

    def valid_for(self, proto):
        return "any eps0-LDP randomizer (adaptive sequences included)"

    def pair(self, proto):
        return _fmt20(float(proto.eps0), pair_users(proto))


@register
class FMT23(_PairBound):
    id = "fmt23"
    costly = True
    scope = "class-S"
    title = "FMT23 stronger clone pair, exact numerics (restricted class, errata)"
    reference = FMT23_REF + ", Thm 3.1 as restricted by the errata"

    def check(self, proto):
        return _clone_check(proto) or _stronger_reason(proto)

    def valid_for(self, proto):
        return ("randomizers in class S(eps0) (k-RR, 2-input randomizers, matrices passing "
                f"the finite check): here {proto.mechanism.describe()}")

    def pair(self, proto):
        return _fmt23(float(proto.eps0), pair_users(proto))


@register
class CloneSpecific(_PairBound):
    id = "clone-specific"
    costly = True
    scope = "this-randomizer"
    title = "Clone pair with this randomizer's own clone probability p_R"
    reference = FMT23_REF + ", Lemma 7.3 idea"

    def check(self, proto):
        r = _clone_check(proto)
        if r:
            return r
        if isinstance(proto.mechanism, ENCODERS):
            return ("its clone probability p_R needs the full output matrix, which has up "
                    "to 2^d columns for this encoder; use blanket (exact for this "
                    "randomizer) or fmt20, or pass Randomizer(mechanism.matrix()) for small d")
        if not isinstance(proto.mechanism, Randomizer):
            return ("it needs the randomizer's matrix (Randomizer(matrix)); for "
                    "RandomizedResponse use fmt23, for any eps0-LDP randomizer fmt20")
        return None

    def valid_for(self, proto):
        return f"this one randomizer only ({proto.mechanism.describe()})"

    def pair(self, proto):
        return cp.specific_pair(proto.mechanism, pair_users(proto))


# ----------------------------------------------------------------------------------------
# Closed-form upper bounds
# ----------------------------------------------------------------------------------------
class _ClosedBound(Bound):
    kind = "upper"
    cheap_epsilon_one = True                  # a closed form (the KOV15 composer's floor)

    def closed(self, eps0, n, delta):
        raise NotImplementedError

    def epsilon_one(self, proto, delta):
        # Bound.epsilon adds the floating-point slack (round_up) to upper outcomes.
        return self.closed(proto.eps0, proto.n, float(delta))

    def delta_one(self, proto, eps):
        return _closed_delta(lambda d: float(round_up(self.closed(proto.eps0, proto.n, d))),
                             float(eps))


@register
class FMT20Closed(_ClosedBound):
    id = "fmt20-closed"
    after_exact = True
    scope = "ldp"
    title = "FMT20 closed form (authors' code form)"
    reference = FMT20_REF + ", Thm 3.1 closed form as in the authors' public code"

    def check(self, proto):
        return _clone_check(proto)

    def valid_for(self, proto):
        return ("any eps0-LDP randomizer, when eps0 <= log(n/(16 log(4/delta)))")

    def closed(self, eps0, n, delta):
        return fmt20_closed_epsilon(eps0, n, delta)


@register
class FMT23Closed(_ClosedBound):
    id = "fmt23-closed"
    after_exact = True
    scope = "class-S"
    default = False                           # [R]: reconstructed, not confirmed
    title = "FMT23 Theorem 3.2 closed form [R]"
    reference = FMT23_REF + ", Thm 3.2 (reconstructed [R])"

    def check(self, proto):
        return _clone_check(proto) or _stronger_reason(proto)

    def valid_for(self, proto):
        return ("class S(eps0) only, when n > 8 (e^eps0 + 1) log(4/delta); reconstructed "
                "formula [R], never the default answer")

    def closed(self, eps0, n, delta):
        return fmt23_closed_epsilon(eps0, n, delta)


# ----------------------------------------------------------------------------------------
# k-RR lower bound
# ----------------------------------------------------------------------------------------
#: The exact "others at the victim's first value" instance costs O(n²): only for small n.
FIRST_VALUE_MAX_N = 400


@functools.lru_cache(maxsize=64)
def _first_value_logpmfs(eps0: float, k: int, n: int):
    """log-laws of (N0, N1) for k-RR on X0 = (0, 0, …, 0), X1 = (1, 0, …, 0).

    The counts of the other k − 2 values are exchangeable and identically distributed
    under X0 and X1 given N0 + N1, so (N0, N1) is sufficient: its hockey-stick divergence is
    the instance's exact δ(ε).
    """
    d = math.exp(eps0) + k - 1
    l_hi, l_lo = eps0 - math.log(d), -math.log(d)
    l_rest = math.log(k - 2) - math.log(d) if k > 2 else -math.inf
    m = n - 1
    i = np.arange(0, n + 1)[:, None].astype(float)
    j = np.arange(0, n + 1)[None, :].astype(float)

    def logM(a, b):
        # Trinomial(m; e/D, 1/D, (k−2)/D) at (a, b, m − a − b); −inf outside.
        r = m - a - b
        ok = (a >= 0) & (b >= 0) & (r >= 0)
        aa, bb, rr = np.where(ok, a, 0), np.where(ok, b, 0), np.where(ok, r, 0)
        with np.errstate(invalid="ignore"):
            rest = np.where(rr > 0, rr * l_rest, 0.0)
            val = (special.gammaln(m + 1) - special.gammaln(aa + 1) - special.gammaln(bb + 1)
                   - special.gammaln(rr + 1) + aa * l_hi + bb * l_lo + rest)
        return np.where(ok, val, -np.inf)

    u = logM(i - 1, j)       # victim reported 0
    v = logM(i, j - 1)       # victim reported 1
    w = logM(i, j)           # victim reported another value
    with np.errstate(invalid="ignore"):
        lp = special.logsumexp(np.stack([u + l_hi, v + l_lo, w + l_rest]), axis=0)
        lq = special.logsumexp(np.stack([u + l_lo, v + l_hi, w + l_rest]), axis=0)
    return lp.ravel(), lq.ravel()


def krr_first_value_delta(eps0: float, k: int, n: int, eps: float) -> float:
    """Exact δ(ε) (max of both directions) of k-RR on X0 = (0,…,0), X1 = (1,0,…,0).

    Scaled down by 1e-9 relative: log-gamma differences lose ~1e-13; the result must stay
    a lower bound.
    """
    lp, lq = _first_value_logpmfs(float(eps0), int(k), int(n))
    return max(hockey_stick(lp, lq, eps), hockey_stick(lq, lp, eps)) * (1.0 - 1e-9)


@register
class KrrLower(Bound):
    id = "krr-lower"
    costly = True
    scope = "instance"
    kind = "lower"
    title = "k-RR lower bound: what k-ary randomized response provably leaks"
    reference = (FMT23_REF + ", Sec. 5 (2RR/3RR lower bounds, Fig. 1)")

    def check(self, proto):
        # A lower bound for all users reporting is not one for a sampled round.
        r = _clone_check(proto) or no_sampling_reason(proto)
        if r:
            return r
        if not isinstance(proto.mechanism, RandomizedResponse):
            return "its instances are k-ary randomized response: pass RandomizedResponse(eps0, k)"
        return None

    def valid_for(self, proto):
        k = proto.mechanism.k
        if k == 2:
            return "binary RR on X0 = (0,1,...,1), X1 = (1,...,1): this much leaks (lower bound)"
        return (f"{k}-RR on X0 = (0,2,...,2) vs X1 = (1,2,...,2) (counts of 0s and 1s)"
                + (" and on (0,0,...,0) vs (1,0,...,0)" if proto.n <= FIRST_VALUE_MAX_N else "")
                + ": this much leaks (lower bound)")

    def eps_hi(self, proto):
        return float(proto.eps0)

    def delta_one(self, proto, eps):
        from .girgis import lower_delta
        e0, k, n = float(proto.eps0), proto.mechanism.k, int(proto.n)
        eps = float(eps)
        if e0 == 0.0 or eps >= e0:
            return 0.0
        if k == 2:
            # The 2RR instance is Girgis' binary instance with the labels swapped.
            return lower_delta(e0, n, eps)
        val = cp.pair_delta_lower(cp.krr_marginal_pair(e0, k, n), eps)
        if n <= FIRST_VALUE_MAX_N:
            val = max(val, krr_first_value_delta(e0, k, n, eps))
        return val

    def epsilon_one(self, proto, delta):
        """Largest certified ε with δ(ε) > δ: no mechanism containing the instance does better."""
        hi = float(proto.eps0)
        f = lambda e: self.delta_one(proto, e)  # noqa: E731
        if hi == 0.0 or f(0.0) <= delta:
            return 0.0
        lo, _ = cp.threshold_bracket(f, 0.0, hi, float(delta), 1e-11)
        return lo

    # ----- T rounds: the instance's pair composed with itself (optimistic PLD, base) ----
    pld_is_instance = True

    def pld_atoms(self, proto):
        """(log P, log Q, 0) of the instance's (post-processed) output law, windowed.

        k = 2: the number of zeros on X0 = (0,1,…,1) vs X1 = (1,…,1); k ≥ 3: the k-RR
        marginal pair (counts of 0s and 1s on X0 = (0,2,…,2) vs X1 = (1,2,…,2)).
        """
        e0, k, n = float(proto.eps0), proto.mechanism.k, int(proto.n)
        if k == 2:
            from .girgis import _instance_cached
            _, lp0, lp1 = _instance_cached(e0, n)
            return np.asarray(lp0), np.asarray(lp1), 0.0
        try:
            return (*cp.pair_lower_atoms(cp.krr_marginal_pair(e0, k, n)), 0.0)
        except ValueError as exc:
            raise NotApplicableError(f"krr-lower over several rounds: {exc} (its exact "
                                     "composition is offered up to 3e6 atoms)") from None
