"""KOV15's route floor (``kov15._homogeneous_floor``) reuses an e* found for a nearby
value to beat (session 20): the floors of one question aim at values 1e-12 apart. The
reused floor must still be proven (at or above the value to beat, never above the route's
own value), and it must not be reused where its K is below the new aim."""

from __future__ import annotations

import math

import shuffledp as sd
from shuffledp.bounds import get
from shuffledp.compose import kov15 as kv


def _views(bound, proto):
    b = get(bound)
    return b.views(proto).dp


def test_a_reused_e_star_gives_a_proven_floor_below_the_route():
    p = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**4)
    d, T = 1e-6, 100
    sd.clear_caches()
    k = sd.epsilon(p, delta=d, rounds=T, bound="blanket", composition="kov15").epsilon
    dp = _views("blanket", p)
    target = 0.3 * k
    f1 = kv._homogeneous_floor(dp, d, T, target * (1.0 - 1e-12))
    assert target * (1.0 - 1e-12) <= f1 <= k
    kept = list(kv._E_STARS[(T, d)])
    calls = kv._plain_k.cache_info().misses
    f2 = kv._homogeneous_floor(dp, d, T, target)
    # the same e*, no new K evaluation, and still a floor at or above the new value to beat
    assert kv._E_STARS[(T, d)] == kept
    assert kv._plain_k.cache_info().misses == calls
    assert target <= f2 <= k


def test_an_e_star_below_the_new_aim_is_not_reused():
    p = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**4)
    d, T = 1e-6, 100
    sd.clear_caches()
    k = sd.epsilon(p, delta=d, rounds=T, bound="blanket", composition="kov15").epsilon
    dp = _views("blanket", p)
    f1 = kv._homogeneous_floor(dp, d, T, 0.3 * k)
    assert f1 >= 0.3 * k
    # a value to beat 1 % higher: the kept e* is below its aim, a new search runs
    assert kv._reusable_e_star(T, d, 0.303 * k * (1.0 + 1e-7)) is None
    f2 = kv._homogeneous_floor(dp, d, T, 0.303 * k)
    assert 0.303 * k <= f2 <= k
    assert len(kv._E_STARS[(T, d)]) == 2
    # an aim far above what any kept e* reached is never served from the store
    assert kv._homogeneous_floor(dp, d, T, k * 1.001) == -math.inf
