"""The trivial bound: shuffling is post-processing of ε0-LDP reports.

The shuffled output is ε0-DP, hence (λ, min(ε0, λ ε0²/2))-RDP (pure DP ⇒ ε0²/2-zCDP;
Bun & Steinke 2016, Prop. 1.4) — spec/README.md "Contract every bound obeys". Its (ε, δ)
curve is the binary randomized-response curve δ(ε) = (e^ε0 − e^ε)/(e^ε0 + 1), which
dominates every ε0-DP pair (Kairouz, Oh, Viswanath 2015).
"""

from __future__ import annotations

import math

import numpy as np
from .._lazy import special  # scipy.special on first use (import time)

from ..numerics import round_up
from ._common import ldp_reason
from .base import Bound, register


@register
class Trivial(Bound):
    id = "trivial"
    kind = "upper"
    title = "Post-processing: the shuffled output is eps0-DP"
    reference = "Post-processing of eps0-LDP reports; zCDP of pure DP: Bun & Steinke, arXiv:1605.02065, Prop. 1.4"
    has_rdp = True
    has_dp = True

    def check(self, proto):
        return ldp_reason(proto)

    def valid_for(self, proto):
        return "any eps0-LDP randomizer"

    def rdp(self, proto, orders):
        e0 = proto.eps0
        lam = np.asarray(orders, dtype=float)
        return round_up(np.minimum(e0, lam * e0 * e0 / 2.0))

    def delta_one(self, proto, eps):
        e0 = proto.eps0
        if eps >= e0:
            return 0.0
        return float(round_up(-math.expm1(eps - e0) * special.expit(e0)))

    def epsilon_one(self, proto, delta):
        e0 = proto.eps0
        s = float(special.expit(e0))
        if delta >= s:
            return 0.0
        return max(0.0, e0 + math.log1p(-delta / s))
