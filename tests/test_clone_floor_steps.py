"""The clone pair's floor (``bounds.clones._PairBound._floor_beats``) decides skips from a
certified LOWER bound on the pair's T-fold δ; it first tries the smaller screening pair and,
at many rounds, a grid ``FLOOR_COARSE`` times coarser. Every pair and every step must stay
below the clone pair's certified upper δ."""

import math

import numpy as np
import pytest

from shuffledp.bounds import clones
from shuffledp.compose import composition as comp
from shuffledp.numerics import pld_fft as pf
from shuffledp.pairs import clone as cp


@pytest.mark.parametrize("eps0,n,T", [(1.0, 5000, 3000), (3.0, 20_000, 800)])
def test_floor_on_both_steps_is_below_the_upper_delta(eps0, n, T):
    pair = cp.fmt23_pair(eps0, n)
    lp, lq = cp.pair_floor_atoms(pair)
    mom = pf.loss_moments(lp, lq)
    sd, root = math.sqrt(mom[1]), math.sqrt(T)
    d = max(sd * min(1.0 / 32.0, 0.05 / root), 18.0 * root * sd / clones.FLOOR_FFT,
            mom[2] / (pf.MAX_SUPPORT - 2))
    assert pf.fft_length_estimate(mom, T, d) > clones.FLOOR_COARSE_FFT   # the coarse step runs
    up_lp, up_lq, tail = pair.pld_atoms()
    centre = T * mom[0]
    spread = root * sd
    screen = clones._floor_screen_pair(pair)
    assert screen[0].size < lp.size
    seen = 0
    for eps in centre + spread * np.array([1.0, 3.0, 5.0]):
        upper, _ = comp.pld_delta(up_lp, up_lq, T, float(eps), tail, symmetric=True)
        for a, b in ((lp, lq), screen):
            for step in (d, clones.FLOOR_COARSE * d):
                low = pf.composed_delta_floor(pf.floor_lattice(a, b, step), T, float(eps))
                assert 0.0 <= low <= upper
                seen += low > 0.0
    assert seen >= 6                          # the floors are not vacuous here
