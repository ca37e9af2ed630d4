"""The trimmed-clone ε0 search without the points that provably lose (issue 30, latency).

``golden_pruned`` must visit the same points and return the same ε0 as ``numerics.golden``
(bit for bit), and ``pair_delta_floor`` must be a certified lower bound on the pair's δ(ε)
(checked against an independent mpmath sum written here from docs/trimmed-clone.md's
slice form) while staying close to it, so that it prunes.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import oracle
from shuffledp.bounds._common import eps0_range, golden_pruned
from shuffledp.bounds.trimmed_clone import _one_round_loses
from shuffledp.numerics import golden
from shuffledp.pairs.clone import fmt20_pair
from shuffledp.pairs.clone.hockey import pair_delta, pair_delta_floor
from shuffledp.pairs.trimmed import TrimmedPair


def _mp_slices(n, p, eps0, sds):
    """(Pr[C = c], P_c, Q_c) per clone count c within ±sds·sd, 40 digits
    (``oracle.clone_pair_slices`` with the victim's α = e^ε0/(e^ε0 + 1))."""
    mp.mp.dps = 40
    return oracle.clone_pair_slices(n, p, mp.e ** eps0 / (mp.e ** eps0 + 1), sds)


def _mp_delta(n, p, eps0, eps, sds=12):
    """δ(ε) of the clone pair (n users, clone probability p, victim log-odds ε0) in mpmath:
    Σ_c Pr[C = c] Σ_x (P_c(x) − e^ε Q_c(x))⁺ over C within ±sds·sd (the dropped mass only
    lowers the sum)."""
    mp.mp.dps = 40
    E = mp.e ** mp.mpf(eps)
    return sum((wc * mp.fsum(max(mp.mpf(0), a - E * b) for a, b in zip(P, Q))
                for wc, P, Q in _mp_slices(n, p, eps0, sds)), mp.mpf(0))


@pytest.mark.parametrize("n,eps0,eps", [(300, 1.0, 0.1), (2000, 3.0, 0.2), (2000, 3.0, 1.0)])
def test_floor_is_below_the_exact_delta_and_close_to_it(n, eps0, eps):
    pair = fmt20_pair(eps0, n)
    exact = _mp_delta(n, mp.e ** -eps0, eps0, eps)
    fl = pair_delta_floor(pair, eps)
    assert fl <= exact                                  # a lower bound
    assert fl >= exact * (1 - 1e-6)                      # tight enough to prune
    assert fl <= pair_delta(pair, eps)                   # below the upper kernel


def test_floor_is_zero_past_the_largest_loss():
    pair = fmt20_pair(2.0, 1000)
    assert pair_delta_floor(pair, pair.log_ratio * 1.01) == 0.0


def test_pruned_golden_equals_golden_on_a_bumpy_function():
    # Not unimodal, with ties and infinite values: the path must still be golden's.
    def f(x):
        if x < 0.05:
            return math.inf
        return round(math.sin(7 * x) + (x - 0.6) ** 2, 3)

    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    ref = golden(f, 0.0, 2.0, max_iter=14).x
    x = golden_pruned(counted, lambda x, fp: f(x) > fp, 0.0, 2.0, max_iter=14)
    assert x == ref
    assert len(calls) < 16                   # the losers were not evaluated
    # a prover that never proves anything is plain golden
    assert golden_pruned(f, lambda x, fp: False, 0.0, 2.0, max_iter=14) == ref


@pytest.mark.parametrize("n,sigma,delta", [(10**4, 1.0, 1e-6), (10**5, 2.0, 1e-8),
                                           (3 * 10**5, 0.7, 1e-10)])
def test_trimmed_one_round_search_picks_golden_eps0(n, sigma, delta):
    def value(e0):
        tp = TrimmedPair.at(n, sigma, e0)
        if tp is None:
            return math.inf
        left = delta - tp.charge(1)
        return tp.epsilon(left) if left > 0 else math.inf

    lo, hi = eps0_range(n, sigma, delta)
    ref = golden(value, lo, hi, max_iter=10)
    pruned = []

    def loses(e0, fp):
        r = _one_round_loses(n, sigma, delta, e0, fp)
        if r:
            pruned.append(e0)
            assert value(e0) > fp          # the proof is right
        return r

    x = golden_pruned(value, loses, lo, hi, max_iter=10)
    assert x == ref.x
    assert pruned                          # and it saves root searches


def test_accountant_delta_question_is_plain_goldens_value():
    # End to end: the accountant answers at the ε0 plain golden picks (its value, rounded up).
    import shuffledp as sd
    from shuffledp.numerics import round_up
    from shuffledp.pairs import gaussian_rdp as G
    n, sigma, eps = 10**5, 2.0, 0.05

    def value(e0):
        tp = TrimmedPair.at(n, sigma, e0)
        return 1.0 if tp is None else min(1.0, tp.delta(eps) + tp.charge(1))

    x = golden(value, 0.0, G.gaussian_eps_hi(sigma, 1e-30 / n), max_iter=12).x
    r = sd.delta(sd.Shuffle(sd.Gaussian(sigma), n=n), epsilon=eps)
    assert r.bound == "trimmed-clone"
    assert r.chosen.details["eps0"] == x
    assert value(x) <= r.delta <= round_up(round_up(value(x)))


def _mp_renyi(n, p, eps0, lam, sds=12):
    """D_λ of the clone pair in mpmath (the slices of ``_mp_delta``)."""
    tot = sum((wc * mp.fsum(a ** lam * b ** (1 - lam) for a, b in zip(P, Q))
               for wc, P, Q in _mp_slices(n, p, eps0, sds)), mp.mpf(0))
    return mp.log(tot) / (lam - 1)


def test_trimmed_member_rdp_floor_is_below_the_exact_renyi_divergence():
    from shuffledp.bounds.trimmed_clone import _member
    m = _member(400, 2.0, 4.0)
    pair = m.pair.clone
    orders = np.array([2.0, 3.5, 8.0])
    fl = m.rdp.floor(orders)
    up = m.rdp.curve(np.array([2, 4, 8]))
    for i, lam in enumerate(orders):
        exact = _mp_renyi(pair.n, pair.p, pair.log_ratio, lam)
        assert fl[i] <= exact
        assert fl[i] >= 0.9 * exact                 # close enough to skip a route
    assert fl[0] <= up[0] and fl[2] <= up[2]


def test_rdp_route_skipped_by_its_floor_keeps_the_answer():
    import shuffledp as sd
    proto = sd.Shuffle(sd.Gaussian(2.0), n=10**4)
    r = sd.epsilon(proto, 1e-5, rounds=10)
    assert r.bound == "trimmed-clone" and r.composition == "pld"
    assert "cannot beat" in r.chosen.details["routes_skipped"]["rdp"]
    rdp = sd.epsilon(proto, 1e-5, rounds=10, bound="trimmed-clone", composition="rdp")
    assert rdp.epsilon >= r.epsilon


def test_pruned_golden_is_golden_with_proofs():
    # one golden loop: the pruned search is numerics.golden given the proofs, and a point
    # proven to lose is not evaluated (counted evaluations drop, the same x)
    from shuffledp.numerics import search
    f = lambda x: (x - 0.7) ** 2                                           # noqa: E731
    plain = search.golden(f, 0.0, 2.0, max_iter=14)
    pruned = search.golden(f, 0.0, 2.0, max_iter=14, loses=lambda x, fp: f(x) > fp)
    assert pruned.x == plain.x and pruned.fx == plain.fx
    assert (pruned.lo, pruned.hi) == (plain.lo, plain.hi)
    assert pruned.iterations < plain.iterations
