"""Add/remove neighbours (relation="add_or_remove_one"): the check-in clone pair
``fmt20-addremove`` against the exact add/remove leak, enumerated at 50 digits.

The exact law is written here from the definition (tests/oracle.py ``sampled_law``): D′ is
D plus the victim, every user checks in independently with probability γ, the server sees
the histogram of the participants' reports. For every randomizer below, every multiset of
the others' inputs (n − 1 ≤ 4 others), every victim input and γ ∈ {0.2, 0.5, 0.9}, the
exact δ(ε) of both directions — removing the victim (P‖Q: D′ against D) and adding it
(Q‖P) — must be at or below the library's δ(ε), for one round and for two (product laws).
A sabotaged pair (clone probability × 1.5, or one direction only) must fall below the
exact leak somewhere: the enumeration can catch a wrong pair.
"""

from __future__ import annotations

import functools
import itertools
import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import addremove as ar
from shuffledp.core.errors import NotApplicableError

from oracle import hockey, product, rr_rows_mp, sampled_law

RATES = (0.2, 0.5, 0.9)
EPS = (0.0, 0.1, 0.5, 1.0)


def _random_rows(seed, k, m):
    rng = np.random.default_rng(seed)
    M = rng.uniform(0.2, 1.0, size=(k, m))
    return [[mp.mpf(repr(float(v))) / mp.fsum([mp.mpf(repr(float(u))) for u in row])
             for v in row] for row in M]


RANDOMIZERS = {
    "2-RR": lambda: rr_rows_mp(1.0, 2),
    "3-RR": lambda: rr_rows_mp(0.7, 3),
    "2-RR-eps3": lambda: rr_rows_mp(3.0, 2),
    "rand-2x3": lambda: _random_rows(1, 2, 3),
    "rand-3x2": lambda: _random_rows(2, 3, 2),
}


def _eps0(rows) -> float:
    """ε0 of the matrix: the largest log-ratio of two entries of a column, at 50 digits,
    rounded up to the next float above (the bound is then applied at an ε0 ≥ the true one)."""
    k, m = len(rows), len(rows[0])
    e = max(mp.log(rows[a][y] / rows[b][y]) for y in range(m) for a in range(k)
            for b in range(k))
    return float(np.nextafter(float(e), math.inf))


@functools.lru_cache(maxsize=None)
def _exact(name, n_others, rate, rounds):
    """{eps: (max remove leak, max add leak)} over every dataset and victim input."""
    rows = RANDOMIZERS[name]()
    k = len(rows)
    out = {e: [mp.mpf(0), mp.mpf(0)] for e in EPS}
    count = 0
    for others in itertools.combinations_with_replacement(range(k), n_others):
        Q = sampled_law(rows, others, rate=mp.mpf(repr(rate)))
        for x in range(k):
            P = sampled_law(rows, (x,) + others, rate=mp.mpf(repr(rate)))
            PP, QQ = (product(P, P), product(Q, Q)) if rounds == 2 else (P, Q)
            count += 1
            for e in EPS:
                out[e][0] = max(out[e][0], hockey(PP, QQ, e))
                out[e][1] = max(out[e][1], hockey(QQ, PP, e))
    return {e: (float(a), float(b)) for e, (a, b) in out.items()}, count


CASES_T1 = [(name, N, g) for name in RANDOMIZERS for N in range(0, 5) for g in RATES]
CASES_T2 = [(name, N, g) for name in RANDOMIZERS for N in range(0, 3) for g in RATES]


def _proto(name, N, rate):
    return sd.Shuffle(sd.LDP(_eps0(RANDOMIZERS[name]())), n=N + 1, sampling=sd.CheckIn(rate))


@pytest.mark.parametrize("name,N,rate", CASES_T1)
def test_one_round_at_or_above_the_exact_leak_both_directions(name, N, rate):
    exact, count = _exact(name, N, rate, 1)
    assert count == math.comb(len(RANDOMIZERS[name]()) + N - 1, N) * len(RANDOMIZERS[name]())
    proto = _proto(name, N, rate)
    hp = ar.addremove_pair(N + 1, rate, proto.eps0)
    for e in EPS:
        rem, add = ar.ar_delta_directions(hp, e)
        assert rem >= exact[e][0] and add >= exact[e][1], (e, rem, add, exact[e])
        r = sd.delta(proto, e, relation="add_or_remove_one")
        assert r.bound == "fmt20-addremove" and r.relation == "add_or_remove_one"
        assert float(r) >= max(exact[e]), (e, float(r), exact[e])


@pytest.mark.parametrize("name,N,rate", CASES_T2)
def test_two_rounds_at_or_above_the_exact_product_leak(name, N, rate):
    exact, _ = _exact(name, N, rate, 2)
    proto = _proto(name, N, rate)
    for e in EPS:
        # (n = 1: the pair has one finite loss; its PLD lattice is degenerate and slow)
        for comp in (("pld", "kov15") if N else ("kov15",)):
            r = sd.delta(proto, e, rounds=2, composition=comp, relation="add_or_remove_one")
            assert float(r) >= max(exact[e]), (comp, e, float(r), exact[e])


def test_the_pair_is_attained():
    """The pair is not loose: for binary RR, with others present (n − 1 ≥ 1), some dataset
    leaks the pair's δ to within rounding at some (n, γ, ε)."""
    best = 0.0
    for N, g in itertools.product(range(1, 5), RATES):
        exact, _ = _exact("2-RR", N, g, 1)
        hp = ar.addremove_pair(N + 1, g, _eps0(RANDOMIZERS["2-RR"]()))
        for e in EPS:
            rem, add = ar.ar_delta_directions(hp, e)
            for x, y in ((exact[e][0], rem), (exact[e][1], add)):
                if y > 1e-12:
                    best = max(best, x / y)
    assert best > 0.999


def _sabotaged_delta(N, rate, eps0, eps, factor=1.5):
    """The pair with the clone probability e^−ε0 multiplied by ``factor``."""
    e0 = eps0 - math.log(factor)
    assert e0 >= 0
    return ar.ar_delta(ar.addremove_pair(N + 1, rate, e0), eps)


def test_sabotaged_clone_probability_is_caught():
    caught = 0
    for name, N, g in CASES_T1:
        if name != "2-RR" or N == 0:
            continue
        exact, _ = _exact(name, N, g, 1)
        for e in EPS:
            if _sabotaged_delta(N, g, _eps0(RANDOMIZERS[name]()), e) < max(exact[e]) * (1 - 1e-9):
                caught += 1
    assert caught > 0


def test_one_direction_alone_is_caught():
    """Removing the victim (P‖Q) alone, or adding it (Q‖P) alone, is below the exact
    add/remove leak somewhere: both directions are needed."""
    low_rem = low_add = 0
    for name, N, g in CASES_T1:
        exact, _ = _exact(name, N, g, 1)
        hp = ar.addremove_pair(N + 1, g, _eps0(RANDOMIZERS[name]()))
        for e in EPS:
            rem, add = ar.ar_delta_directions(hp, e)
            low_rem += rem < max(exact[e]) * (1 - 1e-9)
            low_add += add < max(exact[e]) * (1 - 1e-9)
    assert low_rem > 0 and low_add > 0


@pytest.mark.parametrize("n,rate,eps0", [(5, 0.5, 1.0), (300, 0.2, 2.0), (10**4, 0.1, 1.0),
                                         (10**6, 0.1, 1.0)])
def test_epsilon_of_delta_is_certified(n, rate, eps0):
    hp = ar.addremove_pair(n, rate, eps0)
    for d in (1e-2, 1e-6):
        e = ar.ar_epsilon(hp, d)
        if math.isfinite(e):
            assert ar.ar_delta(hp, e) <= d
            if e > 1e-6:
                assert ar.ar_delta(hp, e * (1 - 1e-4)) > d      # and not far above the root
    r = sd.epsilon(sd.Shuffle(sd.LDP(eps0), n=n, sampling=sd.CheckIn(rate)), delta=1e-6,
                   relation="add_or_remove_one")
    if n <= 5:
        # all n users report w.p. (γe^−ε0)^(n−1)·γ ≈ 5e-4 > δ: no finite ε
        assert r.epsilon == math.inf
    else:
        assert sd.delta(r.protocol, r.epsilon, relation="add_or_remove_one").delta <= 1e-6


def test_count_of_reports_alone_makes_small_n_infinite():
    """n = 1, γ = 0.5: the victim's report is seen w.p. γ; no ε < ∞ covers δ < γ."""
    hp = ar.addremove_pair(1, 0.5, 1.0)
    assert ar.ar_epsilon(hp, 0.4) == math.inf
    assert ar.ar_delta(hp, 50.0) >= 0.5


def test_larger_n_is_not_looser():
    """More others hide the victim better (the pair at n is a post-processing of n − 1)."""
    vals = [ar.ar_delta(ar.addremove_pair(n, 0.3, 1.0), 0.2) for n in (10, 50, 300, 1000)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))


# ----- the relation's plumbing ----------------------------------------------------------
def test_everyone_reporting_is_refused_with_the_reason():
    for s in (None, sd.CheckIn(1.0)):
        p = sd.Shuffle(sd.LDP(1.0), n=1000, sampling=s)
        for ask in (lambda: sd.epsilon(p, 1e-6, relation="add_or_remove_one"),
                    lambda: sd.delta(p, 0.5, relation="add_or_remove_one"),
                    lambda: sd.rdp(p, [2, 4], relation="add_or_remove_one")):
            with pytest.raises(NotApplicableError, match="number of reports reveals"):
                ask()


def test_replace_one_bounds_refused_under_add_remove_and_conversely():
    p = sd.Shuffle(sd.LDP(1.0), n=1000, sampling=sd.CheckIn(0.5))
    with pytest.raises(NotApplicableError, match="fmt20 is derived for replace-one "
                                                 "neighbours only"):
        sd.epsilon(p, 1e-6, bound="fmt20", relation="add_or_remove_one")
    with pytest.raises(NotApplicableError, match="derived for add_or_remove_one"):
        sd.epsilon(p, 1e-6, bound="fmt20-addremove")
    r = sd.epsilon(p, 1e-6, relation="add_or_remove_one")
    assert {c.bound for c in r.candidates} == {"fmt20-addremove"}
    assert "fmt20" in {b for b, _ in r.not_applicable}
    assert "add/remove neighbours" in r.table() and "replace-one" not in r.adjacency
    assert r.to_dict()["relation"] == "add_or_remove_one"


def test_without_replacement_refused_with_the_reason():
    p = sd.Shuffle(sd.LDP(1.0), n=100, sampling=sd.WithoutReplacement(10))
    with pytest.raises(NotApplicableError, match="not derived for add/remove"):
        sd.epsilon(p, 1e-6, bound="fmt20-addremove", relation="add_or_remove_one")


def test_rdp_refused_infinite():
    p = sd.Shuffle(sd.LDP(1.0), n=1000, sampling=sd.CheckIn(0.5))
    with pytest.raises(NotApplicableError, match="Renyi divergence is infinite"):
        sd.rdp(p, [2, 4], relation="add_or_remove_one")


def test_replace_one_is_the_default_and_unchanged():
    p = sd.Shuffle(sd.LDP(1.0), n=1000, sampling=sd.CheckIn(0.5))
    a = sd.epsilon(p, 1e-6)
    b = sd.epsilon(p, 1e-6, relation="replace_one")
    assert float(a) == float(b) and a.relation == "replace_one"
    assert "fmt20-addremove" not in {c.bound for c in a.candidates}
    assert "fmt20-addremove" not in {x for x, _ in a.not_applicable}


def test_relation_values():
    p = sd.Shuffle(sd.LDP(1.0), n=1000, sampling=sd.CheckIn(0.5))
    with pytest.raises(ValueError, match="relation must be one of"):
        sd.epsilon(p, 1e-6, relation="add")
    dpa = pytest.importorskip("dp_accounting")
    r = sd.epsilon(p, 1e-6, relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert r.relation == "add_or_remove_one"
    assert sd.epsilon(p, 1e-6, relation=dpa.NeighboringRelation.REPLACE_ONE).relation == \
        "replace_one"
    with pytest.raises(ValueError, match="does not support"):
        sd.epsilon(p, 1e-6, relation=dpa.NeighboringRelation.REPLACE_SPECIAL)


def test_cli_relation(capsys):
    from shuffledp.apps.cli import main
    assert main(["epsilon", "--eps0", "1", "--n", "1000", "--checkin", "0.5", "--delta", "1e-6",
                 "--relation", "add_or_remove_one"]) == 0
    out = capsys.readouterr().out
    assert "fmt20-addremove" in out and "add/remove neighbours" in out
    assert main(["epsilon", "--eps0", "1", "--n", "1000", "--delta", "1e-6",
                 "--relation", "add_or_remove_one"]) == 2
    assert "number of reports reveals" in capsys.readouterr().err
    assert main(["rdp", "--eps0", "1", "--n", "1000", "--checkin", "0.5", "--orders", "2",
                 "--relation", "add_or_remove_one"]) == 2
    assert "infinite" in capsys.readouterr().err


# ----- the trimmed victim ((ε0, δ0)-LDP randomizers, the Gaussian) -----------------------
#: Not pure LDP: output 2 is impossible from input 1 (a finite (ε0, δ0)-LDP randomizer).
APPROX = {
    "approx-2x3": [[0.6, 0.3, 0.1], [0.3, 0.7, 0.0]],
    "approx-3x3": [[0.5, 0.3, 0.2], [0.3, 0.5, 0.2], [0.45, 0.5, 0.05]],
}


def _rows_mp(M):
    return [[mp.mpf(repr(v)) for v in row] for row in M]


def _delta0(rows, eps0):
    """The matrix's δ0 at ε0: max over ordered input pairs of H_{e^ε0}(R(a) ‖ R(b))."""
    e = mp.e ** mp.mpf(eps0)
    return max(mp.fsum(max(rows[a][y] - e * rows[b][y], 0) for y in range(len(rows[0])))
               for a in range(len(rows)) for b in range(len(rows)))


@pytest.mark.parametrize("name", list(APPROX))
@pytest.mark.parametrize("N", [1, 2, 3, 4])
@pytest.mark.parametrize("rate", RATES)
def test_trimmed_pair_at_or_above_the_exact_leak(name, N, rate):
    """The trimmed pair (clone probability e^−ε0(1 − (n − 1)δ0), the victim's left-out mass
    γ(n − 1)δ0 at infinite loss) dominates the exact add/remove leak of an (ε0, δ0)-LDP
    matrix, for every dataset, victim input, direction and several ε0."""
    rows = _rows_mp(APPROX[name])
    k = len(rows)
    for eps0 in (0.3, 0.8, 1.5):
        bad = float(N * _delta0(rows, eps0)) * (1 + 1e-12)
        if bad >= 1.0:
            continue
        hp = ar.addremove_pair(N + 1, rate, eps0, bad)
        for others in itertools.combinations_with_replacement(range(k), N):
            Q = sampled_law(rows, others, rate=mp.mpf(repr(rate)))
            for x in range(k):
                P = sampled_law(rows, (x,) + others, rate=mp.mpf(repr(rate)))
                for e in EPS:
                    rem, add = ar.ar_delta_directions(hp, e)
                    assert rem >= float(hockey(P, Q, e)), (eps0, others, x, e)
                    assert add >= float(hockey(Q, P, e)), (eps0, others, x, e)


def test_trimmed_pair_without_the_charge_is_caught():
    """Dropping the trimmed mass (bad = 0 with the same ε0: pretending the matrix is pure
    ε0-LDP) falls below the exact leak somewhere."""
    rows = _rows_mp(APPROX["approx-2x3"])
    caught = 0
    for N, rate, eps0 in itertools.product([1, 2, 3], RATES, (0.3, 0.8)):
        hp = ar.addremove_pair(N + 1, rate, eps0, 0.0)
        for others in itertools.combinations_with_replacement(range(2), N):
            Q = sampled_law(rows, others, rate=mp.mpf(repr(rate)))
            for x in range(2):
                P = sampled_law(rows, (x,) + others, rate=mp.mpf(repr(rate)))
                for e in EPS:
                    caught += ar.ar_delta(hp, e) < float(max(hockey(P, Q, e),
                                                             hockey(Q, P, e))) * (1 - 1e-9)
    assert caught > 0


def _count_only_delta(n, rate, eps):
    """δ(ε) of the number of reports alone (a post-processing of every add/remove check-in
    mechanism, so a lower bound on all of them): 1 + Bin(n − 1, γ) w.p. γ vs Bin(n − 1, γ)."""
    from scipy.stats import binom
    k = np.arange(0, n + 1)
    q = binom.pmf(k, n - 1, rate)
    p = (1 - rate) * q + rate * np.concatenate([[0.0], q[:-1]])
    e = math.exp(eps)
    return max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum())


@pytest.mark.parametrize("n,rate,eps", [(100, 0.5, 0.1), (2000, 0.1, 0.05), (2000, 0.1, 0.2)])
def test_gaussian_above_the_count_of_reports(n, rate, eps):
    for mech in (sd.Gaussian(0.5), sd.Gaussian(3.0)):
        r = sd.delta(sd.Shuffle(mech, n=n, sampling=sd.CheckIn(rate)), eps,
                     relation="add_or_remove_one")
        assert r.bound == "trimmed-clone-addremove"
        assert float(r) >= _count_only_delta(n, rate, eps) * (1 - 1e-9)


def test_gaussian_epsilon_of_delta_is_certified():
    p = sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), n=2000, sampling=sd.CheckIn(0.1))
    for T in (1, 10):
        r = sd.epsilon(p, 1e-5, rounds=T, relation="add_or_remove_one")
        assert r.bound == "trimmed-clone-addremove" and math.isfinite(r.epsilon)
        hp = addremove_trimmed(p, r.chosen.details["eps0"])
        if T == 1:
            assert ar.ar_delta(hp, r.epsilon) <= 1e-5
        d = sd.delta(p, r.epsilon, rounds=T, relation="add_or_remove_one")
        # (the δ search picks its own ε0, to its search's resolution)
        assert d.delta <= 1e-5 * (1 + 1e-6)


def addremove_trimmed(p, eps0):
    from shuffledp.pairs.trimmed import trimmed_addremove_pair
    return trimmed_addremove_pair(p.n, p.sampling.rate, p.mechanism.sigma, eps0)


@pytest.mark.slow
def test_the_mnist_run_under_add_remove():
    """The issue's federated-learning run (n = 60 000, check-in 0.1, noise multiplier 5,
    5540 rounds, δ = 1e-5) has a finite add/remove bound, labelled with its relation,
    whose δ at that ε is at most δ."""
    p = sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), n=60_000, sampling=sd.CheckIn(0.1))
    r = sd.epsilon(p, 1e-5, rounds=5540, relation="add_or_remove_one")
    assert r.bound == "trimmed-clone-addremove" and r.kind == "upper"
    assert r.relation == "add_or_remove_one" and math.isfinite(r.epsilon)
    assert r.composition == "pld" and r.scope == "l2"
    d = sd.delta(p, r.epsilon, rounds=5540, relation="add_or_remove_one")
    assert d.delta <= 1e-5 * (1 + 1e-6)


# ----------------------------------------------------------------------------------------
# Large eps0 (the range where 1 - alpha is inexact in floating point): both directions of
# the add/remove answer against the exact 50-digit leak of binary randomized response
# ----------------------------------------------------------------------------------------
LARGE = [(e0, N, g) for e0 in (19.0, 40.0, 700.0) for N in (0, 1, 3)
         for g in (1e-3, 0.5, 0.999)]


@functools.lru_cache(maxsize=None)
def _exact_large(eps0, n_others, rate, eps_grid):
    rows = rr_rows_mp(eps0, 2)
    worst = {e: mp.mpf(0) for e in eps_grid}
    for others in itertools.combinations_with_replacement(range(2), n_others):
        Q = sampled_law(rows, others, rate=mp.mpf(repr(rate)))
        for x in range(2):
            P = sampled_law(rows, (x,) + others, rate=mp.mpf(repr(rate)))
            for e in eps_grid:
                worst[e] = max(worst[e], hockey(P, Q, e), hockey(Q, P, e))
    return worst


@pytest.mark.parametrize("eps0,N,rate", LARGE)
def test_large_eps0_add_remove_at_or_above_the_exact_leak(eps0, N, rate):
    with mp.workdps(60):
        grid = (0.0, 1.0, 10.0, 0.5 * eps0)
        exact = _exact_large(eps0, N, rate, grid)
        proto = sd.Shuffle(sd.LDP(eps0), n=N + 1, sampling=sd.CheckIn(rate))
        for e in grid:
            r = sd.delta(proto, e, relation="add_or_remove_one")
            assert float(r) >= exact[e], (e, float(r), exact[e])
        for d in (1e-6, 1e-12):
            r = sd.epsilon(proto, d, relation="add_or_remove_one")
            if math.isfinite(r.epsilon):
                # the certified eps: the exact leak there is at most delta (both directions)
                w = _exact_large(eps0, N, rate, (r.epsilon,))[r.epsilon]
                assert w <= d * (1 + 1e-9), (d, r.epsilon, w)
