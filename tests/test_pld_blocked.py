"""The PLD route's passes over a pair's atoms run in cache-sized blocks (``pld_fft._BLOCK``)
and a lattice's T-independent sums are kept on it; every value must be the float the
full-length computation forms, so that no answer moves (docs/latency.md, "session 16")."""

import math

import numpy as np
import pytest

from shuffledp.numerics import pld_fft as pf


def _pair(seed, size, far=False):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(size, 0.6))
    q = rng.dirichlet(np.full(size, 0.6))
    if far:                                   # far-low atoms of negligible Q-mass
        q[:3] = 1e-70
    return np.log(p), np.log(q)


@pytest.mark.parametrize("n", [1, 7, 128, 129, 1000, 4097, 70001, 300_000])
@pytest.mark.parametrize("block", [128, 1000, 1 << 16])
def test_blocked_pairwise_sum_is_numpys_sum(monkeypatch, n, block):
    monkeypatch.setattr(pf, "_BLOCK", block)
    rng = np.random.default_rng(n)
    a = rng.random(n) * np.exp(8.0 * rng.normal(size=n))
    assert pf._pairwise_sum(n, lambda s, e: np.sum(a[s:e])) == float(np.sum(a))


@pytest.mark.parametrize("block", [128, 999, 1 << 16])
@pytest.mark.parametrize("seed,size,far", [(1, 3, False), (2, 5000, True), (3, 60_000, False),
                                           (4, 200_001, True)])
def test_blocked_moments_and_lattice_are_the_full_length_ones(monkeypatch, block, seed, size,
                                                              far):
    """``LossPair`` (blocked) against the stand-alone ``loss_moments`` / ``loss_lattice``
    (full-length arrays, one ``np.bincount``), both directions, default and other steps."""
    monkeypatch.setattr(pf, "_BLOCK", block)
    la, lb = _pair(seed, size, far)
    pair = pf.LossPair(la, lb)
    for flip, (a, b) in ((False, (la, lb)), (True, (lb, la))):
        assert pair.loss_moments(flip) == pf.loss_moments(a, b)
        for d in (None, 2.7 * pair.auto_step(flip), 1e-3):
            got, want = pair.lattice(flip, d, 1e-11), pf.loss_lattice(a, b, d, 1e-11)
            assert (got.lo, got.inf, got.d) == (want.lo, want.inf, want.d)
            assert got.q.size == want.q.size and np.array_equal(got.q, want.q)


def test_clone_pair_lattice_is_the_full_length_one():
    """A real dominating pair (1.5e5 atoms, many in one bin after another: the case the
    complex add.at is for)."""
    from shuffledp.pairs import clone as cp
    la, lb, tail = cp.pair_pld_atoms(cp.fmt23_pair(1.0, 20_000), 150_000)
    pair = pf.LossPair(la, lb)
    assert pair.shared
    got, want = pair.lattice(False, None, tail), pf.loss_lattice(la, lb, None, tail)
    assert (got.lo, got.inf) == (want.lo, want.inf)
    assert np.array_equal(got.q, want.q)


def _cut_heavy_reference(lat, T, cap):
    """``_cut_heavy`` as first written: every array formed per call."""
    q = lat.q
    if cap <= 0.0 or q.size < 3:
        return q, 0.0
    j = lat.lo + np.arange(q.size, dtype=float)
    with np.errstate(divide="ignore"):
        z = np.log(q) + lat.d * j
    zmax = float(np.max(z))
    w = np.exp(z - zmax)
    suf = np.cumsum(w[::-1])[::-1]
    log_md = zmax + math.log(float(suf[0]))
    above = np.append(suf[1:], 0.0)
    with np.errstate(divide="ignore"):
        lh = math.log(T) + zmax + np.log(above) + (T - 1) * log_md
    ok = np.flatnonzero(lh <= math.log(cap) - 1e-9)
    i = int(ok[0]) if ok.size else q.size - 1
    if i >= q.size - 1:
        return q, 0.0
    return q[: i + 1], float(math.exp(lh[i])) * (1.0 + 1e-9)


def _start_centre_reference(lat, T, budget):
    j = lat.lo + np.arange(lat.q.size, dtype=float)
    with np.errstate(divide="ignore"):
        z = np.log(lat.q) + lat.d * j
    w = np.exp(z - np.max(z))
    w /= w.sum()
    mu = float(np.sum(w * j))
    sd = math.sqrt(max(float(np.sum(w * (j - mu) ** 2)), 0.0))
    zq = math.sqrt(2.0 * max(math.log(1.0 / max(budget, 1e-300)), 0.0))
    return T * mu + zq * math.sqrt(T) * sd


@pytest.mark.parametrize("seed,far", [(5, False), (6, True)])
def test_kept_lattice_sums_give_the_per_call_values(seed, far):
    la, lb = _pair(seed, 3000, far)
    lat = pf.loss_lattice(la, lb, 2e-3)
    for T in (1, 7, 1000, 10**6):
        for cap in (0.0, 1e-300, 1e-40, 1e-12, 1e-3):
            got, want = pf._cut_heavy(lat, T, cap), _cut_heavy_reference(lat, T, cap)
            assert got[1] == want[1] and np.array_equal(got[0], want[0])
        for budget in (1e-12, 1e-5, 0.3):
            assert pf._start_centre(lat, T, budget) == _start_centre_reference(lat, T, budget)
    # a second lattice does not read the first one's sums
    other = pf.loss_lattice(lb, la, 2e-3)
    assert pf._start_centre(other, 9, 1e-6) == _start_centre_reference(other, 9, 1e-6)


def test_atoms_whose_weight_underflows_take_the_full_length_path():
    la, lb = _pair(7, 2000)
    lb[5] = -800.0                           # finite log, e^{log B} = 0: the atom is dropped
    pair = pf.LossPair(la, lb)
    assert pair.shared
    got, want = pair.lattice(False, None, 0.0), pf.loss_lattice(la, lb, None, 0.0)
    assert (got.lo, got.inf) == (want.lo, want.inf) and np.array_equal(got.q, want.q)


def _steer_reference(tilt, lo):
    """``_Tilt.steer`` as first written (a temporary per operation)."""
    d = tilt.lat.d
    k0 = int(np.searchsorted(tilt.s, lo / d, side="right"))
    s = tilt.s[k0:]
    if s.size == 0:
        return None
    lw = tilt._weights()[0][k0:]
    Q = tilt.Q[k0:]
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        la = lw + np.log(np.where(Q > 0.0, Q, 0.0))
        if float(np.max(la)) > 600.0:
            return None
        A = np.exp(la)
        B = A * np.exp(-(s - s[0]) * d)
    return np.cumsum(A[::-1])[::-1], np.cumsum(B[::-1])[::-1]


@pytest.mark.parametrize("T,centre_frac", [(3, 0.5), (200, 0.8), (5000, 0.3), (5000, 1.5)])
def test_steer_in_place_is_the_formula_as_written(T, centre_frac):
    la, lb = _pair(11, 40)
    lat = pf.loss_lattice(la, lb, 2e-3)
    mu = float(np.sum(np.exp(la) * (la - lb)))
    tilt = pf._Tilt(lat, T, T * mu * centre_frac / lat.d)
    d = lat.d
    checked = 0
    for lo in (d * (tilt.s_lo - 1), d * (0.5 * (tilt.s_lo + tilt.s_hi)), d * (tilt.s_hi - 3)):
        ref = _steer_reference(tilt, lo)
        fast = tilt.steer(lo)
        if ref is None:
            assert fast is None
            continue
        SA, SB = ref
        s = tilt.s[int(np.searchsorted(tilt.s, lo / d, side="right")):]
        for eps in np.linspace(lo, d * tilt.s_hi, 17):
            k = int(np.searchsorted(s, eps / d, side="right"))
            if k >= s.size or d * (float(s[-1]) - float(s[0])) > 650.0:
                continue
            want = max(float(SA[k]) - math.exp(eps - float(s[0]) * d + math.log(float(SB[k]))),
                       0.0) if SB[k] > 0 else float(SA[k])
            assert fast(float(eps)) == want + (tilt.right + tilt.heavy)
            checked += 1
    assert checked >= 10


def test_blocked_moments_leave_no_reference_cycle():
    """The blocked sums must not keep a pair's atoms alive after the call: a recursive
    closure is a reference cycle, which held ~35 MB per question until the cyclic
    collector ran (a 300-point sweep reached 0.5 GB)."""
    import gc
    import weakref
    import numpy as np
    from shuffledp.numerics import pld_fft as pf
    n = 3 * pf._BLOCK + 5
    la = np.log(np.full(n, 1.0 / n)) + np.linspace(0, 1e-3, n)
    lb = np.log(np.full(n, 1.0 / n))
    w = np.exp(la)
    ref = weakref.ref(la)
    gc.collect()
    gc.disable()
    try:
        pf._blocked_moments(la, lb, False, w)
        del la, w
        assert ref() is None
    finally:
        gc.enable()
