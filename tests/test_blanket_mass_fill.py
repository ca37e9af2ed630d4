"""The blanket pair's PLD atoms fill the floating-point deficit of their masses with an
outcome at loss ~0 instead of letting the composer charge it as infinite loss in every
round (T·1e-16 can be a sizeable part of a small δ, and it flipped with the last bits of
the certified curve)."""

from __future__ import annotations

import numpy as np

import shuffledp as sd
from shuffledp.pairs.blanket import BlanketPair


def test_masses_fill_the_deficit_and_only_add_an_outcome():
    mech = sd.RandomizedResponse(2.0483, 2)
    bp = BlanketPair(mech, 143724765, 1.0)
    lp, lq, dropped = bp.pld_atoms()
    # the composer's own sums (np.sum of the exponentials) leave at most the charged tails
    assert 1.0 - float(np.sum(np.exp(lp))) <= dropped
    assert 1.0 - float(np.sum(np.exp(lq))) <= dropped
    assert float(np.sum(np.exp(lp))) <= 1.0 + 1e-12
    # the extra outcome: P = m, Q = m·e^{1e-9} (loss −1e-9, grid point 0), m tiny
    assert abs((lp[-1] - lq[-1]) + 1e-9) < 1e-13      # (log m ≈ −36: its ulp)
    m = float(np.exp(lp[-1]))
    assert 0.0 < m < 1e-12
    # one round: each direction's hockey-stick curve with it is the curve without it plus
    # (m − e^ε·m·e^{1e-9})_+ ≥ 0
    P, Q = np.exp(lp), np.exp(lq)
    for eps in (0.0, 1e-5, 1e-4, 1e-3):
        for a, b in ((P, Q), (Q, P)):
            with_it = float(np.sum(np.maximum(a - np.exp(eps) * b, 0.0)))
            without = float(np.sum(np.maximum(a[:-1] - np.exp(eps) * b[:-1], 0.0)))
            assert without <= with_it <= without + m


def test_large_T_small_delta_answer_not_above_its_old_value():
    """The question where the noise decided the answer: 0.0775664 (blanket) before; the
    fill removes ~0.5 % of noise and the certified curve is now tighter too."""
    r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0483, 2), n=143724765), delta=1.57e-12,
                   rounds=2236)
    assert r.epsilon <= 0.07756643284437778
    b = [c for c in r.candidates if c.bound == "blanket"][0]
    assert b.epsilon < 0.0774
