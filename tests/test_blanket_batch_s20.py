"""The blanket curve's sums with less Python per sum (session 20): the same floats.

* the tilt searches of a batch run as one step (``iid._tilts``): regula falsi row by row in
  arrays (``numerics.steps.illinois_rows``) instead of one generator per sum;
* the prologue of a batch's common sets (``_prep``, the reflection, the sd, the step and the
  two-point spread) in arrays (``iid._lattices_many``, ``iid._spread_rows``).

Each is compared bit for bit with the scalar code it stands for (``illinois_steps``, a frozen
copy of the per-sum tilt search, ``bincount``, and ``positive_part`` one set at a time).
"""

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.numerics import illinois_steps
from shuffledp.numerics.search import SearchError
from shuffledp.numerics.steps import illinois_rows
from shuffledp.pairs import blanket as B
from shuffledp.pairs import iid

MATRIX = sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])


def _scalar_illinois(f, a, b, **kw):
    g = illinois_steps(a, b, **kw)
    x = next(g)
    try:
        while True:
            x = g.send(f(x))
    except StopIteration as stop:
        return stop.value.x


def _increasing(kind, r):
    """An increasing function of one of six shapes with its root near r: smooth, flat at the
    root, linear with an exact zero at 0.5 (hit by the midpoint), steep, and two whose root
    lies below or above the bracket."""
    if kind == 0:
        return lambda x: math.expm1(x) - math.expm1(r)
    if kind == 1:
        return lambda x: (x - r) ** 3
    if kind == 2:
        return lambda x: x - 0.5
    if kind == 3:
        return lambda x: math.atan(40.0 * (x - r))
    if kind == 4:
        return lambda x: x + 2.0
    return lambda x: x - 9.0


def test_illinois_rows_take_the_scalar_steps():
    """Many increasing functions (roots anywhere, exact zeros, roots at an end, flat and
    steep ones, tight iteration caps): each row's x is ``illinois_steps``' x, bit for bit."""
    rng = np.random.default_rng(3)
    fs, brackets = [], []
    for k in range(300):
        kind = k % 6
        fs.append(_increasing(kind, float(rng.uniform(-1.0, 3.0))))
        brackets.append((-1.5, 3.5 if kind != 2 else 1.0))
    for max_iter in (200, 3):
        for tol in ((1e-14, 1e-13), (1e-3, 1e-2)):
            want = [_scalar_illinois(f, a, b, xtol=tol[0], rtol=tol[1], max_iter=max_iter)
                    for f, (a, b) in zip(fs, brackets)]
            a = np.array([x[0] for x in brackets])
            b = np.array([x[1] for x in brackets])
            fa = [f(x) for f, x in zip(fs, a)]
            fb = [f(x) for f, x in zip(fs, b)]
            got = illinois_rows(lambda rows, x: [fs[r](v) for r, v in zip(rows, x)], a, b,
                                fa, fb, xtol=tol[0], rtol=tol[1], max_iter=max_iter)
            assert got.tolist() == want


def test_illinois_rows_raise_on_nan():
    with pytest.raises(SearchError, match="NaN"):
        illinois_rows(lambda rows, x: [math.nan] * len(rows), [0.0, 0.0], [1.0, 1.0],
                      [-1.0, -1.0], [1.0, 1.0])
    with pytest.raises(SearchError, match="NaN"):
        illinois_rows(lambda rows, x: list(x), [0.0], [1.0], [math.nan], [1.0])


def _old_tilt(lql, jl):
    """The per-sum tilt search as it was (session 19), with ``_dmeans`` one at a time."""
    def dm(x):
        return iid._dmeans([(lql, jl, x)])[0]

    if dm(0.0) >= 0.0:
        return 0.0
    b = 1.0 / max(jl.max(), 1.0)
    while dm(b) < 0.0:
        b *= 2.0
    return _scalar_illinois(dm, 0.0, b, xtol=1e-14, rtol=1e-13)


def test_tilts_in_one_step_are_the_per_sum_searches():
    rng = np.random.default_rng(11)
    jobs = []
    for _ in range(300):
        K = int(rng.integers(2, 12))
        jl = np.sort(rng.choice(np.arange(-400, 60), K, replace=False)).astype(float)
        if jl.max() <= 0:
            jl[-1] = float(rng.integers(1, 5))
        lql = np.log(rng.dirichlet(np.ones(K) * rng.uniform(0.2, 3.0)))
        jobs.append((lql, jl))
    want = [_old_tilt(*jb) for jb in jobs]
    assert iid._tilts(jobs) == want
    assert [iid._tilts([jb])[0] for jb in jobs[:40]] == want[:40]
    assert sum(w == 0.0 for w in want) < len(want) // 2 < sum(w > 0.0 for w in want)


def _bincount_spread(v, p, h):
    x = v / h
    m = np.floor(x)
    f = x - m
    lo = int(m.min())
    hi = int(m.max()) + 1
    K = hi - lo + 1
    at = (m - lo).astype(np.int64)
    q = np.bincount(np.concatenate((at, at + 1)),
                    weights=np.concatenate((p * (1.0 - f), p * f)), minlength=K)
    live = q > 0
    return lo, K, np.log(q[live]), np.arange(lo, hi + 1, dtype=float)[live]


def test_spread_rows_are_the_bincount_spread():
    """Rows with atoms in one lattice cell, in neighbouring cells, on lattice points
    (f = 0: an upper weight of 0) and far apart."""
    rng = np.random.default_rng(5)
    for K in (2, 3, 4, 7, 9):
        G = 200
        V = rng.normal(0.0, 1.0, (G, K)) * rng.uniform(0.01, 30.0, (G, 1))
        h = rng.uniform(0.05, 2.0, G)
        V[::3, 1] = V[::3, 0] + 1e-3 * h[::3]          # the same cell
        V[1::3, 1] = V[1::3, 0] + h[1::3]               # the next cell
        V[2::5, 0] = 3.0 * h[2::5]                      # on a lattice point
        P = rng.dirichlet(np.ones(K), G)
        got = iid._spread_rows(V, P, h)
        for r in range(G):
            lo, Kl, lq, j = _bincount_spread(V[r], P[r], h[r])
            g = got[r]
            assert (g[0], g[1]) == (lo, Kl)
            assert np.array_equal(g[2], lq) and np.array_equal(g[3], j)


def _sets(mech, n, points=12):
    pairs = B._pairs_cached(mech, 1.0)
    grid, top = B._eps_grid(pairs, n, points)
    tops = [p.max_log_ratio() for p in pairs]
    rows = B._curve_atoms(pairs, [float(e) for e in grid if abs(e) < top], tops)
    return [a for row in rows for a in row if a is not None]


@pytest.mark.parametrize("mech, n", [
    (MATRIX, 3000), (MATRIX, 10**5), (MATRIX, 10**9), (sd.RandomizedResponse(3.0, 100), 10**4),
    (sd.RandomizedResponse(1.0, 4), 3 * 10**5), (sd.RandomizedResponse(7.5592, 4), 3666),
    (sd.Randomizer([[0.3069, 0.2536, 0.4395], [0.356, 0.4656, 0.1784],
                    [0.4894, 0.4306, 0.08]]), 9995)])
def test_batch_prologue_is_the_per_set_prologue(monkeypatch, mech, n):
    """``positive_parts`` (common sets prepared in arrays) against ``positive_part`` set by
    set (the generator's own prologue): the same values and details, bit for bit; the
    batch mixes in sets the array prologue leaves to the generator (a zero probability, a
    scalar error, lists, no positive atom)."""
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    sets = _sets(mech, n)
    v, p, e = sets[len(sets) // 2]
    extra = [(np.append(v, 0.3), np.append(p, 0.0), None),
             (v, p, 1e-14), (list(v), list(p), e), (-np.abs(v) - 0.1, p, None)]
    sets = sets + extra
    fast = iid._lattices_many(sets, n, None)
    if mech is not MATRIX or n != 3000:
        assert len(fast) >= len(sets) // 2 or mech.eps0 > 7     # the sparse laws keep theirs
    assert len(sets) - 4 not in fast and len(sets) - 1 not in fast
    got = iid.positive_parts(sets, n)
    want = [iid.positive_part(a, b, n, value_err=c) for a, b, c in sets]
    assert [g.upper for g in got] == [w.upper for w in want]
    assert [g.details for g in got] == [w.details for w in want]


def test_batch_prologue_reports_bad_sets_as_before():
    v, p = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.3, 0.4])
    with pytest.raises(ValueError, match="sum to 1"):
        iid.positive_parts([(v, p, None), (v, p * 2.0, None)], 10**4)
    with pytest.raises(ValueError, match="finite"):
        iid.positive_parts([(v, p, None), (np.array([1.0, np.nan, 0.5]), p, None)], 10**4)


def test_tilted_atoms_in_one_step_are_the_per_sum_formulas():
    """``iid._tilted`` (rows of one array per atom count) against the per-sum formulas it
    replaced in ``_trapezoid`` (``log_mgf`` of ``_lattice_steps``, frozen here)."""
    rng = np.random.default_rng(13)
    jobs = []
    for _ in range(300):
        K = int(rng.integers(2, 12))
        jl = np.sort(rng.choice(np.arange(-400, 400), K, replace=False)).astype(float)
        lql = np.log(rng.dirichlet(np.ones(K) * rng.uniform(0.2, 3.0)))
        jobs.append((lql, jl, float(10 ** rng.uniform(-5, -0.5)), int(10 ** rng.uniform(3, 12))))

    def old(lql, jl, phi, n):
        z = lql + np.multiply.outer(np.atleast_1d(np.asarray(phi, dtype=float)), jl)
        top = z.max(axis=-1)
        lM = float((top + np.log(np.exp(z - top[..., None]).sum(axis=-1)))[0])
        qt = np.exp(lql + phi * jl - lM)
        mu_t = float(np.sum(qt * jl))
        sd_t = math.sqrt(max(float(np.sum(qt * (jl - mu_t) ** 2)), 1e-300))
        eta = 16.0 * 2.0 ** -53 * (1.0 + float(np.max(np.abs(phi * jl))) + abs(lM))
        return lM, qt, mu_t, sd_t, math.expm1(n * eta)

    for got, jb in zip(iid._tilted(jobs), jobs):
        want = old(*jb)
        assert got[0] == want[0] and np.array_equal(got[1], want[1])
        assert got[2:] == want[2:]


def test_sparse_sums_of_a_curve_share_their_mass_tables():
    """A sparse curve's laws have the same masses at every ε (only the values move): the
    sums share ``_sparse_tables`` (weights, running sums, count tails), and each value is
    the one computed with the tables built for that sum alone (cache emptied before it)."""
    sets = _sets(sd.RandomizedResponse(7.5592, 4), 3666, points=20)
    laws = [iid._prep(*s) for s in sets]
    laws = [(v, p) for v, p in laws if iid._sparse_first(v, p, 3666, 20.0, 7.0)]
    assert len(laws) > 20
    iid._sparse_tables.cache_clear()
    shared = [iid._sparse_sum(v, p, 3666) for v, p in laws]
    info = iid._sparse_tables.cache_info()
    assert info.hits >= len(laws) - 8 and info.misses <= 8      # a few (m, sign) variants
    alone = []
    for v, p in laws:
        iid._sparse_tables.cache_clear()
        alone.append(iid._sparse_sum(v, p, 3666))
    assert [s.upper for s in shared] == [s.upper for s in alone]
    assert [s.details for s in shared] == [s.details for s in alone]

    def last_sign(v, p):                     # the closed-form atom's (the likeliest) sign
        nz = v != 0.0
        return bool(v[nz][np.argsort(p[nz], kind="stable")][-1] < 0.0)

    assert {last_sign(v, p) for v, p in laws} == {True, False}


@pytest.mark.parametrize("mech, n", [(MATRIX, 10**4), (MATRIX, 10**9),
                                     (sd.RandomizedResponse(3.0, 100), 10**4)])
def test_prefetched_pairs_leave_every_curve_point_as_it_was(monkeypatch, mech, n):
    """``_max_over_pairs_many`` sums the pairs near each point's top pair in its first batch
    (fewer batches): every point's value is the one without the prefetch, and the one
    ``_max_over_pairs`` gives point by point."""
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    pairs = B._pairs_cached(mech, 1.0)
    grid, top = B._eps_grid(pairs, n, 40)
    tops = [p.max_log_ratio() for p in pairs]
    eps = [float(e) for e in grid if abs(e) < top]
    atoms = B._curve_atoms(pairs, eps, tops)
    flat = iid.chernoff_positive_parts([a for row in atoms for a in row], n) / n
    cher = [list(c) for c in flat.reshape(len(eps), len(pairs))]
    nu = B._curve_nu(n)
    calls = []
    run = iid.positive_parts
    monkeypatch.setattr(iid, "positive_parts",
                        lambda sets, n, nu=None: calls.append(len(sets)) or run(sets, n, nu=nu))
    with_pre = B._max_over_pairs_many(n, nu, atoms, cher)
    batches_with = len(calls)
    monkeypatch.setattr(B, "PREFETCH_FRACTION", math.inf)
    calls.clear()
    without = B._max_over_pairs_many(n, nu, atoms, cher)
    assert with_pre == without
    assert batches_with <= len(calls)
    monkeypatch.setattr(iid, "positive_parts", run)
    alone = [B._max_over_pairs(pairs, n, e, nu=nu, excess=e < 0, atoms=a, cher=c)[0]
             for e, a, c in zip(eps[::7], atoms[::7], cher[::7])]
    assert alone == with_pre[::7]


@pytest.mark.parametrize("tail_tol", [None, 1e-20])
def test_sparse_sums_in_one_array_are_the_sums_one_by_one(monkeypatch, tail_tol):
    """``iid._sparse_sums`` (a curve's sparse laws with shared tables: their value parts in
    one array) against ``_sparse_sum`` law by law, values and details bit for bit; with a
    tighter tail tolerance some laws need larger count caps (summed alone) or decline."""
    if tail_tol is not None:
        monkeypatch.setattr(iid, "_SPARSE_TAIL", tail_tol)
    n = 2568
    sets = _sets(sd.RandomizedResponse(7.5044, 4), n, points=30)
    laws = [iid._prep(*s) for s in sets]
    jobs = [(v, p, n) for v, p in laws if iid._sparse_first(v, p, n, 20.0, 7.0)]
    jobs.append((-np.abs(jobs[3][0]), jobs[3][1], n))          # no positive atom
    assert len(jobs) > 30
    got = iid._sparse_sums(jobs)
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    monkeypatch.setattr(iid, "_SPARSE_THREAD_MIN", 1)            # rows in two halves
    halves = iid._sparse_sums(jobs)
    want = [iid._sparse_sum(*jb) for jb in jobs]
    assert [None if g is None else (g.upper, g.details) for g in halves] == \
        [None if w is None else (w.upper, w.details) for w in want]
    assert [None if g is None else (g.upper, g.details) for g in got] == \
        [None if w is None else (w.upper, w.details) for w in want]
    assert got[-1].upper == 0.0
    if tail_tol is not None:
        # the first cap, λ + 6√λ + 12 rounded up to 8, is 40 here: every law grew past it
        assert min(w.details["max_count"] for w in want[:-1]) > 40


@pytest.mark.parametrize("mech, n", [(MATRIX, 10**4), (MATRIX, 7 * 10**8),
                                     (sd.RandomizedResponse(7.5592, 4), 3666)])
def test_one_point_with_its_leading_pairs_in_one_batch(mech, n):
    """``_max_over_pairs`` (one curve point, δ(ε) of one round) sums its leading pairs in
    one ``positive_parts`` batch: the value, pair and details of its steps driven one sum at
    a time by ``positive_part``."""
    pairs = B._pairs_cached(mech, 1.0)
    for eps in (-0.2, 0.0, 0.003, 0.05, 0.4, 2.0):
        atoms = B._pair_atoms(pairs, eps, eps < 0)
        if all(a is None for a in atoms):
            continue
        cher = iid.chernoff_positive_parts(atoms, n) / n
        got = B._max_over_pairs(pairs, n, eps, excess=eps < 0)
        steps = B._max_steps(atoms, n, cher)
        try:
            i = next(steps)
            while True:
                v, p, e = atoms[i]
                i = steps.send(iid.positive_part(v, p, n, value_err=e))
        except StopIteration as stop:
            want = stop.value
        assert got[0] == want[0] and got[1] == want[1] and got[2] == want[2]


def test_log_mgf_rows_in_place_is_the_formula():
    """``iid._log_mgf_rows`` written in place (and an all-zero atom column taken as LP) is
    the session 19 formula bit for bit, with padded atoms (LP = −inf) and zero atoms."""
    rng = np.random.default_rng(17)
    for K in (2, 4, 7):
        V = rng.normal(0.0, 2.0, (300, K))
        LP = np.log(rng.dirichlet(np.ones(K), 300))
        V[:, K - 1] = 0.0                               # the blanket's atom at 0
        V[::5, 0], LP[::5, 0] = 0.0, -np.inf            # padding
        U = rng.uniform(-12.0, 3.0, (300, 129))
        eU = np.exp(U)
        zs = [LP[:, k, None] + eU * V[:, k, None] for k in range(K)]
        top = zs[0].copy()
        for z in zs[1:]:
            np.maximum(top, z, out=top)
        acc = np.exp(zs[0] - top)
        for z in zs[1:]:
            acc = acc + np.exp(z - top)
        assert np.array_equal(iid._log_mgf_rows(LP, V, U), top + np.log(acc))
