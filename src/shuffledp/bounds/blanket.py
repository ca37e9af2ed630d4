r"""The privacy-blanket bound for one concrete randomizer, computed with certified error.

Balle, Bell, Gascón, Nissim, CRYPTO 2019 (arXiv:1903.02837), in the exact GPARV form of
Su, Cheng, Wang, IEEE S&P 2026 (arXiv:2504.07414): δ(ε) is the maximum over ordered victim
pairs of E[(G_1 + … + G_n)_+] / n, the hockey-stick divergence of a dominating pair, so it
composes over rounds. Valid for "this randomizer (non-adaptive within a round)";
replacement adjacency.

The pair's maths (the certified curve δ(ε), its search, the finite pair behind the PLD and
RDP views, check-in sampling) is ``shuffledp.pairs.blanket``, documented there; this module
says when the bound applies and how it composes.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.mechanisms import LDP, RandomizedResponse, Randomizer
from ..pairs import gparv
from ..pairs.blanket import BlanketPair, blanket_delta, blanket_epsilon, blanket_pairs, fdp_pair
from ..core.protocols import CheckIn, WithoutReplacement
from ._common import ldp_reason
from ..core.views import EpsilonAt
from .base import PairBound, register

__all__ = ["Blanket"]

REFERENCE = ("Balle, Bell, Gascon, Nissim, The privacy blanket of the shuffle model, CRYPTO "
             "2019, arXiv:1903.02837; exact GPARV form: Su, Cheng, Wang, IEEE S&P 2026, "
             "arXiv:2504.07414")

#: Largest ε0, number of distinct victim pairs and n the bound takes on. The certified
#: sums' rounding allowance grows like n·2^-53 (the atoms' rounding raised to the n-th
#: power): ~0.2 % of δ at n = 1e12 with the Fourier inversion on the live frequencies
#: (``numerics.lattice_fourier``), ~2 % at 1e13. (With the FFT's n-th power of a computed
#: spectrum it was 100x δ at 1e12, and the cap was 1e10.)
MAX_EPS0 = 50.0
MAX_PAIRS = 400
MAX_N = 10**13


def eps0_cap_reason(eps0: float) -> str:
    """Why the blanket's numerics refuse eps0 > ``MAX_EPS0`` (this bound and the add/remove
    blanket, ``addremove.BlanketAddRemove``)."""
    return (f"its numerics support eps0 <= {MAX_EPS0:g} (atoms grow like e^eps0); got "
            f"eps0 = {eps0:g}, where shuffling amplifies nothing measurable")


@register
class Blanket(PairBound):
    id = "blanket"
    scope = "this-randomizer"
    kind = "upper"
    title = "Privacy blanket of this randomizer (GPARV), certified numerics"
    reference = REFERENCE
    rdp_expensive = True

    def check(self, proto):
        r = ldp_reason(proto)
        if r:
            return r
        m = proto.mechanism
        if isinstance(m, LDP):
            return ("it needs the concrete randomizer (RandomizedResponse, Randomizer(matrix), "
                    "OUE, RAPPOR, HadamardResponse, LocalHashing): a class of all eps0-LDP "
                    "randomizers has no common blanket beyond what fmt20 uses")
        if not gparv.has_pairs(m):
            return f"no blanket decomposition is known for {m!r}"
        if proto.n > MAX_N:
            return (f"not evaluated for n > {MAX_N:.0e}: its certified i.i.d. sums carry a "
                    "floating-point allowance that grows like n times the unit roundoff (a few "
                    "% of delta here)")
        if m.eps0 > MAX_EPS0:
            return eps0_cap_reason(m.eps0)
        if isinstance(m, Randomizer) and m.inputs * (m.inputs - 1) > MAX_PAIRS:
            npairs = len(blanket_pairs(proto))
            if npairs > MAX_PAIRS:
                return (f"the matrix has {npairs} distinct ordered victim pairs (more than "
                        f"{MAX_PAIRS}); the maximum over all of them is not computed")
        if not isinstance(proto.sampling, WithoutReplacement):
            draws = proto.n * min(p.gamma for p in blanket_pairs(proto))
            if draws < 1.0:
                # Its engine's lattice spans e^eps0 and costs tens of seconds here, for a
                # value no better than the bounds that ignore the blanket.
                return (f"the expected number of blanket draws n*gamma = {draws:.3g} is below "
                        "1: the victim hides among almost no one, so this bound cannot "
                        "improve on the others (not evaluated)")
        if isinstance(proto.sampling, WithoutReplacement):
            return ("sampling without replacement makes the users' participation dependent, "
                    "so the blanket draws are not i.i.d.; use CheckIn(rate) or the unsampled "
                    "protocol (a valid bound for it holds for the sampled one by "
                    "post-processing)")
        return None

    def valid_for(self, proto):
        s = f"this randomizer (non-adaptive within a round): {proto.mechanism.describe()}"
        if isinstance(proto.sampling, CheckIn):
            s += f", check-in rate {proto.sampling.rate:g}"
        return s

    def likely_first(self, proto):
        # Beyond binary randomized response the blanket of the concrete randomizer is
        # usually well below the clone pairs (which know only eps0): run it first so that
        # their floors can meet its answer (binary RR: FMT23's clone pair is as tight).
        m = proto.mechanism
        return not (isinstance(m, RandomizedResponse) and m.k == 2)

    # ----- the views: the blanket pair's own (shuffledp.pairs.blanket) ------------------
    # δ(ε), ε(δ), the bracket and the PLD atoms (far-tail atoms charged at infinite loss)
    # are the pair's (``PairBound``); the Rényi view too.
    def pair(self, proto):
        return BlanketPair.of(proto)

    def rdp(self, proto, orders):
        return self.pair(proto).rdp(orders)

    def max_order(self, proto):
        return self.pair(proto).max_order()

    # ----- routes ------------------------------------------------------------------------
    def order_routes(self, routes):
        # Every composer that accepts the views, PLD first: its value (usually the best)
        # is then what the RDP and KOV15 routes must beat, and their floors skip them.
        return sorted(routes, key=lambda x: (x != "none", x != "pld"))

    def preferred_route(self, rounds):
        # One round: the certified δ(ε) is below any conversion of the same pair.
        return "none" if rounds == 1 else None

    def route_details(self, details, proto, ask, rounds, route, value):
        # What the engine certifies beside the value: the victim pair and its error (one
        # round), the f-DP grid the PLD's atoms come from and its spacing at the answer.
        if route == "none":
            if isinstance(ask, EpsilonAt):
                _, det = blanket_epsilon(proto, float(ask.delta))
            else:
                _, det = blanket_delta(proto, float(ask.epsilon))
            details.update(det)
        elif route == "pld":
            g, _, _, grid = fdp_pair(proto)
            details["fdp_points"] = int(grid.size)
            details["fdp_vertices"] = int(g.size)
            if isinstance(ask, EpsilonAt) and math.isfinite(value):
                # the interpolation's own error: the ε-spacing of the curve around the answer
                per = value / rounds
                i = int(np.searchsorted(grid, per))
                lo_i, hi_i = max(i - 1, 0), min(i, grid.size - 1)
                details["fdp_grid_spacing_at_answer"] = float(grid[hi_i] - grid[lo_i])
