"""The check-in hidden pair's Rényi floor (``pairs.hidden.hidden_rdp_floor``, session 18):
certified lower bounds on the exact D_λ that the RDP route's curve bounds, from the pair's
atoms merged by loss. It lets the RDP route of trimmed-clone-sampled be skipped where it
cannot beat the PLD route's value, so it must never exceed the pair's exact divergence
(checked in mpmath on an exactly enumerated pair) nor the curve, and must stay close
enough to the curve to decide (checked at the sizes of the benchmark's questions).
Also: ``hidden_rdp``'s orders on two threads give the floats of one thread.
"""

import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import hidden as sp
from shuffledp.pairs.clone.hockey import slice0_hockey


def _pair(n, rate, eps0, c=0.999):
    return sp.hidden_pair(n, math.exp(-eps0) * c, log_odds=eps0, kappa=math.exp(-eps0),
                          rate=rate, c_gamma=c)


def _exact_renyi(hp, orders):
    """D_λ of the normalised dominating cells (every x of every cell, no window: n small),
    summed in mpmath at 40 digits from the cells' parameters."""
    mp.mp.dps = 40
    cl = sp.hidden_cells(hp, sp.ATOM_BUDGET, False)
    assert cl.worst == 0.0                    # n ≤ EXACT_N: every cell exact, no window
    out = []
    mass = mp.fsum([mp.mpf(float(w)) for w in cl.w]) + mp.mpf(cl.zero)
    pmfs = {}
    for lam in orders:
        lam = mp.mpf(lam)
        terms = [mp.mpf(cl.zero)] if cl.zero > 0 else []
        for c, a, b, w in zip(cl.c.tolist(), cl.alpha.tolist(), cl.beta.tolist(),
                              cl.w.tolist()):
            if c not in pmfs:
                pmfs[c] = [mp.binomial(c, x) / mp.mpf(2) ** c for x in range(c + 1)]
            B = pmfs[c]
            a, b, w = mp.mpf(a), mp.mpf(b), mp.mpf(w)
            for x in range(c + 2):
                bu = B[x - 1] if x >= 1 else 0
                bv = B[x] if x <= c else 0
                p = w * (a * bu + b * bv)
                q = w * (b * bu + a * bv)
                if p > 0:
                    terms.append(p ** lam * q ** (1 - lam))
        S = mp.fsum(terms)
        val = mp.log(S / mass) if mass >= 1 else mp.log(S + 1 - mass)
        out.append(float(val / (lam - 1)))
    return np.array(out)


@pytest.mark.parametrize("n, rate, eps0", [(24, 0.3, 1.0), (30, 0.8, 2.5), (18, 0.5, 0.4)])
def test_floor_below_exact_divergence_mpmath(n, rate, eps0):
    hp = _pair(n, rate, eps0)
    orders = [2.0, 2.5, 4.0, 9.0, 17.3]
    orders = [o for o in orders if o <= sp.max_order(hp)]
    exact = _exact_renyi(hp, orders)
    floor = sp.hidden_rdp_floor(hp, np.array(orders))
    assert np.all(floor <= exact), (floor, exact)
    # and not vacuous: the losses of such a small pair take few values, the merge loses little
    assert np.all(floor >= 0.9 * exact), (floor, exact)
    # the curve (integer orders) is above both
    ints = np.array([o for o in orders if float(o).is_integer()], dtype=np.int64)
    curve = sp.hidden_rdp(hp, ints)
    assert np.all(sp.hidden_rdp_floor(hp, ints.astype(float)) <= curve)


def test_a_wrong_floor_would_be_caught():
    """The mpmath check above can fail: the floor's Rényi sum without the data-processing
    merge's direction (every bin's loss pushed up by 1 %) exceeds the exact divergence."""
    hp = _pair(24, 0.3, 1.0)
    P, ell, rel, err_ell, tail, mass = sp._floor_pair(hp)
    lam = 4.0
    wrong = math.log(float(np.sum(P * np.exp((lam - 1.0) * ell * 1.01)))) / (lam - 1.0)
    assert wrong > _exact_renyi(hp, [lam])[0]


@pytest.mark.parametrize("n, rate, eps0", [
    (17_313_038, 0.0134, 1.18),          # the random question #18's pair
    (10**6, 0.1, 4.09),
    (2_000_000, 0.3, 2.0),
])
def test_floor_below_and_close_to_the_curve(n, rate, eps0):
    hp = _pair(n, rate, eps0)
    logp = sp.hidden_atoms(hp)[0]
    cl = sp.hidden_cells(hp, sp.ATOM_BUDGET, False)
    starts = sp._floor_groups(hp, cl, logp.size)     # the atoms' layout was recognised
    assert starts is not None and 1 < starts.size < 0.6 * logp.size
    top = sp.max_order(hp)
    ints = np.unique(np.round(np.geomspace(2, top, 12)).astype(np.int64))
    curve = sp.hidden_rdp(hp, ints)
    floor = sp.hidden_rdp_floor(hp, ints.astype(float))
    assert np.all(floor <= curve)
    assert np.all(floor >= 0.95 * curve), floor / curve


@pytest.mark.parametrize("n, m, eps0", [(10**6, 10**5, 2.0), (200, 50, 1.5)])
def test_floor_without_replacement(n, m, eps0):
    hp = sp.hidden_pair(n, math.exp(-eps0) * 0.999, log_odds=eps0, kappa=math.exp(-eps0),
                        size=m, c_gamma=0.999)
    lam = np.array([2, 3, 5, 9, 17], dtype=np.int64)
    curve = sp.hidden_rdp(hp, lam)
    floor = sp.hidden_rdp_floor(hp, lam.astype(float))
    assert np.all(floor <= curve) and np.all(floor >= 0.95 * curve)


def test_floor_is_non_decreasing_enough_for_the_composer():
    """The composer reads the floor at real orders between integer ones: it is a lower
    bound there too (the exact D is non-decreasing, the curve's chord above it)."""
    hp = _pair(2_000_000, 0.3, 2.0)
    lam = np.linspace(2.0, 20.0, 37)
    floor = sp.hidden_rdp_floor(hp, lam)
    ints = np.arange(2, 21, dtype=np.int64)
    curve = sp.hidden_rdp(hp, ints)
    # at λ in [k, k + 1] the exact D is at most D(k + 1) ≤ curve(k + 1)
    up = curve[np.minimum(np.ceil(lam).astype(int) - 2, ints.size - 1)]
    assert np.all(floor <= up)


def test_rdp_route_skipped_by_the_floor_same_answer():
    """The check-in question where only this floor rules out the RDP route: same answer as
    before (the PLD route's), the RDP route now listed as "cannot beat", and its own value
    (asked for explicitly) above the floor the skip quoted."""
    q = sd.Shuffle(sd.Gaussian(7.5715), n=100898, sampling=sd.CheckIn(0.00136))
    delta, rounds = 1.68e-09, 4554                   # random question (seed 14)
    r = sd.epsilon(q, delta=delta, rounds=rounds, bound="trimmed-clone-sampled")
    (cand,) = [c for c in r.candidates if c.bound == "trimmed-clone-sampled"]
    skipped = cand.details.get("routes_skipped", {})
    assert "rdp" in skipped and "cannot beat" in skipped["rdp"]
    floor = float(skipped["rdp"].split("at least ")[1].rstrip(")"))
    own = sd.epsilon(q, delta=delta, rounds=rounds, bound="trimmed-clone-sampled",
                     composition="rdp")
    assert own.epsilon >= floor >= r.epsilon


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def test_hidden_rdp_two_threads_same_floats(monkeypatch):
    monkeypatch.setattr(sp, "_RDP_THREADED", 0)
    hp = _pair(2_000_000, 0.3, 2.0)
    orders = np.array([2, 3, 5, 8, 13, 21, 34], dtype=np.int64)
    got = {}
    for k in (1, 2):
        monkeypatch.setenv("SHUFFLEDP_THREADS", str(k))
        got[k] = sp.hidden_rdp(hp, orders)
    assert _same(got[1], got[2])
    assert np.all(np.isfinite(got[1])) and np.all(got[1] > 0)


def test_worst_cell_hockey_is_the_kernels_bit_for_bit():
    """``hidden_delta`` takes the most informative slice's δ (c = 0) in closed form: the
    same floats as ``conditional_hockey`` on that slice, at ε = 0, below, near and above
    log(α/β), for small and large log-odds (α, β and γ formed by ``Bias``)."""
    from shuffledp.pairs.clone import conditional_hockey
    from shuffledp.pairs.law import Bias
    rng = np.random.default_rng(18)
    odds = np.concatenate([[1e-9, 1e-4, 0.3, 1.0, 7.0, 19.5, 40.0, 300.0],
                           10.0 ** rng.uniform(-8, 2.5, 300)])
    n_live = 0
    for L in odds.tolist():
        b = Bias(L)
        for eps in [0.0, L * 0.5, L * (1 - 1e-12), L, L * (1 + 1e-9), L * 2.0,
                    float(rng.uniform(0, 1.5 * L)), 1e-300]:
            hw, ew = conditional_hockey(np.array([0]), np.array([b.alpha]), eps,
                                        with_error=True, beta=np.array([b.beta]),
                                        gamma=np.array([b.gamma]))
            h, e = slice0_hockey(b.alpha, b.beta, b.gamma, eps)
            assert (h, e) == (float(hw[0]), float(ew[0])), (L, eps)
            assert float(hw[0] + ew[0]) == h + e
            n_live += h > 0
    assert n_live > 500


def test_chi2_estimate_decides_when_the_floor_is_built():
    """The cells' χ² estimate (Σ w·4γ²/(c + 1)) tracks the curve at order 2; where it is
    below the floor's own allowances the floor returns 0 (no claim) without building its
    merged pair."""
    tight = _pair(17_313_038, 0.0134, 1.18)          # χ² ~ 3e-9: the floor decides
    est = sp._chi2_estimate(tight)
    d2 = sp.hidden_rdp(tight, np.array([2]))[0]
    assert 0.9 * d2 <= est <= 1.1 * d2
    assert est > sp._FLOOR_MIN_CHI2 and sp.hidden_rdp_floor(tight, np.array([2.0]))[0] > 0
    faint = _pair(10**10, 0.00254, 3.14)             # χ² ~ 2e-11 (random question #30)
    assert sp._chi2_estimate(faint) < sp._FLOOR_MIN_CHI2
    sp.hidden_atoms(faint)
    before = sp._floor_pair.cache_info()
    lam = np.array([2.0, 5.0, 30.0])
    got = sp.hidden_rdp_floor(faint, lam)
    after = sp._floor_pair.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
    # there: the closed-form D_2 floor, the same at every order, half the curve's D_2
    d2 = sp.hidden_rdp(faint, np.array([2]))[0]
    assert np.all(got == got[0]) and 0.45 * d2 <= got[0] <= 0.5 * d2


@pytest.mark.parametrize("n, rate, eps0", [(24, 0.3, 1.0), (30, 0.8, 2.5), (18, 0.5, 0.4)])
def test_closed_form_d2_floor_below_exact(n, rate, eps0):
    hp = _pair(n, rate, eps0)
    exact = _exact_renyi(hp, [2.0])[0]
    d2 = sp._d2_floor(hp)
    assert 0.0 < d2 <= exact
    assert d2 >= 0.25 * exact            # half of log(1 + χ²); 4γ²/s is looser at large γ
    # a wrong one (every cell's χ² taken at one report, s = 1, instead of s = c + 1) is
    # above the exact value: the check can fail
    cl = sp.hidden_cells(hp, sp.ATOM_BUDGET, False)
    wrong = math.log1p(float(np.sum(cl.w * 4.0 * cl.gamma ** 2)))
    assert wrong > exact
