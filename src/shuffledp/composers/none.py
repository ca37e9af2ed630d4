"""``none``: one round of one entry, read off its single-round (ε, δ) view."""

from __future__ import annotations

from ..views import Outcome
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

    def epsilon(self, parts, delta, **opts):
        parts = merge_parts(parts)
        v = parts[0][0]
        return Outcome(float(v.dp.epsilon_of(delta)), v.kind, self.name)

    def delta(self, parts, epsilon, **opts):
        parts = merge_parts(parts)
        v = parts[0][0]
        return Outcome(float(v.dp.delta_of(epsilon)), v.kind, self.name)
