"""The privacy-blanket bound, its atoms and the certified i.i.d.-sum engine.

Oracles, independent of the code under test:
* exact shuffled output laws by enumeration over every neighbouring dataset pair at n <= 7
  (float64 convolution of the users' laws over histograms, written here from the matrix;
  one case re-checked with the 50-digit mpmath oracle of tests/oracle.py);
* the exact multinomial sum E[(ΣG)_+] (``iid_sum.exact_positive_part`` sums every count
  vector; re-derived here for binary RR as a plain double loop);
* each named encoder's atoms against the column-wise blanket of its full matrix at small d.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import shuffledp as sd
from shuffledp.pairs import gparv
from shuffledp.pairs import iid as iid_sum
from shuffledp.pairs import blanket as B
from shuffledp.bounds import get
from shuffledp.accounting.select import bound_answer
from shuffledp.core.views import DeltaAt
from shuffledp.compose.composition import pld_unavailable_reason

import oracle


# ---------------------------------------------------------------------------------------
# Exact enumeration helpers (float64, independent of the library)
# ---------------------------------------------------------------------------------------
def _hist_law(M, data):
    m = M.shape[1]
    dist = {tuple([0] * m): 1.0}
    for x in data:
        row = M[x]
        nxt = {}
        for c, pr in dist.items():
            for y in range(m):
                if row[y] == 0:
                    continue
                cc = list(c)
                cc[y] += 1
                cc = tuple(cc)
                nxt[cc] = nxt.get(cc, 0.0) + pr * row[y]
        dist = nxt
    return dist


def _vectors(P, Q):
    keys = sorted(set(P) | set(Q))
    return np.array([P.get(k, 0.0) for k in keys]), np.array([Q.get(k, 0.0) for k in keys])


def _hockey(p, q, eps):
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


def _all_pairs(M, n):
    """(P, Q) vectors for every neighbouring pair (victim first, others as a multiset)."""
    k = M.shape[0]
    out = []
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        base = _hist_law(M, others)
        laws = [_hist_law(M[[x]], [0]) for x in range(k)]
        conv = []
        for x in range(k):
            d = {}
            for c, pr in base.items():
                for c1, p1 in laws[x].items():
                    cc = tuple(a + b for a, b in zip(c, c1))
                    d[cc] = d.get(cc, 0.0) + pr * p1
            conv.append(d)
        for x0 in range(k):
            for x1 in range(k):
                if x0 != x1:
                    out.append(_vectors(conv[x0], conv[x1]))
    return out


def _with_checkin(M, rate):
    return np.hstack([rate * M, np.full((M.shape[0], 1), 1.0 - rate)])


def _rr(e0, k):
    return np.array(oracle.rr_matrix(e0, k))


def _random_matrix(rng, k, m, e0):
    """A random ε0-LDP matrix: rows e^{ε0·U}, U uniform, normalised (ratios ≤ e^ε0)."""
    w = np.exp(e0 * rng.uniform(size=(k, m)))
    return w / w.sum(axis=1, keepdims=True)


def _case_list():
    rng = np.random.default_rng(7)
    return [
        ("2RR", sd.RandomizedResponse(1.0, 2), _rr(1.0, 2), 7, None),
        ("3RR", sd.RandomizedResponse(1.5, 3), _rr(1.5, 3), 7, None),
        ("5RR", sd.RandomizedResponse(2.0, 5), _rr(2.0, 5), 5, None),
        ("OUE3", sd.OUE(1.0, 3), sd.OUE(1.0, 3).matrix(), 5, None),
        ("RAPPOR3", sd.RAPPOR(2.0, 3), sd.RAPPOR(2.0, 3).matrix(), 5, None),
        ("HR3", sd.HadamardResponse(1.0, 3), sd.HadamardResponse(1.0, 3).matrix(), 7, None),
        ("random3x4", None, _random_matrix(rng, 3, 4, 1.2), 6, None),
        ("random4x3", None, _random_matrix(rng, 4, 3, 0.8), 5, None),
        ("3RR check-in", sd.RandomizedResponse(1.5, 3), _rr(1.5, 3), 6, 0.5),
        ("random3x3 check-in", None, _random_matrix(rng, 3, 3, 1.0), 5, 0.3),
    ]


CASES = _case_list()


def _proto(mech, M, n, rate):
    if mech is None:
        mech = sd.Randomizer(M)
    return sd.Shuffle(mech, n, sampling=sd.CheckIn(rate) if rate else None)


def _exact_matrix(M, rate):
    return _with_checkin(np.asarray(M, float), rate) if rate else np.asarray(M, float)


@pytest.fixture(scope="module")
def enumerated():
    return {name: _all_pairs(_exact_matrix(M, rate), n) for name, mech, M, n, rate in CASES}


EPS = (0.0, 0.05, 0.2, 0.5, 1.0)


# ---------------------------------------------------------------------------------------
# 1. GPARV atoms of the named encoders against their matrices
# ---------------------------------------------------------------------------------------
def _canon(pair):
    d = {}
    for a, b, w in zip(pair.a, pair.b, pair.w):
        k = (round(float(a), 9), round(float(b), 9))
        d[k] = d.get(k, 0.0) + float(w)
    return {k: v for k, v in d.items() if v > 1e-15}, pair.w0


@pytest.mark.parametrize("cls", [sd.OUE, sd.RAPPOR, sd.HadamardResponse, sd.LocalHashing])
@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("e0", [0.5, 2.0])
def test_encoder_atoms_match_matrix(cls, d, e0):
    m = cls(e0, d)
    mat = m.matrix()
    np.testing.assert_allclose(mat.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert sd.Randomizer(mat).eps0 == pytest.approx(e0, rel=1e-9)     # ε0 is what it says
    want = _canon(gparv.pairs_of(m)[0])
    pairs = gparv.pairs_from_matrix(mat)
    for p in pairs:                  # every ordered victim pair has the same atoms
        got = _canon(p)
        assert got[0].keys() == want[0].keys()
        for k in want[0]:
            assert got[0][k] == pytest.approx(want[0][k], rel=1e-12, abs=1e-15)
        assert got[1] == pytest.approx(want[1], rel=1e-12, abs=1e-15)


def test_krr_atoms_match_matrix_and_table():
    e0, k = 1.3, 6
    E = math.exp(e0)
    D = E + k - 1
    got = _canon(gparv.pairs_of(sd.RandomizedResponse(e0, k))[0])
    for p in gparv.pairs_from_matrix(_rr(e0, k)):
        assert _canon(p)[0].keys() == got[0].keys()
    # GPARV table row (D = e^ε0 + k − 1)
    assert got[0][(round(E, 9), 1.0)] == pytest.approx(1 / D)
    assert got[0][(1.0, 1.0)] == pytest.approx((k - 2) / D)
    assert got[1] == pytest.approx((E - 1) / D)


def test_rappor_finite_d_correction_is_needed():
    # the all-ones output: without it the d = 2 atoms would carry a spurious (e^ε0, e^ε0) atom
    p = gparv.pairs_of(sd.RAPPOR(1.0, 2))[0]
    assert not np.any((p.a > 1.5) & (p.b > 1.5))
    q = gparv.pairs_of(sd.RAPPOR(1.0, 40))[0]
    assert np.any((q.a > 1.5) & (q.b > 1.5))


# ---------------------------------------------------------------------------------------
# 2. The bound against exact enumeration (one round; with and without check-in)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_blanket_dominates_every_neighbouring_pair(case, enumerated):
    name, mech, M, n, rate = case
    proto = _proto(mech, M, n, rate)
    pairs = enumerated[name]
    for eps in EPS:
        worst = max(_hockey(p, q, eps) for p, q in pairs)
        bound = B.blanket_delta(proto, eps)[0]
        assert bound >= worst * (1 - 1e-12) - 1e-15, (name, eps, bound, worst)


def test_enumeration_matches_mpmath_oracle():
    # the float enumerator above against the 50-digit oracle, one small case
    M = _rr(1.0, 3)
    worst, _ = oracle.worst_delta(oracle.rr_matrix(1.0, 3), 4, 0.1)
    mine = max(_hockey(p, q, 0.1) for p, q in _all_pairs(M, 4))
    assert mine == pytest.approx(float(worst), rel=1e-12)


def test_blanket_is_tight_for_krr_at_small_n(enumerated):
    # sanity of the oracle *and* of the bound's tightness: within 25 % of the exact worst
    proto = _proto(*CASES[1][1:])
    pairs = enumerated["3RR"]
    worst = max(_hockey(p, q, 0.2) for p, q in pairs)
    assert B.blanket_delta(proto, 0.2)[0] <= 1.25 * worst


def test_wrong_variant_scaled_atoms_is_caught(enumerated, monkeypatch):
    """Every atom scaled by 0.9 (δ scaled by 0.9): the enumeration test must fail."""
    real = iid_sum.positive_part

    def scaled(values, probs, n, **kw):
        r = real(np.asarray(values) * 0.9, probs, n, **kw)
        return iid_sum.SumBound(r.upper, r.details)

    monkeypatch.setattr(iid_sum, "positive_part", scaled)
    sd.clear_caches()
    caught = []
    try:
        for name, mech, M, n, rate in CASES:
            proto = _proto(mech, M, n, rate)
            for eps in EPS:
                worst = max(_hockey(p, q, eps) for p, q in enumerated[name])
                if B.blanket_delta(proto, eps)[0] < worst * (1 - 1e-12) - 1e-15:
                    caught.append((name, eps))
    finally:
        sd.clear_caches()
    assert caught, "scaling every atom by 0.9 went unnoticed"


# ---------------------------------------------------------------------------------------
# 3. Two rounds and RDP (the dominating pair)
# ---------------------------------------------------------------------------------------
TWO_ROUND = [c for c in CASES if c[0] in ("OUE3", "3RR check-in")]


@pytest.mark.skipif(pld_unavailable_reason() is not None, reason="dp_accounting missing")
@pytest.mark.parametrize("case", TWO_ROUND, ids=[c[0] for c in TWO_ROUND])
def test_two_rounds_pld_and_rdp_dominate(case, enumerated):
    name, mech, M, n, rate = case
    proto = _proto(mech, M, n, rate)
    pairs = enumerated[name]
    b = get("blanket")
    for eps in (0.4,):
        worst = max(_hockey(np.outer(p, p).ravel(), np.outer(q, q).ravel(), eps)
                    for p, q in pairs)
        pld = bound_answer(b, proto, DeltaAt(eps), 2, "pld").value
        assert pld >= worst, (name, eps, pld, worst)
    for lam in (2, 5):
        worst = 0.0
        for p, q in pairs:
            for a, c in ((p, q), (q, p)):
                live = a > 0
                worst = max(worst, math.log(np.sum(a[live] ** lam * c[live] ** (1 - lam))) / (lam - 1))
        rdp = float(b.rdp(proto, np.array([lam]))[0])
        assert rdp >= worst, (name, lam, rdp, worst)


def test_fdp_pair_is_a_pair_and_dominates_the_curve():
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 10), 500)
    g, lp, lq, grid = B.fdp_pair(proto)
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-9)
    assert np.exp(lq).sum() == pytest.approx(1.0, abs=1e-9)
    for eps in (0.0, 0.02, 0.05, 0.1):
        h = float(np.sum(np.maximum(np.exp(lp) - math.exp(eps) * np.exp(lq), 0.0)))
        assert h >= B.blanket_delta(proto, eps)[0] * (1 - 1e-9)


# ---------------------------------------------------------------------------------------
# 4. The engine against the exact multinomial sum
# ---------------------------------------------------------------------------------------
def _brr_exact(e0, eps, n):
    """Binary RR blanket: E[(i(e^ε0 − t) + j(1 − e^ε0 t))_+], a plain double loop in logs."""
    E, t = math.exp(e0), math.exp(eps)
    p = 1.0 / (E + 1)
    lf = [math.lgamma(i + 1) for i in range(n + 1)]
    tot = 0.0
    for i in range(n + 1):
        for j in range(n - i + 1):
            v = i * (E - t) + j * (1 - E * t)
            if v <= 0:
                continue
            r = n - i - j
            lw = lf[n] - lf[i] - lf[j] - lf[r] + (i + j) * math.log(p) + (r * math.log((E - 1) / (E + 1)) if r else 0.0)
            tot += math.exp(lw) * v
    return tot


@pytest.mark.parametrize("e0,eps,n,tol", [(1.0, 0.1, 2000, 2e-3), (1.0, 0.15, 2000, 2e-3),
                                          (3.0, 1.0, 800, 2e-3), (1.0, 0.3, 2000, 1e-2)])
def test_engine_against_exact_sum_binary(e0, eps, n, tol):
    E, t = math.exp(e0), math.exp(eps)
    vals = [E - t, 1 - E * t, 0.0]
    probs = [1 / (E + 1), 1 / (E + 1), (E - 1) / (E + 1)]
    ex = _brr_exact(e0, eps, n) if n <= 800 else iid_sum.exact_positive_part(vals, probs, n)
    r = iid_sum.positive_part(vals, probs, n)
    assert r.upper >= ex
    # stated: numerical error ≤ certified_relative_error; the lattice spread adds a small
    # convex-order excess (≤ 2e-3 relative for δ down to 1e-12; 3e-3 at δ ~ 1e-26)
    assert r.upper <= ex * (1 + tol + r.details["certified_relative_error"])


def test_exact_sum_helper_against_plain_loop():
    e0, eps, n = 1.0, 0.2, 300
    E, t = math.exp(e0), math.exp(eps)
    vals = [E - t, 1 - E * t, 0.0]
    probs = [1 / (E + 1), 1 / (E + 1), (E - 1) / (E + 1)]
    assert iid_sum.exact_positive_part(vals, probs, n) == pytest.approx(_brr_exact(e0, eps, n), rel=1e-10)


@pytest.mark.parametrize("k,e0,eps,n", [(5, 1.0, 0.15, 150), (10, 2.0, 0.5, 120)])
def test_engine_against_exact_sum_krr(k, e0, eps, n):
    pair = gparv.pairs_of(sd.RandomizedResponse(e0, k))[0]
    vals, probs, err = pair.atoms(eps)
    ex = iid_sum.exact_positive_part(vals, probs, n)
    r = iid_sum.positive_part(vals, probs, n, value_err=err)
    assert ex <= r.upper <= ex * (1 + 3e-3)


@settings(max_examples=45, deadline=None)
@given(a=st.floats(0.05, 5.0), b=st.floats(-5.0, -0.05), pa=st.floats(0.01, 0.5),
       pb=st.floats(0.01, 0.49), n=st.integers(1, 400), split=st.sampled_from([None, True]))
def test_engine_never_below_exact(a, b, pa, pb, n, split):
    """One stage (default at these n) and the two-stage sum forced."""
    vals, probs = [a, b, 0.0], [pa, pb, 1.0 - pa - pb]
    ex = iid_sum.exact_positive_part(vals, probs, n)
    assert iid_sum.positive_part(vals, probs, n, split=split).upper >= ex * (1 - 1e-12)


@pytest.mark.parametrize("e0,eps,n", [(1.0, 0.1, 2000), (1.0, 0.3, 2025), (3.0, 1.0, 800),
                                      (1.0, 0.0, 2003)])
def test_two_stage_engine_against_exact_sum(e0, eps, n):
    """The two-stage sum (blocks of ~√n terms; a remainder block when n is not n1·n2),
    forced at small n where the multinomial sum is exact."""
    E, t = math.exp(e0), math.exp(eps)
    vals = [E - t, 1 - E * t, 0.0]
    probs = [1 / (E + 1), 1 / (E + 1), (E - 1) / (E + 1)]
    ex = _brr_exact(e0, eps, n) if n <= 800 else iid_sum.exact_positive_part(vals, probs, n)
    r = iid_sum.positive_part(vals, probs, n, split=True)
    assert r.details["stages"] == 2
    assert r.upper >= ex
    assert r.upper <= ex * (1 + 1e-2 + r.details["certified_relative_error"])


@pytest.mark.parametrize("eps", [0.0, 3e-4, 1e-3])
def test_two_stage_engine_close_to_one_stage_at_large_n(eps):
    """At n = 1e6 both are certified; the two-stage one (40x shorter FFTs) is within 0.1 %."""
    pair = gparv.pairs_of(sd.RandomizedResponse(1.0, 4))[0]
    vals, probs, err = pair.atoms(eps)
    one = iid_sum.positive_part(vals, probs, 10**6, value_err=err, nu=12, split=False)
    two = iid_sum.positive_part(vals, probs, 10**6, value_err=err, nu=12, split=True)
    assert two.details["fft_length"] * 8 < one.details["fft_length"]
    assert abs(two.upper / one.upper - 1.0) < 1e-3


def test_engine_edge_cases():
    assert iid_sum.positive_part([-1.0, 0.0], [0.5, 0.5], 100).upper == 0.0
    # mean exactly 0: the upward nudge of the atoms made both signs look positive and the
    # reflection recursed forever (found by hypothesis at a = 5, b = −5)
    for n in (1, 7):
        ex = iid_sum.exact_positive_part([5.0, -5.0, 0.0], [0.25, 0.25, 0.5], n)
        got = iid_sum.positive_part([5.0, -5.0, 0.0], [0.25, 0.25, 0.5], n).upper
        assert ex <= got <= ex * 1.01
    # positive mean: reflected, still ≥ E S
    r = iid_sum.positive_part([1.0, -0.5], [0.5, 0.5], 50)
    assert r.upper >= 50 * 0.25
    with pytest.raises(ValueError, match="probs"):
        iid_sum.positive_part([1.0, -1.0], [0.3, 0.3], 10)


# ---------------------------------------------------------------------------------------
# 5. The bound through the API
# ---------------------------------------------------------------------------------------
def test_epsilon_is_certified_end():
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 10), 10_000)
    e = get("blanket").epsilon_one(proto, 1e-6)
    assert B.blanket_delta(proto, e)[0] <= 1e-6
    assert B.blanket_delta(proto, e * (1 - 1e-3))[0] > 1e-6


def test_default_answer_krr_is_blanket_and_meets_the_lower_bound():
    r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, 10), 10_000), delta=1e-6, lower=True)
    assert r.bound == "blanket" and r.kind == "upper"
    assert r.epsilon <= 0.0234
    assert r.epsilon <= 1.01 * r.lower.epsilon
    assert "non-adaptive" in r.valid_for


def test_encoders_below_fmt20():
    for m in (sd.OUE(2.0, 1000), sd.RAPPOR(2.0, 1000), sd.HadamardResponse(2.0, 1000),
              sd.LocalHashing(2.0, 1000)):
        p = sd.Shuffle(m, 10_000)
        bl = sd.epsilon(p, 1e-6, bound="blanket").epsilon
        f20 = sd.epsilon(p, 1e-6, bound="fmt20").epsilon
        assert bl < f20, m


def test_applicability_reasons():
    b = get("blanket")
    assert "concrete randomizer" in b.check(sd.Shuffle(sd.LDP(1.0), 100))
    assert "CheckIn" in b.check(sd.Shuffle(sd.RandomizedResponse(1.0, 3), 100,
                                           sampling=sd.WithoutReplacement(10)))
    assert "Gaussian" in b.check(sd.Shuffle(sd.Gaussian(1.0), 100))
    oue = sd.Shuffle(sd.OUE(1.0, 100), 100)
    assert b.check(oue) is None
    assert get("fmt20").check(oue) is None
    assert "class S" in get("fmt23").check(oue)
    assert "2^d" in get("clone-specific").check(oue)


def test_checkin_never_hurts_and_helps():
    m = sd.RandomizedResponse(1.0, 10)
    full = get("blanket").epsilon_one(sd.Shuffle(m, 5000), 1e-6)
    half = get("blanket").epsilon_one(sd.Shuffle(m, 5000, sampling=sd.CheckIn(0.5)), 1e-6)
    assert half < full


@pytest.mark.parametrize("bad", [dict(eps0=-1.0, d=10), dict(eps0=1.0, d=1), dict(eps0=1.0, d=2.5)])
@pytest.mark.parametrize("cls", [sd.OUE, sd.RAPPOR, sd.HadamardResponse, sd.LocalHashing])
def test_encoder_validation(cls, bad):
    with pytest.raises(ValueError) as exc:
        cls(**bad)
    assert ("eps0" in str(exc.value)) or ("d must" in str(exc.value))


def test_encoders_frozen_and_described():
    m = sd.OUE(2.0, d=1000)
    with pytest.raises(Exception):
        m.eps0 = 3.0
    assert "d=1000" in m.describe()
    assert sd.HadamardResponse(1.0, 8).K == 16
    with pytest.raises(ValueError, match="d must be small"):
        sd.OUE(1.0, 40).matrix()


@pytest.mark.parametrize("spec,cls", [("oue:1000", sd.OUE), ("rappor:50", sd.RAPPOR),
                                      ("hr:64", sd.HadamardResponse), ("olh:1000", sd.LocalHashing)])
def test_cli_parses_encoders(spec, cls):
    from shuffledp.apps.cli import mechanism_from_spec
    m = mechanism_from_spec(spec, 2.0)
    assert isinstance(m, cls) and m.eps0 == 2.0
    with pytest.raises(ValueError, match="domain size"):
        mechanism_from_spec(spec.split(":")[0], 2.0)


@pytest.mark.skipif(pld_unavailable_reason() is not None, reason="dp_accounting missing")
def test_t1_pld_route_agrees_with_one_round():
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 10), 500)
    one = sd.epsilon(proto, 1e-6, bound="blanket").epsilon
    pld = sd.epsilon(proto, 1e-6, bound="blanket", composition="pld")
    assert pld.epsilon >= one * (1 - 1e-9)
    # one round: the lattice spread moves each loss by less than one grid step
    err = (pld.candidates[0].details["fdp_grid_spacing_at_answer"]
           + pld.candidates[0].details["discretization"])
    assert pld.epsilon <= one + err


def test_calibrate_eps0_for_an_encoder_family():
    c = sd.calibrate.eps0(5000, 0.2, 1e-6, mechanism=sd.OUE(1.0, 50))
    assert c.bound == "blanket"
    proto = sd.Shuffle(sd.OUE(c.value, 50), 5000)
    assert sd.epsilon(proto, 1e-6).epsilon <= 0.2
    assert sd.epsilon(sd.Shuffle(sd.OUE(c.value * 1.01, 50), 5000), 1e-6).epsilon > 0.2
    with pytest.raises(ValueError, match="mechanism"):
        sd.calibrate.eps0(5000, 0.2, 1e-6, mechanism=sd.Randomizer(_rr(1.0, 3)))


def test_guards_refuse_instead_of_crashing():
    b = get("blanket")
    assert "eps0 <= 50" in b.check(sd.Shuffle(sd.RandomizedResponse(60.0, 3), 100))
    rng = np.random.default_rng(3)
    big = sd.Randomizer(_random_matrix(rng, 25, 4, 1.0))
    assert "victim pairs" in b.check(sd.Shuffle(big, 100))
    r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(45.0, 10), 1000), 1e-6)   # no crash
    assert r.kind == "upper" and math.isfinite(r.epsilon)


def test_hull_pair_stays_a_pair_when_the_point_at_zero_is_dropped():
    """A certified curve whose value at ε = 0 is loose (above the chord of its neighbours,
    as the engine's FFT allowance makes it at n ~ 1e8) loses that point to the hull; the
    segment then crosses t = 1, where stored values switch from R- to H-form. The pair must
    still have total mass 1 on both sides and a curve above the true one everywhere."""
    rng = np.random.default_rng(5)
    # true pair: binary RR with ε0 = 0.3 mixed with a null outcome
    E = math.exp(0.3)
    P = np.array([0.4 * E / (1 + E), 0.4 / (1 + E), 0.6])
    Q = np.array([0.4 / (1 + E), 0.4 * E / (1 + E), 0.6])
    grid = np.unique(np.concatenate([-np.linspace(0, 0.3, 13), np.linspace(0, 0.3, 13)]))
    t = np.exp(grid)
    H = np.array([np.sum(np.maximum(P - x * Q, 0.0)) for x in t])
    small = np.where(grid <= 0, H - (1 - t), H) * (1 + 1e-3 * rng.random(grid.size))
    small[grid == 0.0] *= 1.5                    # the loose point at ε = 0
    g, q = B._hull_masses(grid, small)
    assert 0.0 not in g                          # the case under test
    p = np.exp(g) * q
    assert q.sum() == pytest.approx(1.0, abs=1e-12)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    for x in np.exp(np.linspace(-0.35, 0.35, 141)):
        assert np.sum(np.maximum(p - x * q, 0.0)) >= np.sum(np.maximum(P - x * Q, 0.0)) - 1e-12


# ---------------------------------------------------------------------------------------
# Chernoff bound of the engine and the pruned max over victim pairs
# ---------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.05, 5.0), b=st.floats(-5.0, -0.05), pa=st.floats(0.01, 0.5),
       pb=st.floats(0.01, 0.49), n=st.integers(1, 60))
def test_chernoff_never_below_exact(a, b, pa, pb, n):
    vals, probs = [a, b, 0.0], [pa, pb, 1.0 - pa - pb]
    exact = iid_sum.exact_positive_part(vals, probs, n)
    ch = iid_sum.chernoff_positive_part(vals, probs, n)
    assert ch >= exact * (1.0 - 1e-12)
    assert ch > 0.0


def test_chernoff_tiny_values_stay_positive():
    # E[S_+] ~ e^-2000 here: the bound must not round down to 0 (a certified "0" would
    # claim the sum is never positive).
    assert iid_sum.chernoff_positive_part([2.0, -0.5, 0.0], [0.01, 0.2, 0.79], 10**5) > 0.0


@pytest.mark.parametrize("eps", [-0.3, -0.05, 0.0, 0.05, 0.3])
def test_pruned_max_over_pairs_is_the_max(eps):
    """The max over the 6 victim pairs of a 3×3 matrix, with pairs skipped by their Chernoff
    bound: never below any pair's exact value, never above the unpruned max (or, far out in
    ε, the 1e-40 below which Chernoff bounds are taken as they are)."""
    proto = sd.Shuffle(sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]),
                       n=40)
    mech, n, rate = B._key(proto)
    pairs = B._pairs_cached(mech, rate)
    assert len(pairs) > 1
    excess = eps < 0
    got, _, _ = B._max_over_pairs(pairs, n, eps, excess=excess)
    full, exact = [], []
    for p in pairs:
        at = (B._excess_atoms if excess else B._hs_atoms)(p, eps)
        if at is None:
            full.append(0.0)
            exact.append(0.0)
            continue
        full.append(iid_sum.positive_part(at[0], at[1], n, value_err=at[2]).upper / n)
        exact.append(iid_sum.exact_positive_part(at[0], at[1], n) / n)
    assert got >= max(exact) * (1.0 - 1e-12)
    assert got <= max(max(full), B.CHERNOFF_ENOUGH)
