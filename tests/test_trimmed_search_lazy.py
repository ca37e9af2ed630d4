"""The trimmed-clone ε0 search without the huge orders it provably does not need (issue 30).

``search_epsilon(..., lazy=...)`` leaves out the orders whose certified RDP floor already
gives an ε above the best one found, and ``pair_rdp_lazy`` skips the costly point sums of
such orders. Nothing may move: the order search must return the same ``Conversion``, bit
for bit, whichever values it ends up needing (a left-out value is computed later by its
forcer and must be the float ``pair_rdp`` would have returned), and every later
``pair_rdp`` call must see the caches it would have seen.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.bounds.clones import pair_rdp_floor
from shuffledp.bounds.trimmed_clone import _SEARCH_POINTS, _rounds_eps0, _search_lazy
from shuffledp.compose import conversions as C
from shuffledp.pairs.clone import fmt20_pair, pair_rdp, rdp_points, renyi
from shuffledp.pairs.clone.renyi import pair_rdp_lazy
from shuffledp.pairs.trimmed import trimmed_pair

from test_trimmed_search import _mp_renyi


def _fields(c):
    return (c.value, c.order, c.limit_hit, c.max_order, c.orders_evaluated)


def _toy_curve(lam, a=1.0 / 18):
    """A convex, increasing RDP-like curve (a Gaussian's λ/(2σ²) = aλ plus a small cubic)."""
    lam = np.asarray(lam, dtype=float)
    return a * lam + 1e-7 * lam ** 3


def _lazy_toy(a, huge, log):
    """A ``lazy`` pair for ``search_epsilon`` on the toy curve: floor = the curve itself (a
    valid floor), orders above ``huge`` left out whenever ``decide`` allows all of them."""
    def lazy_fn(o, decide):
        o = np.asarray(o)
        vals = _toy_curve(o, a)
        cand = o[o > huge]
        if not cand.size:
            return vals, {}
        got = {int(k): float(v) for k, v in zip(o, vals) if k <= huge}
        if not np.all(decide(cand, got)):
            return vals, {}
        log["left"] += cand.tolist()

        def forcer(k):
            def force():
                log["forced"].append(k)
                return float(_toy_curve([k], a)[0])
            return force
        return np.where(o > huge, np.nan, vals), {k: forcer(k) for k in cand.tolist()}
    return (lambda o: _toy_curve(o, a)), lazy_fn


@pytest.mark.parametrize("delta,rounds", [(1e-5, 1), (1e-10, 3), (1e-12, 40), (1e-6, 1000)])
@pytest.mark.parametrize("huge", [8, 20, 100])
def test_search_with_left_out_orders_returns_the_same_conversion(delta, rounds, huge):
    # The floor equals the curve, so the search leaves out every huge order above the best
    # so far, neighbours of the optimum included: those must be forced back.
    log = {"left": [], "forced": []}
    for a in (1e-4 / rounds, 1e-3 / rounds, 1e-2 / rounds, 0.1 / rounds):
        ref = C.search_epsilon(lambda o: _toy_curve(o, a), delta, rounds, max_order=4096,
                               coarse="sparse")
        got = C.search_epsilon(lambda o: _toy_curve(o, a), delta, rounds, max_order=4096,
                               coarse="sparse", lazy=_lazy_toy(a, huge, log))
        assert _fields(got) == _fields(ref)


def test_search_forces_left_out_neighbours_and_keeps_the_conversion():
    log = {"left": [], "forced": []}
    for rounds in (1, 10, 100):
        for delta in (1e-5, 1e-9, 1e-12):
            for a in np.geomspace(1e-5, 1e-1, 9) / rounds:
                for huge in (8, 32):
                    ref = C.search_epsilon(lambda o: _toy_curve(o, a), delta, rounds,
                                           max_order=4096, coarse="sparse")
                    got = C.search_epsilon(lambda o: _toy_curve(o, a), delta, rounds,
                                           max_order=4096, coarse="sparse",
                                           lazy=_lazy_toy(a, huge, log))
                    assert _fields(got) == _fields(ref)
    assert log["left"] and log["forced"]
    assert len(log["forced"]) < len(log["left"])


def _fresh():
    renyi._VALUES.clear()
    rdp_points._TERMS_CACHE.clear()


def _cache_state():
    return [(k[1:], rdp_points._nbytes(v)) for k, v in rdp_points._TERMS_CACHE.items()]


@pytest.mark.parametrize("n,sigma,eps0,defers", [(10**6, 2.0, 4.5, True),
                                                  (10**5, 1.0, 6.0, False)])
def test_left_out_huge_orders_are_forced_to_the_same_floats(n, sigma, eps0, defers):
    # (n = 1e5: the cheaper orders' series is not accurate anywhere, so they build the full
    # window's points themselves and the huge orders are summed on them, not left out.)
    pair, _ = trimmed_pair(n, sigma, eps0)
    huge = int(600 / pair.log_ratio) + 2
    block = np.array([huge - 20, huge - 4, huge + 5, huge + 30])
    later = np.array([huge + 5, huge - 3, huge + 60])
    _fresh()
    ref = pair_rdp(pair, block, budget=_SEARCH_POINTS)
    ref_later = pair_rdp(pair, later, budget=_SEARCH_POINTS)
    ref_state = _cache_state()

    _fresh()
    asked = []

    def decide(cand, got):
        asked.append((cand.tolist(), sorted(got)))
        return np.ones(len(cand), dtype=bool)

    vals, forcers = pair_rdp_lazy(pair, block, decide, budget=_SEARCH_POINTS)
    # The cheaper orders of the call were summed first and handed to ``decide``.
    assert asked == [([huge + 5, huge + 30], [huge - 20, huge - 4])]
    left = [int(o) for o, v in zip(block, vals) if math.isnan(v)]
    assert sorted(forcers) == left == ([huge + 5, huge + 30] if defers else [])
    assert np.array_equal(vals[:2], ref[:2])
    if defers:
        # A left-out entry takes the cache slot and the bytes of the entry it stands for.
        entry = rdp_points._TERMS_CACHE[next(reversed(rdp_points._TERMS_CACHE))]
        assert isinstance(entry, rdp_points.DeferredTerms)
        nb = entry.nbytes
        assert rdp_points._nbytes(entry.terms()) == nb
        assert forcers[huge + 30]() == ref[3]
    else:
        assert np.array_equal(vals, ref)
    # A later plain call computes (or reuses) the others as the first run did.
    assert np.array_equal(pair_rdp(pair, later, budget=_SEARCH_POINTS), ref_later)
    if defers:
        assert forcers[huge + 5]() == ref[2]
    assert _cache_state() == ref_state


def test_lazy_call_without_permission_is_pair_rdp():
    pair, _ = trimmed_pair(10**6, 2.0, 4.6)
    huge = int(600 / pair.log_ratio) + 2
    block = np.arange(huge - 5, huge + 6)
    _fresh()
    ref = pair_rdp(pair, block, budget=_SEARCH_POINTS)
    _fresh()
    vals, forcers = pair_rdp_lazy(pair, block, lambda c, g: np.zeros(len(c), dtype=bool),
                                  budget=_SEARCH_POINTS)
    assert forcers == {} and np.array_equal(vals, ref)


def test_floor_of_the_search_is_below_the_exact_divergence_at_huge_orders():
    # The certificate of a left-out order: floor <= exact D(λ) <= pair_rdp, in the
    # log-space regime ((λ − 1) log(a/b) > 600), exact D in 40-digit mpmath.
    pair = fmt20_pair(4.0, 300)
    lam = np.array([160.0, 200.0])
    fl = pair_rdp_floor(pair, lam)
    up = pair_rdp(pair, lam.astype(int), budget=_SEARCH_POINTS)
    for i, l in enumerate(lam):
        exact = float(_mp_renyi(pair.n, pair.p, pair.log_ratio, int(l), sds=14))
        assert fl[i] <= exact <= up[i]
        assert fl[i] >= 0.99 * exact


def test_search_lazy_floor_only_for_huge_orders():
    pair, _ = trimmed_pair(10**6, 2.0, 4.5)
    floor, _ = _search_lazy(pair)
    huge = 600 / pair.log_ratio + 1
    o = np.array([2, 50, int(huge) - 1, int(huge) + 2, 300])
    fl = floor(o)
    assert np.all(np.isnan(fl[o <= huge])) and np.all(np.isfinite(fl[o > huge]))
    assert np.all(fl[o > huge] <= pair_rdp(pair, o[o > huge], budget=_SEARCH_POINTS))


@pytest.mark.slow
def test_eps0_search_picks_the_same_eps0_with_and_without_leaving_orders_out(monkeypatch):
    # n = 1e6 (pair for 1e6 users), T = 10, δ = 1e-12: the benchmark's slowest question,
    # where the search passes through orders with (λ − 1) log(a/b) > 600.
    from shuffledp.bounds import trimmed_clone as tc
    made = []
    orig = renyi._Deferred.__init__

    def count(self, *a):
        made.append(a[1])
        orig(self, *a)

    sd.clear_caches()
    monkeypatch.setattr(renyi._Deferred, "__init__", count)
    lazy_e0 = _rounds_eps0.__wrapped__(10**6, 2.0, 1e-12, 10)
    assert made                                   # orders were left out
    monkeypatch.setattr(tc, "_search_lazy", lambda pair: None)
    sd.clear_caches()
    assert _rounds_eps0.__wrapped__(10**6, 2.0, 1e-12, 10) == lazy_e0


def test_first_slice_check_only_rejects_what_the_window_rejects():
    # ``_first_slice_fails`` lets the series skip a term count without evaluating the
    # window; whenever it says "fails", the window's own evaluation must find an inaccurate
    # slice (so the loop would have moved on to more terms anyway).
    from shuffledp.pairs.clone import rdp_series as RS
    from shuffledp.pairs.clone.rdp_points import _rdp_window, _rdp_window_sds
    said = {True: 0, False: 0}
    for n, sigma, e0 in [(10**6, 2.0, 4.5), (10**4, 2.0, 3.5), (10**6, 1.0, 7.0),
                         (2 * 10**5, 5.0, 2.0)]:
        pair, _ = trimmed_pair(n, sigma, e0)
        for lam in (3, 9, 30, 70, 120):
            if (lam - 1) * pair.log_ratio > 600:
                continue
            K = 4.0 * math.ceil(_rdp_window_sds(lam, pair.log_ratio) / 4.0)
            s0 = int(_rdp_window(pair.n, pair.p, K)[0][0]) + 1
            for kmax in RS._SERIES_TERMS[:-1]:
                fails = RS._first_slice_fails(pair, lam, s0, kmax)
                said[fails] += 1
                if fails:
                    assert RS._accepted_from(*RS._series_slices(pair, lam, K, kmax)) > 0
    assert said[True] and said[False]


def test_entry_sizes_are_the_generic_sizes():
    sd.clear_caches()
    sd.epsilon(sd.Shuffle(sd.Gaussian(2.0), n=10**4), 1e-5, rounds=10)
    sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=3000), 1e-6, rounds=30, bound="fmt20",
               composition="rdp")
    assert rdp_points._TERMS_CACHE
    for entry in rdp_points._TERMS_CACHE.values():
        assert rdp_points._entry_nbytes(entry) == rdp_points._nbytes(entry)
        if isinstance(entry, rdp_points.DeferredTerms):
            assert rdp_points._nbytes(entry.terms()) == entry.nbytes


@pytest.mark.parametrize("s_lo,s_hi,kmax", [(5, 900, 17), (1000, 5200, 33), (3000, 3000, 65),
                                            (1, 2047, 65), (20000, 29000, 17)])
def test_moment_rows_exponentiated_per_block_are_the_windows_floats(s_lo, s_hi, kmax):
    # Before: the window's log rows (from the same blocks) exponentiated per window.
    from shuffledp.numerics import rademacher_log_moments
    from shuffledp.pairs.clone import rdp_series as RS
    R = RS._MOM_ROWS
    blocks = []
    for b in range(s_lo // R, s_hi // R + 1):
        lm = rademacher_log_moments(np.arange(max(b * R, 1), (b + 1) * R, dtype=float), kmax)
        blocks.append(np.concatenate([np.full((1, kmax), np.nan), lm]) if b == 0 else lm)
    off = s_lo - (s_lo // R) * R
    logmu = np.concatenate(blocks)[off: off + s_hi - s_lo + 1]
    RS._MOM_CACHE.clear()
    for _ in range(2):                                   # built, then from the cache
        mu, log_top = RS._moments_rows(s_lo, s_hi, kmax)
        assert np.array_equal(mu, np.exp(logmu[:, :-1]))
        assert np.array_equal(log_top, logmu[:, -1])


def test_chord_objective_is_the_chord_through_at_real_orders():
    rng = np.random.default_rng(30)
    for trial in range(60):
        orders = np.unique(rng.integers(2, 3000, size=rng.integers(3, 40)))
        if orders.size < 3:
            continue
        values = np.sort(rng.uniform(1e-6, 3.0, orders.size)) * rng.uniform(0.1, 10)
        delta, rounds = 10.0 ** -rng.uniform(3, 14), int(rng.integers(1, 10**6))

        def score(o, v):
            return C.eps_from_rdp(o, rounds * v, delta)

        f = C._chord_objective(orders, values, score)
        lams = np.concatenate([rng.uniform(orders[0], orders[-1], 40), orders.astype(float),
                               [orders[0] - 0.5, orders[-1] + 0.5, 1.5]])
        for lam in lams:
            ref = float(score(np.array([lam]), C.at_real_orders(orders, values, lam))[0])
            assert f(lam) == ref or (math.isnan(ref) and math.isnan(f(lam)))
