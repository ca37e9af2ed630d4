r"""``trimmed-clone``: a valid amplified bound for the shuffle Gaussian.

Lemma [D]: if R is (ε0, δ0)-LDP, c = 1 − n·δ0 > 0 and ε0' = ε0 − log c, the generic clone
pair (clones.md §1) with p = e^{−ε0}·c, a = e^{ε0'}/(1 + e^{ε0'}), b = 1 − a gives
δ(ε) ≤ H_{e^ε}(P‖Q) + n·δ0 for one round and δ_T(ε) ≤ H(P^{⊗T}‖Q^{⊗T}) + 1 − c^T for T
adaptive rounds. It needs only the randomizer's (ε0, δ0) curve — the Gaussian's is the
exact analytic one (Balle & Wang 2018) — so it holds in any dimension.

* one round: smallest ε with H_pair(ε) ≤ δ − n·δ0, minimised over ε0;
* T rounds: the pair's RDP × T converted at δ − (1 − c^T), minimised over ε0; and the
  pair's PLD (``pairs.clone.pair_pld_atoms``) composed T times at δ − (1 − c^T), at the ε0
  the RDP search chose. (ε, δ) points are never composed.

Any ε0 gives a valid bound, so the ε0 search only needs to be good, not exact.
Sampling: a sampled round is a post-processing of the round with all n users reporting,
so the bound at n holds for sampled protocols too; ``trimmed-clone-sampled`` (bounds/
sampled.py) adds the subsampling gain.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import gaussian_rdp as G
from .. import composition as _comp
from .. import conversions as _rdp
from ..pairs.clone import pair_delta, pair_epsilon, pair_pld_atoms, pair_rdp
from ..pairs.trimmed import trimmed_pair
from ..errors import NotApplicableError
from ..protocols import CheckIn
from ..numerics import bisect, golden, round_up
from ..views import EpsilonAt
from .base import Bound, Outcome, register
from ._common import eps0_range, gaussian_reason, note_users

__all__ = ["trimmed_epsilon_one", "trimmed_epsilon_rounds"]


def _golden(f, lo, hi, iters=18):
    """Golden-section minimisation of a (roughly unimodal) f; returns (f_min, x)."""
    r = golden(f, lo, hi, max_iter=iters)
    return r.fx, r.x






def trimmed_epsilon_one(n: int, sigma: float, delta: float) -> tuple[float, dict]:
    def f(e0):
        pair, c = trimmed_pair(n, sigma, e0)
        rest = delta - n * G.gaussian_delta(sigma, e0)
        if pair is None or rest <= 0:
            return math.inf
        return pair_epsilon(pair, rest)

    lo, hi = eps0_range(n, sigma, delta)
    val, e0 = _golden(f, lo, hi, iters=10)
    return val, {"eps0": e0, "delta0": G.gaussian_delta(sigma, e0)}


#: Point budget of the pair's RDP sums while searching ε0 (any ε0 is valid; the chosen
#: one is evaluated with the full budget). A smaller budget merges slices into blocks
#: charged at their first slice: a valid, slightly looser curve, 8× fewer points.
_SEARCH_POINTS = 500_000


@functools.lru_cache(maxsize=32)
def trimmed_epsilon_rounds(n: int, sigma: float, delta: float, rounds: int) -> tuple[float, dict]:
    def f(e0, budget=_SEARCH_POINTS):
        pair, c = trimmed_pair(n, sigma, e0)
        if pair is None:
            return math.inf
        charge = -math.expm1(rounds * math.log(c))
        rest = delta - charge * (1 + 1e-12)
        if rest <= 0:
            return math.inf
        conv = _rdp.search_epsilon(lambda o: pair_rdp(pair, o, budget=budget), rest, rounds,
                                   max_order=4096, coarse="sparse")
        return conv.value

    lo, hi = eps0_range(n * rounds, sigma, delta)
    _, e0 = _golden(f, lo, hi, iters=8)
    val = f(e0, None)
    return val, {"eps0": e0, "delta0": G.gaussian_delta(sigma, e0)}


def central_floor_beats(m: int, sigma: float, rounds: int, ask, beat: float) -> bool:
    """True when any valid bound for ``Shuffle(Gaussian(sigma), m)`` over ``rounds`` rounds
    (every user reporting) is provably above ``beat`` — so trimmed-clone, whose pair is
    built for m users, cannot beat it, whatever its ε0.

    The floor: the sum of the m shuffled reports is a post-processing of them, and it is
    the Gaussian mechanism with sensitivity 1 (neighbouring inputs at l2 distance 1) and
    noise σ√m; T non-adaptive rounds of it are one Gaussian mechanism with σ√m/√T. Its
    exact δ(ε) (Balle & Wang 2018, Thm 8) is a lower bound on the protocol's, hence on
    every valid upper bound's. ε question: δ_G(beat) > δ means ε_T(δ) > beat.
    δ question: δ_G(ε) ≥ beat. The margin 1e-6 covers log_ndtr's rounding and the
    cancellation in δ_G (≤ 1e-9 relative, see ``gaussian_delta``).
    """
    s = sigma * math.sqrt(m) / math.sqrt(rounds)
    solves_eps = isinstance(ask, EpsilonAt)
    ld = G.gaussian_log_delta(s, beat if solves_eps else ask.epsilon)
    if not math.isfinite(ld):
        return False
    low = math.exp(ld) * (1.0 - 1e-6)
    return low > ask.delta if solves_eps else low >= beat




def _finite_or_refuse(v: float, sigma: float) -> None:
    if not math.isfinite(v):
        raise NotApplicableError(
            f"trimmed-clone found no eps0 at which its clone pair is representable in floating "
            f"point for sigma = {sigma!r} (e^-eps0 underflows where n*delta0 is small enough); "
            "gaussian-unamplified still applies")


#: Users the trimmed pair is built for at most (one round / several rounds); see ``users``.
TRIMMED_MAX_N_ONE = 10**7
TRIMMED_MAX_N_ROUNDS = 10**6
#: Check-in rates up to which trimmed-clone is not computed beside trimmed-clone-sampled
#: (``TrimmedClone.dominated_by``).
DOMINATED_MAX_RATE = 0.5
DOMINATED_MIN_USERS = 10**4


@register
class TrimmedClone(Bound):
    id = "trimmed-clone"
    scope = "l2"
    kind = "upper"
    title = "Trimmed-victim clone bound for (eps0, delta0)-LDP randomizers (Gaussian curve)"
    reference = ("docs/trimmed-clone.md (derived in this library; FMT20 clone pair, "
                 "Feldman–McMillan–Talwar arXiv:2012.12803, with the victim trimmed)")

    def check(self, proto):
        r = gaussian_reason(proto)
        if r:
            return r
        if proto.n < 2:
            return "needs n >= 2 users (with n = 1 there is nothing to hide among)"
        return None

    def valid_for(self, proto):
        return "any inputs of l2 diameter <= 1, any dimension (only the Gaussian's (eps0, delta0) curve is used)"


    def routes(self, rounds):
        if rounds == 1:
            return ["none"]
        return ["rdp", "pld"]

    @staticmethod
    def users(proto, rounds) -> int:
        """Users the pair is built for: ≤ n (more users only help: the others' reports can
        be simulated), capped because each ε0 step costs a pair RDP search (T > 1) or a
        pair root (T = 1) whose cost grows like sqrt(n)."""
        cap = TRIMMED_MAX_N_ONE if rounds == 1 else TRIMMED_MAX_N_ROUNDS
        return int(min(int(proto.n), cap))

    def dominated_by(self, other, proto, rounds=1):
        # With check-in at rate γ, for every ε0 the sampled pair (bounds/sampled.py) at the
        # same n is a post-processing of this one: thin every user of this pair's output
        # (each of the counts a, b, ℓ kept binomially at rate γ, the rest ⊥) and, with
        # probability 1 − c/c_γ, output instead a draw of the victim-absent law (the same
        # under both datasets). Its victim is then ⊥ with probability (1 − γ)/c_γ and of
        # type 0/1 with γcα'/c_γ, γc(1 − α')/c_γ — the sampled pair exactly. So its T-fold
        # hockey-stick curve and Rényi divergences are at or below this pair's, and its
        # charge 1 − c_γ^T is below 1 − c^T: at every ε0, hence at the best ε0, the sampled
        # bound's exact value is at or below this one's. Claimed only at γ ≤ 1/2 and from
        # 1e4 users, where the computed values are far apart too (measured: at most 0.87×
        # over σ ∈ [0.3, 10], T ≤ 3000); near γ = 1 the pairs coincide, and at n = 10,
        # σ = 0.3, ε ≈ 900 the sampled route's numerics were 10 % above this bound's value,
        # so there both are computed (cheap at small n) and the smaller one is the answer.
        if getattr(other, "id", None) != "trimmed-clone-sampled":
            return None
        samp = proto.sampling
        if not (isinstance(samp, CheckIn) and samp.rate <= DOMINATED_MAX_RATE):
            return None
        m = self.users(proto, rounds)
        if other.users(proto) != m or m < DOMINATED_MIN_USERS:
            return None
        return (f"not computed: for every eps0, trimmed-clone-sampled's check-in pair is a "
                f"post-processing of this bound's pair at the same n = {m:.6g} (thin every "
                f"user at rate {samp.rate:.6g}), and its charge is smaller, so this bound's "
                "exact value is at least the one trimmed-clone-sampled certifies")

    def proven_floor(self, proto, ask, rounds, beat):
        m = self.users(proto, rounds)
        if central_floor_beats(m, float(proto.mechanism.sigma), rounds, ask, beat):
            return (f"its value is an upper bound for {m:.6g} users all reporting, which is at "
                    f"least the {rounds}-round {ask.solves} of the sum of their reports (a "
                    f"Gaussian mechanism with noise sigma*sqrt({m:.6g})), and that is above "
                    f"{beat:.6g}"), False
        return None

    def annotate(self, details, proto, rounds):
        note_users(details, self.users(proto, rounds), proto.n)

    def answer(self, proto, ask, rounds, route, *, beat=None):
        if isinstance(ask, EpsilonAt):
            return self._epsilon(proto, ask.delta, rounds, route)
        return self._delta(proto, ask.epsilon, rounds, route)

    def _epsilon(self, proto, delta, rounds, route):
        s = proto.mechanism.sigma
        if rounds == 1:
            v, det = trimmed_epsilon_one(self.users(proto, rounds), s, delta)
            _finite_or_refuse(v, s)
            return Outcome(float(round_up(v)), "upper", "none", det)
        v, det = trimmed_epsilon_rounds(self.users(proto, rounds), float(s), float(delta),
                                        int(rounds))
        if route == "pld":
            return self._pld_epsilon(proto, delta, rounds, det["eps0"])
        _finite_or_refuse(v, s)
        return Outcome(float(round_up(v)), "upper", "rdp", dict(det, note="pair RDP x T, charge 1 - c^T"))

    def _pld_epsilon(self, proto, delta, rounds, e0):
        pair, c = trimmed_pair(self.users(proto, rounds), proto.mechanism.sigma, e0)
        charge = -math.expm1(rounds * math.log(c))
        rest = delta - charge * (1 + 1e-12)
        det = {"eps0": e0, "delta0": G.gaussian_delta(proto.mechanism.sigma, e0),
               "note": "pair PLD composed T times (eps0 from the RDP search), charge 1 - c^T"}
        if rest <= 0:
            return Outcome(math.inf, "upper", "pld", det)
        logp, logq, tail = pair_pld_atoms(pair)
        val, d = _comp.pld_epsilon(logp, logq, rounds, rest, extra_delta=tail, symmetric=True)
        det.update(d)
        return Outcome(float(round_up(val)), "upper", "pld", det)

    def _delta(self, proto, eps, rounds, route):
        n, s = self.users(proto, rounds), float(proto.mechanism.sigma)
        val, e0 = _trimmed_delta_rdp(n, s, float(eps), int(rounds))
        if route == "pld":
            pair, c = trimmed_pair(n, s, e0)
            logp, logq, tail = pair_pld_atoms(pair)
            v, d = _comp.pld_delta(logp, logq, rounds, eps, extra_delta=tail, symmetric=True)
            val = min(1.0, v + (-math.expm1(rounds * math.log(c))))
            return Outcome(float(round_up(val)), "upper", "pld",
                           dict(d, eps0=e0, delta0=G.gaussian_delta(s, e0)))
        return Outcome(float(round_up(val)), "upper", "none" if rounds == 1 else "rdp",
                       {"eps0": e0, "delta0": G.gaussian_delta(s, e0)})


@functools.lru_cache(maxsize=32)
def _trimmed_delta_rdp(n, s, eps, rounds):
    def f(e0):
        pair, c = trimmed_pair(n, s, e0)
        if pair is None:
            return 1.0
        if rounds == 1:
            return min(1.0, pair_delta(pair, eps) + n * G.gaussian_delta(s, e0))
        conv = _rdp.search_delta(lambda o: pair_rdp(pair, o), eps, rounds, max_order=4096,
                                 coarse="sparse")
        return min(1.0, conv.value + (-math.expm1(rounds * math.log(c))))

    lo, hi = 0.0, G.gaussian_eps_hi(s, 1e-30 / (n * rounds))
    return _golden(f, lo, hi, iters=12 if rounds == 1 else 8)
