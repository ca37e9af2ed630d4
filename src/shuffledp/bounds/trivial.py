"""The trivial bound: shuffling is post-processing of ε0-LDP reports.

The shuffled output is ε0-DP, hence (λ, min(ε0, λ ε0²/2))-RDP (pure DP ⇒ ε0²/2-zCDP;
Bun & Steinke 2016, Prop. 1.4), always available and always valid. Its (ε, δ)
curve is the binary randomized-response curve δ(ε) = (e^ε0 − e^ε)/(e^ε0 + 1), which
dominates every ε0-DP pair (Kairouz, Oh, Viswanath 2015).

Sampled rounds: a user who takes part with probability γ (m/n without replacement) and
otherwise sends nothing is, on its own, the mixture (1 − γ)⊥ + γR(x) with ⊥ the same under
both datasets: RDP log(1 − γ + γ e^{(λ−1)ε(λ)})/(λ − 1) and δ(ε) = γ·δ_R(ε) (docs/bounds.md,
"Sampled rounds"); the rest of the protocol is post-processing.
"""

from __future__ import annotations

import math

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)

from ..numerics import round_up
from ._common import ldp_reason
from ._common import participation
from .base import Bound, register


@register
class Trivial(Bound):
    id = "trivial"
    after_exact = True
    scope = "ldp"
    kind = "upper"
    title = "Post-processing: the shuffled output is eps0-DP"
    reference = "Post-processing of eps0-LDP reports; zCDP of pure DP: Bun & Steinke, arXiv:1605.02065, Prop. 1.4"

    def check(self, proto):
        return ldp_reason(proto)

    def valid_for(self, proto):
        return "any eps0-LDP randomizer"

    def rdp(self, proto, orders):
        from ..pairs.hidden import mixture_rdp
        e0 = proto.eps0
        lam = np.asarray(orders, dtype=float)
        return round_up(mixture_rdp(participation(proto), lam, np.minimum(e0, lam * e0 * e0 / 2.0)))

    def delta_one(self, proto, eps):
        e0 = proto.eps0
        if eps >= e0:
            return 0.0
        return float(round_up(participation(proto) * -math.expm1(eps - e0) * special.expit(e0)))

    def epsilon_one(self, proto, delta):
        e0 = proto.eps0
        s = float(special.expit(e0)) * participation(proto)
        if delta >= s:
            return 0.0
        return max(0.0, e0 + math.log1p(-delta / s))

    def proven_floor(self, proto, ask, rounds, beat):
        # Every route (RDP, KOV15) is an upper bound on the exact T-fold composition of the
        # pair this bound stands for (binary randomized response at ε0, taking part with
        # probability γ): a certified lower bound on that composition at or above the best
        # answer so far means no route can beat it. Berry–Esseen on the pair's three-point
        # loss (±ε0, 0): microseconds (numerics.berry_esseen); this bound's routes cost
        # 10-50 ms over many rounds.
        if rounds <= 1:
            return None
        from ..core.views import EpsilonAt
        from ..numerics.berry_esseen import composed_delta_floor_be
        solves_eps, x = isinstance(ask, EpsilonAt), ask.given
        m = _rr_loss_moments(float(proto.eps0), participation(proto))
        v = composed_delta_floor_be(m, rounds, beat if solves_eps else x)
        if (v > x) if solves_eps else (v >= beat):
            return (f"the {rounds}-round {ask.solves} of the pair it composes (randomized "
                    f"response at eps0 = {proto.eps0:.6g}) is at least {beat:.6g} (a "
                    "certified lower bound on it by the Berry–Esseen inequality), and every "
                    "route is at or above that"), True
        return None


def _rr_loss_moments(e0: float, gamma: float):
    """Certified loss moments (``berry_esseen.LossMoments``) of a pair the trivial pair
    dominates: losses ±ε0 (and 0 on ⊥ when γ < 1) exactly, P-masses γ·expit(±ε0) and 1 − γ
    lowered by their rounding (so P and Q = P·e^{−loss} both shrink atom by atom)."""
    from ..numerics.berry_esseen import loss_moments_bounds
    if not (e0 > 0.0 and 0.0 < gamma <= 1.0):
        return None
    l1p = math.log1p(math.exp(-e0))                      # −log expit(ε0)
    lg = math.log(gamma)
    log_p = [lg - l1p, lg - e0 - l1p]
    loss = [e0, -e0]
    if gamma < 1.0:
        log_p.append(math.log1p(-gamma))
        loss.append(0.0)
    lp = np.array(log_p)
    lp = lp - 16.0 * 2.0 ** -53 * (np.abs(lp) + e0 + 1.0)
    return loss_moments_bounds(lp, np.array(loss))

