r"""Bounds under add/remove neighbours (``relation="add_or_remove_one"``).

``fmt20-addremove``: the add/remove clone pair of a check-in round for any ε0-LDP
randomizer (``shuffledp.pairs.addremove``; derivation and proof in docs/relations.md):
P̃ = law of (C + B, K), Q̃ = law of (C, K), (C, K) ~ Mult(n − 1; γe^−ε0, γ(1 − e^−ε0), 1 − γ),
B ~ Bern(γ) — the clone decomposition of Feldman, McMillan, Talwar (arXiv:2012.12803,
Lemma 3.3) with one victim distribution. Both directions (adding and removing the victim)
are bounded. Its Rényi divergence is infinite (all n users report with probability γ^n,
impossible without the victim), so it offers δ(ε), KOV15 and PLD composition, no RDP.

``blanket-addremove``: the privacy blanket of a concrete randomizer
(``shuffledp.pairs.addremove_blanket``): the victim's absence is a round that always says
"no report", which lies under every user's floor, so the GPARV identity bounds both
directions. FMT20's pair above is its special case with the floor e^−ε0·R(x); a
randomizer-specific *clone* probability under add/remove is exactly e^−ε0 (docs/relations.md,
"Randomizer-specific clones under add/remove"), so the blanket is where the randomizer's
structure enters.

``trimmed-clone-addremove``: the Gaussian, its victim trimmed to (ε0, δ0)-LDP.
"""

from __future__ import annotations

import math

import functools

import numpy as np

from .. import compose as _composers
from ..pairs import addremove as ar
from ..pairs.addremove_blanket import AddRemoveBlanket, MAX_N as BLANKET_AR_MAX_N
from ..pairs.adapter import views_of
from ..pairs.trimmed import trimmed_addremove_pair
from ..core.protocols import CheckIn
from ..core.relations import ADD_OR_REMOVE_ONE, everyone_reports_reason
from ._common import TrimmedFamilyRoutes, eps0_range, gaussian_reason, ldp_reason, probe_member
from ..numerics import golden
from ..core.views import EpsilonAt, FamilyView
from .base import Bound, PairBound, register

__all__ = ["FMT20AddRemove", "TrimmedCloneAddRemove", "BlanketAddRemove"]

NO_RDP = ("its Renyi divergence is infinite under add/remove neighbours: all n users report "
          "with probability rate^n, which is impossible without the user, so the number of "
          "reports has infinite privacy loss with positive probability; use (epsilon, delta) "
          "or PLD composition")


def _checkin_reason(proto):
    """Why an add/remove pair does not apply to this sampling (None: check-in, rate < 1)."""
    s = proto.sampling
    if s is None or (isinstance(s, CheckIn) and s.rate >= 1.0):
        return everyone_reports_reason()
    if not isinstance(s, CheckIn):
        return ("not derived for add/remove neighbours with a fixed sample size "
                "(WithoutReplacement); use CheckIn(rate)")
    return None


def _evaluated_at(cap: int, n: int) -> str:
    """What a bound evaluated at ``cap`` < n users says about n (its ``users`` detail)."""
    return f"evaluated at n = {cap:.0e} users: the bound at fewer users holds at n = {n}"


class _AddRemovePairBound(PairBound):
    """An add/remove pair of a check-in round (``PairBound``: δ(ε), ε(δ), eps_hi and the
    PLD atoms are the pair's own), evaluated at no more than ``max_n`` users. Both
    directions are composed by the PLD composer (pld_symmetric False: adding ≠ removing)."""

    kind = "upper"
    no_rdp_reason = NO_RDP
    relations = (ADD_OR_REMOVE_ONE,)
    #: The pair is built for min(n, max_n) users.
    max_n: int

    def pure_epsilon(self, proto):
        return None                 # infinite loss w.p. > 0 (the count of reports)

    def annotate(self, details, proto, rounds):
        if proto.n > self.max_n:
            details["users"] = (_evaluated_at(self.max_n, proto.n) + " (the others' reports "
                                "can be simulated and shuffled in)")


@register
class FMT20AddRemove(_AddRemovePairBound):
    id = "fmt20-addremove"
    scope = "ldp"
    max_n = ar.MAX_N
    title = "FMT20 clone pair under add/remove neighbours (check-in rounds)"
    reference = ("Feldman, McMillan, Talwar, arXiv:2012.12803, Lemma 3.3 (clone "
                 "decomposition), one victim distribution, Poisson check-in (derived here; "
                 "docs/relations.md)")

    def check(self, proto):
        r = ldp_reason(proto)
        if r:
            if proto.eps0 is None:
                return ("the Gaussian mechanism is not eps0-LDP for any finite eps0; under "
                        "add/remove use trimmed-clone-addremove")
            return r
        return _checkin_reason(proto)

    def valid_for(self, proto):
        return ("any eps0-LDP randomizer (adaptive sequences included); add/remove "
                "neighbours; the server sees the participants' shuffled reports and their "
                "number, not who took part")

    def pair(self, proto) -> ar.AddRemovePair:
        return ar.addremove_pair(int(proto.n), float(proto.sampling.rate), float(proto.eps0))

    def route_cost_reason(self, proto, rounds, route):
        if rounds == 1 and route == "pld":
            return "one round: the pair's own delta(eps) is below any PLD discretisation of it"
        return super().route_cost_reason(proto, rounds, route)


# ----------------------------------------------------------------------------------------
# The Gaussian: the trimmed victim (docs/relations.md, "The Gaussian under add/remove")
# ----------------------------------------------------------------------------------------
@register
class TrimmedCloneAddRemove(TrimmedFamilyRoutes, Bound):
    id = "trimmed-clone-addremove"
    scope = "l2"
    kind = "upper"
    no_rdp_reason = NO_RDP
    relations = (ADD_OR_REMOVE_ONE,)
    title = "Trimmed-victim clone pair under add/remove neighbours (Gaussian, check-in)"
    reference = ("derived in this project (docs/relations.md): FMT20 clone decomposition "
                 "(arXiv:2012.12803) with the victim trimmed to (eps0, delta0)-LDP, one victim "
                 "distribution, Poisson check-in; Gaussian curve: Balle & Wang 2018")

    #: ε0 candidates tried by the golden search (every ε0 gives a valid bound).
    SEARCH_ITERS = 10

    def check(self, proto):
        return gaussian_reason(proto) or _checkin_reason(proto)

    def valid_for(self, proto):
        return ("any inputs of l2 diameter <= 1, any dimension (only the Gaussian's "
                "(eps0, delta0) curve is used); add/remove neighbours; the server sees the "
                "participants' shuffled reports and their number, not who took part")

    def family(self, proto, rounds: int) -> FamilyView:
        """One add/remove trimmed pair per ε0 (``addremove_family``)."""
        return addremove_family(int(proto.n), float(proto.sampling.rate),
                                float(proto.mechanism.sigma), self.SEARCH_ITERS)

    def ledger_pld_atoms(self, proto, delta, rounds):
        """A dominating pair of one round for a mixed ledger: the trimmed pair at the ε0 this
        bound's own search picks for ``rounds`` rounds at ``delta`` (every ε0 gives a valid
        pair; the search only makes it tight). None when no ε0 gives a finite pair."""
        fam = self.family(proto, int(rounds))
        ask, route = EpsilonAt(float(delta)), ("none" if rounds == 1 else "pld")

        def value(x, r=None):
            m = fam.member(x)
            if m is None:
                return math.inf
            return float(_composers.get(r or route).answer([(m, int(rounds))], ask).value)

        x = fam.choose(ask, int(rounds), route, value)
        hp = trimmed_addremove_pair(int(proto.n), float(proto.sampling.rate),
                                    float(proto.mechanism.sigma), float(x))
        return None if hp is None else ar.ar_pld_atoms(hp)


@functools.lru_cache(maxsize=32)
def addremove_family(n: int, rate: float, sigma: float, iters: int) -> FamilyView:
    """The add/remove trimmed pairs of ``Shuffle(Gaussian(sigma), n, CheckIn(rate))``, one
    per ε0 (no separate charge: the trimmed victim's mass is inside the pair, ``hp.bad``).

    Which ε0 a composer gets: a golden search on that composer's own value (``iters``
    steps over T rounds, 3× for one round; a δ question 4 more over T rounds and a second
    search around the best ε0: enough that δ(ε(δ)) ≤ δ)."""
    from ..pairs import gaussian_rdp as G
    N = max(min(n, ar.MAX_N) - 1, 1)

    def member(x):
        hp = trimmed_addremove_pair(n, rate, sigma, x)
        return None if hp is None else views_of(hp, "upper")

    def choose(ask, rounds, route, value):
        part = max(N * rate * rounds, 1.0)
        solves_eps = isinstance(ask, EpsilonAt)
        if solves_eps:
            # ε0 where the composed ⊤ mass (≈ T·γ(n − 1)·δ0) stays below δ
            lo, hi = eps0_range(max(int(part), 1), sigma, ask.delta)
        else:
            # the δ target is unknown: from 0 up to a ⊤ mass of 1e-30
            lo, hi = 0.0, G.gaussian_eps_hi(sigma, 1e-30 / part)
        k = iters + (0 if solves_eps else 4) if rounds > 1 else 3 * iters
        r = golden(value, lo, hi, max_iter=k)
        val, e0 = r.fx, r.x
        if not solves_eps:
            # The δ range is wide (its target is unknown): refine around the best ε0 found.
            w = (hi - lo) * 0.62 ** k * 2.0
            r2 = golden(value, max(lo, e0 - w), min(hi, e0 + w), max_iter=k)
            if r2.fx <= val:
                e0 = r2.x
        return e0

    def probe():
        return probe_member(member, *eps0_range(N, sigma, 1e-3),
                            lambda: views_of(ar.addremove_pair(n, rate, 1.0, 0.0), "upper"))

    def details(x):
        hp = trimmed_addremove_pair(n, rate, sigma, x)
        det = {"eps0": x, "delta0": G.gaussian_delta(sigma, x),
               "victim_trimmed_mass": None if hp is None else hp.bad}
        if n > ar.MAX_N:
            det["users"] = _evaluated_at(ar.MAX_N, n)
        return det

    return FamilyView(member, choose, probe, details)


# ----------------------------------------------------------------------------------------
# The privacy blanket of a concrete randomizer (docs/relations.md, "The blanket under
# add/remove"): also the randomizer-specific clone pair of add/remove neighbours
# ----------------------------------------------------------------------------------------
@register
class BlanketAddRemove(_AddRemovePairBound):
    id = "blanket-addremove"
    scope = "this-randomizer"
    max_n = BLANKET_AR_MAX_N
    title = "Privacy blanket of this randomizer under add/remove neighbours (check-in)"
    reference = ("Balle, Bell, Gascon, Nissim, CRYPTO 2019, arXiv:1903.02837 (blanket); GPARV "
                 "form: Su, Cheng, Wang, IEEE S&P 2026, arXiv:2504.07414; the victim's absence "
                 "as a round that is always 'no report' (derived here; docs/relations.md)")

    def check(self, proto):
        from .blanket import MAX_EPS0, MAX_PAIRS, eps0_cap_reason
        from ..pairs.iid import ENUMERATE_MAX
        from ..pairs import gparv
        from ..core.mechanisms import LDP, Randomizer
        r = ldp_reason(proto)
        if r:
            if proto.eps0 is None:
                return ("the Gaussian mechanism has no blanket (no output every input can "
                        "produce with a common floor); under add/remove use "
                        "trimmed-clone-addremove")
            return r
        m = proto.mechanism
        if isinstance(m, LDP):
            return ("it needs the concrete randomizer (RandomizedResponse, Randomizer(matrix), "
                    "OUE, RAPPOR, HadamardResponse, LocalHashing): the class of all eps0-LDP "
                    "randomizers has no common blanket beyond what fmt20-addremove uses")
        if not gparv.has_pairs(m):
            return f"no blanket decomposition is known for {m!r}"
        r = _checkin_reason(proto)
        if r:
            return r
        if m.eps0 > MAX_EPS0:
            return eps0_cap_reason(m.eps0)
        if isinstance(m, Randomizer) and m.inputs > MAX_PAIRS // 2:
            return (f"the matrix has {m.inputs} inputs (more than {MAX_PAIRS // 2}); the "
                    "maximum over all victim inputs is not computed")
        pairs = AddRemoveBlanket.of(proto).pairs
        # expected blanket reports among the others: n·γ·(floor mass of the reports)
        draws = min(proto.n, BLANKET_AR_MAX_N) * min(float(np.sum(p.w[:-1]))
                                                     for p in pairs[::2])
        n_eval = int(min(proto.n, BLANKET_AR_MAX_N))
        atoms = max(p.a.size for p in pairs) + 1
        if draws < 1.0 and math.comb(n_eval + atoms - 1, n_eval) > ENUMERATE_MAX:
            # Its engine's lattice spans e^eps0 and costs seconds before it gives up, for a
            # user who hides among almost no one anyway (tiny n are enumerated exactly).
            return (f"the expected number of blanket reports n*rate*gamma = {draws:.3g} is "
                    "below 1: the user hides among almost no one (not evaluated)")
        return None

    def valid_for(self, proto):
        return (f"this randomizer (non-adaptive within a round): "
                f"{proto.mechanism.describe()}, check-in rate {proto.sampling.rate:g}; "
                "add/remove neighbours; the server sees the participants' shuffled reports "
                "and their number, not who took part")

    def likely_first(self, proto):
        # It knows the randomizer's floor (fmt20-addremove only e^-eps0 R(x)): usually below.
        return True

    def pair(self, proto) -> AddRemoveBlanket:
        return AddRemoveBlanket.of(proto)

    def route_cost_reason(self, proto, rounds, route):
        # One round: the certified curve itself. Over rounds: the PLD of the curve's hull
        # pair (near-exact composition of a pair that dominates every victim input); KOV15
        # from one (ε, δ) point of the same curve is never below it and costs a certified
        # i.i.d. sum per probe (~40 s at n = 1e5), so it is not run.
        if route == "kov15":
            return ("not evaluated: KOV15 from one (eps, delta) point of this curve is never "
                    "below the PLD of its hull pair and costs a certified i.i.d. sum per probe "
                    "(~40 s at n = 1e5); ask composition='kov15' to run it")
        return super().route_cost_reason(proto, rounds, route)

    def preferred_route(self, rounds):
        return "none" if rounds == 1 else "pld"
