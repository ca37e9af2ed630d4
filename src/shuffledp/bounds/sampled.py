r"""Sampled rounds: the hidden-⊥ clone pair (``*-sampled`` bounds) and the mixture helper.

For ``Shuffle(mech, n, sampling=CheckIn(γ) | WithoutReplacement(m))`` the server sees the
participants' shuffled reports and their number, not who took part. Two families of valid
bounds apply (derivations in docs/bounds.md, "Sampled rounds"):

* every bound for all n users reporting (post-processing: keep each shuffled report with
  probability γ, or a uniform m of them) — the unsampled bounds themselves accept sampled
  protocols;
* the hidden-⊥ clone pair (``shuffledp.pairs.hidden``): a user who does not take part
  outputs ⊥, common to everyone and dropped from the release, so the victim's absence is
  hidden among the others'. Built on the clone decompositions of Feldman, McMillan,
  Talwar (arXiv:2012.12803, Lemma 3.3: ``fmt20-sampled``; arXiv:2208.04591v3 Thm 3.1 with
  its errata, class S(ε0): ``fmt23-sampled``; a given matrix's p_R: ``clone-specific-sampled``)
  and, for the Gaussian, on the trimmed victim of ``trimmed-clone``
  (``trimmed-clone-sampled``: per-round charge γ·n·δ0, m·δ0 without replacement).

Each ``*-sampled`` RDP view is the per-order minimum of the hidden pair and the unsampled
pair at n (both valid for the same protocol).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from ..compose import conversions as _rdp
from ..pairs import gaussian_rdp as G
from ..numerics import golden
from ..pairs import clone as cp
from ..pairs.adapter import views_of
from ..pairs import hidden as sp
from ..pairs.trimmed import trimmed_hidden
from ..core._parallel import parallel, pmap
from ..core.protocols import CheckIn
from ..core.views import EpsilonAt, FamilyView
from ._common import (PARTICIPATION_NOTE, TrimmedFamilyRoutes, eps0_range, gaussian_reason,
                      note_users, pld_first_kov15_last, probe_member, rate_size)
from .base import Bound, PairBound, get, register

__all__ = ["FMT20Sampled", "FMT23Sampled", "CloneSpecificSampled", "TrimmedCloneSampled"]



class _HiddenBound(PairBound):
    """Hidden-⊥ pair of an unsampled clone bound (``base_id``)."""

    kind = "upper"
    rdp_expensive = True
    base_id = ""
    #: Symmetric like the clone pair it hides (swap a and b): one PLD direction.
    pld_symmetric = True

    def _base(self):
        return get(self.base_id)

    def check(self, proto):
        if proto.sampling is None:
            return (f"this bound is for sampled rounds (CheckIn or WithoutReplacement); with "
                    f"every user reporting use {self.base_id}")
        return self._base().check(replace(proto, sampling=None))

    def valid_for(self, proto):
        return (self._base().valid_for(replace(proto, sampling=None))
                + "; " + PARTICIPATION_NOTE)

    def base_pair(self, proto) -> cp.ClonePair:
        return self._base().pair(replace(proto, sampling=None))

    def hidden(self, proto) -> sp.HiddenPair:
        pair = self.base_pair(proto)
        rate, size = rate_size(proto)
        # The victim by its log-odds (ε0), never by α (1 − α is inexact from ε0 ≈ 19).
        return _hidden(pair.n, pair.p, pair.log_ratio, rate, size)

    # The views are the hidden pair's own (the Pair protocol, shuffledp.pairs.base):
    # δ(ε), ε(δ), the bracket and the PLD atoms through ``PairBound``.
    def pair(self, proto) -> sp.HiddenPair:
        return self.hidden(proto)

    def rdp(self, proto, orders):
        orders = np.asarray(orders, dtype=np.int64)
        own = self.hidden(proto).rdp(orders)
        # §0: the unsampled pair at n is valid for the sampled protocol too (per order).
        base = self.base_pair(proto)
        if np.all(own <= clone_d2_floor(base)):
            # Its curve is at least its exact D(λ) ≥ D(2) ≥ that floor at every order here,
            # so the minimum is ``own`` (bit for bit) without the unsampled pair's sums
            # (2.7 s at n = 1e9: the RDP route's ε = 0 check at order 2 of the check-in
            # question n = 1e12, γ = 0.01, where ``own`` is 100× below the floor).
            return own
        return np.minimum(own, base.rdp(orders))

    def max_order(self, proto):
        return self.hidden(proto).max_order()

    def route_cost_reason(self, proto, rounds, route):
        if rounds == 1 and route in ("rdp", "pld"):
            return ("one round: the hidden pair's own delta(eps) is below any conversion or "
                    "discretisation of it")
        return super().route_cost_reason(proto, rounds, route)

    def order_routes(self, routes):
        # PLD first, KOV15 last: the others' floors meet PLD's value (_common.py).
        return pld_first_kov15_last(routes)


def clone_d2_floor(pair: cp.ClonePair) -> float:
    r"""A certified lower bound on the exact Rényi divergence of order 2 of a g = 0 clone
    pair (0 when g > 0): ``D_2 ≥ log(1 + 4γ²(1 − (1 − p)^n)/(n p))``, γ = α − β.

    Given the slice s = C + 1 (C ~ Bin(n − 1, p) clones) the pair is P = B(1 + γZ),
    Q = B(1 − γZ) with B = Bin(s, ½) and Z = (2x − s)/s ∈ [−1, 1] (``pairs.clone``), and
    the slice is revealed by both, so 1 + χ²(P‖Q) = E_C[1 + χ²_s] with
    χ²_s = E_B[4γ²Z²/(1 − γZ)] ≥ 4γ² E_B[Z²(1 + γZ)] = 4γ²/s (1/(1 − x) ≥ 1 + x for
    x < 1; E_B[Z³] = 0 by symmetry, E_B[Z²] = 1/s), and E[1/(C + 1)] = (1 − (1 − p)^n)/(n p)
    exactly. D_2 = log(1 + χ²). The few roundings of the float formula (relative ~1e-15)
    are covered by taking 1 − 1e-9 of it. Within 1e-8 relative of the pair's computed D(2)
    at n = 1e9, ε0 = 1."""
    if pair.g > 0.0:
        return 0.0
    n, p, g = float(pair.n), float(pair.p), float(pair.gamma)
    x = 4.0 * g * g * (-math.expm1(n * math.log1p(-p))) / (n * p) if p < 1.0 else 4.0 * g * g / n
    return math.log1p(x) * (1.0 - 1e-9)


@functools.lru_cache(maxsize=64)
def _hidden(n, p, log_odds, rate, size):
    return sp.hidden_pair(n, p, log_odds=log_odds, kappa=p, rate=rate, size=size)


@register
class FMT20Sampled(_HiddenBound):
    id = "fmt20-sampled"
    scope = "ldp"
    base_id = "fmt20"
    title = "FMT20 clone pair with hidden non-participation (sampled rounds)"
    reference = ("Feldman, McMillan, Talwar, arXiv:2012.12803, Lemma 3.3, with the "
                 "non-participants' common output hidden (derived here; docs/bounds.md)")


@register
class FMT23Sampled(_HiddenBound):
    id = "fmt23-sampled"
    scope = "class-S"
    base_id = "fmt23"
    title = "FMT23 stronger clone pair with hidden non-participation (restricted class)"
    reference = ("Feldman, McMillan, Talwar, arXiv:2208.04591v3, Thm 3.1 with the errata "
                 "(class S(eps0)), non-participation hidden (derived here; docs/bounds.md)")


@register
class CloneSpecificSampled(_HiddenBound):
    id = "clone-specific-sampled"
    scope = "this-randomizer"
    base_id = "clone-specific"
    title = "This randomizer's clone pair with hidden non-participation"
    reference = ("Feldman, McMillan, Talwar, arXiv:2208.04591v3 (Lemma 7.3 idea), p_R of "
                 "the matrix, non-participation hidden (derived here; docs/bounds.md)")


# ----------------------------------------------------------------------------------------
# Gaussian: the trimmed victim with hidden non-participation
# ----------------------------------------------------------------------------------------
#: Users the check-in hidden pair of the Gaussian is built for at most (``users``).
SAMPLED_MAX_N = 10**10

#: Atom budget while searching ε0 (any ε0 is valid; the final ε0 is evaluated in full).
_SEARCH_BUDGET = 80_000
_SEARCH_ORDERS = np.unique(np.round(np.geomspace(2, 512, 40)).astype(np.int64))


def _golden(f, lo, hi, iters):
    """Golden-section minimisation (``numerics.golden``); returns (f_min, x)."""
    r = golden(f, lo, hi, max_iter=iters)
    return r.fx, r.x


@functools.lru_cache(maxsize=64)
def _best_eps0(n, sigma, rate, size, delta, rounds):
    """ε0 minimising a quick RDP (T > 1) or δ(ε) (T = 1) estimate of the bound."""
    part = size if size is not None else rate * n

    def f(e0):
        hp, cg = trimmed_hidden(n, sigma, e0, rate, size)
        if hp is None:
            return math.inf
        charge = -math.expm1(rounds * math.log(cg))
        rest = delta - charge * (1 + 1e-12)
        if rest <= 0:
            return math.inf
        if rounds == 1:
            # The search ranks ε0 on merged cells (a dominating pair; the chosen ε0 is then
            # evaluated on every cell): every slice as its own cell costs seconds per ε0
            # at 1e8 users. Ranking on the exact cells chose the same ε0 at every n of the
            # benchmark grid and its neighbours (n = 1e3 … 1e8).
            return sp.hidden_epsilon(hp, rest, _SEARCH_BUDGET, ranking=True)
        logp, logq, tails, lmax = sp.hidden_atoms(hp, _SEARCH_BUDGET, ranking=sp.SAMPLED)
        return _windowed_min(lambda o: _rdp.eps_from_rdp(
            o, rounds * _quick_rdp(logp, logq, tails, lmax, o), rest), near)

    near = [None]
    lo, hi = eps0_range(max(int(part * rounds), 1), sigma, delta)
    val, e0 = _golden(f, lo, hi, iters=9)
    return e0


#: Orders on each side of the previous ε0's best order that ``_windowed_min`` evaluates.
_ORDER_WINDOW = 3


def _windowed_min(eps_at, near) -> float:
    """min over ``_SEARCH_ORDERS`` of ``eps_at(orders)`` (elementwise in the orders),
    evaluated only around ``near[0]`` (the best order index at the previous ε0 of the
    search; updated). The window grows while its smallest value sits within 2 of an edge
    that is not the grid's end, so the minimum is the full grid's whenever ε(λ) has one
    local minimum over the grid (the conversion term falls and T·D_λ rises with λ); the
    search only ranks ε0 with it. First call: the whole grid."""
    n = _SEARCH_ORDERS.size
    if near[0] is None:
        lo, hi = 0, n
    else:
        lo, hi = max(0, near[0] - _ORDER_WINDOW), min(n, near[0] + _ORDER_WINDOW + 1)
    vals = eps_at(_SEARCH_ORDERS[lo:hi])
    while True:
        k = int(np.argmin(vals))
        if k < 2 and lo > 0:
            new = max(0, lo - 2 * _ORDER_WINDOW)
            vals = np.concatenate([eps_at(_SEARCH_ORDERS[new:lo]), vals])
            lo = new
        elif k > vals.size - 3 and hi < n:
            new = min(n, hi + 2 * _ORDER_WINDOW)
            vals = np.concatenate([vals, eps_at(_SEARCH_ORDERS[hi:new])])
            hi = new
        else:
            break
    near[0] = lo + k
    return float(vals[k])


def _quick_rdp(logp, logq, tails, lmax, orders):
    pw = np.exp(logp)
    ell = logp - logq
    out = np.empty(orders.shape)
    # The cap at 700 changes nothing below it: orders with a·max ℓ ≤ 700 skip that pass.
    top = float(np.max(ell)) if ell.size else 0.0

    def part(idx):
        t = np.empty(ell.shape)
        ab = np.empty(ell.shape)
        for i in idx:
            a = float(orders[i] - 1)
            # t = pw·expm1(min(a·ℓ, 700)), in place (the same operations in the same order)
            np.multiply(ell, a, out=t)
            if not a * top <= 650.0:
                np.minimum(t, 700.0, out=t)
            np.expm1(t, out=t)
            np.multiply(pw, t, out=t)
            g = float(t.sum()) + 1e-12 * float(np.abs(t, out=ab).sum())
            g += float(np.dot(tails, np.expm1(np.minimum(a * lmax, 700.0))))
            out[i] = math.log1p(max(g, 0.0)) / a

    k = orders.size
    if k >= 2 and ell.size * k >= _QUICK_THREADED and parallel():
        # Each order is its own sums over the atoms (numpy releases the GIL in them): the
        # orders in two halves on two threads, each order's value the same float.
        pmap(part, [range(0, k // 2), range(k // 2, k)])
    else:
        part(range(k))
    return out


#: Atoms × orders from which ``_quick_rdp`` splits its orders over two threads.
_QUICK_THREADED = 400_000


@register
class TrimmedCloneSampled(TrimmedFamilyRoutes, Bound):
    id = "trimmed-clone-sampled"
    scope = "l2"
    kind = "upper"
    title = "Trimmed-victim clone bound with hidden non-participation (Gaussian, sampled)"
    reference = ("derived in this project (docs/bounds.md): FMT20 clone pair "
                 "(arXiv:2012.12803) with the victim trimmed to (eps0, delta0)-LDP and the "
                 "non-participants' common output hidden; Gaussian curve: Balle & Wang 2018")

    def check(self, proto):
        r = gaussian_reason(proto)
        if r:
            return r
        if proto.sampling is None:
            return ("this bound is for sampled rounds (CheckIn or WithoutReplacement); with "
                    "every user reporting use trimmed-clone")
        if proto.n < 2:
            return "needs n >= 2 users (with n = 1 there is nothing to hide among)"
        return None

    def valid_for(self, proto):
        return ("any inputs of l2 diameter <= 1, any dimension (only the Gaussian's "
                "(eps0, delta0) curve is used); " + PARTICIPATION_NOTE)

    def order_routes(self, routes):
        # PLD first: its value then bounds what the RDP route must beat, and where every
        # order's conversion term alone (its value with an RDP of 0) is above it — the
        # pair's orders stop at 600/log(α/(1 − α)), often a few hundred — the RDP route is
        # skipped with that proof ("cannot beat"); it was 40× looser at n = 1e9, T = 1000.
        return sorted(routes, key=lambda r: r != "pld")

    def family(self, proto, rounds: int) -> FamilyView:
        """One hidden trimmed pair per ε0 (``sampled_family``), built for ``users``."""
        rate, size = rate_size(proto)
        return sampled_family(self.users(proto), float(proto.mechanism.sigma), rate, size)

    @staticmethod
    def users(proto) -> int:
        """Users the hidden pair is built for. With check-in sampling, at most
        ``SAMPLED_MAX_N``: the round with n users is a post-processing of the round with
        n' < n (the other n − n' users check in independently and their reports, made from
        data the neighbouring datasets share, can be simulated and shuffled in), so the
        bound at n' holds at n; the pair's cells cost O(√n) rows per ε0 tried (14 s at
        n = 1e12). Without replacement the sample size fixes n."""
        if isinstance(proto.sampling, CheckIn):
            return int(min(int(proto.n), SAMPLED_MAX_N))
        return int(proto.n)

    def annotate(self, details, proto, rounds):
        note_users(details, self.users(proto), proto.n)


def _hidden_member(n, sigma, e0, rate, size):
    """The views of one round of the hidden trimmed pair at ε0 (None where none exists);
    its charge is 1 − c_γ^T."""
    hp, _ = trimmed_hidden(n, sigma, e0, rate, size)
    if hp is None:
        return None
    views = views_of(hp, "upper", grid="sparse")
    # The RDP route's proof that it cannot beat the PLD route's value, from a merged pair
    # of the same atoms (``hidden_rdp_floor``: within ~1e-5 of the curve, ~10 ms once the
    # atoms are built for PLD): the route's order search over 1.2e6 atoms (0.03–0.12 s) is
    # then skipped where it would only lose.
    return replace(views, rdp=replace(views.rdp, floor=functools.partial(sp.hidden_rdp_floor, hp)))


@functools.lru_cache(maxsize=32)
def sampled_family(n: int, sigma: float, rate, size) -> FamilyView:
    """The hidden trimmed pairs of a sampled ``Shuffle(Gaussian(sigma), n)``, one per ε0.

    Which ε0 a composer gets: ε question: ``_best_eps0`` (a quick RDP or δ(ε) estimate on
    merged cells), the same for every composer; δ question: a golden search on that
    composer's own δ (30 steps for one round, 10 over T rounds: enough that δ(ε(δ)) ≤ δ)."""
    part = size if size is not None else rate * n

    def member(x):
        return _hidden_member(n, sigma, x, rate, size)

    def choose(ask, rounds, route, value):
        if isinstance(ask, EpsilonAt):
            return _best_eps0(n, sigma, rate, size, float(ask.delta), int(rounds))
        hi = G.gaussian_eps_hi(sigma, 1e-30 / (part * rounds))
        return golden(value, 0.0, hi, max_iter=30 if route == "none" else 10).x

    def probe():
        def untrimmed():
            hp = sp.hidden_pair(n, math.exp(-1.0), log_odds=1.0, kappa=math.exp(-1.0),
                                rate=None if size is not None else rate, size=size)
            return views_of(hp, "upper", grid="sparse")
        return probe_member(member, *eps0_range(max(int(part), 1), sigma, 1e-3), untrimmed)

    def details(x):
        d0 = G.gaussian_delta(sigma, x)
        return {"eps0": x, "delta0": d0, "charge": "1 - c_gamma^T (c_gamma = 1 - rate*n*delta0)"}

    return FamilyView(member, choose, probe, details)
