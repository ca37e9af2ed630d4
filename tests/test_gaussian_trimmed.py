"""trimmed-clone (docs/trimmed-clone.md): the lemma by brute force, and the Gaussian anchors."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

import oracle
import shuffledp as sd
from shuffledp.core.views import DeltaAt, EpsilonAt


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
    P, Q = oracle.clone_pair_law(n, math.exp(-eps0) * c, a)
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


def _gauss_delta0(sigma, eps0):
    """Balle–Wang exact (ε0, δ0) curve of the Gaussian, in mpmath (independent of the library)."""
    s, e = mp.mpf(sigma), mp.mpf(eps0)
    return mp.ncdf(1 / (2 * s) - e * s) - mp.e ** e * mp.ncdf(-1 / (2 * s) - e * s)


@pytest.mark.parametrize("sigma,n,delta", [(1.0, 4, 0.05), (2.0, 5, 1e-2)])
def test_library_value_is_the_lemma_at_its_eps0(sigma, n, delta):
    """The accountant's one-round trimmed-clone ε satisfies the lemma recomputed in mpmath
    at the ε0 it reports (δ_pair(ε) + n·δ0 ≤ δ), and is tight there (a slightly smaller ε
    does not), so the library neither over- nor under-states the lemma."""
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(sigma), n), delta, bound="trimmed-clone")
    e0 = r.chosen.details["eps0"]
    d0 = _gauss_delta0(sigma, e0)
    c = 1 - n * d0
    e0p = mp.mpf(e0) - mp.log(c)
    a = mp.e ** e0p / (1 + mp.e ** e0p)
    P, Q = oracle.clone_pair_law(n, mp.e ** (-mp.mpf(e0)) * c, a)

    def lemma(eps):
        return max(oracle.hockey(P, Q, eps), oracle.hockey(Q, P, eps)) + n * d0

    assert lemma(r.epsilon) <= delta * (1 + 1e-9)
    assert lemma(r.epsilon * (1 - 1e-4) - 1e-9) > delta * (1 - 1e-6)


def test_lemma_charge_beats_fmt20_theorem_charge():
    """FMT20's (ε0, δ0) theorem adds (e^ε + 1)(1 + e^−ε0/2)·n·δ0 to the pure-ε0 pair's δ;
    the lemma adds n·δ0 to a pair with a smaller clone probability. Both recomputed in
    mpmath for a small case: the lemma's total is the smaller."""
    sigma, n, eps = 1.0, 4, 0.5
    best_lemma, best_fmt20 = mp.inf, mp.inf
    for e0 in (0.8, 1.0, 1.3):
        d0 = _gauss_delta0(sigma, e0)
        c = 1 - n * d0
        e0p = mp.mpf(e0) - mp.log(c)
        P, Q = oracle.clone_pair_law(n, mp.e ** (-mp.mpf(e0)) * c, mp.e ** e0p / (1 + mp.e ** e0p))
        best_lemma = min(best_lemma, oracle.hockey(P, Q, eps) + n * d0)
        P, Q = oracle.clone_pair_law(n, mp.e ** (-mp.mpf(e0)), mp.e ** e0 / (1 + mp.e ** e0))
        charge = (mp.e ** eps + 1) * (1 + mp.e ** (-mp.mpf(e0)) / 2) * n * d0
        best_fmt20 = min(best_fmt20, oracle.hockey(P, Q, eps) + charge)
    assert best_lemma < best_fmt20
    lib = sd.delta(sd.Shuffle(sd.Gaussian(sigma), n), eps, bound="trimmed-clone").delta
    assert lib <= float(best_lemma) * (1 + 1e-6) + 1e-12   # the library optimises ε0 further


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
    # The RDP route is skipped by its certified floor (PLD runs first); asked by name it
    # still gives its reference value.
    det = r.candidates[[c.bound for c in r.candidates].index("trimmed-clone")].details
    assert "cannot beat" in det["routes_skipped"]["rdp"]
    rdp = sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), 6000), 1e-5, rounds=5540,
                     bound="trimmed-clone", composition="rdp")
    assert r.epsilon <= rdp.epsilon <= 13.1         # reference 13.0 via pair RDP
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


# ----- what lets the accountant skip trimmed-clone (latency) ------------------------------

def _checkin_trimmed_law(n, sigma, eps0, gamma):
    """The trimmed check-in pair of the Gaussian at ε0 (``oracle.checkin_pair_law`` with
    c = 1 − nδ0, p = e^−ε0·c, α' = e^ε0'/(1 + e^ε0')): (P, Q) and c_γ."""
    from shuffledp.pairs import gaussian_rdp as G
    c = 1 - n * mp.mpf(G.gaussian_delta(sigma, eps0))
    p = mp.e ** (-mp.mpf(eps0)) * c
    al = 1 / (1 + mp.e ** (-(mp.mpf(eps0) - mp.log(c))))
    return oracle.checkin_pair_law(n, p, al, gamma, c)


def _hockey_T(law, eps, T):
    P, Q = law
    keys = list(P)
    return oracle.product_hockey([P[k] for k in keys], [Q[k] for k in keys], T, eps)


@pytest.mark.parametrize("n,sigma,eps0,gamma", [(4, 1.0, 1.0, 0.3), (5, 0.6, 2.5, 0.5),
                                                 (6, 2.0, 0.4, 0.05), (3, 0.4, 3.5, 0.9)])
def test_checkin_trimmed_pair_is_at_or_below_the_all_users_pair(n, sigma, eps0, gamma):
    """Why trimmed-clone is not computed beside trimmed-clone-sampled (check-in, same n):
    at the same ε0 the check-in pair's T-fold hockey-stick curve and charge are at or below
    the all-users pair's — written out from the closed form, one and two rounds — and the
    library's certified values of the two pairs are ordered the same way."""
    from shuffledp.pairs import clone as cp
    from shuffledp.pairs import hidden as sp
    from shuffledp.pairs.trimmed import trimmed_hidden, trimmed_pair
    *s_law, cg = _checkin_trimmed_law(n, sigma, eps0, gamma)
    *u_law, c = _checkin_trimmed_law(n, sigma, eps0, 1.0)
    assert sum(s_law[0].values()) == pytest.approx(1, abs=1e-30)
    assert cg >= c
    for T in (1, 2):
        for eps in (0.0, 0.2, 0.7, 1.5, 3.0):
            hs, hu = _hockey_T(s_law, eps, T), _hockey_T(u_law, eps, T)
            assert hs <= hu * (1 + mp.mpf(10) ** -30)
            assert hs + 1 - cg ** T <= hu + 1 - c ** T
    # The library's pairs are these laws (its values certified from above, tight).
    hp, cg_lib = trimmed_hidden(n, sigma, eps0, rate=gamma)
    pair, c_lib = trimmed_pair(n, sigma, eps0)
    assert cg_lib == pytest.approx(float(cg), rel=1e-12)
    for eps in (0.2, 0.7):
        assert float(_hockey_T(s_law, eps, 1)) <= sp.hidden_delta(hp, eps) <= \
            float(_hockey_T(s_law, eps, 1)) * (1 + 1e-8) + 1e-280
        assert float(_hockey_T(u_law, eps, 1)) <= cp.pair_delta(pair, eps) <= \
            float(_hockey_T(u_law, eps, 1)) * (1 + 1e-8) + 1e-280


def _gauss_delta_mp(mu, eps):
    """δ(ε) of the Gaussian mechanism with μ = Δ/σ, in mpmath (Balle & Wang, Thm 8)."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("m,sigma,T,x", [(10**6, 2.0, 10, 1e-5), (10**6, 2.0, 10**6, 1e-12),
                                         (100, 0.5, 3, 1e-8), (10**7, 0.8, 1, 1e-12)])
def test_central_floor_decides_exactly_at_the_gaussian_sum(m, sigma, T, x):
    """The floor is the T-fold Gaussian mechanism with noise σ√m: it says "cannot beat"
    just above that mechanism's ε(δ) (found here in mpmath) and never just below it."""
    from shuffledp.bounds.trimmed_clone import central_floor_beats
    mu = math.sqrt(T) / (sigma * math.sqrt(m))
    lo, hi = mp.mpf(0), mp.mpf(1)
    while _gauss_delta_mp(mu, hi) > x:
        hi *= 2
    for _ in range(120):                 # δ(ε) is decreasing: bisect in mpmath
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _gauss_delta_mp(mu, mid) > x else (lo, mid)
    e_true = float(hi)
    assert central_floor_beats(m, sigma, T, EpsilonAt(x), e_true * (1 - 1e-4))
    assert not central_floor_beats(m, sigma, T, EpsilonAt(x), e_true * (1 + 1e-4))
    d_true = float(_gauss_delta_mp(mu, e_true))
    assert central_floor_beats(m, sigma, T, DeltaAt(e_true), d_true * (1 - 1e-4))
    assert not central_floor_beats(m, sigma, T, DeltaAt(e_true), d_true * (1 + 1e-4))


@pytest.mark.parametrize("n,T", [(30, 1), (200, 5)])
def test_central_floor_is_below_trimmed_clone_values(n, T):
    """Independent check of the floor's direction: trimmed-clone's own value is above the
    Gaussian-sum ε at every setting, so the floor never skips it wrongly."""
    from shuffledp.bounds.trimmed_clone import central_floor_beats
    for sigma in (0.5, 2.0):
        for delta in (1e-5, 1e-9):
            v = sd.epsilon(sd.Shuffle(sd.Gaussian(sigma), n=n), delta, T,
                           bound="trimmed-clone").epsilon
            # the floor is below v: at beat = v it must not claim "cannot beat"
            assert not central_floor_beats(n, sigma, T, EpsilonAt(delta), v)


def test_accountant_skips_trimmed_clone_with_its_reason():
    # Same n, check-in rate 0.1: dominated (not computed).
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(2.0), n=10**4, sampling=sd.CheckIn(0.1)), 1e-5, 10)
    why = dict(r.not_applicable)["trimmed-clone"]
    assert "post-processing" in why and r.bound == "trimmed-clone-sampled"
    # Rate 0.9: both computed (the pairs nearly coincide; numerics decide).
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(2.0), n=10**4, sampling=sd.CheckIn(0.9)), 1e-5, 10)
    assert {c.bound for c in r.candidates} >= {"trimmed-clone", "trimmed-clone-sampled"}
    # n = 1e8 (trimmed-clone's pair built for 1e6 users): the Gaussian-sum floor skips it.
    r = sd.epsilon(sd.Shuffle(sd.Gaussian(2.0), n=10**8, sampling=sd.CheckIn(0.1)), 1e-5, 10)
    why = dict(r.not_applicable)["trimmed-clone"]
    assert why.startswith("skipped: cannot beat") and "sum of their reports" in why
    # The skipped bound's value was indeed above the answer.
    v = sd.epsilon(r.protocol, 1e-5, 10, bound="trimmed-clone").epsilon
    assert v > r.epsilon
