r"""Bounds under add/remove neighbours (``relation="add_or_remove_one"``).

``fmt20-addremove``: the add/remove clone pair of a check-in round for any ε0-LDP
randomizer (``shuffledp.addremove_pair``; derivation and proof in docs/relations.md):
P̃ = law of (C + B, K), Q̃ = law of (C, K), (C, K) ~ Mult(n − 1; γe^−ε0, γ(1 − e^−ε0), 1 − γ),
B ~ Bern(γ) — the clone decomposition of Feldman, McMillan, Talwar (arXiv:2012.12803,
Lemma 3.3) with one victim distribution. Both directions (adding and removing the victim)
are bounded. Its Rényi divergence is infinite (all n users report with probability γ^n,
impossible without the victim), so it offers δ(ε), KOV15 and PLD composition, no RDP.
"""

from __future__ import annotations

import math

from .. import addremove_pair as ar
from .. import composition as _comp
from ..protocols import CheckIn
from ..relations import ADD_OR_REMOVE_ONE, everyone_reports_reason
from ._common import ldp_reason
from .base import Bound, Outcome, register

__all__ = ["FMT20AddRemove"]

NO_RDP = ("its Renyi divergence is infinite under add/remove neighbours: all n users report "
          "with probability rate^n, which is impossible without the user, so the number of "
          "reports has infinite privacy loss with positive probability; use (epsilon, delta) "
          "or PLD composition")


@register
class FMT20AddRemove(Bound):
    id = "fmt20-addremove"
    scope = "ldp"
    kind = "upper"
    has_dp = True
    has_rdp = False
    no_rdp_reason = NO_RDP
    relations = (ADD_OR_REMOVE_ONE,)
    title = "FMT20 clone pair under add/remove neighbours (check-in rounds)"
    reference = ("Feldman, McMillan, Talwar, arXiv:2012.12803, Lemma 3.3 (clone "
                 "decomposition), one victim distribution, Poisson check-in (derived here; "
                 "docs/relations.md)")

    def check(self, proto):
        r = ldp_reason(proto)
        if r:
            return r
        s = proto.sampling
        if s is None or (isinstance(s, CheckIn) and s.rate >= 1.0):
            return everyone_reports_reason()
        if not isinstance(s, CheckIn):
            return ("not derived for add/remove neighbours with a fixed sample size "
                    "(WithoutReplacement); use CheckIn(rate)")
        return None

    def valid_for(self, proto):
        return ("any eps0-LDP randomizer (adaptive sequences included); add/remove "
                "neighbours; the server sees the participants' shuffled reports and their "
                "number, not who took part")

    def pair(self, proto) -> ar.AddRemovePair:
        return ar.addremove_pair(int(proto.n), float(proto.sampling.rate), float(proto.eps0))

    def delta_one(self, proto, eps):
        return ar.ar_delta(self.pair(proto), float(eps))

    def epsilon_one(self, proto, delta):
        return ar.ar_epsilon(self.pair(proto), float(delta))

    def eps_hi(self, proto):
        return ar.ar_eps_hi(self.pair(proto))

    def pure_epsilon(self, proto):
        return None                  # the count of reports: infinite loss w.p. > 0

    def pld_atoms(self, proto):
        return ar.ar_pld_atoms(self.pair(proto))

    def _pld_route(self, proto, rounds, x, question):
        logp, logq, tail = self.pld_atoms(proto)
        fn = _comp.pld_epsilon if question == "epsilon" else _comp.pld_delta
        # Both directions composed (the pair is not symmetric: adding ≠ removing).
        val, det = fn(logp, logq, rounds, x, extra_delta=float(tail), symmetric=False)
        return Outcome(float(val), "upper", "pld", det)

    def routes(self, rounds):
        r = super().routes(rounds)
        return [x for x in r if x != "pld"] if rounds == 1 else r

    def _run(self, fn, proto, x, rounds, composition, beat=None):
        o = super()._run(fn, proto, x, rounds, composition, beat)
        if proto.n > ar.MAX_N:
            o.details["users"] = (f"evaluated at n = {ar.MAX_N:.0e} users: the bound at fewer "
                                  f"users holds at n = {proto.n} (the others' reports can be "
                                  "simulated and shuffled in)")
        return o
