"""Sampled rounds: the hidden-⊥ clone pair against exact enumeration, and its accounting.

The oracle enumerates participation (every subset of participants, with its probability),
every neighbouring pair of datasets (all datasets of the others, every victim pair, both
directions) and the exact law of the released multiset (participants' outputs, shuffled),
for one and two rounds. Independent of the code under test: it never uses the clone
decomposition.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import mpmath
import numpy as np
import pytest
from scipy import special

import oracle
import shuffledp as sd
from shuffledp.pairs import clone as cp
from shuffledp.pairs import hidden as sp
from shuffledp.bounds import get
from shuffledp.pairs.hidden import mixture_rdp
from shuffledp.pairs.trimmed import trimmed_hidden


# ----------------------------------------------------------------------------------------
# Oracle
# ----------------------------------------------------------------------------------------
def _release_law(R, data, gamma=None, m=None):
    """Exact law of the shuffled multiset of participants' outputs (dict count-tuple → prob).

    Check-in: each user independently w.p. γ. Without replacement: every m-subset equally
    likely (check-in at any rate conditioned on m participants, tracked in the state).
    """
    d = R.shape[1]
    g = 0.5 if m is not None else gamma
    law = {((0,) * d, 0): 1.0}
    for x in data:
        new = defaultdict(float)
        for (cnt, k), pr in law.items():
            new[(cnt, k)] += pr * (1.0 - g)
            for y in range(d):
                if R[x, y] > 0:
                    c2 = list(cnt)
                    c2[y] += 1
                    new[(tuple(c2), k + 1)] += pr * g * R[x, y]
        law = new
    out = defaultdict(float)
    if m is None:
        for (cnt, k), pr in law.items():
            out[cnt] += pr
        return dict(out)
    tot = sum(pr for (cnt, k), pr in law.items() if k == m)
    for (cnt, k), pr in law.items():
        if k == m:
            out[cnt] += pr / tot
    return dict(out)


def _hockey(P, Q, eps):
    E = math.exp(eps)
    keys = set(P) | set(Q)
    return sum(max(P.get(k, 0.0) - E * Q.get(k, 0.0), 0.0) for k in keys)


def _product(P, T):
    out = P
    for _ in range(T - 1):
        out = {(a, b): pa * pb for a, pa in out.items() for b, pb in P.items()}
    return out


def exact_delta(R, n, eps, rounds=1, gamma=None, m=None):
    """max over neighbouring pairs and both directions of δ(ε) of ``rounds`` rounds."""
    k = R.shape[0]
    worst = 0.0
    for others in itertools.product(range(k), repeat=n - 1):
        laws = {v: _release_law(R, (v,) + others, gamma, m) for v in range(k)}
        for v0, v1 in itertools.permutations(range(k), 2):
            P, Q = _product(laws[v0], rounds), _product(laws[v1], rounds)
            worst = max(worst, _hockey(P, Q, eps))
    return worst


def _atoms_delta(hp, eps, rounds):
    """δ(ε) of ``rounds`` products of the pair's atoms (exact cells at small n: no tails)."""
    lp, lq, tail_cell, _ = sp.hidden_atoms(hp)
    assert float(np.sum(tail_cell)) < 1e-12
    P, Q = np.exp(lp), np.exp(lq)
    Pt, Qt = P, Q
    for _ in range(rounds - 1):
        Pt, Qt = np.outer(Pt, P).ravel(), np.outer(Qt, Q).ravel()
    return float(np.maximum(Pt - math.exp(eps) * Qt, 0.0).sum()) * (1 + 1e-12) + 1e-15


def _eps0_of(R):
    with np.errstate(divide="ignore"):
        L = np.log(R)
    return float(np.max(L[:, None, :] - L[None, :, :]))


# Discrete randomizers with low-probability outputs carrying large ratios.
R_SKEW = np.array([[0.70, 0.25, 0.05],
                   [0.20, 0.72, 0.08],
                   [0.45, 0.45, 0.10]])
R_BIN = np.array([[0.90, 0.10], [0.30, 0.70]])
R_RARE = np.array([[0.96, 0.03, 0.01], [0.97, 0.0299, 0.0001]])   # ratio 100 on a 1e-2 output


def _fmt20_hp(R, n, gamma=None, m=None):
    e0 = _eps0_of(R)
    p = math.exp(-e0)
    return sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=gamma, size=m)


def _specific_hp(R, n, gamma=None, m=None):
    e0 = _eps0_of(R)
    p = cp.specific_p(R)
    return sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=gamma, size=m)


CASES = [(R_SKEW, 3, 0.3, None), (R_SKEW, 3, None, 2), (R_BIN, 5, 0.5, None),
         (R_BIN, 5, None, 3), (R_RARE, 4, 0.25, None), (R_RARE, 4, None, 1),
         (R_BIN, 4, 0.9, None)]


@pytest.mark.parametrize("R,n,gamma,m", CASES)
@pytest.mark.parametrize("rounds", [1, 2])
def test_pure_pairs_dominate_exact_enumeration(R, n, gamma, m, rounds):
    for eps in (0.0, 0.1, 0.4, 1.0):
        exact = exact_delta(R, n, eps, rounds, gamma, m)
        for make in (_fmt20_hp, _specific_hp):
            hp = make(R, n, gamma, m)
            bound = sp.hidden_delta(hp, eps) if rounds == 1 else _atoms_delta(hp, eps, rounds)
            assert bound >= exact - 1e-13, (make.__name__, eps, bound, exact)


def _trimmed_discrete(R, n, eps0, gamma=None, m=None):
    """(hidden pair, c_γ) of an (ε0, δ0)-LDP matrix, δ0 its exact value at ε0."""
    E = math.exp(eps0)
    d0 = max(float(np.maximum(R[a] - E * R[b], 0).sum())
             for a in range(R.shape[0]) for b in range(R.shape[0]) if a != b)
    c = 1.0 - n * d0
    part = m if m is not None else gamma * n
    cg = 1.0 - part * d0
    hp = sp.hidden_pair(n, math.exp(-eps0) * c, log_odds=eps0 - math.log(c),
                        kappa=math.exp(-eps0), rate=gamma, size=m, c_gamma=cg)
    return hp, cg


# An (ε0, δ0) randomizer: one output impossible under input 1 (infinite ratio).
R_DELTA = np.array([[0.60, 0.37, 0.03], [0.35, 0.65, 0.0]])


@pytest.mark.parametrize("gamma,m,n", [(0.4, None, 4), (None, 2, 4), (0.8, None, 3),
                                       (None, 3, 3)])
@pytest.mark.parametrize("rounds", [1, 2])
def test_trimmed_pair_dominates_exact_enumeration(gamma, m, n, rounds):
    for eps0 in (0.8, 1.2):
        hp, cg = _trimmed_discrete(R_DELTA, n, eps0, gamma, m)
        for eps in (0.0, 0.2, 0.6, 1.5):
            exact = exact_delta(R_DELTA, n, eps, rounds, gamma, m)
            H = sp.hidden_delta(hp, eps) if rounds == 1 else _atoms_delta(hp, eps, rounds)
            bound = H + (1.0 - cg ** rounds)
            assert bound >= exact - 1e-13, (eps0, eps, bound, exact)


def test_wrong_variants_fail_the_oracle():
    """The oracle has teeth: two plausible mistakes give values below the exact δ."""
    R, n = R_BIN, 5
    # (a) a ⊥ counted as heavy as a whole clone (κ = 1 instead of p): overstates hiding.
    e0 = _eps0_of(R)
    wrong = sp.hidden_pair(n, math.exp(-e0), log_odds=e0, kappa=1.0, rate=0.5)
    fails = [sp.hidden_delta(wrong, e) < exact_delta(R, n, e, 1, 0.5) - 1e-9
             for e in (0.1, 0.4, 0.8)]
    assert any(fails)
    # (b) the (ε0, δ0) randomizer without its trimming charge 1 − c_γ^T.
    fails = []
    for gamma, m, rounds in ((0.4, None, 1), (None, 2, 2)):
        hp, cg = _trimmed_discrete(R_DELTA, 4, 1.2, gamma, m)
        for e in (0.6, 1.5, 2.5):
            H = sp.hidden_delta(hp, e) if rounds == 1 else _atoms_delta(hp, e, rounds)
            fails.append(H < exact_delta(R_DELTA, 4, e, rounds, gamma, m) - 1e-9)
    assert any(fails)


def test_exact_cells_match_the_closed_form_law_in_mpmath():
    """Cells at small n against the pair's law summed term by term at 50 digits."""
    mpmath.mp.dps = 50
    n, gamma, e0 = 12, mpmath.mpf("0.3"), mpmath.mpf(1)
    p = mpmath.e ** (-e0)
    al = mpmath.e ** e0 / (1 + mpmath.e ** e0)
    hp = sp.hidden_pair(n, float(p), log_odds=float(e0), kappa=float(p), rate=float(gamma))
    P, Q, _ = oracle.checkin_pair_law(n, p, al, gamma)
    for eps in (0.05, 0.3, 0.7):
        tot = oracle.hockey(P, Q, eps)
        got = sp.hidden_delta(hp, eps)
        assert got >= float(tot) * (1 - 1e-12)
        assert got <= float(tot) * (1 + 1e-9) + 1e-280


def test_without_replacement_law_in_mpmath():
    mpmath.mp.dps = 50
    n, m, e0 = 15, 6, mpmath.mpf("0.7")
    p = mpmath.e ** (-e0)
    al = mpmath.e ** e0 / (1 + mpmath.e ** e0)
    hp = sp.hidden_pair(n, float(p), log_odds=float(e0), kappa=float(p), size=m)
    for eps in (0.05, 0.3):
        E = mpmath.e ** mpmath.mpf(eps)
        tot = mpmath.mpf(0)
        for a in range(m + 1):
            for b in range(m + 1 - a):
                ell = m - a - b
                if a + b == 0:
                    continue
                base = (mpmath.mpf(m) / n * mpmath.factorial(m - 1)
                        / (mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(ell))
                        * (p / 2) ** (a + b - 1) * (1 - p) ** ell)
                P = base * ((n - m) * p / 2 + al * a + (1 - al) * b)
                Q = base * ((n - m) * p / 2 + (1 - al) * a + al * b)
                tot += max(P - E * Q, 0)
        got = sp.hidden_delta(hp, eps)
        assert float(tot) * (1 - 1e-12) <= got <= float(tot) * (1 + 1e-9) + 1e-280


@pytest.mark.parametrize("n", [5, 60, 2500])
def test_rate_one_is_the_unsampled_pair(n):
    e0 = 1.0
    pair = cp.fmt20_pair(e0, n)
    hp = sp.hidden_pair(n, pair.p, log_odds=pair.log_ratio, kappa=pair.p, rate=1.0)
    hw = sp.hidden_pair(n, pair.p, log_odds=pair.log_ratio, kappa=pair.p, size=n)
    for eps in (0.02, 0.1, 0.3):
        ref = cp.pair_delta(pair, eps)
        for h in (hp, hw):
            assert sp.hidden_delta(h, eps) == pytest.approx(ref, rel=1e-8, abs=1e-30)
    o = np.array([2, 5, 20])
    ref = cp.pair_rdp(pair, o)
    assert np.allclose(sp.hidden_rdp(hp, o), ref, rtol=1e-6)


def test_binned_cells_against_exact_cells_at_moderate_n():
    """n = 600 (grouped cells, CDF bins) against every (n_⊥, s) cell summed exactly."""
    n, e0, g = 600, 1.0, 0.2
    p = math.exp(-e0)
    hp = sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=g)
    exact = sp._checkin_exact(hp)
    keep = exact.w > 1e-25                 # the rest cannot move δ ≥ 1e-6 (total < 1e-15)
    assert float(exact.w[~keep].sum()) < 1e-15
    ec, ea, ew = exact.c[keep], exact.alpha[keep], exact.w[keep]

    def ref_delta(eps):
        return float(np.dot(ew, cp.conditional_hockey(ec, ea, eps, beta=exact.beta[keep])))

    for eps in (0.0, 0.03):
        ref, got = ref_delta(eps), sp.hidden_delta(hp, eps)
        assert got >= ref * (1 - 1e-12)
    for delta in (1e-3, 1e-6):
        e_got = sp.hidden_epsilon(hp, delta)
        assert ref_delta(e_got) <= delta * (1 + 1e-9)          # certified end
        assert ref_delta(e_got * 0.98) > delta                   # and within 2 %


def test_rdp_of_binned_cells_against_exact_cells(monkeypatch):
    """RDP of the grouped cells (n = 400) against the exact cells' RDP."""
    n, e0, g = 400, 1.0, 0.3
    p = math.exp(-e0)
    o = np.array([2, 8, 30])
    hp = sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=g)
    sd.clear_caches()
    monkeypatch.setattr(sp, "EXACT_N", 10)
    got = sp.hidden_rdp(hp, o)
    sd.clear_caches()
    monkeypatch.setattr(sp, "EXACT_N", 1000)
    ref = sp.hidden_rdp(hp, o)
    sd.clear_caches()
    assert np.all(got >= ref * (1 - 1e-9))
    assert np.all(got <= ref * 1.05)


def test_mixture_rdp_formula():
    lam = np.array([2.0, 5.0, 200.0])
    e = np.array([0.5, 1.0, 3.0])
    for g in (0.01, 0.3, 1.0):
        ref = [float(mpmath.log(1 - g + g * mpmath.e ** ((l - 1) * x)) / (l - 1))
               for l, x in zip(lam, e)]
        assert np.allclose(mixture_rdp(g, lam, e), ref, rtol=1e-12)


# ----------------------------------------------------------------------------------------
# Accounting
# ----------------------------------------------------------------------------------------
def test_monotone_in_rounds_and_rate():
    n = 1000
    vals = []
    for g in (0.05, 0.3, 1.0):
        proto = sd.Shuffle(sd.LDP(1.0), n=n, sampling=sd.CheckIn(g))
        vals.append(sd.epsilon(proto, 1e-6, 20, bound="fmt20-sampled", composition="rdp").epsilon)
    assert vals == sorted(vals)
    proto = sd.Shuffle(sd.LDP(1.0), n=n, sampling=sd.CheckIn(0.1))
    ts = [sd.epsilon(proto, 1e-6, T, bound="fmt20-sampled").epsilon for T in (1, 5, 25)]
    assert ts == sorted(ts)


def test_default_answer_non_increasing_as_sampling_is_added():
    """γ from 1 down at fixed n: the default answer never grows (and starts at all-users)."""
    n = 2000
    vals = [sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=n), 1e-6, 10).epsilon]
    for g in (1.0, 0.5, 0.1):
        vals.append(sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=n, sampling=sd.CheckIn(g)), 1e-6,
                               10).epsilon)
    for a, b in zip(vals, vals[1:]):
        assert b <= a * (1 + 1e-9), vals
    assert vals[-1] < 0.5 * vals[0]


def test_unsampled_bounds_apply_to_sampled_protocols_but_lower_bounds_do_not():
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 2), n=500, sampling=sd.CheckIn(0.5))
    assert get("fmt20").check(proto) is None
    assert get("fmt23-sampled").check(proto) is None
    assert get("krr-lower").check(proto) is not None
    assert get("fmt23-sampled").check(sd.Shuffle(sd.LDP(1.0), n=500, sampling=sd.CheckIn(0.5)))
    assert "sampled" in get("fmt20-sampled").check(sd.Shuffle(sd.LDP(1.0), n=500))


def test_gaussian_unamplified_mixture():
    proto = sd.Shuffle(sd.Gaussian(5.0), n=60000, sampling=sd.CheckIn(0.1))
    r = sd.epsilon(proto, 1e-5, 5540, bound="gaussian-unamplified")
    assert 30.0 < r.epsilon <= 33.0
    one = sd.delta(proto, 1.0, bound="gaussian-unamplified").delta
    full = sd.delta(sd.Shuffle(sd.Gaussian(5.0), n=60000), 1.0, bound="gaussian-unamplified").delta
    assert one == pytest.approx(0.1 * full, rel=1e-9)


def test_trimmed_hidden_charges_participants_only():
    hp, cg = trimmed_hidden(1000, 5.0, 1.5, rate=0.1)
    from shuffledp.pairs import gaussian_rdp as G
    assert cg == pytest.approx(1 - 100 * G.gaussian_delta(5.0, 1.5), rel=1e-12)
    hp2, cg2 = trimmed_hidden(1000, 5.0, 1.5, size=100)
    assert cg2 == pytest.approx(cg, rel=1e-12)


def test_trimmed_sampled_small_setting_beats_unsampled():
    proto = sd.Shuffle(sd.Gaussian(3.0), n=3000, sampling=sd.CheckIn(0.2))
    a = sd.epsilon(proto, 1e-5, 50, bound="trimmed-clone-sampled").epsilon
    b = sd.epsilon(proto, 1e-5, 50, bound="trimmed-clone").epsilon
    assert a < b


from hypothesis import given, settings, strategies as st


@settings(max_examples=15, deadline=None)
@given(e0=st.floats(0.2, 4.0), n=st.integers(2, 30), g1=st.floats(0.01, 1.0),
       g2=st.floats(0.01, 1.0), eps=st.floats(0.0, 2.0))
def test_hidden_pair_monotone_in_rate(e0, n, g1, g2, eps):
    """Check-in at a smaller rate is a thinning (post-processing) of the larger one."""
    lo, hi = sorted((g1, g2))
    p, al = math.exp(-e0), float(special.expit(e0))
    a = sp.hidden_delta(sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=lo), eps)
    b = sp.hidden_delta(sp.hidden_pair(n, p, log_odds=e0, kappa=p, rate=hi), eps)
    full = cp.pair_delta(cp.ClonePair(n, p, al, 1 - al), eps)
    assert a <= b * (1 + 1e-9) + 1e-15
    assert b <= full * (1 + 1e-9) + 1e-15


def test_calibrate_eps0_with_sampling():
    n, target = 1500, 0.5
    c = sd.calibrate.eps0(n, target, 1e-6, sampling=sd.CheckIn(0.3), tol=1e-3)
    assert c.epsilon <= target and c.epsilon >= target * (1 - 1e-3)
    assert c.protocol.sampling == sd.CheckIn(0.3)
    full = sd.calibrate.eps0(n, target, 1e-6, tol=1e-3)
    assert c.value > full.value                    # sampling buys a larger eps0


@pytest.mark.parametrize("n,q,B,lo", [(10**9, 0.9006699635243461, 700, 700_000),
                                      (10**7, 0.9, 1, 10_000), (5000, 0.5, 3, 1000),
                                      (3 * 10**6, 0.2, 1, 500)])
def test_path_cdf_is_certified_against_independent_sums(n, q, B, lo):
    """The check-in cells' CDF upper bounds carried along the slices by exact identities:
    never below the certified sum of the same probability (numerics.binom_cdf_bounds, an
    independent evaluation per entry), and within 1e-9 relative of it."""
    from shuffledp.numerics import binom_cdf_bounds
    s = np.arange(lo, lo + 3 * B + 40)
    N = (n - s).astype(float)
    starts = np.arange(0, s.size, B)
    ends = np.minimum(starts + B, s.size) - 1
    z = np.array(sp._NBOT_Z)
    edges = np.maximum(0.0, np.floor(N[ends][:, None] * q
                                     + z[None, :] * np.sqrt(N[starts] * q * (1 - q))[:, None]))
    E = edges[np.repeat(np.arange(starts.size), ends - starts + 1)]
    got = sp._path_log_cdf_upper(N, q, E - 1.0)
    for r in np.linspace(0, s.size - 1, 9).astype(int):
        for j in range(E.shape[1]):
            k = int(E[r, j] - 1)
            lo_, hi_ = binom_cdf_bounds(k, int(N[r]), q)
            v = math.exp(got[r, j])
            assert v >= lo_
            assert v <= hi_ * (1 + 1e-9) + 1e-300


def test_merged_cells_dominate_the_per_slice_cells():
    """The ε0 search of the check-in Gaussian at > 1e8 users ranks ε0 on merged cells: they
    must give a δ(ε) at or above the one of every slice as its own cell (a dominating pair)."""
    hp, _ = trimmed_hidden(200_000, 2.0, 3.0, 0.1, None)
    for eps in (0.0, 0.01, 0.03, 0.1):
        fine = sp.hidden_delta(hp, eps)
        merged = sp.hidden_delta(hp, eps, 2_000)
        assert merged >= fine * (1 - 1e-12)
    assert sp.hidden_epsilon(hp, 1e-8, 2_000) >= sp.hidden_epsilon(hp, 1e-8) * (1 - 1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_segments_side_by_side_equal_one_at_a_time(seed):
    # The check-in cells' certified distribution functions are carried along every run of
    # rows ("segment") at once, as rows of a padded matrix. Each value must be bit for bit
    # what the one-segment form gives (same operations, same order): thresholds held in
    # blocks, falls of more than 2 (restarts), rises by 1, 2 and more (pmf bridges), moves
    # down by 1 and 2, and rows outside the support.
    rng = np.random.default_rng(seed)
    R, J, q = 400, 3, 0.83
    N = 10.0**6 + 5000.0 - np.arange(R)
    K = np.empty((R, J))
    for j in range(J):
        k = np.floor(N[0] * q) - 40.0 * j
        col = []
        for r in range(R):
            u = rng.random()
            if r % 60 == 0 and r:
                k -= rng.integers(3, 40)                    # block boundary: restart
            elif u < 0.15:
                k += rng.choice([-2, -1, 1, 2, 3, 7])       # moves and bridges
            col.append(k)
        K[:, j] = col
    K[17:19, 1] = -1.0                                      # below the support
    out = sp._path_log_cdf_upper(N, q, K)
    lp = math.log1p(-q)
    for j in range(J):
        k = K[:, j]
        reg = (k >= 0) & (k < N)
        first = reg.copy()
        first[1:] &= ~reg[:-1] | ((k[1:] - k[:-1]) < -2)
        starts = np.flatnonzero(first).tolist() + [R]
        for r0, r1 in zip(starts[:-1], starts[1:]):
            irr = np.flatnonzero(~reg[r0:r1])
            r1 = r0 + (int(irr[0]) if irr.size else r1 - r0)
            ref = sp._segment_log_cdf(N[r0:r1], k[r0:r1], q, lp)
            assert np.array_equal(out[r0:r1, j], ref), (j, r0, r1)
