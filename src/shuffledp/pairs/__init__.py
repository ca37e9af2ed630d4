r"""Pairs: one round of a protocol as a pair of output laws, below bounds and composers.

* ``base``      the ``Pair`` protocol (units: nats; "upper" = certified upper bounds);
* ``law``       ``Bias`` / ``CloneLaw``: the ONE place a victim's α and β = 1 − α are formed;
* ``clone``     the clone family (FMT20, FMT23, randomizer-specific, k-RR marginal), split
                by concern: slices, hockey-stick, Rényi, atoms;
* ``hidden``    the hidden-⊥ clone pairs of sampled rounds;
* ``addremove`` the add/remove pair of a checked-in round;
* ``trimmed``   the trimmed-victim pairs of (ε0, δ0)-LDP randomizers (the Gaussian);
* ``iid``       the certified engine for E[(ΣG)_+] of i.i.d. sums (the blanket's δ(ε));
* ``blanket``   the privacy-blanket pair of one concrete randomizer (over ``iid``);
* ``dummy_blanket`` the blanket with dummy reports drawn from a public distribution
                (one round's δ(ε) and ε(δ), over ``iid``; docs/dummies.md);
* ``adapter``   ``views_of(pair)``: any pair as the views composers read.

This package imports only records and numerics (tests/test_imports.py checks it).
"""

from .base import ChargedPair, Pair, PldPair, RdpPair, capabilities

__all__ = ["Pair", "RdpPair", "PldPair", "ChargedPair", "capabilities"]
