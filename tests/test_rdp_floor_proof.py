"""Session 18: the RDP route's yes/no floor (``compose.rdp.floor_proves_above``), the
trimmed Gaussian's ε0 search without its first losing point (``_rounds_loses``), and the
even-partition table of ``rademacher_log_moments``.

Independent checks: randomized response's RDP curve in closed form, and the clone pair's
exact Rényi curve from atoms built in mpmath from docs/trimmed-clone.md's slice form
(each slice c: P = α Bin(c,½)(x−1) + (1−α) Bin(c,½)(x), Q with α and 1 − α swapped). A
floor scaled up by a few percent (an invalid one) must be caught by the same checks.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest

import oracle
from shuffledp.bounds import trimmed_clone as tc
from shuffledp.bounds._common import eps0_range
from shuffledp.bounds.clones import pair_rdp_floor
from shuffledp.compose import conversions as C
from shuffledp.compose.rdp import floor_proves_above
from shuffledp.numerics import golden
from shuffledp.numerics import binomial as nb
from shuffledp.pairs.trimmed import trimmed_pair


def _rr_rdp(eps):
    lp, lq = eps - math.log1p(math.exp(eps)), -math.log1p(math.exp(eps))

    def curve(orders):
        lam = np.asarray(orders, dtype=float)
        return np.logaddexp(lam * lp + (1 - lam) * lq, lam * lq + (1 - lam) * lp) / (lam - 1)
    return curve


@pytest.mark.parametrize("eps,T,delta", [(0.1, 10, 1e-6), (0.5, 1000, 1e-6), (1.0, 3, 1e-9),
                                         (0.02, 10**5, 1e-5)])
def test_proof_on_the_exact_rr_curve_is_never_above_the_route(eps, T, delta):
    """Randomized response's curve is exact: a floor from it may not exceed the order
    search's ε over that curve; below the route by 10 % it must be proven (it is useful);
    a floor 5 % above the exact curve is caught (it 'proves' more than the route)."""
    top = 100_000
    curve = _rr_rdp(eps)
    route = C.search_epsilon(curve, delta, T, max_order=top).value
    for frac in (0.5, 0.9, 0.97, 0.999, 1.0, 1.01):
        fl = floor_proves_above(curve, T, delta, top, frac * route)
        if fl is not None:
            assert frac * route <= fl <= route
        if frac >= 1.0 + 1e-9:
            assert fl is None
    assert floor_proves_above(curve, T, delta, top, 0.9 * route) is not None
    bad = floor_proves_above(lambda o: 1.05 * curve(o), T, delta, top, 1.001 * route)
    assert bad is not None and bad > route              # the check has teeth


def test_proof_needs_a_finite_positive_value_to_beat():
    curve = _rr_rdp(0.5)
    for beat in (0.0, -1.0, math.inf, math.nan):
        assert floor_proves_above(curve, 10, 1e-6, 1000.0, beat) is None


def _mp_atoms(pair, sds=14):
    """(log P, log Q) of the clone pair's atoms in mpmath (40 digits), as floats."""
    mp.mp.dps = 40
    alpha = 1 / (1 + mp.e ** -mp.mpf(pair.log_ratio))
    lp, lq = [], []
    for wc, Pc, Qc in oracle.clone_pair_slices(pair.n, pair.p, alpha, sds):
        for Px, Qx in zip(Pc, Qc):
            P, Q = wc * Px, wc * Qx
            if P > 0 and Q > 0:
                lp.append(float(mp.log(P)))
                lq.append(float(mp.log(Q)))
    return np.array(lp), np.array(lq)


def _exact_min_eps(pair, T, delta, top):
    """min over real orders in [2, top] of the converted ε of the pair's exact curve (a
    fine grid: the truncated atoms' Rényi sums, a lower bound on the exact ones, so this is
    at most the true minimum over the grid; float logsumexp, errors ~1e-15)."""
    lp, lq = _mp_atoms(pair)
    lam = np.unique(np.concatenate([np.arange(2, 200, dtype=float),
                                    np.geomspace(2.0, top, 3000)]))
    t = lam[:, None] * lp[None, :] + (1.0 - lam[:, None]) * lq[None, :]
    mx = t.max(axis=1)
    d = (mx + np.log(np.exp(t - mx[:, None]).sum(axis=1))) / (lam - 1.0)
    return float(np.min(C.eps_from_rdp(lam, T * np.maximum(d, 0.0), delta)))


@pytest.mark.parametrize("n,sigma,T,delta,e0", [(60, 2.0, 3, 1e-5, 2.9),
                                                (150, 2.0, 10, 1e-6, 3.3),
                                                (150, 1.5, 10, 1e-6, 4.6),
                                                (100, 3.0, 30, 1e-8, 2.4)])
def test_trimmed_floor_is_below_the_exact_clone_curve(n, sigma, T, delta, e0):
    """The floor ``_rounds_loses`` uses, on the trimmed pair at ε0, against the converted
    exact curve of the same clone pair (mpmath atoms): never above it, within 15 % of it;
    a Rényi floor 10 % too high is caught."""
    pair, rest = tc._rounds_rest(n, sigma, delta, T, e0)
    top = float(tc._MAX_ORDER)
    exact = _exact_min_eps(pair, T, rest, top)
    fl = floor_proves_above(functools.partial(pair_rdp_floor, pair), T, rest, top,
                            0.85 * exact)
    assert fl is not None and fl <= exact
    bad = floor_proves_above(lambda o: 1.1 * pair_rdp_floor(pair, o), T, rest, top,
                             1.001 * exact)
    assert bad is not None and bad > exact              # the check has teeth


def _search_value(n, sigma, delta, T, e0):
    """The ε0 search's own value at ε0 (``_rounds_eps0``'s f, written out again)."""
    got = tc._rounds_rest(n, sigma, delta, T, e0)
    if got is None:
        return math.inf
    pair, rest = got
    return C.search_epsilon(lambda o: tc.pair_rdp(pair, o, budget=tc._SEARCH_POINTS), rest, T,
                            max_order=tc._MAX_ORDER, coarse="sparse",
                            lazy=tc._search_lazy(pair)).value


@pytest.mark.parametrize("n,sigma,T,delta", [(2000, 1.0, 10, 1e-6), (10**4, 2.0, 10, 1e-5),
                                             (500, 0.6, 300, 1e-8)])
def test_pruned_rounds_search_is_golden_bit_for_bit(n, sigma, T, delta):
    """The pruned ε0 search returns ``golden``'s ε0 exactly, and every point it proves to
    lose is above the value it was compared with (its own search value, evaluated here)."""
    lo, hi = eps0_range(n * T, sigma, delta)
    ref = golden(lambda x: _search_value(n, sigma, delta, T, x), lo, hi, max_iter=8).x
    assert tc._rounds_eps0.__wrapped__(n, sigma, delta, T) == ref
    c = hi - (math.sqrt(5.0) - 1.0) / 2.0 * (hi - lo)
    d = lo + (math.sqrt(5.0) - 1.0) / 2.0 * (hi - lo)
    fc, fd = _search_value(n, sigma, delta, T, c), _search_value(n, sigma, delta, T, d)
    assert tc._rounds_loses(n, sigma, delta, T, d, fc)  # the pruned path is exercised
    for x, fx, partner in ((d, fd, fc), (c, fc, fd)):
        for frac in (0.5, 0.9, 0.99, 1.0):
            beat = frac * fx
            if tc._rounds_loses(n, sigma, delta, T, x, beat):
                assert fx > beat
        assert not tc._rounds_loses(n, sigma, delta, T, x, fx)
        if math.isfinite(partner) and tc._rounds_loses(n, sigma, delta, T, x, partner):
            assert fx > partner


def test_even_partition_table_is_the_reference_recurrence():
    """``rademacher_log_moments`` builds its table by the O(k²) recurrence; its floats are
    those of ``_even_partition_counts`` (the O(k³) reference), exact integers (up to 80; the series uses 17, 33, 65)."""
    for kmax in (1, 2, 5, 17, 33, 65, 80):
        nb._EVEN_PARTITIONS.pop(kmax, None)
        nb.rademacher_log_moments(np.array([3.0]), kmax)
        ref = np.array([[float(v) for v in row] for row in nb._even_partition_counts(kmax)])
        assert np.array_equal(nb._EVEN_PARTITIONS[kmax], ref)


def test_moment_rows_from_the_arena_are_the_blocks_floats():
    """``rdp_series._moments_rows`` returns views of per-kmax arenas: the values are the
    blocks' as computed one by one (``rademacher_log_moments`` of each 1024-row block,
    exponentiated), through re-basing (windows far apart), block 0 and repeated reads;
    the series' matrix-vector product on such a view is the product on a copy."""
    from shuffledp.pairs.clone import rdp_series as RS
    R = RS._MOM_ROWS

    def ref(s_lo, s_hi, kmax):
        blocks = []
        for b in range(s_lo // R, s_hi // R + 1):
            lm = nb.rademacher_log_moments(np.arange(max(b * R, 1), (b + 1) * R, dtype=float),
                                           kmax)
            blocks.append(np.concatenate([np.full((1, kmax), np.nan), lm]) if b == 0 else lm)
        off = s_lo - (s_lo // R) * R
        lm = np.concatenate(blocks)[off: off + s_hi - s_lo + 1]
        return np.exp(lm[:, :-1]), lm[:, -1]

    RS._MOM_CACHE.clear()
    windows = [(5, 900, 17), (3000, 9000, 65), (200000, 205000, 65), (3100, 3100, 65),
               (1, 2047, 33), (150000, 190000, 17), (7000, 8000, 65), (60000, 61000, 33)]
    for s_lo, s_hi, kmax in windows + windows[::-1]:
        mu, top = RS._moments_rows(s_lo, s_hi, kmax)
        mu_r, top_r = ref(s_lo, s_hi, kmax)
        assert np.array_equal(mu, mu_r, equal_nan=True)
        assert np.array_equal(top, top_r, equal_nan=True)
        if s_lo > 0 and mu.shape[0] > 1:
            c = RS._psi_even(40, 0.7, kmax - 1)
            assert (mu @ c).tobytes() == (mu.copy() @ c).tobytes()


def test_quick_top_check_takes_the_exact_decision():
    """``_series_part``'s first test decided on quick moments (``_top_hopeless``): the
    same decision as the exact one-row moments at every slice size and order tried, and
    the quick moments within 1e-12 of the exact ones (the margin is 1e-6)."""
    from shuffledp.pairs.clone import rdp_series as RS
    from shuffledp.pairs.clone import fmt20_pair
    rng = np.random.default_rng(18)
    seen = set()
    for t in range(400):
        n, e0 = int(10 ** rng.uniform(2, 9)), float(rng.uniform(0.1, 8.0))
        pair = (fmt20_pair(e0, n) if t % 2 else
                trimmed_pair(min(n, 10**6), float(rng.uniform(0.5, 8.0)), e0)[0])
        if pair is None or not pair.a > pair.b:
            continue
        s = float(int(10 ** rng.uniform(0, 7.5)) + 1)
        lam = int(rng.choice([2, 3, 8, 30, 118, 300, 1000, 4000]))
        mu, lt = RS._top_moments(s)
        qmu, qlt = RS._top_moments_quick(s)
        live = mu > 0
        assert np.array_equal(live, qmu > 0)
        assert np.all(np.abs(qmu[live] / mu[live] - 1.0) <= 1e-12)
        assert abs(qlt[0] - lt[0]) <= 1e-12 * max(1.0, abs(lt[0]))
        val, rem = RS._series_eval(pair, lam, RS._SERIES_TERMS[-1], np.array([s]), mu, lt)
        exact = RS._accepted_from(val, rem) > 0
        assert RS._top_hopeless(pair, lam, s) == exact
        seen.add(exact)
    assert seen == {True, False}                          # both outcomes are exercised


@pytest.mark.parametrize("s_lo,s_hi", [(1, 3000), (5000, 9000), (700000, 702000)])
def test_moment_blocks_shared_across_term_counts(s_lo, s_hi):
    """The 33- and 65-term blocks built from the 17- and 33-term ones (their first columns,
    then the rest with ``first``) are the blocks computed directly, bit for bit (block 0,
    with its undefined s = 0 row, included); ``first`` gives the full call's columns."""
    from shuffledp.pairs.clone import rdp_series as RS
    R = RS._MOM_ROWS
    RS._MOM_CACHE.clear()
    for kmax in (17, 33, 65):
        RS._moments_rows(s_lo, s_hi, kmax)
    for kmax in (17, 33, 65):
        ar = RS._MOM_CACHE[kmax]
        for b in range(s_lo // R, s_hi // R + 1):
            lm = nb.rademacher_log_moments(np.arange(max(b * R, 1), (b + 1) * R, dtype=float),
                                           kmax)
            if b == 0:
                lm = np.concatenate([np.full((1, kmax), np.nan), lm])
            i = b - ar.b0
            assert ar.mom[i * R:(i + 1) * R].tobytes() == np.exp(lm[:, :-1]).tobytes()
            assert ar.top[i * R:(i + 1) * R].tobytes() == lm[:, -1].tobytes()
    rows = np.arange(s_lo + 1, s_lo + 40, dtype=float)
    full = nb.rademacher_log_moments(rows, 65)
    for first in (2, 17, 33, 65):
        assert nb.rademacher_log_moments(rows, 65, first=first).tobytes() == \
            np.ascontiguousarray(full[:, first - 1:]).tobytes()
    with pytest.raises(ValueError):
        nb.rademacher_log_moments(rows[:3], 65, first=2)
