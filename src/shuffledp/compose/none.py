"""``none``: one round of one entry, read off its single-round (ε, δ) view."""

from __future__ import annotations

import math

from ..core.errors import NotApplicableError
from ..core.views import EpsilonAt, Outcome
from ._registry import Composer, merge_parts, register


@register
class NoComposition(Composer):
    name = "none"
    reference = "single round: no composition"

    def accepts(self, parts):
        parts = merge_parts(parts)
        if len(parts) != 1 or parts[0][1] != 1:
            return "only one round of one entry"
        if parts[0][0].dp is None:
            return "needs a single-round (epsilon, delta) view"
        return None

    def floor(self, parts, ask, beat):
        """One δ evaluation instead of a root search: the single-round δ(ε) is
        non-increasing, so if δ(beat) > δ the ε answer is above ``beat`` (returned as the
        floor). The margin covers the rounding between a closed-form ε(δ) and δ(ε)."""
        if not isinstance(ask, EpsilonAt) or not math.isfinite(beat) or beat <= 0.0:
            return None
        v = merge_parts(parts)[0][0]
        try:
            d = v.dp.delta_of(beat)
        except (NotImplementedError, NotApplicableError, ArithmeticError):
            return None           # outside the view's condition
        return beat if d > ask.delta * (1.0 + 1e-6) else None

    def epsilon(self, parts, delta, **opts):
        parts = merge_parts(parts)
        v = parts[0][0]
        return Outcome(float(v.dp.epsilon_of(delta)), v.kind, self.name)

    def delta(self, parts, epsilon, **opts):
        parts = merge_parts(parts)
        v = parts[0][0]
        return Outcome(float(v.dp.delta_of(epsilon)), v.kind, self.name)
