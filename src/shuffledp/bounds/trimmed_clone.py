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
from dataclasses import replace

import numpy as np

from ..pairs import gaussian_rdp as G
from ..compose import conversions as _rdp
from ..compose.rdp import floor_proves_above
from ..pairs.adapter import views_of
from ..pairs.clone import ClonePair, fmt20_pair, pair_rdp
from ..pairs.clone.hockey import pair_delta_floor
from ..pairs.clone.renyi import pair_rdp_huge, pair_rdp_lazy
from ..pairs.law import Bias
from ..pairs.trimmed import TrimmedPair, trimmed_pair, trimming_charge
from ..core.protocols import CheckIn
from ..numerics import golden
from ..numerics.binomial import binom_logpmf
from ..core.views import EpsilonAt, FamilyView, RdpView
from .base import Bound, register
from .clones import pair_rdp_floor
from ._common import (TrimmedFamilyRoutes, eps0_range, gaussian_reason, golden_pruned,
                      note_users, pld_first_kov15_last, probe_member)

__all__ = ["trimmed_family"]

#: Largest RDP order of the trimmed pair's order search (its curve is a clone pair's).
_MAX_ORDER = 4096

#: Point budget of the pair's RDP sums while searching ε0 (any ε0 is valid; the chosen
#: one is evaluated with the full budget). A smaller budget merges slices into blocks
#: charged at their first slice: a valid, slightly looser curve, 8× fewer points.
_SEARCH_POINTS = 500_000


def _member(n: int, sigma: float, e0: float):
    """The views of one round of the trimmed pair at ε0 (None where no pair exists):
    its curves are the clone pair's, its charge n·δ0 (one round) or 1 − c^T. Its RDP view
    carries the clone pair's certified floor (``clones.pair_rdp_floor``: with it the RDP
    composer proves, before the pair's RDP curve is computed, when no order can beat the
    PLD route's value; T > 1: PLD runs first, ``TrimmedClone.order_routes``)."""
    tp = TrimmedPair.at(n, sigma, e0)
    if tp is None:
        return None
    return replace(views_of(tp, "upper"),
                   rdp=RdpView(tp.rdp, _MAX_ORDER, "sparse",
                               functools.partial(pair_rdp_floor, tp.clone)))


def _left(member, delta: float, rounds: int) -> float:
    # One round: the lemma's δ − n·δ0 as it is; T rounds: δ − (1 − c^T), the charge
    # enlarged by 1e-12 relative (its expm1/log rounding).
    if rounds == 1:
        return delta - member.charge(1)
    return delta - member.charge(rounds) * (1 + 1e-12)


def _one_round_loses(n: int, sigma: float, delta: float, e0: float, beat: float) -> bool:
    """True when the one-round value at ε0 (the pair's certified ε at δ − n·δ0) is proven
    above ``beat``: a certified lower bound on the pair's δ at ``beat`` (``pair_delta_floor``,
    one sum over the window) above what the charge leaves. δ(ε) is non-increasing, so every
    ε with δ(ε) ≤ δ − n·δ0 — in particular the certified one the root search returns — is
    then > beat. False when it cannot tell (the ε0 search then evaluates the point)."""
    tp = TrimmedPair.at(n, sigma, e0)
    if tp is None or not (beat >= 0.0):
        return False
    left = _left(tp, delta, 1)
    return left > 0 and pair_delta_floor(tp.clone, beat) > left


def _search_lazy(pair):
    """The ε0 search's ``lazy`` hooks for ``search_epsilon`` (same Conversion, less work).

    The orders past the linear regime ((λ − 1) log(a/b) > 600: a log-space sum over every
    point of the window, ~0.05 s each block at n = 1e6) are often evaluated only to show the
    search has passed its optimum. Their floor is the clone pair's certified lower bound on
    its exact D(λ) (``clones.pair_rdp_floor``, a dominated pair of 20 000 atoms; 0.1 % below
    the computed value near the optimum at n = 1e6), and ``pair_rdp`` is at least the exact
    D(λ); where the floor's ε is above the best value found, ``pair_rdp_lazy`` leaves them
    out (built only if the search asks for them after all)."""
    def floor(orders):
        lam = np.asarray(orders, dtype=float)
        out = np.full(lam.shape, np.nan)
        big = pair_rdp_huge(pair, lam)
        if big.any():
            out[big] = pair_rdp_floor(pair, lam[big])
        return out

    return floor, lambda o, defer: pair_rdp_lazy(pair, o, defer, budget=_SEARCH_POINTS)


def _rounds_rest(n: int, sigma: float, delta: float, rounds: int, e0: float):
    """(the trimmed pair at ε0, the δ its charge 1 − c^T leaves), or None when either is
    missing (the ε0 search's value is then ∞)."""
    pair, c = trimmed_pair(n, sigma, e0)
    if pair is None:
        return None
    charge = -math.expm1(rounds * math.log(c))
    rest = delta - charge * (1 + 1e-12)
    if rest <= 0:
        return None
    return pair, rest


#: Comparisons of ``_rounds_eps0``'s golden search at which a losing point is always tried
#: on the floor (``_rounds_loses``): the first only. The two starting points are 0.236 of
#: the bracket apart and the worse one is typically ~10 % above the other.
_PRUNE_TRIES = 1
#: Later comparisons are tried only where the parabola through the three evaluated points
#: nearest the new one puts it more than this fraction above the kept value
#: (``_predicted_gap``). Most later points win their comparison (the bracket closes in on
#: the optimum from one side), where no floor can help and a try costs the floor pair's
#: sums (5–7 ms at later comparisons); where the search turns, the losing point is
#: 0.3–0.9 % above the kept one and the floor, tight near the optimum, proves it: 7 proofs
#: in 7 tries on the 15 T-round trimmed-clone questions of the latency set (session 20).
#: The prediction only decides whether to try: the proof is the floor's, and the search
#: returns the same ε0.
_PRUNE_PREDICTED = 1e-3


def _predicted_gap(known, x: float, beat: float):
    """f(x)/beat − 1 by the parabola through the three finite (x, f(x)) of ``known``
    nearest x (Lagrange's form), or None where there are fewer or it is not finite."""
    pts = sorted((abs(kx - x), kx, kv) for kx, kv in known if math.isfinite(kv))[:3]
    if len(pts) < 3 or not (math.isfinite(beat) and beat > 0.0):
        return None
    (_, x0, y0), (_, x1, y1), (_, x2, y2) = pts
    if x0 == x1 or x0 == x2 or x1 == x2:
        return None
    p = (y0 * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2))
         + y1 * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2))
         + y2 * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1)))
    g = p / beat - 1.0
    return g if math.isfinite(g) else None


def _rounds_loses(n: int, sigma: float, delta: float, rounds: int, e0: float,
                  beat: float) -> bool:
    """True when the ε0 search's value at ε0 (``_rounds_eps0``'s f) is proven above
    ``beat``: a certified floor on the converted ε of every real order in [2, _MAX_ORDER]
    (``compose.rdp.floor_proves_above`` on the clone pair's Rényi floor,
    ``clones.pair_rdp_floor``) above it. The search's value is the converted ε at an
    integer order of ``pair_rdp`` (≥ the exact D(λ)) or at a real order on the chord of
    (λ − 1)·``pair_rdp`` (≥ the exact (λ − 1)D(λ), a convex function of λ), never an order
    outside [2, _MAX_ORDER], so it is at least that floor. False when it cannot tell."""
    got = _rounds_rest(n, sigma, delta, rounds, e0)
    if got is None or not (math.isfinite(beat) and beat > 0.0):
        return False
    pair, rest = got
    fl = floor_proves_above(functools.partial(pair_rdp_floor, pair), rounds, rest,
                            float(_MAX_ORDER), beat)
    return fl is not None and fl > beat


@functools.lru_cache(maxsize=32)
def _rounds_eps0(n: int, sigma: float, delta: float, rounds: int) -> float:
    """ε0 for T > 1 rounds at δ: a golden search on the pair's RDP conversion with a reduced
    point budget (a valid, slightly looser curve: the search only ranks ε0). A point proven
    to lose its comparison (``_rounds_loses``, tried at the first comparison and where
    ``_predicted_gap`` expects a loss) is not evaluated (``golden_pruned``: the same ε0, bit
    for bit, as ``golden``)."""
    def f(e0):
        got = _rounds_rest(n, sigma, delta, rounds, e0)
        if got is None:
            return math.inf
        pair, rest = got
        conv = _rdp.search_epsilon(lambda o: pair_rdp(pair, o, budget=_SEARCH_POINTS), rest,
                                   rounds, max_order=_MAX_ORDER, coarse="sparse",
                                   lazy=_search_lazy(pair))
        return conv.value

    known = []                                  # (ε0, f(ε0)) of the points evaluated
    tries = [0]

    def value(e0):
        v = f(e0)
        known.append((e0, v))
        return v

    def loses(e0, beat):
        # Whether to try the floor at all (it proves, or says nothing): always at the first
        # comparisons, later where the new point is predicted to lose by a clear margin.
        tries[0] += 1
        if tries[0] > _PRUNE_TRIES:
            g = _predicted_gap(known, e0, beat)
            if g is None or not g > _PRUNE_PREDICTED:
                return False
        return _rounds_loses(n, sigma, delta, rounds, e0, beat)

    lo, hi = eps0_range(n * rounds, sigma, delta)
    return golden_pruned(value, loses, lo, hi, max_iter=8)


#: One round: the floor (``_one_round_loses``, one lower-bound δ sum, ~1.4 ms at 10⁷
#: users) is not tried where the parabola through the three evaluated points nearest the
#: new one (``_predicted_gap``) puts it more than this fraction below the kept value: it
#: then wins its comparison, where no floor can help. Near the optimum the floor proves
#: losses of 10⁻⁵ relative, so it is tried wherever the prediction is not a clear win.
_ONE_ROUND_SKIP = 3e-3


def _one_round_eps0(n: int, sigma: float, delta: float, value) -> float:
    """One round: the ε0 of ``golden(value, *eps0_range(n, sigma, delta), max_iter=10)``
    (``value``: the exact pair's certified ε at ε0), without the root searches of points
    proven to lose their comparison (``golden_pruned``, ``_one_round_loses``): the same ε0,
    bit for bit. The prediction (``_ONE_ROUND_SKIP``) only decides where a proof is tried."""
    known = []                                  # (ε0, value) of the points evaluated

    def val(x):
        v = value(x)
        known.append((x, v))
        return v

    def loses(x, fp):
        g = _predicted_gap(known, x, fp)
        if g is not None and g < -_ONE_ROUND_SKIP:
            return False
        return _one_round_loses(n, sigma, delta, x, fp)

    lo, hi = eps0_range(n, sigma, delta)
    return golden_pruned(val, loses, lo, hi, max_iter=10)


@functools.lru_cache(maxsize=32)
def trimmed_family(n: int, sigma: float) -> FamilyView:
    """The trimmed pairs of ``Shuffle(Gaussian(sigma), n)``, one per ε0 (``FamilyView``).

    Which ε0 a composer gets: for an ε question, one round: the ε0 minimising the exact
    pair's ε (golden search, 10 steps; a point proven to lose its comparison skips its root
    search, ``golden_pruned``: the same ε0); T rounds: the ε0 minimising the pair's RDP
    conversion at a reduced point budget (``_rounds_eps0``), for every composer. For a δ
    question: the ε0 minimising the exact one-round δ (12 steps) or the RDP route's δ
    (8 steps) — the same ε0 for every composer, so the routes share one search."""
    def choose(ask, rounds, route, value):
        if isinstance(ask, EpsilonAt):
            if rounds == 1:
                return _one_round_eps0(n, sigma, float(ask.delta), lambda x: value(x, "none"))
            return _rounds_eps0(n, sigma, float(ask.delta), int(rounds))
        hi = G.gaussian_eps_hi(sigma, 1e-30 / (n * rounds))
        # (No pruning here: a δ question's point costs one δ evaluation, about what the
        # floor that would prune it costs.)
        ranker = "none" if rounds == 1 else "rdp"
        return golden(lambda x: value(x, ranker), 0.0, hi,
                      max_iter=12 if rounds == 1 else 8).x

    def probe():
        def untrimmed():
            tp = TrimmedPair(fmt20_pair(1.0, n), 1.0, n, 0.0)
            return replace(views_of(tp, "upper"), rdp=RdpView(tp.rdp, _MAX_ORDER, "sparse"))
        return probe_member(lambda x: _member(n, sigma, x), *eps0_range(n, sigma, 1e-3),
                            untrimmed)

    def details(x):
        return {"eps0": x, "delta0": G.gaussian_delta(sigma, x),
                "charge": "n*delta0 for one round, 1 - c^T for T rounds (c = 1 - n*delta0)"}

    return FamilyView(lambda x: _member(n, sigma, x), choose, probe, details, _left,
                      infinite_reason=(
                          "trimmed-clone has no finite value at the eps0 chosen: its clone "
                          f"pair is not representable in floating point there for sigma = "
                          f"{sigma!r} (e^-eps0 underflows where n*delta0 is small enough), or "
                          "the charge leaves no delta; gaussian-unamplified still applies"))


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




def _charge_at(m: int, sigma: float, rounds: int, e0: float) -> float:
    """The trimming charge at ε0 (``TrimmedPair.charge``; 1 where no pair exists)."""
    return trimming_charge(m, G.gaussian_delta(sigma, e0), rounds)


@functools.lru_cache(maxsize=64)
def infeasible_eps0(m: int, sigma: float, rounds: int, delta: float) -> float:
    """An ε0 at which the trimming charge provably exceeds δ (0.0 when none is found): the
    charge m·δ0 (one round) or 1 − (1 − m·δ0)^T decreases in ε0 (δ0 is the Gaussian's
    δ(ε0), decreasing), so every member with any δ left has ε0 above the value returned.
    The charge must exceed δ by 1e-6 relative (δ0's rounding is ≤ 1e-9 relative)."""
    def infeasible(x):
        return _charge_at(m, sigma, rounds, x) > delta * (1.0 + 1e-6)

    if not infeasible(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while infeasible(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if infeasible(mid) else (lo, mid)
    return lo


def no_clone_floor_beats(m: int, sigma: float, rounds: int, ask, beat: float) -> bool:
    """True when trimmed-clone's value is provably above ``beat`` (ε question) or at least
    ``beat`` (δ question) at every ε0, from the outputs that reveal the victim's type.

    The trimmed pair at ε0 is the clone pair for m users with clone probability
    p = e^{−ε0}·c ≤ e^{−ε0} and the victim's log-odds ε0' = ε0 − log c ≥ ε0 (``trimmed_pair``);
    each clone is a fair coin between the victim's two types, and the number c of clones,
    seen in the output, has the same law Bin(m − 1, p) under both datasets. The outcome "all
    c + 1 outputs of the victim's type 0" has P-mass α·2^{−c} and Q-mass β·2^{−c}, loss ε0'.
    Over T rounds, the outcome where it happens in every round has P-mass
    (E[2^{−C}])^T α^T = (1 − p/2)^{(m−1)T} α^T and loss T·ε0', so the T-fold hockey-stick
    divergence at ε is at least (1 − p/2)^{(m−1)T} α^T (1 − e^{ε − Tε0'}), α = 1/(1 + e^{−ε0'}).
    Every member that leaves any δ has ε0 > e = ``infeasible_eps0`` (the charge decreases
    in ε0), and all three factors are smallest at e: δ_T(ε) ≥ L(ε) = (1 − e^{−e}/2)^{(m−1)T}
    α(e)^T (1 − e^{ε − eT}). ε question: L(beat) > δ ≥ what the charge leaves means ε_T >
    beat for every route (each at or above the pair's exact ε). δ question: the member's δ
    is at least L(ε). Compared in logs with a 1e-6 margin (the rounding is ~1e-14)."""
    solves_eps = isinstance(ask, EpsilonAt)
    delta = ask.delta if solves_eps else beat
    e = infeasible_eps0(m, sigma, rounds, delta)
    if not e > 0.0:
        return False
    eps = beat if solves_eps else ask.epsilon
    if not e * rounds > eps:
        return False
    log_l = ((m - 1) * rounds * math.log1p(-0.5 * math.exp(-e)) - rounds * math.log1p(math.exp(-e))
             + math.log(-math.expm1(eps - e * rounds)))
    return log_l > math.log(delta) + 1e-6


def majority_hockey_T(h: float, rounds: int, eps: float) -> float:
    """A certified lower bound on the T-fold hockey-stick divergence at ε of the binary
    channel Bernoulli(½ + h) versus Bernoulli(½ − h) (0 < h < ½): with K ~ Bin(T, q),
    q = ½ + h, the loss of K = k is (2k − T)·L, L = log(q/(1 − q)), and
    δ_T(ε) = Σ_k Pr[K = k]·(1 − e^{ε − (2k − T)L})₊. Summed over k from the first with a
    positive term to 40 standard deviations above the mean (dropped terms are ≥ 0). q is
    rounded down from ½ + h (a channel with a smaller h is a post-processing of it: valid)
    and 1 − q is exact; each factor's exponent is raised by 1e-12 of its size (its
    rounding), the pmf is Loader's (``binom_logpmf``, ~1e-12 relative) and the sum is
    taken at 1 − 1e-6 of its value."""
    q = 0.5 + h * (1.0 - 1e-9)
    r = 1.0 - q
    if not (0.5 < q < 1.0):
        return 0.0
    ell = math.log(q) - math.log(r)
    if not ell > 0.0:
        return 0.0
    lo = int(math.floor(0.5 * (rounds + eps / ell))) + 1
    mean, sd = rounds * q, math.sqrt(rounds * q * r)
    hi = min(rounds, int(math.ceil(mean + 40.0 * sd + 40.0)))
    if lo > hi:
        return 0.0
    k = np.arange(lo, hi + 1, dtype=np.float64)
    loss = (2.0 * k - rounds) * ell
    x = eps - loss + 1e-12 * (abs(eps) + np.abs(loss))
    term = np.exp(binom_logpmf(k, rounds, q, r)) * -np.expm1(np.minimum(x, 0.0))
    return float(np.sum(term)) * (1.0 - 1e-6)


def majority_floor_beats(m: int, sigma: float, rounds: int, ask, beat: float) -> bool:
    """True when trimmed-clone's value is provably above ``beat`` (ε question) or at least
    ``beat`` (δ question) at every ε0, from one bit per round: which type has more outputs.

    In the trimmed pair at ε0 (clone probability p = e^{−ε0}·c ≤ e^{−ε0}, victim log-odds
    ε0' ≥ ε0, ``trimmed_pair``) the outputs are A + 1[victim of type 0] and C − A +
    1[victim of type 1], C ~ Bin(m − 1, p) clones of which A ~ Bin(C, ½) are of type 0.
    Output 1 when the first count is larger, 0 when smaller, a fair coin on a tie: given C
    the victim's type wins with probability ½ + b(C)/2, b(C) = binom(C, ⌊C/2⌋)/2^C, so the
    bit is Bernoulli(½ + h) under one dataset and Bernoulli(½ − h) under the other with
    h = (2α − 1)·E[b(C)]/2, α = 1/(1 + e^{−ε0'}). b(C) ≥ f(C) = sqrt(2/(π(C + 2))) (Wallis:
    binom(2k, k)/4^k ≥ 1/sqrt(π(k + ½)), and b(2k + 1) = b(2k + 2)), f is convex and
    decreasing, so by Jensen E[b(C)] ≥ f((m − 1)p). The bits of T rounds are a
    post-processing of the T-fold pair, so its δ_T(ε) is at least the T-fold binary
    channel's (``majority_hockey_T``). Every member that leaves any δ has ε0 > e =
    ``infeasible_eps0`` (the charge decreases in ε0), where 2α − 1 ≥ tanh(e/2) and
    (m − 1)p ≤ (m − 1)e^{−e}: h ≥ h_e = tanh(e/2)·f((m − 1)e^{−e})/2 for every such member,
    and a channel with a smaller h is a post-processing of one with a larger. ε question:
    δ_T(beat) > δ ≥ what the charge leaves means every route's ε is above beat; δ question:
    the member's δ is at least δ_T(ε). Where the victim hides among many clones this bit
    carries most of what leaks over many rounds (the sum of the reports is nearly
    Gaussian): n = 1.5e8 (1e6 users), σ = 1.29, T = 13: ≥ 0.5 against trimmed-clone's 0.745."""
    solves_eps = isinstance(ask, EpsilonAt)
    delta = ask.delta if solves_eps else beat
    # e lowered by 1e-9 relative: a smaller e only enlarges p and shrinks α (safe side),
    # and covers the members just above e (whose p = e^{-ε0}·c may round above e^{-e}).
    e = infeasible_eps0(m, sigma, rounds, delta) * (1.0 - 1e-9)
    if not e > 0.0:
        return False
    eps = beat if solves_eps else ask.epsilon
    h = 0.5 * math.tanh(0.5 * e) * math.sqrt(2.0 / (math.pi * ((m - 1) * math.exp(-e) + 2.0)))
    if not h > 1e-6:
        return False
    low = majority_hockey_T(h, rounds, eps)
    return low > delta if solves_eps else low >= beat


def one_round_floor_beats(m: int, sigma: float, ask, beat: float) -> bool:
    """One round: True when trimmed-clone's value is provably above ``beat`` (ε question)
    or at least ``beat`` (δ question) at every ε0, from the clone pair with p = e^{−e},
    α = 1/(1 + e^{−e}) (e = ``infeasible_eps0``, lowered by 1e-9 relative) and m users.

    That pair is a post-processing of every member that leaves any δ (ε0 > e, so its
    p = e^{−ε0}·c ≤ e^{−e} and its victim's α ≥ α(e)): add clones (each of the other users
    not a clone becomes one, a fair coin between the types, with probability
    (e^{−e} − p)/(1 − p); their number is known from the output's total), then replace the
    output, with probability 1 − (2α(e) − 1)/(2α − 1), by a draw of the law with a fair-coin
    victim (the same under both datasets): the result is the pair at (e^{−e}, α(e)). So its
    δ(ε), bounded from below by ``pair_delta_floor`` (certified), is below every member's.
    ε question: above δ at ``beat`` means every member's ε is above beat."""
    solves_eps = isinstance(ask, EpsilonAt)
    delta = ask.delta if solves_eps else beat
    e = infeasible_eps0(m, sigma, 1, delta) * (1.0 - 1e-9)
    if not e > 0.0:
        return False
    p, bias = math.exp(-e), Bias(e)
    if not (p > 0.0 and bias.beta > 0.0):
        return False
    low = pair_delta_floor(ClonePair(m, p, bias.alpha, bias.beta, e),
                           beat if solves_eps else ask.epsilon)
    return low > delta if solves_eps else low >= beat


#: Users the trimmed pair is built for at most (one round / several rounds); see ``users``.
TRIMMED_MAX_N_ONE = 10**7
TRIMMED_MAX_N_ROUNDS = 10**6
#: Check-in rates up to which trimmed-clone is not computed beside trimmed-clone-sampled
#: (``TrimmedClone.dominated_by``).
DOMINATED_MAX_RATE = 0.5
DOMINATED_MIN_USERS = 10**4


@register
class TrimmedClone(TrimmedFamilyRoutes, Bound):
    id = "trimmed-clone"
    costly = True
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


    def order_routes(self, routes):
        """PLD first: its value is usually the answer, and the RDP route, tried after it,
        is skipped when its certified floor (the member's ``RdpView.floor``) cannot beat
        it. Order never changes the answer (the smallest route value is kept)."""
        return pld_first_kov15_last(routes)

    def family(self, proto, rounds: int) -> FamilyView:
        """One trimmed pair per ε0 (``trimmed_family``), built for ``users(proto, rounds)``
        users (fewer over several rounds: cost)."""
        return trimmed_family(self.users(proto, rounds), float(proto.mechanism.sigma))

    @staticmethod
    def users(proto, rounds) -> int:
        """Users the pair is built for: ≤ n (more users only help: the others' reports can
        be simulated), capped because each ε0 step costs a pair RDP search (T > 1) or a
        pair root (T = 1) whose cost grows like sqrt(n)."""
        cap = TRIMMED_MAX_N_ONE if rounds == 1 else TRIMMED_MAX_N_ROUNDS
        return int(min(int(proto.n), cap))

    def dominated_by(self, other, proto, rounds=1, ask=None):
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
        # Measured on ε questions only: on a δ question at tiny δ the sampled bound's
        # value can be far above this one's (n = 1e5, σ = 8.55, rate 0.11, ε = 0.54,
        # T = 116: 2.1e-17 against 2.9e-22), so there both are computed.
        if getattr(other, "id", None) != "trimmed-clone-sampled":
            return None
        if ask is not None and not isinstance(ask, EpsilonAt):
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
        sigma = float(proto.mechanism.sigma)
        if no_clone_floor_beats(m, sigma, rounds, ask, beat):
            return (f"at every eps0 whose trimming charge leaves any delta, the pair's "
                    f"{rounds}-round {ask.solves} is above {beat:.6g}: with probability at "
                    f"least (1 - e^-eps0/2)^((m-1)T) (m = {m:.6g} users) every output of every "
                    "round has the victim's type, which reveals it at log-odds eps0 or more"), False
        if majority_floor_beats(m, sigma, rounds, ask, beat):
            return (f"at every eps0 whose trimming charge leaves any delta, the pair's "
                    f"{rounds}-round {ask.solves} is above {beat:.6g}: one bit per round "
                    f"(which type has more outputs among the victim and its clones, m = "
                    f"{m:.6g} users) already reveals that much"), False
        if rounds == 1 and one_round_floor_beats(m, sigma, ask, beat):
            return (f"at every eps0 whose trimming charge leaves any delta, the pair's "
                    f"{ask.solves} is above {beat:.6g}: the clone pair at the smallest such "
                    f"eps0 (m = {m:.6g} users), a post-processing of every member, already "
                    "leaks that much"), False
        return None

    def annotate(self, details, proto, rounds):
        note_users(details, self.users(proto, rounds), proto.n)
