"""The Berry–Esseen floor on a T-fold composed δ (``numerics.berry_esseen``) and the skip it
gives the clone bounds (``_PairBound._be_floor_beats``) at many rounds.

Checked: the certified moments against 50-digit mpmath on the same atoms; the floor
against the exact T-fold δ of randomized response (binomial, both mpmath and scipy) and
of a skewed three-atom pair (multinomial enumeration), also for a sub-probability pair;
two sabotaged floors (no Berry–Esseen term; no (1 − e^−a) factor) that must exceed the
exact value somewhere; end to end, the skipped clone bound with its reason, the same
answer with the floor switched off, and the floor below the δ at the skipped bound's own
(named) ε.
"""

import math
import types

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

import shuffledp as sd
from shuffledp.bounds import clones
from shuffledp.core.views import EpsilonAt
from shuffledp.numerics import berry_esseen as be


def _rr(x):
    p = math.exp(x) / (1.0 + math.exp(x))
    return np.log([p, 1.0 - p]), np.array([x, -x])


def _rr_exact(x, T, eps):
    """δ_T(ε) of x-randomized response, T rounds (the loss is x·(2K − T), K ~ Bin(T, p))."""
    p = math.exp(x) / (1.0 + math.exp(x))
    k = np.arange(T + 1)
    lP, lQ = stats.binom.logpmf(k, T, p), stats.binom.logpmf(k, T, 1.0 - p)
    return float(np.sum(np.maximum(np.exp(lP) - np.exp(eps + lQ), 0.0)))


def _rr_exact_mp(x, T, eps):
    mp.mp.dps = 50
    p = mp.e ** x / (1 + mp.e ** x)
    s = mp.mpf(0)
    for k in range(T + 1):
        c = mp.binomial(T, k)
        s += max(c * p ** k * (1 - p) ** (T - k) - mp.e ** eps * c * (1 - p) ** k * p ** (T - k), 0)
    return s


def _multi_exact(P, Q, T, eps):
    """δ_T(ε) of a finite pair (sub-probabilities allowed) by enumerating count vectors."""
    P, Q = np.asarray(P, float), np.asarray(Q, float)
    K = P.size
    assert K == 3
    tot = 0.0
    lg = special.gammaln(np.arange(T + 2) + 1.0)
    for i in range(T + 1):
        j = np.arange(T - i + 1)
        k = T - i - j
        lc = lg[T] - lg[i] - lg[j] - lg[k]
        lp = lc + i * math.log(P[0]) + j * math.log(P[1]) + k * math.log(P[2])
        lq = lc + i * math.log(Q[0]) + j * math.log(Q[1]) + k * math.log(Q[2])
        tot += float(np.sum(np.maximum(np.exp(lp) - np.exp(eps + lq), 0.0)))
    return tot


# ---------------------------------------------------------------------------------------
# Moments
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_moment_bounds_contain_the_50_digit_moments(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(3, 400))
    lp = np.log(rng.dirichlet(np.ones(K)) * (1.0 - 10.0 ** -rng.uniform(1, 9)))
    loss = rng.normal(1e-3 * rng.uniform(-1, 1), 10.0 ** rng.uniform(-6, 0), K)
    m = be.loss_moments_bounds(lp, loss)
    mp.mp.dps = 50
    p = [mp.e ** mp.mpf(float(v)) for v in lp]
    s = mp.fsum(p)
    L = [mp.mpf(float(v)) for v in loss]
    mu = mp.fsum(a * b for a, b in zip(p, L)) / s
    var = mp.fsum(a * (b - mu) ** 2 for a, b in zip(p, L)) / s
    rho = mp.fsum(a * abs(b - mu) ** 3 for a, b in zip(p, L)) / s
    assert m.log_s_lo <= mp.log(s)
    assert m.mu_lo <= mu
    assert m.sd_lo <= mp.sqrt(var) <= m.sd_hi
    assert rho <= m.rho_hi
    # and tight: the slack is far below the moments' own size
    assert mu - m.mu_lo < 1e-9 * mp.sqrt(var)
    assert m.sd_hi / m.sd_lo < 1 + 1e-9 and m.rho_hi < rho * (1 + 1e-9)


def test_no_moments_without_spread():
    assert be.loss_moments_bounds(np.log([0.5, 0.5]), np.array([0.3, 0.3])) is None
    assert be.loss_moments_bounds(np.array([-np.inf]), np.array([0.3])) is None


# ---------------------------------------------------------------------------------------
# The floor against exact T-fold values
# ---------------------------------------------------------------------------------------
def test_floor_is_below_the_exact_rr_composition_and_useful():
    ratios = []
    for x in (0.001, 0.01, 0.1, 0.5, 1.0):
        m = be.loss_moments_bounds(*_rr(x))
        for T in (1, 2, 5, 30, 300, 3000, 30000, 200000):
            for eps in (0.0, 0.01, 0.1, 0.5, 1.0, 3.0, 10.0):
                f = be.composed_delta_floor_be(m, T, eps)
                e = _rr_exact(x, T, eps)
                assert f <= e, (x, T, eps, f, e)
                if e > 1e-6 and f > 0:
                    ratios.append(f / e)
    # in the Gaussian regime it is within a factor of a few of the exact value
    assert len(ratios) > 60 and max(ratios) > 0.9


@pytest.mark.parametrize("x,T,eps", [(0.05, 400, 0.3), (0.2, 60, 0.5), (0.01, 2000, 0.05),
                                     (0.5, 12, 0.0)])
def test_floor_is_below_the_50_digit_rr_composition(x, T, eps):
    f = be.composed_delta_floor_be(be.loss_moments_bounds(*_rr(x)), T, eps)
    assert 0.0 < f <= _rr_exact_mp(x, T, eps)


@pytest.mark.parametrize("scale", [1.0, 0.999])
def test_floor_is_below_a_skewed_pair_and_its_sub_probability_part(scale):
    # three atoms, skewed loss; scale < 1 leaves out part of both measures (a dominated pair)
    P = np.array([0.6, 0.3, 0.1]) * scale
    Q = np.array([0.45, 0.3, 0.25]) * scale
    m = be.loss_moments_bounds(np.log(P), np.log(P) - np.log(Q))
    hits = 0
    for T in (3, 20, 100, 300):
        for eps in (0.0, 0.2, 1.0, 3.0):
            f = be.composed_delta_floor_be(m, T, eps)
            e = _multi_exact(P, Q, T, eps)
            assert f <= e, (T, eps, f, e)
            hits += f > 0
    assert hits >= 6


def test_sabotaged_floors_exceed_the_exact_value(monkeypatch):
    """Without the Berry–Esseen term (small T), or without the factor (1 − e^−a), the
    "floor" is above the exact δ somewhere: the tests above can fail."""
    def worst():
        w = 0.0
        for x in (0.3, 1.0):
            m = be.loss_moments_bounds(*_rr(x))
            for T in (2, 3, 6, 8, 40):
                for eps in np.linspace(0.0, 3.0 * x * math.sqrt(T) + x, 20):
                    e = _rr_exact(x, T, eps)
                    if e > 0:
                        w = max(w, be.composed_delta_floor_be(m, T, eps) / e)
        return w
    assert worst() <= 1.0
    with monkeypatch.context() as mpatch:
        mpatch.setattr(be, "BE_CONSTANT", 0.0)
        assert worst() > 1.0
    fake = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
    fake.expm1 = lambda v: -1.0
    with monkeypatch.context() as mpatch:
        mpatch.setattr(be, "math", fake)
        assert worst() > 1.0


def test_floor_is_zero_where_nothing_is_certified():
    m = be.loss_moments_bounds(*_rr(0.5))
    assert be.composed_delta_floor_be(m, 1, 50.0) == 0.0
    assert be.composed_delta_floor_be(None, 10, 0.1) == 0.0
    # a pair missing most of its mass: s^T underflows to 0, never a NaN
    lp, loss = _rr(0.1)
    m2 = be.loss_moments_bounds(lp - 1.0, loss)
    assert be.composed_delta_floor_be(m2, 10**6, 0.0) == 0.0


# ---------------------------------------------------------------------------------------
# End to end: the clone bounds skipped at many rounds
# ---------------------------------------------------------------------------------------
_MATRIX = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]


@pytest.mark.parametrize("proto,loser", [
    (sd.Shuffle(sd.Randomizer(_MATRIX), n=10**12), "clone-specific"),
    (sd.Shuffle(sd.RandomizedResponse(3.0, 100), n=10**6), "fmt23"),
])
def test_clone_bound_skipped_by_the_floor_changes_no_answer(monkeypatch, proto, loser):
    delta, T = 1e-5, 10**6
    r = sd.epsilon(proto, delta, T)
    assert r.bound == "blanket"
    why = dict(r.not_applicable)[loser]
    assert why.startswith("skipped: cannot beat") and "Berry–Esseen" in why
    with monkeypatch.context() as m:
        m.setattr(clones._PairBound, "_be_floor_beats", lambda *a, **k: False)
        full = sd.epsilon(proto, delta, T)
    assert loser in {c.bound for c in full.candidates}
    assert full.epsilon == r.epsilon and full.bound == r.bound
    # the floor is consistent with the skipped bound's own certified answers: its ε is
    # above the answer, and at the answer's ε its δ is at or above the floor, itself > δ
    assert sd.epsilon(proto, delta, T, bound=loser).epsilon > r.epsilon
    mom = clones._be_moments(_bound(loser).pair(proto))
    f = be.composed_delta_floor_be(mom, T, r.epsilon)
    assert delta < f <= sd.delta(proto, r.epsilon, T, bound=loser).delta


def _bound(name):
    from shuffledp.bounds.base import get
    return get(name)


def test_delta_question_skip_is_below_the_named_delta():
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 2), n=10**12)
    T, eps = 10**6, 0.01
    r = sd.delta(proto, eps, T)
    named = sd.delta(proto, eps, T, bound="fmt23").delta
    assert r.delta <= named
    mom = clones._be_moments(_bound("fmt23").pair(proto))
    assert be.composed_delta_floor_be(mom, T, eps) <= named


# ---------------------------------------------------------------------------------------
# The trivial bound (ε0-DP composed over T rounds) skipped by the same floor
# ---------------------------------------------------------------------------------------
def _rr_participation_exact(e0, gamma, T, eps):
    """δ_T(ε) of binary randomized response at ε0 taking part with probability γ: the
    number of rounds taken part in is K ~ Bin(T, γ), then K rounds of randomized response."""
    K = np.arange(T + 1)
    wK = stats.binom.pmf(K, T, gamma)
    return float(sum(w * _rr_exact(e0, int(k), eps) for k, w in zip(K, wK) if w > 1e-300))


@pytest.mark.parametrize("gamma", [1.0, 0.3])
def test_trivial_pair_floor_is_below_its_exact_composition(gamma):
    from shuffledp.bounds.trivial import _rr_loss_moments
    hits = 0
    for e0 in (0.1, 0.7, 2.0):
        m = _rr_loss_moments(e0, gamma)
        for T in (2, 10, 60, 400):
            for eps in (0.0, 0.3, 1.0, 3.0, 10.0):
                f = be.composed_delta_floor_be(m, T, eps)
                assert f <= _rr_participation_exact(e0, gamma, T, eps), (e0, T, eps)
                hits += f > 0
    assert hits > 10


def test_trivial_skipped_by_its_floor_changes_no_answer(monkeypatch):
    from shuffledp.bounds import trivial
    proto = sd.Shuffle(sd.LDP(1.0), n=10 ** 5)
    r = sd.epsilon(proto, 1e-6, 10)
    why = dict(r.not_applicable)["trivial"]
    assert why.startswith("skipped: cannot beat") and "Berry–Esseen" in why
    with monkeypatch.context() as m:
        m.setattr(trivial.Trivial, "proven_floor", lambda *a, **k: None)
        full = sd.epsilon(proto, 1e-6, 10)
    assert "trivial" in {c.bound for c in full.candidates}
    assert (full.epsilon, full.bound) == (r.epsilon, r.bound)
    assert sd.epsilon(proto, 1e-6, 10, bound="trivial").epsilon > r.epsilon
    # one round: nothing claimed (its closed form costs nothing); many rounds, a δ question:
    # claimed only where the floor is at least the δ to beat
    from shuffledp.core.views import DeltaAt
    assert trivial.Trivial().proven_floor(proto, EpsilonAt(1e-6), 1, 0.1) is None
    d = sd.delta(proto, 0.5, 10, bound="trivial").delta
    assert trivial.Trivial().proven_floor(proto, DeltaAt(0.5), 10, d * (1 + 1e-9)) is None


def test_extreme_inputs_give_a_floor_never_an_error():
    """ε0 from 1e-300 to 700, participation down to 1e-300, T up to 1e18, ε from 0 to ∞:
    a number in [0, 1] (0 where nothing is certified), never an exception or a NaN —
    a floor that raised would drop the bound from the candidates."""
    from shuffledp.bounds.trivial import _rr_loss_moments
    for e0 in (1e-300, 1e-110, 1e-12, 1.0, 700.0):
        for g in (1.0, 0.5, 1e-300):
            m = _rr_loss_moments(e0, g)
            for T in (2, 10 ** 6, 10 ** 18):
                for eps in (0.0, 1e-300, 0.1, 1e300, math.inf):
                    v = be.composed_delta_floor_be(m, T, eps)
                    assert 0.0 <= v <= 1.0
    assert be.loss_moments_bounds(np.log([0.5, 0.5]), np.array([1e200, -1e200])) is None
