"""trimmed-clone's floor from the rounds whose outputs all carry the victim's type
(``no_clone_floor_beats``): checked against the exact T-fold hockey-stick divergence of the
trimmed pair (full enumeration at small m), with a sabotaged variant that must fail, and
end to end (the skip changes no answer)."""

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.bounds import trimmed_clone as tc
from shuffledp.core.views import EpsilonAt
from shuffledp.pairs.clone import pair_log_atoms
from shuffledp.pairs.trimmed import trimmed_pair


def _exact_delta_T(pair, rounds, eps):
    """Exact δ_T(ε) of the clone pair by enumeration of its atoms (small m, T ≤ 3)."""
    lp, lq = pair_log_atoms(pair, sds=40.0)
    assert abs(np.exp(lp).sum() - 1.0) < 1e-12          # the window holds every outcome
    P, Q = np.exp(lp), np.exp(lq)
    PT, QT = P.copy(), Q.copy()
    for _ in range(rounds - 1):
        PT, QT = np.outer(PT, P).ravel(), np.outer(QT, Q).ravel()
    return float(np.sum(np.maximum(PT - math.exp(eps) * QT, 0.0)))


def _floor(m, e, rounds, eps, half=0.5):
    return math.exp((m - 1) * rounds * math.log1p(-half * math.exp(-e))
                    - rounds * math.log1p(math.exp(-e)) + math.log(-math.expm1(eps - e * rounds)))


@pytest.mark.parametrize("m,e0,rounds,eps", [(4, 1.5, 2, 0.5), (6, 2.0, 3, 1.0),
                                             (3, 0.7, 2, 0.2), (8, 3.0, 2, 2.0),
                                             (4, 5.0, 2, 7.5), (3, 4.0, 3, 9.0)])
def test_floor_is_below_the_exact_divergence(m, e0, rounds, eps):
    sigma = 1.0
    pair, c = trimmed_pair(m, sigma, e0)
    assert pair is not None
    exact = _exact_delta_T(pair, rounds, eps)
    # the floor at the member's own ε0 (e = ε0 ≤ ε0' and p ≤ e^-ε0): below the exact value
    assert _floor(m, e0, rounds, eps) <= exact * (1 + 1e-9)
    # Where only the all-type-0 outcome has loss above ε ((T − 1)ε0' < ε < Tε0') the floor
    # is nearly the exact value, and a sabotaged one (a clone of type 0 with probability
    # 3/4 instead of 1/2) exceeds it.
    if (rounds - 1) * e0 < eps < rounds * e0 and e0 >= 4.0:
        assert _floor(m, e0, rounds, eps) > 0.9 * exact
        assert _floor(m, e0, rounds, eps, half=0.25) > exact


def test_infeasible_eps0_is_infeasible_and_tight():
    m, sigma, T, delta = 10**6, 0.7, 4, 2e-8
    e = tc.infeasible_eps0(m, sigma, T, delta)
    assert tc._charge_at(m, sigma, T, e) > delta
    assert tc._charge_at(m, sigma, T, e * (1 + 1e-6) + 1e-9) <= delta * (1 + 2e-6)


def test_the_skip_changes_no_answer_and_the_skipped_bound_is_above():
    proto = sd.Shuffle(sd.Gaussian(0.6968), n=4 * 10**7, sampling=sd.CheckIn(0.00274))
    r = sd.epsilon(proto, delta=2.14e-8, rounds=4)
    why = dict(r.not_applicable)["trimmed-clone"]
    assert why.startswith("skipped: cannot beat") and "victim's type" in why
    named = sd.epsilon(proto, delta=2.14e-8, rounds=4, bound="trimmed-clone").epsilon
    assert named > r.epsilon
    # with this floor (and the majority floor after it, which would skip it too) off
    orig = tc.no_clone_floor_beats, tc.majority_floor_beats
    tc.no_clone_floor_beats = tc.majority_floor_beats = lambda *a, **k: False
    try:
        full = sd.epsilon(proto, delta=2.14e-8, rounds=4)
    finally:
        tc.no_clone_floor_beats, tc.majority_floor_beats = orig
    assert full.epsilon == r.epsilon
    assert "trimmed-clone" in {c.bound for c in full.candidates}
    # the δ question too
    d = sd.delta(proto, epsilon=1.0, rounds=4)
    assert sd.delta(proto, epsilon=1.0, rounds=4, bound="trimmed-clone").delta >= d.delta


def test_floor_does_not_claim_where_clones_hide_the_victim():
    # σ = 2: ε0 is small enough that many users are clones; nothing is claimed
    assert not tc.no_clone_floor_beats(10**6, 2.0, 10, EpsilonAt(1e-6), 0.01)
