"""The clone pair's points in buffers (session 18): ``rdp_points._point_terms`` must give
the floats of the expressions as first written (frozen below), bit for bit, on the point
sets the PLD atoms and the Rényi sums use — small and large clone counts, x = 0 and
x = c + 1 at the window's edges, large ε0 (where the other form of ℓ is used)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.pairs.clone import fmt20_pair, fmt23_pair
from shuffledp.pairs.clone import atoms as at
from shuffledp.pairs.clone import rdp_points as rp
from shuffledp.pairs.trimmed import trimmed_pair


def _point_terms_ref(pair, x, c, lv):
    alpha, beta, gamma = pair.alpha, pair.beta, pair.gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        lu = lv + np.log(x) - np.log(np.maximum(c + 1.0 - x, 1.0))
    top = ~(x <= c)
    lu[top] = -c[top] * math.log(2.0)
    lu[x == 0] = -np.inf
    logP = np.logaddexp(pair.log_alpha + lu, pair.log_beta + lv)
    den = beta * x + alpha * (c + 1.0 - x)
    arg = gamma * (2.0 * x - c - 1.0) / den
    ell = np.log1p(np.maximum(arg, -0.5))
    low = ~(arg > -0.5)
    if low.any():
        xl, cl = x[low], c[low]
        with np.errstate(divide="ignore"):
            ell[low] = np.log(alpha * xl + beta * (cl + 1.0 - xl)) - np.log(den[low])
    return logP, ell


def _pairs():
    yield fmt20_pair(1.0, 10**6)
    yield fmt20_pair(0.3, 5000)
    yield fmt20_pair(7.5, 3000)              # tiny β: the ratio form of ℓ near x = 0
    yield fmt23_pair(2.0, 10**5)
    yield fmt23_pair(12.0, 40)               # a handful of clones: x = 0 and x = c + 1
    yield trimmed_pair(10**4, 2.0, 3.2)[0]


@pytest.mark.parametrize("pair", list(_pairs()), ids=lambda p: f"n{p.n}-p{p.p:.3g}")
@pytest.mark.parametrize("sds", [at._PLD_SDS, 30.0])
def test_point_terms_bit_for_bit(pair, sds):
    c_eval, _, _, alo, ahi, _, _, _, _ = rp._rdp_plan(pair, sds, None, rp.RDP_POINT_BUDGET)
    pts = rp._SlicePoints(pair, c_eval, alo, ahi, 0, c_eval.size)
    edges = 0
    for g0, g1, _, _ in pts.groups:
        lv, x = pts.runs.rows(g0, g1, want_x=True)
        c = np.repeat(pts.cf[g0:g1], pts.counts[g0:g1])
        x0, c0, lv0 = x.copy(), c.copy(), lv.copy()
        got = rp._point_terms(pair, x, c, lv)
        ref = _point_terms_ref(pair, x0, c0, lv0)
        for a, b in zip(got, ref):
            assert a.tobytes() == b.tobytes()
        # the inputs are left as they were
        assert x.tobytes() == x0.tobytes() and c.tobytes() == c0.tobytes()
        assert lv.tobytes() == lv0.tobytes()
        edges += int(np.sum(x == 0) + np.sum(x == c + 1))
    if pair.n <= 100:                        # the window reaches x = 0 and x = c + 1
        assert edges > 0
