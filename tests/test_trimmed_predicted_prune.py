"""trimmed-clone's T-round ε0 search tries its floor at later comparisons where a parabola
through the evaluated points predicts a loss (``_predicted_gap``): the prediction only
decides whether the floor is tried, so the search still returns ``golden``'s ε0 bit for
bit, and every point the floor leaves out is above the value it was compared with."""

from __future__ import annotations

import math

import pytest

from shuffledp.bounds import _common as C
from shuffledp.bounds import trimmed_clone as tc
from shuffledp.bounds._common import eps0_range
from shuffledp.compose import conversions as conv
from shuffledp.numerics import golden


def _search_value(n, sigma, delta, T, e0):
    """The ε0 search's own value at ε0 (``_rounds_eps0``'s f, written out again)."""
    got = tc._rounds_rest(n, sigma, delta, T, e0)
    if got is None:
        return math.inf
    pair, rest = got
    return conv.search_epsilon(lambda o: tc.pair_rdp(pair, o, budget=tc._SEARCH_POINTS), rest,
                               T, max_order=tc._MAX_ORDER, coarse="sparse",
                               lazy=tc._search_lazy(pair)).value


def test_predicted_gap_is_the_parabola():
    f = lambda x: 2.0 + 0.5 * (x - 1.3) ** 2            # noqa: E731
    known = [(0.2, f(0.2)), (1.0, f(1.0)), (2.5, f(2.5)), (9.0, math.inf)]
    for x in (0.7, 1.6, 3.0):
        assert tc._predicted_gap(known, x, 2.1) == pytest.approx(f(x) / 2.1 - 1.0, rel=1e-12)
    # the three nearest finite points are used: a far point off the parabola is ignored
    assert tc._predicted_gap(known + [(40.0, 0.0)], 1.6, 2.1) == pytest.approx(
        f(1.6) / 2.1 - 1.0, rel=1e-12)
    assert tc._predicted_gap(known[:2], 1.6, 2.1) is None
    assert tc._predicted_gap([(1.0, 2.0), (1.0, 3.0), (2.0, 1.0)], 1.5, 2.0) is None
    assert tc._predicted_gap(known, 1.6, math.inf) is None


@pytest.mark.parametrize("n,sigma,T,delta", [(10**4, 2.0, 10, 1e-5), (10**5, 2.0, 1000, 1e-8)])
def test_later_pruning_keeps_goldens_eps0(monkeypatch, n, sigma, T, delta):
    calls = []                                   # (ε0, partner, proven) of every floor try
    orig = tc._rounds_loses

    def spy(n_, sigma_, delta_, T_, e0, beat):
        r = orig(n_, sigma_, delta_, T_, e0, beat)
        calls.append((e0, beat, r))
        return r

    monkeypatch.setattr(tc, "_rounds_loses", spy)
    got = tc._rounds_eps0.__wrapped__(n, sigma, delta, T)
    lo, hi = eps0_range(n * T, sigma, delta)
    ref = golden(lambda x: _search_value(n, sigma, delta, T, x), lo, hi, max_iter=8).x
    assert got == ref
    # tried past the first comparison, and proven there at least once (the path is used)
    assert len(calls) >= 2 and any(r for _, _, r in calls[1:])
    for e0, beat, proven in calls:
        if proven:
            assert _search_value(n, sigma, delta, T, e0) > beat


def test_a_floor_that_lies_is_caught(monkeypatch):
    # a "floor" that claims every later point loses changes the search's ε0: the
    # comparison with golden above can fail
    n, sigma, T, delta = 10**4, 2.0, 10, 1e-5
    monkeypatch.setattr(tc, "_rounds_loses", lambda *a: True)
    monkeypatch.setattr(tc, "_predicted_gap", lambda *a: 1.0)
    lo, hi = eps0_range(n * T, sigma, delta)
    ref = golden(lambda x: _search_value(n, sigma, delta, T, x), lo, hi, max_iter=8).x
    assert tc._rounds_eps0.__wrapped__(n, sigma, delta, T) != ref


def test_golden_pruned_calls_loses_only_with_a_finite_partner():
    seen = []
    C.golden_pruned(lambda x: (x - 0.3) ** 2, lambda x, fp: seen.append(fp) or False,
                    0.0, 1.0, max_iter=6)
    assert seen and all(math.isfinite(v) for v in seen)


@pytest.mark.parametrize("n,sigma,delta", [(10**4, 1.0, 1e-6), (3 * 10**5, 1.3, 1e-6),
                                           (2 * 10**6, 4.0, 1e-10)])
def test_one_round_search_keeps_goldens_eps0(monkeypatch, n, sigma, delta):
    from shuffledp.pairs.trimmed import TrimmedPair

    def value(e0):
        tp = TrimmedPair.at(n, sigma, e0)
        if tp is None:
            return math.inf
        left = delta - tp.charge(1)
        return tp.epsilon(left) if left > 0 else math.inf

    tried = []
    orig = tc._one_round_loses

    def spy(*a):
        r = orig(*a)
        tried.append(r)
        if r:
            assert value(a[3]) > a[4]          # the proof is right
        return r

    monkeypatch.setattr(tc, "_one_round_loses", spy)
    lo, hi = eps0_range(n, sigma, delta)
    assert tc._one_round_eps0(n, sigma, delta, value) == golden(value, lo, hi, max_iter=10).x
    assert any(tried) and len(tried) < 11        # proofs are used, and some tries skipped
