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
