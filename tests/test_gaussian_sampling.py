"""Subsampled shuffle and shuffled check-in for the homogeneous pair (gaussian.md §4).

The building blocks are checked against Gauss–Hermite quadrature of the output densities
written from the protocol's definition at n = 2, 3 (not from the library's formulas).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import gaussian_rdp as K
from shuffledp.bounds.gaussian import homogeneous_rdp_for, paper_checkin_rdp
from shuffledp.pairs.trimmed import trimmed_hidden


def _gh(sigma, deg, dim):
    x, w = np.polynomial.hermite_e.hermegauss(deg)
    w = w / w.sum()
    xs = np.meshgrid(*([x * sigma] * dim), indexing="ij")
    ws = np.ones_like(xs[0])
    for wi in np.meshgrid(*([w] * dim), indexing="ij"):
        ws = ws * wi
    return xs, ws


def _log_ratio_all_present(xs, sigma):
    """log (P_c/Q_c) for c reports, victim at 1 among them uniformly, others at 0."""
    c = len(xs)
    return np.logaddexp.reduce(np.stack([(x - 0.5) / sigma ** 2 for x in xs]), axis=0) - math.log(c)


def _slice_moment(c, q, sigma, lam, deg=120):
    """E_{Q_c}[((1 − q) + q P_c/Q_c)^λ] by quadrature."""
    xs, ws = _gh(sigma, deg, c)
    r = np.exp(_log_ratio_all_present(xs, sigma))
    return float(np.sum(ws * ((1 - q) + q * r) ** lam))


@pytest.mark.parametrize("gamma", [0.3, 0.7])
@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_checkin_exact_against_quadrature_n2(gamma, sigma):
    n = 2
    lams = np.arange(2, 7)
    got = K.checkin_exact(n, gamma, sigma, lams)
    for i, lam in enumerate(lams):
        # count c ~ Bin(2, γ); c = 0: identical outputs; c = 1: the reporter is the victim
        # w.p. 1/2; c = 2: the victim is present.
        e = ((1 - gamma) ** 2 + 2 * gamma * (1 - gamma) * _slice_moment(1, 0.5, sigma, lam)
             + gamma ** 2 * _slice_moment(2, 1.0, sigma, lam))
        want = math.log(e) / (lam - 1)
        assert abs(got[i] / want - 1) < 1e-8, (gamma, sigma, lam, got[i], want)


@pytest.mark.parametrize("sigma", [1.0, 3.0])
def test_wbk_subsampling_above_exact_pair_n3_m2(sigma):
    """WBK19 Thm 9 (with min) bounds the exact subsampled pair: victim sampled w.p. 2/3."""
    p = sd.Shuffle(sd.Gaussian(sigma), 3, sampling=sd.WithoutReplacement(2))
    lams = np.arange(2, 9)
    got = homogeneous_rdp_for(p, lams)
    unsub = K.homogeneous_rdp(2, sigma, lams)
    for i, lam in enumerate(lams):
        exact = math.log(_slice_moment(2, 2 / 3, sigma, lam)) / (lam - 1)
        assert got[i] >= exact * (1 - 1e-9), (sigma, lam, got[i], exact)
        assert got[i] <= unsub[i] * (1 + 1e-12)


def test_wbk_floor_is_removed_by_the_min():
    # γ = 0.1, λ = 30: WBK's 2γ^j C(λ,j) floor alone gives ~0.1; the shuffle RDP (n = 6000) is 1e−4.
    base = K.homogeneous_rdp(6000, 5.0, np.arange(2, 31))
    full = np.concatenate([[0.0, 0.0], base])
    v = K.wbk_subsample(0.1, full, [30])[0]
    assert v <= base[-1] * (1 + 1e-12) and base[-1] < 2e-4


def test_paper_chernoff_construction_above_exact_checkin():
    n, g, s = 2000, 0.1, 2.0
    lams = np.arange(2, 40)
    exact = K.checkin_exact(n, g, s, lams)
    paper = paper_checkin_rdp(n, g, s, lams)
    assert np.all(paper >= exact * (1 - 1e-9))


def test_checkin_blocks_are_an_upper_bound_of_the_plain_sum():
    """Blocks + tails vs the plain sum over every c at n = 60 (all kernels exact)."""
    n, g, s = 60, 0.2, 1.5
    lams = np.arange(2, 30)
    got = K.checkin_exact(n, g, s, lams)
    from scipy.stats import binom
    tot = np.zeros(lams.shape)
    for c in range(1, n + 1):
        lm = K.mixture_log_em1(c / n, K.homogeneous_log_em1(c, s, 29), lams)
        tot += binom.pmf(c, n, g) * np.exp(lm)
    plain = np.log1p(tot) / (lams - 1)
    assert np.all(got >= plain * (1 - 1e-10))
    assert np.all(got <= plain * 1.02)


def test_learning_setting_checkin_estimate_and_labels():
    p = sd.Shuffle(sd.Gaussian(5.0), 60000, sampling=sd.CheckIn(0.1))
    r = sd.epsilon(p, 1e-5, rounds=5540, lower=True)
    est = [c for c in r.candidates if c.bound == "liew-homogeneous"][0]
    assert est.kind == "estimate" and "still an estimate" in est.valid_for
    assert est.epsilon <= 0.78
    assert r.kind == "upper" and r.bound != "liew-homogeneous"


def test_without_replacement_learning_setting():
    p = sd.Shuffle(sd.Gaussian(5.0), 60000, sampling=sd.WithoutReplacement(6000))
    r = sd.epsilon(p, 1e-5, rounds=5540, bound="liew-homogeneous")
    assert r.kind == "estimate" and r.epsilon <= 0.78
    assert "WBK19" in r.valid_for


def test_checkin_pair_is_built_for_at_most_1e10_users():
    """More users only help (the others' check-ins can be simulated and shuffled in), so at
    n = 1e12 the check-in Gaussian bound is the one for 1e10 users, labelled as such (the
    trimming charge grows with n, so here it is even smaller than at the full n)."""
    from shuffledp.bounds.sampled import SAMPLED_MAX_N
    big = sd.Shuffle(sd.Gaussian(2.0), n=10**12, sampling=sd.CheckIn(0.1))
    cap = sd.Shuffle(sd.Gaussian(2.0), n=SAMPLED_MAX_N, sampling=sd.CheckIn(0.1))
    r = sd.epsilon(big, delta=1e-10, rounds=1000, bound="trimmed-clone-sampled")
    r2 = sd.epsilon(cap, delta=1e-10, rounds=1000, bound="trimmed-clone-sampled")
    assert r.epsilon == r2.epsilon
    assert r.chosen.details["evaluated_at_n"] == SAMPLED_MAX_N
    assert "more users only help" in r.chosen.details["coarse"]


def test_sampled_gaussian_rdp_route_skipped_when_no_order_can_beat_its_pld():
    """The PLD route runs first; the hidden pair's orders stop at 600/log(α/(1 − α)), and
    when the conversion term alone is above the PLD value at every one of them the RDP
    route is skipped with that proof. Forced, it is indeed above the answer."""
    import shuffledp as sd
    proto = sd.Shuffle(sd.Gaussian(2.0), n=10**8, sampling=sd.CheckIn(0.1))
    r = sd.epsilon(proto, delta=1e-5, rounds=10, bound="trimmed-clone-sampled")
    skipped = r.chosen.details.get("routes_skipped", {})
    assert r.composition == "pld" and "cannot beat" in skipped.get("rdp", "")
    forced = sd.epsilon(proto, delta=1e-5, rounds=10, bound="trimmed-clone-sampled",
                        composition="rdp")
    assert forced.epsilon > r.epsilon


@pytest.mark.parametrize("n, rounds, delta", [(3 * 10**7, 1, 1e-10), (2 * 10**9, 10, 1e-6)])
def test_eps0_ranking_cells_match_certified_ones_and_choose_the_same_eps0(monkeypatch, n,
                                                                         rounds, delta):
    # The check-in Gaussian ranks candidate eps0 on cells whose distribution functions start
    # from scipy's incomplete beta (not certified) instead of the certified series: the
    # cells must agree closely with the certified ones, and the eps0 chosen must be the
    # same as with certified cells (so the reported value, always computed on certified
    # cells, does not change).
    from shuffledp.pairs import hidden as sp
    from shuffledp.bounds import sampled as S

    hp, _ = trimmed_hidden(n, 2.0, 4.0, rate=0.1)
    a = sp.hidden_cells(hp, S._SEARCH_BUDGET, ranking=True)
    b = sp.hidden_cells(hp, S._SEARCH_BUDGET)
    assert np.array_equal(a.c, b.c) and np.array_equal(a.alpha, b.alpha)
    assert np.allclose(a.w, b.w, rtol=1e-8, atol=1e-300) and a.worst == pytest.approx(b.worst, rel=1e-8)
    e_fast = S._best_eps0.__wrapped__(n, 2.0, 0.1, None, delta, rounds)
    real = sp._path_log_cdf_upper
    monkeypatch.setattr(sp, "_path_log_cdf_upper",
                        lambda N, q, K, ranking=False: real(N, q, K, False))
    sd.clear_caches()
    e_cert = S._best_eps0.__wrapped__(n, 2.0, 0.1, None, delta, rounds)
    sd.clear_caches()
    assert e_fast == e_cert


@pytest.mark.parametrize("sigma, rate, n, rounds, delta", [(2.0, 0.1, 10**6, 10**5, 1e-6),
                                                           (0.5, 0.5, 10**4, 1000, 1e-10),
                                                           (5.0, 0.01, 10**8, 10, 1e-6)])
def test_eps0_search_on_order_windows_chooses_the_full_grids_eps0(monkeypatch, sigma, rate,
                                                                  n, rounds, delta):
    # The eps0 search evaluates the quick RDP only at orders around the previous eps0's best
    # order: the eps0 chosen must be the one the full order grid chooses.
    from shuffledp.bounds import sampled as S
    a = S._best_eps0.__wrapped__(n, sigma, rate, None, delta, rounds)
    monkeypatch.setattr(S, "_windowed_min",
                        lambda eps_at, near: float(np.min(eps_at(S._SEARCH_ORDERS))))
    sd.clear_caches()
    assert S._best_eps0.__wrapped__(n, sigma, rate, None, delta, rounds) == a


def test_windowed_min_finds_the_grid_minimum():
    # One local minimum anywhere on the grid (including its ends and plateaus of 0), from
    # any starting index: the windowed minimum is the grid's.
    from shuffledp.bounds import sampled as S
    m = S._SEARCH_ORDERS.size
    rng = np.random.default_rng(3)
    for _ in range(300):
        j = int(rng.integers(0, m))
        slope_l, slope_r = rng.uniform(0.01, 3.0, 2)
        g = np.arange(m, dtype=float)
        f = np.where(g < j, slope_l * (j - g), slope_r * (g - j)) + rng.uniform(0, 2)
        if rng.uniform() < 0.2:
            f = np.maximum(f - 2.0, 0.0)             # a plateau of zeros
        calls = []

        def eps_at(orders):
            idx = np.searchsorted(S._SEARCH_ORDERS, orders)
            calls.append(idx.size)
            return f[idx]

        start = [int(rng.integers(0, m))] if rng.uniform() < 0.8 else [None]
        assert S._windowed_min(eps_at, start) == f.min()
        assert f[start[0]] == f.min()


@pytest.mark.parametrize("n, sigma, rate, eps0, rounds, delta", [
    (10**10, 1.6306, 0.443, 6.0, 176523, 6.34e-7),
])
def test_lattice_rows_rank_like_every_row_and_choose_the_same_eps0(monkeypatch, n, sigma,
                                                                    rate, eps0, rounds, delta):
    # Over several rounds the eps0 search ranks on one block of cells whose weights are
    # sums over ~8e4 rows; SAMPLED ranking reads every h-th row (Poisson summation of a
    # smooth summand) with the distribution functions from the incomplete beta, and the
    # block's x windows every h-th x. The slices must be the same floats, the weights
    # within 1e-8, and the chosen eps0 the one that ranking on every row and x chooses.
    from shuffledp.pairs import hidden as sp
    from shuffledp.bounds import sampled as S

    hp, _ = trimmed_hidden(n, sigma, eps0, rate=rate)
    every = sp.hidden_cells(hp, S._SEARCH_BUDGET, ranking=True)
    lattice = sp.hidden_cells(hp, S._SEARCH_BUDGET, ranking=sp.SAMPLED)
    assert sp._checkin_sampled_rows(hp, S._SEARCH_BUDGET, *sp.binom_window(
        hp.n, hp.rate * hp.p, sp._S_SDS, sp._S_EXTRA)) is not None      # the lattice applies
    for f in ("c", "alpha", "beta", "gamma"):
        assert np.array_equal(getattr(lattice, f), getattr(every, f))
    assert np.allclose(lattice.w, every.w, rtol=1e-8, atol=0.0)
    assert lattice.worst == pytest.approx(every.worst, rel=1e-8)
    assert lattice.zero == every.zero
    # its one block's x windows on a lattice too: the quick RDP within 1e-7 (its low
    # orders are differences of nearly equal halves, ~1e-9 apart whatever the atoms)
    quick = [S._quick_rdp(*sp.hidden_atoms(hp, S._SEARCH_BUDGET, ranking=r), S._SEARCH_ORDERS)
             for r in (True, sp.SAMPLED)]
    assert sp.hidden_atoms(hp, S._SEARCH_BUDGET, sp.SAMPLED)[0].size * 10 < \
        sp.hidden_atoms(hp, S._SEARCH_BUDGET, True)[0].size
    assert np.allclose(quick[1], quick[0], rtol=1e-7, atol=0.0)
    e_lattice = S._best_eps0.__wrapped__(n, sigma, rate, None, delta, rounds)
    assert e_lattice == _eps0_ranked_on_every_row(monkeypatch, n, sigma, rate, delta, rounds)


def _eps0_ranked_on_every_row(monkeypatch, n, sigma, rate, delta, rounds):
    """The eps0 the search chooses with the plain ranking cells and atoms (ranking=True:
    every row and x, scipy's bdtr up to 1e6 trials)."""
    from shuffledp.pairs import hidden as sp
    from shuffledp.bounds import sampled as S
    real = sp.hidden_atoms
    with monkeypatch.context() as m:
        m.setattr(sp, "hidden_atoms", lambda hp, budget=sp.ATOM_BUDGET, ranking=False:
                  real(hp, budget, True if ranking else ranking))
        sd.clear_caches()
        e = S._best_eps0.__wrapped__(n, sigma, rate, None, delta, rounds)
    sd.clear_caches()
    return e


def test_ranking_runs_up_to_1e6_trials_choose_the_same_eps0(monkeypatch):
    # Up to 1e6 trials the plain ranking cells take scipy's bdtr at every entry; SAMPLED
    # ranking (blocks of 8 rows or more) carries runs from the incomplete beta instead.
    from shuffledp.pairs import hidden as sp
    from shuffledp.bounds import sampled as S
    hp, _ = trimmed_hidden(10**6, 2.0, 2.5, rate=0.1)
    a = sp.hidden_cells(hp, S._SEARCH_BUDGET, ranking=True)
    b = sp.hidden_cells(hp, S._SEARCH_BUDGET, ranking=sp.SAMPLED)
    assert np.array_equal(a.c, b.c) and np.array_equal(a.alpha, b.alpha)
    assert np.allclose(b.w, a.w, rtol=3e-6, atol=1e-300)
    e = S._best_eps0.__wrapped__(10**6, 2.0, 0.1, None, 1e-5, 10**6)
    assert e == _eps0_ranked_on_every_row(monkeypatch, 10**6, 2.0, 0.1, 1e-5, 10**6)
