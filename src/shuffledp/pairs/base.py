r"""The ``Pair`` protocol: one round's privacy as a pair of output laws (P, Q).

A pair describes ONE round of a protocol on two neighbouring datasets by two distributions
P (under X0) and Q (under X1), or by a pair that *dominates* them (every hockey-stick
curve at or above theirs: Zhu, Dong, Wang, AISTATS 2022, Def. 8). The bounds of
``shuffledp.bounds`` build pairs; the adapter (``pairs/adapter.py``) turns any pair into
the views composers read (``shuffledp.core.views``). Pairs sit below bounds and composers: they
import only records, numerics and each other.

Units and meaning, for every method:

* privacy losses, ε and Rényi divergences are in **nats** (natural logarithms);
* ``delta(eps)`` = H_{e^ε}(P ‖ Q), the hockey-stick divergence of the round (the larger of
  the two directions when they differ); ``epsilon(delta)`` the smallest ε with
  ``delta(ε) ≤ delta``;
* **upper** (the default ``kind``): every value is a certified upper bound on the true
  one — tails charged, floating-point error rounded up — so ``epsilon`` returns the
  certified end of its search (δ(ε) ≤ delta was evaluated there). A pair of ``kind``
  ``"lower"`` is one instance's exact law, whose values are at or below the truth;
* ``delta`` does NOT include ``charge(rounds)``: the δ a trimmed victim leaves out, added
  once to the composed δ of ``rounds`` rounds (1 − c^T; 0 for pure ε0-LDP pairs).

Optional capabilities (the adapter offers a view only when the method exists):
``rdp(orders)`` (D_λ(P ‖ Q) at integer orders ≥ 2, rounded up) with ``max_order()``;
``pld_atoms()`` → (log P atoms, log Q atoms, P-mass left out, charged at infinite loss)
of a finite dominating pair, with ``pld_symmetric`` (True when one direction suffices);
``pure_epsilon()`` (the ε at δ = 0 when finite, else None).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Pair", "RdpPair", "PldPair", "ChargedPair", "capabilities"]


@runtime_checkable
class Pair(Protocol):
    """The single-round (ε, δ) curve of a pair (see the module docstring for units)."""

    def delta(self, eps: float) -> float:
        """H_{e^ε}(P ‖ Q) of one round, charge excluded."""
        ...

    def epsilon(self, delta: float) -> float:
        """Smallest certified ε with ``delta(ε) ≤ delta`` (charge excluded)."""
        ...

    def eps_hi(self) -> float:
        """An ε at or above which ``delta`` is its smallest value (0 for a pair of bounded
        loss): a bracket for searches; may be ``inf``."""
        ...


@runtime_checkable
class RdpPair(Pair, Protocol):
    """A pair with a Rényi curve."""

    def rdp(self, orders):
        """D_λ(P ‖ Q) at integer orders λ ≥ 2 (nats), an array like ``orders``."""
        ...

    def max_order(self) -> int:
        """Largest order ``rdp`` accepts."""
        ...


@runtime_checkable
class PldPair(Pair, Protocol):
    """A pair with finite atoms for privacy-loss-distribution composition."""

    pld_symmetric: bool

    def pld_atoms(self) -> tuple:
        """(log P, log Q, tail mass): atoms of a finite dominating pair (or, for a lower
        pair, of the instance) and the mass left out, charged at infinite loss."""
        ...


@runtime_checkable
class ChargedPair(Pair, Protocol):
    """A pair whose rounds carry a δ charge beside the pair's own curve (trimmed victims)."""

    def charge(self, rounds: int) -> float:
        """δ added once to the composed δ of ``rounds`` rounds."""
        ...


def capabilities(pair) -> tuple[str, ...]:
    """The optional capabilities a pair offers: a subset of ("rdp", "pld", "charge")."""
    out = []
    if isinstance(pair, RdpPair):
        out.append("rdp")
    if isinstance(pair, PldPair):
        out.append("pld")
    if isinstance(pair, ChargedPair):
        out.append("charge")
    return tuple(out)
