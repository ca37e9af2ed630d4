"""The victim's bias formed in one place (``shuffledp.pairs.law``), and the large-ε0 defect
of the sampled pairs it removes.

The sampled ("hidden-⊥") pairs formed 1 − α in floating point: 8 digits left at ε0 ≈ 19,
none from ε0 ≈ 36.7 (α rounds to 1 and the pair refused with an internal name). Checked
here against the exact leak of randomized response with participation
(``oracle.SampledLeak``: every participating subset, every report vector, every
neighbouring dataset, both directions, 50-digit mpmath), strictly: an upper ε must have
δ_exact(ε) ≤ δ, not only up to 1e-9 relative on ε (which hid errors of 1e-8 at ε ≈ 19).
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import hidden as sp
from shuffledp.pairs import iid as iid_sum
from shuffledp.pairs import law as clone_law
from shuffledp.pairs.trimmed import trimmed_hidden

sys.path.insert(0, os.path.dirname(__file__))
import oracle  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src", "shuffledp")


# ----------------------------------------------------------------------------------------
# Bias: α, β and their logs against 60-digit values
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("L", [0.0, 1e-8, 0.5, 1.0, 19.0, 36.7, 40.0, 100.0, 700.0])
def test_bias_against_mpmath(L):
    b = clone_law.Bias(L)
    with mp.workdps(60):
        e = mp.e ** mp.mpf(L)
        alpha, beta = e / (1 + e), 1 / (1 + e)
        # log α = −log1p(e^−L): at 60 digits α itself rounds to 1 from L ≈ 140
        for got, want in ((b.alpha, alpha), (b.beta, beta), (b.log_alpha, -mp.log1p(1 / e)),
                          (b.log_beta, mp.log(beta)), (b.gamma, alpha - beta)):
            assert abs(got - float(want)) <= 4e-16 * abs(float(want)) + 1e-320, (got, want)
    assert b.beta > 0.0                      # the complement never rounds to 0 in range


@pytest.mark.parametrize("L", [1e-20, 2.0, 19.0, 40.0, 700.0])
def test_diluted_bias_against_mpmath(L):
    s = np.array([1.0, 3.0, 10.0, 1e6])
    m = np.array([0.0, 0.5, 1e-9, 1e9])
    a, b, g = clone_law.Bias(L).diluted(s, m)
    with mp.workdps(60):
        e = mp.e ** mp.mpf(L)
        al, be = e / (1 + e), 1 / (1 + e)
        for i in range(s.size):
            si, mi = mp.mpf(s[i]), mp.mpf(m[i])
            wa = (al * si + mi / 2) / (si + mi)
            wb = (be * si + mi / 2) / (si + mi)
            for got, want in ((a[i], wa), (b[i], wb), (g[i], wa - wb)):
                assert abs(got - float(want)) <= 1e-15 * float(want)


def test_bias_refuses_bad_log_odds():
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="log_odds"):
            clone_law.Bias(bad)


def test_hidden_pair_takes_log_odds_only():
    """The pair is built from the victim's log-odds, keyword-only: an α cannot be passed
    by position where L is meant."""
    with pytest.raises(TypeError):
        sp.hidden_pair(3, 0.5, 0.9, 0.5, rate=0.5)            # noqa: the old signature
    hp = sp.hidden_pair(3, 1e-17, log_odds=40.0, kappa=1e-17, rate=0.5)
    assert hp.log_ratio == 40.0 and hp.bias.beta > 0


def test_no_complement_of_alpha_outside_clone_law():
    """The structural guard: 1 − α is spelled only in pairs/law.py. A new pair that forms
    it again (the defect written twice so far) fails here."""
    pat = re.compile(r"\b1(\.0*)?\s*-\s*[A-Za-z_.\[\]]*alpha\b|log1p\(\s*-\s*[A-Za-z_.\[\]]*alpha")
    bad = []
    for root, _, files in os.walk(SRC):
        for f in files:
            path = os.path.join(root, f)
            if not f.endswith(".py") or os.path.relpath(path, SRC) == os.path.join("pairs", "law.py"):
                continue
            with open(path, encoding="utf-8") as fh:
                for i, line in enumerate(fh, 1):
                    if pat.search(line):
                        bad.append(f"{os.path.relpath(path, SRC)}:{i}: {line.strip()}")
    assert not bad, "1 - alpha formed outside pairs/law.py:\n" + "\n".join(bad)


def test_guard_pattern_catches_the_old_spellings():
    pat = re.compile(r"\b1(\.0*)?\s*-\s*[A-Za-z_.\[\]]*alpha\b|log1p\(\s*-\s*[A-Za-z_.\[\]]*alpha")
    for old in ("beta = 1.0 - alpha", "lb = np.log1p(-cl.alpha)[jj]", "b0 = math.log1p(-hp.alpha)",
                "x = 1 - self.alpha"):
        assert pat.search(old), old


# ----------------------------------------------------------------------------------------
# The issue's calls against the exact leak with participation
# ----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _leak(k, e0, n, rate=None, size=None):
    return oracle.SampledLeak(e0, k, n, rate=rate, size=size)


def _ks(mech):
    return (2, 3) if isinstance(mech, sd.LDP) else (mech.k,)


def _exact_delta(proto, eps):
    s = proto.sampling
    kw = ({} if s is None else {"rate": s.rate} if isinstance(s, sd.CheckIn)
          else {"size": s.size})
    return max(_leak(k, float(proto.mechanism.eps0), proto.n, **kw).delta(eps)
               for k in _ks(proto.mechanism))


ISSUE_EPS = [
    (sd.Shuffle(sd.LDP(19.0), 2, sampling=sd.CheckIn(0.5)), 1e-6, 18.999995999991955),
    (sd.Shuffle(sd.RandomizedResponse(20.0), 3, sampling=sd.WithoutReplacement(1)), 1e-6,
     18.901384715449704),
    (sd.Shuffle(sd.RandomizedResponse(35.0), 3, sampling=sd.CheckIn(0.5)), 1e-6, 34.99999),
]


@pytest.mark.parametrize("proto,delta,exact", ISSUE_EPS)
def test_issue_epsilon_calls(proto, delta, exact):
    r = sd.epsilon(proto, delta)
    # every upper candidate, strictly: δ_exact(ε) ≤ δ
    for c in r.candidates:
        if c.kind == "upper":
            assert _exact_delta(proto, c.epsilon) <= delta * (1 + 1e-12), (c.bound, c.epsilon)
    assert r.epsilon >= exact * (1 - 1e-9)
    # and not absurdly loose: within 1e-5 of the exact value (the sampled pair is tight here)
    assert r.epsilon <= exact + 1e-5 + 1e-9 * exact


def test_issue_delta_call():
    proto = sd.Shuffle(sd.RandomizedResponse(33.0), 2, sampling=sd.WithoutReplacement(1))
    r = sd.delta(proto, 16.5)
    exact = _exact_delta(proto, 16.5)
    assert abs(exact - 0.4999999317439662) < 1e-15            # the issue's exact value
    for c in r.candidates:
        if c.kind == "upper":
            assert c.delta >= exact * (1 - 1e-12), (c.bound, c.delta)


@pytest.mark.parametrize("e0", [40.0, 100.0, 700.0])
def test_rdp_answers_above_the_old_failure_point(e0):
    """ε0 ≥ 36.7: the sampled pairs' RDP view answers (before: ValueError naming 'alpha')."""
    proto = sd.Shuffle(sd.LDP(e0), 2, sampling=sd.CheckIn(0.5))
    curve = sd.rdp(proto, [2, 3, 10])
    for lam, v in zip((2, 3, 10), curve.values):
        ex = max(_leak(k, e0, 2, rate=0.5).renyi(lam) for k in (2, 3))
        assert float(v) >= ex * (1 - 1e-12)
    # the pair's own view answers (its orders stop where (λ − 1)·ε0 would overflow: a
    # refusal with that reason, never a crash)
    assert "sampled" in sd.rdp(proto, [2], bound="fmt20-sampled").bound
    if e0 >= 400:
        with pytest.raises(sd.core.errors.NotApplicableError, match="orders up to"):
            sd.rdp(proto, [2, 3], bound="fmt20-sampled")


# ----------------------------------------------------------------------------------------
# Calibration near the top of the range meets its target exactly
# ----------------------------------------------------------------------------------------
def test_calibrate_eps0_meets_target_exactly():
    c = sd.calibrate.eps0(2, 34.0, 1e-6, sampling=sd.WithoutReplacement(1), k=2)
    proto = sd.Shuffle(sd.RandomizedResponse(c.value), 2, sampling=sd.WithoutReplacement(1))
    assert _exact_delta(proto, 34.0) <= 1e-6 * (1 + 1e-12)
    c = sd.calibrate.eps0(2, 33.0, 1e-6, sampling=sd.CheckIn(0.5))
    proto = sd.Shuffle(sd.LDP(c.value), 2, sampling=sd.CheckIn(0.5))
    assert _exact_delta(proto, 33.0) <= 1e-6 * (1 + 1e-12)


def test_calibrate_users_meets_target_exactly():
    c = sd.calibrate.users(sd.RandomizedResponse(30.0), 29.9, 1e-6, sampling=sd.CheckIn(0.5))
    proto = sd.Shuffle(sd.RandomizedResponse(30.0), int(c.value), sampling=sd.CheckIn(0.5))
    assert _exact_delta(proto, 29.9) <= 1e-6 * (1 + 1e-12)


def test_calibrate_rounds_meets_target_exactly():
    proto = sd.Shuffle(sd.RandomizedResponse(20.0), 2, sampling=sd.CheckIn(0.5))
    target = 38.5
    c = sd.calibrate.rounds(proto, target, 1e-6)
    T = int(c.value)
    assert T >= 1
    # T-fold product of the exact laws (every neighbouring dataset, both directions)
    worst = 0.0
    for P, Q in _leak(2, 20.0, 2, rate=0.5).laws:
        PT, QT = P, Q
        for _ in range(T - 1):
            PT = {(a, b): x * y for a, x in PT.items() for b, y in P.items()}
            QT = {(a, b): x * y for a, x in QT.items() for b, y in Q.items()}
        with mp.workdps(50):
            worst = max(worst, float(oracle.hockey(PT, QT, target)),
                        float(oracle.hockey(QT, PT, target)))
    assert worst <= 1e-6 * (1 + 1e-12)


# ----------------------------------------------------------------------------------------
# The i.i.d.-sum engine enumerates small n exactly (the blanket at large ε0, small n)
# ----------------------------------------------------------------------------------------
def _mp_positive_part(values, probs, n):
    import itertools
    with mp.workdps(50):
        v = [mp.mpf(float(x)) for x in values]
        p = [mp.mpf(float(x)) for x in probs]
        tot = mp.mpf(0)
        for tup in itertools.product(range(len(v)), repeat=n):
            s = mp.fsum(v[i] for i in tup)
            if s > 0:
                tot += mp.fprod(p[i] for i in tup) * s
        return tot


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("spread", [1.0, math.exp(35.0), math.exp(300.0)])
def test_enumerated_positive_part_against_mpmath(n, spread):
    values = np.array([spread, -1.0, 0.3, -spread / 7.0, 0.0])
    probs = np.array([1e-12, 0.5, 0.2, 0.1, 0.2 - 1e-12])
    got = iid_sum.positive_part(values, probs, n)
    assert got.details.get("enumerated")
    want = _mp_positive_part(values, probs, n)
    assert got.upper >= float(want)
    assert got.upper <= float(want) * (1 + 1e-12) + 1e-299


# ----------------------------------------------------------------------------------------
# The trimmed Gaussian victim's hidden pair at large log-odds (small σ)
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma,eps0", [(0.25, 20.0), (0.2, 40.0), (0.1, 80.0), (0.1, 100.0)])
@pytest.mark.parametrize("rate,size", [(0.5, None), (0.9, None), (None, 2)])
def test_trimmed_hidden_pair_at_large_log_odds(sigma, eps0, rate, size):
    """``trimmed_hidden``'s pair at small σ (δ0 from 1e-3 to 1e-20 at these ε0, so the
    victim's log-odds ε0 − log c is 20 … 100) against its closed-form law written out in
    mpmath (β from the log-odds, not from α)."""
    from shuffledp.pairs import gaussian_rdp as G
    n = 3
    hp, cg = trimmed_hidden(n, sigma, eps0, rate=rate, size=size)
    assert hp is not None
    L = hp.log_ratio
    d0 = G.gaussian_delta(sigma, eps0)
    c = 1.0 - n * d0
    with mp.workdps(50):
        Lm = mp.mpf(eps0) - mp.log(mp.mpf(c))
        al = mp.e ** Lm / (1 + mp.e ** Lm)
        p = mp.e ** (-mp.mpf(eps0)) * mp.mpf(c)
        g = mp.mpf(rate) if rate is not None else None
        if size is None:
            P, Q, _ = oracle.checkin_pair_law(n, p, al, g, c)
        else:
            P, Q = _wor_trimmed_law(n, size, p, al, c, mp.e ** (-mp.mpf(eps0)))
        for eps in (L / 2, L - 1.0, L - 1e-3):
            want = max(oracle.hockey(P, Q, eps), oracle.hockey(Q, P, eps))
            got = sp.hidden_delta(hp, eps)
            assert got >= float(want) * (1 - 1e-12), (eps, got, want)
            # (not loose either: the slices' cancellation slack is ~1e-8 relative here, up
            # to 1e-5 where δ is small next to the terms it is the difference of)
            assert got <= float(want) * (1 + 1e-4) + 1e-289, (eps, got, want)


def _wor_trimmed_law(n, m, p, al, c, kappa):
    """Without replacement, n_⊥ = n − m fixed: the law of (a, b) over the m participants
    (sampling.md: P(a, b) ∝ M(a, b)·[(n − m)κ/2·c/c… ] written term by term)."""
    # roles of the others given participation: clone 0/1 w.p. p/2 each, left out 1 − p;
    # the victim takes part w.p. m/n (type 0 w.p. α·c, type 1 w.p. β·c, else trimmed away).
    P, Q = {}, {}
    be = 1 - al
    cg = 1 - (1 - c) * mp.mpf(m) / n
    for vpart in (True, False):
        w_v = mp.mpf(m) / n if vpart else 1 - mp.mpf(m) / n
        others = m - 1 if vpart else m
        for a in range(others + 1):
            for b in range(others + 1 - a):
                ell = others - a - b
                base = (w_v * mp.factorial(others) / (mp.factorial(a) * mp.factorial(b)
                        * mp.factorial(ell)) * (p / 2) ** (a + b) * (1 - p) ** ell)
                if vpart:
                    for (da, db), wp, wq in (((1, 0), al * c, be * c), ((0, 1), be * c, al * c)):
                        k = (a + da, b + db)
                        P[k] = P.get(k, 0) + base * wp / cg
                        Q[k] = Q.get(k, 0) + base * wq / cg
                else:
                    k = (a, b)
                    P[k] = P.get(k, 0) + base / cg
                    Q[k] = Q.get(k, 0) + base / cg
    return P, Q


@pytest.mark.parametrize("e0,k,n,kw", [(19.0, 2, 2, {"rate": 0.5}), (35.0, 3, 4, {"size": 2}),
                                       (700.0, 2, 3, {"rate": 0.9}), (24.0, 3, 3, {})])
def test_oracle_float_sums_match_mpmath(e0, k, n, kw):
    """``SampledLeak.delta`` (float sums of 50-digit terms) against 50 digits throughout."""
    L = oracle.SampledLeak(e0, k, n, **kw)
    for eps in (0.0, e0 / 2, e0 - 1.0, e0 - 1e-6):
        a, b = L.delta(eps), L.delta_mp(eps)
        assert abs(a - b) <= 1e-14 * b + 1e-300, (eps, a, b)


def test_rdp_answers_with_the_other_bounds_and_says_why(monkeypatch):
    """A bound that fails inside ``sd.rdp`` is skipped, named in the curve's details with
    its reason, and the others answer (before: the whole call raised)."""
    from shuffledp.bounds import get
    b = get("fmt20-sampled")

    def broken(proto, orders):
        raise ValueError("alpha must be a real number in [0.5, 1); got 1.0")

    monkeypatch.setattr(b, "rdp_curve", broken)
    proto = sd.Shuffle(sd.LDP(5.0), 3, sampling=sd.CheckIn(0.5))
    curve = sd.rdp(proto, [2, 3])
    assert "fmt20-sampled" in curve.details["skipped"]
    assert "could not certify" in curve.details["skipped"]["fmt20-sampled"]
    assert all(math.isfinite(float(v)) for v in curve.values)


def test_lower_bound_never_above_the_exact_leak_by_rounding():
    """krr-lower (the binary instance's exact δ) at ε0 = 33: the float loss's ulps near the
    threshold once put the lower ε above the exact one (δ_exact(ε_lower) = δ·(1 − 1.5e-12));
    the logs' rounding is now charged downward."""
    for n in (2, 4):
        r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(33.0), n), 1e-3, bound="krr-lower")
        assert _leak(2, 33.0, n).delta(r.epsilon) >= 1e-3
        assert r.epsilon > 33.0 - 1.001e-3          # and still tight


@pytest.mark.parametrize("e0", [1.2962303307079574e-22, 1e-12, 1e-6])
def test_tiny_eps0_clone_pairs_are_not_uninformative(e0):
    """The other end of the range: at ε0 ≈ 1e-22, α and β both round to ½ and α − β to 0,
    and fmt20 answered ε = 0 for n = 1, δ = 1e-30 (exact: ε0 − 2δ). γ = α − β is now carried
    exactly (tanh(ε0/2)) by ``Bias`` and the pairs. (Found by hypothesis.)"""
    for proto in (sd.Shuffle(sd.LDP(e0), 1), sd.Shuffle(sd.LDP(e0), 2),
                  sd.Shuffle(sd.LDP(e0), 2, sampling=sd.CheckIn(0.5))):
        r = sd.epsilon(proto, 1e-30)
        for c in r.candidates:
            if c.kind == "upper":
                assert c.epsilon > 0.0, (proto, c.bound)
                assert _exact_delta(proto, c.epsilon) <= 1e-30 * (1 + 1e-12), (c.bound, c.epsilon)


def test_rdp_point_cache_is_capped_in_bytes(monkeypatch):
    """The clone pair's cache of RDP point sets stays under its byte cap (the most recent
    entry is always kept), and the values do not depend on what was evicted."""
    from shuffledp.pairs import clone as cp
    from shuffledp.pairs.clone import rdp_points
    sd.clear_caches()
    pairs = [cp.fmt20_pair(1.0, n) for n in (2000, 3000, 5000)]
    orders = [2, 64, 1000]                   # high orders: summed point by point, cached
    ref = [cp.pair_rdp(p, orders) for p in pairs]
    assert len(rdp_points._TERMS_CACHE) >= 2         # the cache was used
    sd.clear_caches()
    monkeypatch.setattr(rdp_points, "_TERMS_CACHE_BYTES", 1)        # keep only the newest
    got = [cp.pair_rdp(p, orders) for p in pairs]
    assert len(rdp_points._TERMS_CACHE) == 1
    for a, b in zip(got, ref):
        assert np.array_equal(a, b)
    sd.clear_caches()
