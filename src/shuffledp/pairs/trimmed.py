r"""Trimmed-victim pairs: the clone-type pairs of an (ε0, δ0)-LDP randomizer (the Gaussian).

Lemma [D] (docs/trimmed-clone.md): if R is (ε0, δ0)-LDP, c = 1 − n·δ0 > 0 and
ε0' = ε0 − log c, the generic clone pair with p = e^{−ε0}·c and victim log-odds ε0' gives
δ(ε) ≤ H_{e^ε}(P‖Q) + n·δ0 for one round and δ_T(ε) ≤ H(P^{⊗T}‖Q^{⊗T}) + 1 − c^T for T
adaptive rounds. Any ε0 gives a valid pair; the bounds (``bounds/trimmed_clone.py``,
``bounds/sampled.py``, ``bounds/addremove.py``) search ε0. The victim's α and β come from
its log-odds (``pairs.law.Bias``): 1 − α rounds to 0 at ε0' ≳ 36.7 (small σ).

* ``trimmed_pair``: the clone pair of all n users reporting (and ``TrimmedPair``, the same
  as a ``Pair`` carrying its charge);
* ``trimmed_hidden``: its hidden-⊥ form for sampled rounds (``pairs/hidden.py``);
* ``trimmed_addremove_pair``: the add/remove pair with the trimmed victim
  (``pairs/addremove.py``; docs/relations.md, "The Gaussian under add/remove").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import gaussian_rdp as G
from .addremove import MAX_N as AR_MAX_N
from .addremove import AddRemovePair, addremove_pair
from .clone import ClonePair
from .hidden import HiddenPair, hidden_pair
from .law import Bias

__all__ = ["TrimmedPair", "trimmed_pair", "trimming_charge", "trimmed_hidden", "trimmed_addremove_pair"]


def trimmed_pair(n: int, sigma: float, eps0: float):
    """(pair, c) for the Gaussian at ε0, or (None, c) when c = 1 − nδ0 ≤ 0."""
    d0 = G.gaussian_delta(sigma, eps0)
    c = 1.0 - n * d0
    if c <= 0:
        return None, c
    e0p = eps0 - math.log(c)
    p = math.exp(-eps0) * c
    bias = Bias(e0p)
    if not (p > 0.0 and bias.beta > 0.0):
        # e^−ε0 (or the victim's β) below the float range: nothing to hide among
        # that the float pair can represent; this ε0 is simply not used by the search.
        return None, c
    # α and β from the log-odds ε0' (1 − α rounds to 0 at ε0' ≳ 36.7: small σ).
    return ClonePair(n, p, bias.alpha, bias.beta, e0p), c


@dataclass(frozen=True)
class TrimmedPair:
    """The trimmed clone pair of ``Shuffle(Gaussian(sigma), n)`` at ε0, as a ``Pair``.

    Its curves are the clone pair's (``clone``); ``charge(T)`` is the δ the trimming
    leaves out: n·δ0 for one round, 1 − c^T for T rounds (c = 1 − n·δ0).
    """

    clone: ClonePair
    c: float
    n: int
    delta0: float

    @classmethod
    def at(cls, n: int, sigma: float, eps0: float) -> "TrimmedPair | None":
        """The pair at ε0, or None where ``trimmed_pair`` gives none."""
        pair, c = trimmed_pair(n, sigma, eps0)
        if pair is None:
            return None
        return cls(pair, c, int(n), G.gaussian_delta(sigma, eps0))

    pld_symmetric = True

    def delta(self, eps: float) -> float:
        return self.clone.delta(eps)

    def epsilon(self, delta: float) -> float:
        return self.clone.epsilon(delta)

    def eps_hi(self) -> float:
        return self.clone.eps_hi()

    def rdp(self, orders):
        return self.clone.rdp(orders)

    def max_order(self) -> int:
        return self.clone.max_order()

    def pld_atoms(self):
        return self.clone.pld_atoms()

    def charge(self, rounds: int) -> float:
        """n·δ0 for one round (the lemma's one-round form), 1 − c^T for T > 1."""
        return trimming_charge(self.n, self.delta0, rounds)


def trimming_charge(n: int, delta0: float, rounds: int) -> float:
    """The δ the trimming leaves out: n·δ0 for one round, 1 − c^T for T > 1 rounds
    (c = 1 − n·δ0; 1 where c ≤ 0, no pair exists)."""
    if rounds == 1:
        return n * delta0
    c = 1.0 - n * delta0
    return 1.0 if c <= 0 else -math.expm1(rounds * math.log(c))


def trimmed_hidden(n: int, sigma: float, eps0: float, rate=None,
                   size=None) -> tuple[HiddenPair | None, float]:
    """(hidden pair, c_γ) of the trimmed Gaussian at ε0, or (None, c_γ) when invalid.

    c = 1 − n·δ0 (trimming against all n + 1 inputs), ε0' = ε0 − log c (the victim's
    log-odds: α = e^ε0'/(1 + e^ε0') is formed from it in ``pairs.law.Bias``), p = e^−ε0·c,
    κ = e^−ε0, c_γ = 1 − γ n δ0 (check-in) or 1 − m δ0 (without replacement).
    """
    d0 = G.gaussian_delta(sigma, eps0)
    c = 1.0 - n * d0
    part = size if size is not None else rate * n
    cg = 1.0 - part * d0
    if c <= 0 or cg <= 0 or not math.exp(-eps0) > 0.0 or eps0 - math.log(c) > 700.0:
        # (e^−ε0 or the victim's β below the float range: this ε0 is not used by the search)
        return None, cg
    hp = hidden_pair(n, math.exp(-eps0) * c, log_odds=eps0 - math.log(c),
                     kappa=math.exp(-eps0), rate=rate, size=size, c_gamma=cg)
    return hp, cg


def trimmed_addremove_pair(n: int, rate: float, sigma: float,
                           eps0: float) -> AddRemovePair | None:
    """The add/remove pair of the Gaussian trimmed at ε0, or None when (n − 1)·δ0 ≥ 1."""
    bad = (min(n, AR_MAX_N) - 1) * G.gaussian_delta(sigma, eps0)
    if not bad < 1.0 or not math.exp(-eps0) > 0.0:
        return None
    return addremove_pair(n, rate, eps0, bad)
