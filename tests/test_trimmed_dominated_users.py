"""trimmed-clone beside trimmed-clone-sampled where the sampled pair is built for more users
than trimmed-clone's (the cost caps of ``TrimmedClone.users`` / ``TrimmedCloneSampled.users``):
not a dominance claim (the sampled *bound* at more users is not proven below itself at
fewer, and its computed δ at large ε was measured above trimmed-clone's), but proven floors
on trimmed-clone's value: ``majority_floor_beats`` (one bit per round, which type has more
outputs among the victim and its clones, already leaks more than the answer) and, for one
round, ``one_round_floor_beats`` (the clone pair at the smallest feasible ε0, a
post-processing of every member).

Checked here: its ingredients (the Wallis bound on the central binomial term, the binary
channel's T-fold hockey-stick in mpmath), the floor against the exact T-fold δ of the
trimmed pair by enumeration (small m), end to end (the skip is reported with its reason and
changes no answer: the same float as with the floor switched off, and the skipped bound
asked by name is above), and a case where nothing is claimed and both are computed.
"""

import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.bounds import trimmed_clone as tc
from shuffledp.bounds.base import get
from shuffledp.bounds.sampled import TrimmedCloneSampled
from shuffledp.core.views import DeltaAt, EpsilonAt
from shuffledp.pairs.clone import pair_log_atoms
from shuffledp.pairs.trimmed import trimmed_pair


def _gauss(sigma, n, rate):
    return sd.Shuffle(sd.Gaussian(sigma), n=n, sampling=sd.CheckIn(rate))


# ---------------------------------------------------------------------------------------
# The ingredients
# ---------------------------------------------------------------------------------------
def test_central_binomial_term_is_above_the_jensen_function():
    """b(C) = binom(C, floor(C/2))/2^C >= sqrt(2/(pi (C + 2))), exactly for C < 3000."""
    for c in range(3000):
        b = mp.mpf(math.comb(c, c // 2)) / mp.mpf(2) ** c
        assert b >= mp.sqrt(2 / (mp.pi * (c + 2)))
    # and the function is nearly tight for large C (so the floor is not loose there)
    c = 2000
    assert math.comb(c, c // 2) / 2 ** c < 1.001 * math.sqrt(2 / (math.pi * (c + 2)))


def _binary_hockey_mp(h, T, eps):
    q, r = mp.mpf(1) / 2 + mp.mpf(h), mp.mpf(1) / 2 - mp.mpf(h)
    s = mp.mpf(0)
    for k in range(T + 1):
        pk, qk = mp.binomial(T, k) * q ** k * r ** (T - k), mp.binomial(T, k) * r ** k * q ** (T - k)
        s += max(pk - mp.e ** eps * qk, 0)
    return s


@pytest.mark.parametrize("h,T,eps", [(0.01, 13, 0.05), (0.2, 1, 0.3), (0.003, 400, 0.1),
                                     (0.05, 60, 2.0), (0.3, 5, 0.0)])
def test_binary_hockey_is_a_tight_lower_bound(h, T, eps):
    mp.mp.dps = 40
    exact = _binary_hockey_mp(h, T, eps)
    low = tc.majority_hockey_T(h, T, eps)
    assert low <= exact
    assert low >= exact * (1 - 1e-5)


def _exact_delta_T(pair, rounds, eps):
    """Exact δ_T(ε) of the clone pair by enumeration of its atoms (small m, T <= 3)."""
    lp, lq = pair_log_atoms(pair, sds=40.0)
    assert abs(np.exp(lp).sum() - 1.0) < 1e-12
    P, Q = np.exp(lp), np.exp(lq)
    PT, QT = P.copy(), Q.copy()
    for _ in range(rounds - 1):
        PT, QT = np.outer(PT, P).ravel(), np.outer(QT, Q).ravel()
    return float(np.sum(np.maximum(PT - math.exp(eps) * QT, 0.0)))


def _h(m, e, b=None):
    b = b or (lambda x: math.sqrt(2.0 / (math.pi * (x + 2.0))))
    return 0.5 * math.tanh(0.5 * e) * b((m - 1) * math.exp(-e))


@pytest.mark.parametrize("m,sigma,e0,rounds,eps", [
    (6, 2.0, 0.8, 1, 0.2), (10, 1.5, 1.0, 2, 0.3), (20, 1.0, 2.5, 3, 0.5),
    (40, 2.0, 1.5, 2, 0.1), (12, 0.8, 2.0, 3, 1.0), (30, 1.0, 3.0, 2, 0.0)])
def test_floor_is_below_the_exact_pair(m, sigma, e0, rounds, eps):
    """At a member's own ε0 (p <= e^-ε0, ε0' >= ε0, the floor's assumptions with e = ε0) the
    binary channel's T-fold δ is below the trimmed pair's exact T-fold δ (enumeration); a
    sabotaged h (the central term without the 1/sqrt(C) decay) exceeds it somewhere."""
    pair, c = trimmed_pair(m, sigma, e0)
    assert pair is not None
    exact = _exact_delta_T(pair, rounds, eps)
    assert tc.majority_hockey_T(_h(m, e0), rounds, eps) <= exact * (1 + 1e-9)


def test_a_sabotaged_floor_is_caught():
    m, sigma, e0, rounds, eps = 20, 1.0, 2.5, 3, 0.5
    pair, _ = trimmed_pair(m, sigma, e0)
    exact = _exact_delta_T(pair, rounds, eps)
    assert tc.majority_hockey_T(_h(m, e0), rounds, eps) > 0.2 * exact     # not vacuous
    assert tc.majority_hockey_T(_h(m, e0, b=lambda x: 1.0), rounds, eps) > exact


# ---------------------------------------------------------------------------------------
# End to end
# ---------------------------------------------------------------------------------------
MORE_USERS = [
    # two random latency questions where trimmed-clone lost (its pair built for 1e6 users,
    # the sampled one for n), and a cheaper one of the same kind
    pytest.param(_gauss(1.2923, 150_000_000, 0.331), 5.63e-08, 13, marks=pytest.mark.slow),
    pytest.param(_gauss(1.9335, 6_400_000, 0.118), 2.91e-09, 29999, marks=pytest.mark.slow),
    (_gauss(1.3, 2_000_000, 0.3), 5e-8, 13),
]


@pytest.mark.parametrize("proto,delta,rounds", MORE_USERS)
def test_skipped_where_the_sampled_pair_has_more_users(monkeypatch, proto, delta, rounds):
    assert TrimmedCloneSampled.users(proto) > tc.TrimmedClone.users(proto, rounds)
    r = sd.epsilon(proto, delta, rounds)
    assert r.bound == "trimmed-clone-sampled"
    assert "trimmed-clone" not in {c.bound for c in r.candidates}
    why = dict(r.not_applicable)["trimmed-clone"]
    assert why.startswith("skipped: cannot beat") and "one bit per round" in why
    with monkeypatch.context() as m:
        m.setattr(tc, "majority_floor_beats", lambda *a, **k: False)
        full = sd.epsilon(proto, delta, rounds)
    assert "trimmed-clone" in {c.bound for c in full.candidates}
    assert full.epsilon == r.epsilon and full.bound == r.bound
    named = sd.epsilon(proto, delta, rounds, bound="trimmed-clone").epsilon
    assert named > r.epsilon


def test_delta_question_floor_is_below_the_named_value():
    """The δ side of the floor: it claims "at least beat" only below trimmed-clone's own δ."""
    proto, T, eps = sd.Shuffle(sd.Gaussian(2.0), n=3000), 20, 1.0
    named = sd.delta(proto, eps, T, bound="trimmed-clone").delta
    assert 0.0 < named < 1.0
    assert not tc.majority_floor_beats(3000, 2.0, T, DeltaAt(eps), named * (1 + 1e-9))
    assert get("trimmed-clone").proven_floor(proto, DeltaAt(eps), T, named * (1 + 1e-9)) is None
    # and it does claim well below it
    assert tc.majority_floor_beats(3000, 2.0, T, DeltaAt(eps), 0.1 * named)


@pytest.mark.parametrize("proto,delta,rounds", [
    (_gauss(2.0, 1000, 0.3), 1e-5, 5),        # few users, several rounds: the floors are weak
    (_gauss(2.0, 3000, 0.9), 1e-6, 3),        # rate 0.9: the two pairs nearly coincide
])
def test_nothing_claimed_and_both_computed_where_the_floors_are_weak(proto, delta, rounds):
    r = sd.epsilon(proto, delta, rounds)
    assert {"trimmed-clone", "trimmed-clone-sampled"} <= {c.bound for c in r.candidates}
    assert r.epsilon == min(c.epsilon for c in r.candidates)
    m, sigma = tc.TrimmedClone.users(proto, rounds), float(proto.mechanism.sigma)
    assert not tc.majority_floor_beats(m, sigma, rounds, EpsilonAt(delta), r.epsilon)


# ---------------------------------------------------------------------------------------
# One round: the clone pair at the smallest feasible eps0
# ---------------------------------------------------------------------------------------
def _exact_delta_1(pair, eps):
    return _exact_delta_T(pair, 1, eps)


@pytest.mark.parametrize("m,sigma,eps", [(8, 1.5, 0.3), (20, 1.0, 0.5), (40, 2.0, 0.1),
                                         (15, 0.8, 1.0)])
def test_one_round_floor_pair_is_below_every_feasible_member(m, sigma, eps):
    """The pair at (e^-e, α(e)) is a post-processing of every member with ε0 > e: its exact
    δ (enumeration) is below each member's on a grid of ε0 above e, and the certified floor
    the bound uses is below it; at a δ the members leave, the floor is not vacuous."""
    from shuffledp.pairs.clone import ClonePair
    from shuffledp.pairs.clone.hockey import pair_delta_floor
    from shuffledp.pairs.law import Bias
    delta = 1e-3
    e = tc.infeasible_eps0(m, sigma, 1, delta)
    assert e > 0.0
    bias = Bias(e)
    low_pair = ClonePair(m, math.exp(-e), bias.alpha, bias.beta, e)
    low = _exact_delta_1(low_pair, eps)
    assert pair_delta_floor(low_pair, eps) <= low * (1 + 1e-9)
    # sabotaged: the pair at a larger eps0 (fewer clones, a surer victim) is not below them
    sb = Bias(e + 2.0)
    bad = _exact_delta_1(ClonePair(m, math.exp(-e - 2.0), sb.alpha, sb.beta, e + 2.0), eps)
    seen, caught = 0, False
    for e0 in np.linspace(e * (1 + 1e-6), e + 4.0, 25):
        pair, c = trimmed_pair(m, sigma, float(e0))
        if pair is None:
            continue
        seen += 1
        member = _exact_delta_1(pair, eps)
        assert low <= member * (1 + 1e-9)
        caught = caught or bad > member
    assert seen >= 20 and caught
    assert low > 0.0


def test_one_round_floor_skip_changes_no_answer(monkeypatch):
    # the latency grid's gauss-checkin n = 1e3, T = 1, δ = 1e-5 question
    proto = _gauss(2.0, 1000, 0.1)
    r = sd.epsilon(proto, 1e-5, 1)
    why = dict(r.not_applicable)["trimmed-clone"]
    assert why.startswith("skipped: cannot beat") and "smallest such eps0" in why
    with monkeypatch.context() as m:
        m.setattr(tc, "one_round_floor_beats", lambda *a, **k: False)
        full = sd.epsilon(proto, 1e-5, 1)
    assert "trimmed-clone" in {c.bound for c in full.candidates}
    assert full.epsilon == r.epsilon
    named = sd.epsilon(proto, 1e-5, 1, bound="trimmed-clone").epsilon
    assert named > r.epsilon
    assert not tc.one_round_floor_beats(1000, 2.0, EpsilonAt(1e-5), named)
    # the δ side: never "at least" above the bound's own δ
    d = sd.delta(proto, 1.0, 1, bound="trimmed-clone").delta
    assert 0.0 < d
    assert not tc.one_round_floor_beats(1000, 2.0, DeltaAt(1.0), d * (1 + 1e-9))


def test_delta_question_computes_both_and_keeps_the_smaller():
    """The equal-users dominance of trimmed-clone by trimmed-clone-sampled was measured on
    ε questions; on a δ question at tiny δ the sampled value is far above (2.1e-17 against
    2.9e-22 here), so both are computed and the smaller is the answer."""
    import shuffledp as sd
    r = sd.delta(sd.Shuffle(sd.Gaussian(8.546), n=10**5, sampling=sd.CheckIn(0.11)),
                 epsilon=0.54, rounds=116)
    c = {x.bound: x.delta for x in r.candidates}
    assert "trimmed-clone" in c and "trimmed-clone-sampled" in c
    assert r.bound == "trimmed-clone"
    assert c["trimmed-clone"] < 1e-3 * c["trimmed-clone-sampled"]
