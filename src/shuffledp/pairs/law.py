r"""The one place where a clone-type pair's probabilities are formed.

Every clone-type pair of the library (the clone pairs of FMT20 / FMT23 / a given matrix, the
trimmed Gaussian victim, and their sampled "hidden-⊥" forms; docs/bounds.md) describes the
victim by a bias

    α = e^L / (1 + e^L),   β = 1 − α = 1 / (1 + e^L),

L = log(α/β) ≥ 0 the victim's log-odds (ε0 for an ε0-LDP randomizer, ε0 − log c for the
trimmed (ε0, δ0) victim). At ε0 ≳ 19, α is within 1e-8 of 1 and the float 1 − α keeps only
~8 correct digits; at ε0 ≳ 36.7 it is 0 and the pair looks deterministic. Both defects
have shipped (arXiv:2012.12803-style clone pairs, then again in the sampled pairs), so the
pair's parameters are built here and nowhere else:

* ``Bias(L)`` carries the log-odds; α, β and their logs are each computed directly from L
  (``expit(±L)``, ``log_expit(±L)``), never as 1 − something;
* ``Bias.diluted(s, neutral)``: the bias of a slice whose s informative reports share the
  cell with neutral mass (the hidden non-participants, docs/bounds.md "Sampled rounds"):
  α' = (α s + m/2)/(s + m), β' = (β s + m/2)/(s + m) — two sums of non-negative terms;
* ``CloneLaw``: (bias, clone probability p, neutral weight κ, participation γ, trimmed
  mass c_γ) with the roles' probabilities of sampling.md-style role tables (``roles``).

The tests forbid spelling ``1 - alpha`` (and friends) anywhere else in ``src/``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core._lazy import special  # scipy.special on first use (import time)

__all__ = ["Bias", "CloneLaw"]


@dataclass(frozen=True)
class Bias:
    """The victim's bias α = e^L/(1 + e^L) ∈ [½, 1), given by its log-odds L ≥ 0.

    Every property is computed from L, so β = 1 − α keeps full relative accuracy up to
    L = 700 (β ≈ 1e-304) and beyond, where 1 − α in floating point is 0 from L ≈ 36.7.
    """

    log_odds: float

    def __post_init__(self):
        L = float(self.log_odds)
        if not (L >= 0.0 and math.isfinite(L)):
            raise ValueError(f"log_odds must be a finite real number >= 0; got {self.log_odds!r}")
        object.__setattr__(self, "log_odds", L)

    @property
    def alpha(self) -> float:
        """α = e^L/(1 + e^L)."""
        return float(special.expit(self.log_odds))

    @property
    def beta(self) -> float:
        """β = 1 − α = 1/(1 + e^L), computed from L (no cancellation)."""
        return float(special.expit(-self.log_odds))

    @property
    def log_alpha(self) -> float:
        """log α = −log(1 + e^−L)."""
        return -math.log1p(math.exp(-self.log_odds))

    @property
    def log_beta(self) -> float:
        """log β = −L − log(1 + e^−L)."""
        return -self.log_odds - math.log1p(math.exp(-self.log_odds))

    @property
    def gamma(self) -> float:
        """α − β = tanh(L/2)."""
        return math.tanh(0.5 * self.log_odds)

    def diluted(self, s, neutral):
        """(α', β', γ') of a slice with s ≥ 1 informative reports and neutral mass
        ``neutral`` ≥ 0 (arrays broadcast): α' = (αs + m/2)/(s + m), β' = (βs + m/2)/(s + m)
        and γ' = α' − β' = γ·s/(s + m).

        No difference is formed: β' keeps full relative accuracy however close α' is to 1,
        and γ' however close both are to ½ (small ε0, where α and β round to 0.5).
        """
        s = np.asarray(s, dtype=float)
        m = np.asarray(neutral, dtype=float)
        tot = s + m
        half = 0.5 * m
        return ((self.alpha * s + half) / tot, (self.beta * s + half) / tot,
                self.gamma * (s / tot))


@dataclass(frozen=True)
class CloneLaw:
    """One round of a clone-type pair, as the roles of sampling.md's table.

    bias — the victim (type 0 w.p. γα·…, type 1 w.p. γβ·… under X0, swapped under X1);
    p — each other user's clone probability (a 0-clone or a 1-clone w.p. p/2 each);
    kappa — the neutral weight of a non-participant ⊥ relative to a clone (p for pure
    ε0-LDP, e^−ε0 for the trimmed Gaussian victim, whose p is e^−ε0·c);
    rate — participation γ (1: every user reports); c_gamma — the trimmed victim's total
    mass (1 for pure ε0-LDP; the per-round charge is 1 − c_γ).
    """

    bias: Bias
    p: float
    kappa: float
    rate: float = 1.0
    c_gamma: float = 1.0

    @property
    def log_ratio(self) -> float:
        """The largest privacy loss of the pair, log(α/β) = L."""
        return self.bias.log_odds

    def roles(self) -> dict:
        """Probabilities of the roles (others; the victim under X0), each formed directly.

        Keys: ``other_bot``, ``other_clone0``, ``other_clone1``, ``other_out``,
        ``victim_bot``, ``victim_type0``, ``victim_type1`` (the victim's masses before the
        trimmed normalisation by c_γ)."""
        g, p = self.rate, self.p
        return {"other_bot": 1.0 - g, "other_clone0": 0.5 * g * p, "other_clone1": 0.5 * g * p,
                "other_out": g * (1.0 - p), "victim_bot": 1.0 - g,
                "victim_type0": g * self.bias.alpha, "victim_type1": g * self.bias.beta}
