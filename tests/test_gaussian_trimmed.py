"""trimmed-clone (gaussian.md §3a): the lemma by brute force, and the Gaussian anchors."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

import oracle
import shuffledp as sd


def _pair_dists(n, p, a):
    """The clone pair of clones.md §1 (g = 0) written out: {(zeros, ones): prob}."""
    b = 1 - a
    P, Q = {}, {}
    for c in range(n):
        wc = mp.binomial(n - 1, c) * mp.mpf(p) ** c * (1 - mp.mpf(p)) ** (n - 1 - c)
        for z in range(c + 1):
            wz = wc * mp.binomial(c, z) / mp.mpf(2) ** c
            for vt, pa, qa in ((0, a, b), (1, b, a)):
                key = (z + (vt == 0), c - z + (vt == 1))
                P[key] = P.get(key, 0) + wz * pa
                Q[key] = Q.get(key, 0) + wz * qa
    return P, Q


def _randomizer(eps0, d0):
    """(ε0, δ0)-LDP: reveal x w.p. δ0, else binary RR at ε0."""
    al = math.exp(eps0) / (1 + math.exp(eps0))
    return [[d0, 0.0, (1 - d0) * al, (1 - d0) * (1 - al)],
            [0.0, d0, (1 - d0) * (1 - al), (1 - d0) * al]]


@pytest.mark.parametrize("eps0,d0,n", [(1.0, 0.02, 3), (0.5, 0.05, 4), (2.0, 0.01, 3)])
def test_lemma_brute_force_one_and_two_rounds(eps0, d0, n):
    R = _randomizer(eps0, d0)
    c = 1 - n * d0
    e0p = eps0 - math.log(c)
    a = math.exp(e0p) / (1 + math.exp(e0p))
    P, Q = _pair_dists(n, math.exp(-eps0) * c, a)
    P2, Q2 = oracle.product(P, P), oracle.product(Q, Q)
    for eps in [0.0, 0.1, 0.3, 0.6, 1.0]:
        worst1, _ = oracle.worst_delta(R, n, eps)
        assert worst1 <= oracle.hockey(P, Q, eps) + n * d0 + 1e-30
        # two rounds, the same neighbouring pair each round (the worst-case one-round pair
        # and all others are enumerated for round one; round two uses the same datasets)
        for X0, X1 in oracle.neighbours(len(R), n):
            M0, M1 = oracle.shuffled(R, X0), oracle.shuffled(R, X1)
            two = oracle.hockey(oracle.product(M0, M0), oracle.product(M1, M1), eps)
            assert two <= oracle.hockey(P2, Q2, eps) + 1 - c ** 2 + 1e-30


def test_fmt20_theorem_value_beside_the_lemma():
    """FMT20's (ε0, δ0) theorem charges (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0 on top of the pure-ε0
    amplification; the lemma charges n·δ0. Same ε0, δ0: the lemma's charge is smaller."""
    eps0, d0, n, eps = 1.0, 0.02, 3, 0.3
    fmt20_charge = (math.exp(eps) + 1) * (1 + math.exp(-eps0) / 2) * n * d0
    assert n * d0 < fmt20_charge


def test_accountant_default_one_round_anchor():
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(9.48), 60000), 1 / 60000)
    assert r.bound == "trimmed-clone" and r.kind == "upper"
    assert 0.0070 <= r.epsilon <= 0.0080           # reference 0.00756 (gaussian.md §3a)
    un = [c for c in r.candidates if c.bound == "gaussian-unamplified"][0]
    assert abs(un.epsilon - 0.3469) < 1e-4


def test_accountant_default_many_rounds_anchor():
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), 6000), 1e-5, rounds=5540)
    assert r.bound == "trimmed-clone" and r.kind == "upper"
    assert r.epsilon <= 12.6                        # reference 12.2 via the pair's PLD
    assert r.candidates[[c.bound for c in r.candidates].index("trimmed-clone")].details[
        "routes"]["rdp"] <= 13.1                    # reference 13.0 via pair RDP
    un = [c for c in r.candidates if c.bound == "gaussian-unamplified"][0]
    assert abs(un.epsilon - 173.4) < 0.1


def test_trimmed_clone_applies_to_sampled_protocols():
    # A sampled round is a post-processing of the all-users round: the bound at n holds.
    p = sd.Shuffle(sd.Gaussian(5.0), 600, sampling=sd.WithoutReplacement(60))
    assert sd.bounds.get("trimmed-clone").check(p) is None
    full = sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), 600), 1e-5, bound="trimmed-clone").epsilon
    assert sd.epsilon(p, 1e-5, bound="trimmed-clone").epsilon == full
    assert sd.epsilon(p, 1e-5).epsilon <= full


def test_delta_question_is_consistent_with_epsilon():
    p = sd.Shuffle(sd.Gaussian(9.48), 60000)
    r = sd.delta(p, 0.0080)
    assert r.bound == "trimmed-clone" and r.delta <= 1 / 60000
