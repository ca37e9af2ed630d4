"""Batched node bands, remainder bisections, sums and Chernoff searches: the same floats.

``lattice_fourier._bands`` evaluates the node bands of many Fourier inversions in one array
(rows with their own atoms and constants); ``iid.positive_parts`` and the blanket curve's
``_max_over_pairs_many`` run many certified sums side by side on it. Checked against a
frozen copy of the one-band code as it was before batching (below), and the batch against
the one-at-a-time drivers, bit for bit, on random inputs and on blanket curve points. The
Chernoff search (``iid.chernoff_positive_parts``: prepared rows in one pass, log M atom by
atom below 8 atoms) against its frozen copy, also with invalid sets (the same errors).
"""

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.numerics import lattice_fourier as LF
from shuffledp.pairs import blanket as B
from shuffledp.pairs import iid

_U = 2.0 ** -53
_TWO_PI = 2.0 * math.pi
_BLOCK = 1 << 18


# ---- frozen: lattice_fourier before batching (session 15) ------------------------------
def _old_sin_c2(r: np.ndarray, M: int):
    """(sin x, 2 sin²(x/2) = 1 − cos x) for x = 2π r/M, r integers in (−M/2, M/2], each
    with relative error ≤ 8u: x itself carries ≤ 3u relative, and sin is taken of π − |x|
    (computed from the integer M − 2|r|) where |x| > π/2, so both arguments stay in
    [−π/2, π/2] where y·cot y ≤ 1."""
    x = r * (_TWO_PI / M)
    far = 4 * np.abs(r) > M
    comp = (M - 2 * np.abs(r)) * (math.pi / M)
    s = np.where(far, np.sign(r) * np.sin(comp), np.sin(x))
    h = np.sin(0.5 * x)
    return s, 2.0 * h * h


def _old_reduce(k: np.ndarray, j: np.ndarray, M: int) -> np.ndarray:
    """(k·j) mod M in (−M/2, M/2], exactly (int64: |k·j| < 2⁶³ is checked by the caller)."""
    r = np.mod(np.multiply.outer(k, j), M)
    return np.where(2 * r > M, r - M, r)


def _old_W(k: np.ndarray, M: int, h: float, phi: float):
    """(W(θ_k), |W(θ_k)|) for θ_k = 2πk/M, 0 ≤ k ≤ M/2: W = h·e^{−φ}·e^{−iθ}·(a − ib)²/(a² + b²)²
    with 1 − r = a + ib, a = (1 − e^{−φ}) + 2e^{−φ} sin²(θ/2), b = e^{−φ} sin θ (each a sum of
    non-negative terms: relative error ≤ 40u for the complex value)."""
    em = math.exp(-phi)
    s, c2 = _old_sin_c2(k, M)
    a = -math.expm1(-phi) + em * c2
    b = em * s
    den = a * a + b * b
    cos = 1.0 - c2
    num = (a * a - b * b) - 2j * a * b
    W = (h * em) * (cos - 1j * s) * num / (den * den)
    return W, (h * em) / den


def _old_band(j, q, n, h, phi, M, ks, sq):
    """(S, err, Σ|g|): the trapezoid sum's part over the nodes ``ks`` (distinct, in
    0 … (M − 1)/2; each k > 0 with its conjugate M − k) and its certified floating-point
    error."""
    nnz = q.size
    e0 = 1.0 - sq                                  # 1 − s, error ≤ u
    total = 0.0
    err = 0.0
    gabs = 0.0
    step = max(1, _BLOCK // nnz)
    for k0 in range(0, ks.size, step):
        k = ks[k0:k0 + step]
        r = _old_reduce(k, j, M)
        s, c2 = _old_sin_c2(r, M)
        a_re = np.sum(c2 * q, axis=1)          # Σ q 2sin²(x/2) ≥ 0 (no BLAS: tiny products)
        im_f = np.sum(s * q, axis=1)                             # Im F = Σ q sin x
        a_im = np.sum(np.abs(s) * q, axis=1)
        reD = e0 + a_re
        # |1 − D̂ − (1 − D)| ≤ E_D: relative 8u per term, (nnz) u for the sums, u for 1 − s
        ED = (nnz + 12.0) * _U * (a_re + a_im) * 1.01 + 2.0 * _U
        re_f = 1.0 - reD
        z = im_f * im_f - reD * (2.0 - reD)                      # |F|² − 1
        LR = 0.5 * np.log1p(z)
        LI = np.arctan2(im_f, re_f)
        absF = np.exp(LR)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ok = absF > 2.0 * ED
            d_in = np.where(ok, ED / (absF - ED), np.inf)
            d_rd = (4.0 * _U * (im_f * im_f + np.abs(reD) * (2.0 + np.abs(reD))) / (absF * absF)
                    + 4.0 * _U * (np.abs(LR) + np.abs(LI))
                    + 4.0 * _U * (np.abs(re_f) + np.abs(im_f)) / absF)
            eps = n * (d_in + d_rd) + 4.0 * _U * n * (np.abs(LR) + np.abs(LI)) + 8.0 * _U
            nLR = n * LR
            mag = np.exp(nLR)
            Fn = mag * (np.cos(n * LI) + 1j * np.sin(n * LI))
        W, absW = _old_W(k, M, h, phi)
        g = Fn * W
        gre = np.where(ok, g.real, 0.0)
        # per-node error: the power's (from log F) and W's, first order with margin; a node
        # whose |F̂| is within 2·E_D of 0 is not summed and charged (|F| + E_D)^n·|W|
        with np.errstate(over="ignore", invalid="ignore"):
            e_node = np.where(ok, mag * absW * (np.expm1(np.minimum(eps, 700.0)) + 50.0 * _U)
                              * (1.0 + 1e-6),
                              np.exp(n * np.log(absF + ED)) * absW * (1.0 + 1e-6))
        wts = np.where(k == 0, 1.0, 2.0)
        total += float(np.sum(wts * gre))
        err += float(np.sum(wts * e_node))
        gabs += float(np.sum(wts * np.abs(gre)))
    if not (math.isfinite(total) and math.isfinite(err)):
        return 0.0, math.inf, math.inf
    S = total / M
    err = err / M * (1.0 + 4.0 * _U) + (ks.size + 4.0) * _U * gabs / M * 1.01
    return S, err, gabs / M


def _old_remainder_log(j, q, n, h, phi, M, kB, sq, e2_up, V, D, l_target, work_max=math.inf):
    """(log of an upper bound on sup |F(θ)|^n·|W(θ)| over θ ∈ [θ_a, π] outside the returned
    node intervals, those nodes): θ_a = 2π(kB + 1)/M; the bound covers every other node in
    kB + 1 … (M − 1)/2 and their conjugates together (their weights sum to < 1). Intervals
    where the bound stays above e^{l_target} are bisected down to ``LF._PEAK_NODES`` nodes and
    their nodes returned, to be summed (near-periods of the atoms, where |F| comes back
    close to 1). None when that takes more than ``LF._INTERVALS_MAX`` intervals (or intervals
    times distinct differences above ``work_max``) or ``LF._PEAKS_MAX`` nodes."""
    theta_a = _TWO_PI * (kB + 1) / M * (1.0 - 4.0 * _U)
    theta_D = math.pi / D * (1.0 - 4.0 * _U)
    em = math.exp(-phi)

    def log_absW(theta):
        # |W| = h e^{−φ}/|1 − r|², |1 − r|² = (1 − e^{−φ})² + 4e^{−φ} sin²(θ/2), from below
        t = np.asarray(theta, dtype=float)
        den = (-math.expm1(-phi)) ** 2 + 4.0 * em * np.sin(0.5 * t) ** 2
        return np.log(h * em) - np.log(den * (1.0 - 16.0 * _U))

    def log_pow(one_minus):      # (n/2)·log(s² − x) with x = ``one_minus``, rounded up
        arg = e2_up - one_minus
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(arg > -1.0, np.log1p(np.maximum(arg, -1.0)), -np.inf)
        v = np.where(v < 0.0, v * (1.0 - 1e-10), v * (1.0 + 1e-10) + 1e-300)
        return 0.5 * n * v

    out = -math.inf
    lo_ii = theta_a
    if theta_a < theta_D:
        # region (i): quadratic bound at θ_a (it decreases in θ, as does |W|)
        x = (4.0 / math.pi ** 2) * theta_a * theta_a * V * (1.0 - 1e-12)
        out = float(log_pow(x) + log_absW(theta_a))
        lo_ii = theta_D
    if lo_ii >= math.pi:
        return out, np.zeros(0, dtype=np.int64)
    # region (ii): pairwise differences, grouped
    a, b = np.triu_indices(q.size, 1)
    d_all = np.abs(j[a] - j[b])
    c_all = 2.0 * q[a] * q[b]
    d, inv = np.unique(d_all, return_inverse=True)
    c = np.bincount(inv, weights=c_all) * (1.0 - 1e-12)
    dd = d.astype(float)
    edges = np.linspace(lo_ii, math.pi, LF._PIECES + 1)
    lo, hi = edges[:-1].copy(), edges[1:].copy()
    lo[0] = lo_ii
    hi[-1] = math.pi * (1.0 + 4.0 * _U)
    evaluated = 0
    peak_lo, peak_hi = [], []
    node_w = _TWO_PI / M
    for _ in range(LF._DEPTH):
        evaluated += lo.size
        if evaluated > LF._INTERVALS_MAX or evaluated * dd.size > work_max:
            return None
        Y0 = np.multiply.outer(lo, dd) * (1.0 - 4.0 * _U)
        Y1 = np.multiply.outer(hi, dd) * (1.0 + 4.0 * _U)
        t0 = Y0 / _TWO_PI * (1.0 - 1e-12) - 1e-12
        t1 = Y1 / _TWO_PI * (1.0 + 1e-12) + 1e-12
        has_zero = np.floor(t1) >= np.ceil(t0)
        m0 = np.sin(0.5 * Y0) ** 2
        m1 = np.sin(0.5 * Y1) ** 2
        mn = 2.0 * np.minimum(m0, m1) - 4.0 * _U * Y1 - 8.0 * _U
        mn = np.where(has_zero, 0.0, np.maximum(mn, 0.0))
        LB = np.sum(mn * c, axis=1) * (1.0 - 1e-12)
        lb = log_pow(LB) + log_absW(lo)
        bad = lb > l_target
        good_max = float(np.max(lb[~bad])) if np.any(~bad) else -math.inf
        out = max(out, good_max)
        narrow = bad & (hi - lo <= LF._PEAK_NODES * node_w)
        if np.any(narrow):
            peak_lo.append(lo[narrow])
            peak_hi.append(hi[narrow])
            bad &= ~narrow
        if not np.any(bad):
            cap = min(LF._PEAKS_MAX, work_max / q.size - (kB + 1))
            ks = LF._nodes_in(peak_lo, peak_hi, M, kB, cap)
            return None if ks is None else (out, ks)
        mid = 0.5 * (lo[bad] + hi[bad])
        lo = np.concatenate([lo[bad], mid])
        hi = np.concatenate([mid, hi[bad]])
    return None


# ---- frozen: iid's Chernoff search before its rows were batched (session 15) -------------
def _old_prep(values, probs, value_err):
    v = np.asarray(values, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    if v.shape != p.shape or v.size == 0:
        raise ValueError(f"values and probs must be non-empty arrays of equal length; got "
                         f"{v.size} and {p.size}")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(p))) or np.any(p < 0):
        raise ValueError("values must be finite and probs finite and >= 0")
    s = float(p.sum())
    if not 0.999999 <= s <= 1.000001:
        raise ValueError(f"probs must sum to 1 (within 1e-6); got {s!r}")
    if value_err is None:
        e = np.zeros_like(v)
    else:
        e = np.broadcast_to(np.asarray(value_err, dtype=float), v.shape)
    keep = p > 0
    # Move every atom up by its stated error and by the rounding of what follows.
    v = v[keep] + e[keep] + 4.0 * _U * np.abs(v[keep])
    return v, p[keep]


def _old_chernoff_positive_parts(atom_sets, n: int, points: int = 129,
                            passes: int = 4) -> np.ndarray:
    """``chernoff_positive_part`` of each (values, probs, value_err) in ``atom_sets`` (None:
    0), all at once: the grid search in log θ runs on one (sets × points × atoms) array,
    ``points`` per pass, each pass zoomed to the best point's neighbours (64x shorter)."""
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be an integer in [1, inf); got {n!r}")
    out = np.zeros(len(atom_sets))
    prepped = [None if a is None else _old_prep(*a) for a in atom_sets]
    live = [i for i, x in enumerate(prepped) if x is not None and np.max(x[0]) > 0.0]
    if not live:
        return out
    K = max(prepped[i][0].size for i in live)
    V = np.zeros((len(live), K))
    LP = np.full((len(live), K), -np.inf)
    size = np.empty(len(live))
    for r, i in enumerate(live):
        v, p = prepped[i]
        V[r, :v.size], LP[r, :v.size], size[r] = v, np.log(p), v.size
    span = np.max(np.abs(V), axis=1)
    lo = np.log(1e-6 / (span * math.sqrt(n)))
    hi = np.log(1e3 / span)
    rows = np.arange(len(live))
    grid = np.linspace(0.0, 1.0, points)
    best_u, best_f = np.zeros(len(live)), np.full(len(live), np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        for _ in range(passes):
            U = lo[:, None] + (hi - lo)[:, None] * grid[None, :]
            # f(u) = n·log M(e^u) − u − 1, padded atoms have log-probability −inf
            z = LP[:, None, :] + np.exp(U)[:, :, None] * V[:, None, :]
            top = z.max(axis=2)
            fs = n * (top + np.log(np.exp(z - top[..., None]).sum(axis=2))) - U - 1.0
            fs = np.where(np.isnan(fs), np.inf, fs)
            i = np.argmin(fs, axis=1)
            f_i = fs[rows, i]
            better = f_i < best_f
            best_u = np.where(better, U[rows, i], best_u)
            best_f = np.where(better, f_i, best_f)
            lo, hi = U[rows, np.maximum(i - 1, 0)], U[rows, np.minimum(i + 1, points - 1)]
        th = np.exp(best_u)
        lmax = np.max(LP + th[:, None] * V, axis=1)
    slack = 16.0 * _U * (n * (np.abs(lmax) + np.log(size) + 2.0) + np.abs(best_u) + 2.0)
    val = best_f + slack
    res = np.where(val >= 709.0, math.inf,
                   np.where(val > -744.0, np.exp(np.minimum(val, 709.0)), 5e-324))
    res = np.where(np.isfinite(best_f), res, math.inf)     # never rounded down to 0
    out[live] = res
    return out


# ----------------------------------------------------------------------------------------
def _jobs(seed, count):
    rng = np.random.default_rng(seed)
    jobs = []
    for _ in range(count):
        nnz = int(rng.integers(2, 12))
        j = np.sort(rng.choice(np.arange(-60, 60), nnz, replace=False)).astype(np.int64)
        q = rng.dirichlet(np.ones(nnz))
        n = int(10 ** rng.uniform(3, 12))
        h, phi = 10 ** rng.uniform(-3, 1), 10 ** rng.uniform(-4, 0)
        M = 2 * int(rng.integers(100, 10 ** 6)) + 1
        kmax = (M - 1) // 2
        if rng.random() < 0.5:
            ks = np.arange(min(kmax, int(rng.integers(1, 3000))) + 1, dtype=np.int64)
        else:
            ks = np.unique(rng.integers(1, kmax + 1, size=int(rng.integers(1, 500)))).astype(np.int64)
        jobs.append((j, q, n, h, phi, M, ks, math.fsum(q.tolist())))
    # one job longer than a block (sums taken block by block)
    j, q, n, h, phi, M, _, sq = jobs[0]
    jobs.append((j, q, n, h, phi, 2 * 10 ** 6 + 1, np.arange(_BLOCK // q.size + 500, dtype=np.int64), sq))
    return jobs


@pytest.mark.parametrize("seed", [0, 1])
def test_batched_bands_are_the_frozen_bands_bit_for_bit(seed):
    jobs = _jobs(seed, 300)
    ref = [_old_band(*jb) for jb in jobs]
    assert LF._bands(jobs) == ref
    assert [LF._band(*jb) for jb in jobs[:40]] == ref[:40]


def _curve_sets(mech, n, points=12):
    pairs = B._pairs_cached(mech, 1.0)
    grid, top = B._eps_grid(pairs, n, points)
    sets = []
    for e in grid:
        if abs(e) < top:
            sets.extend(a for a in B._pair_atoms(pairs, float(e), bool(e < 0)) if a is not None)
    return sets


@pytest.mark.parametrize("mech,n", [
    (sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]), 10 ** 6),
    (sd.RandomizedResponse(3.0, 100), 3 * 10 ** 5),
    (sd.RandomizedResponse(1.0, 4), 10 ** 12),
])
def test_positive_parts_is_positive_part_bit_for_bit(mech, n):
    sets = _curve_sets(mech, n)
    assert iid.fourier_first(n, 12.0)
    one = [iid.positive_part(v, p, n, value_err=e, nu=12.0) for v, p, e in sets]
    many = iid.positive_parts(sets, n, nu=12.0)
    assert [r.upper for r in many] == [r.upper for r in one]
    assert [r.details for r in many] == [r.details for r in one]
    assert any(r.details.get("method") == "trapezoid" for r in one)


def test_curve_points_batched_are_the_point_by_point_maxima():
    mech = sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    n, nu = 10 ** 6, 12.0
    pairs = B._pairs_cached(mech, 1.0)
    grid, top = B._eps_grid(pairs, n, 10)
    es = [float(e) for e in grid if abs(e) < top]
    atoms = [B._pair_atoms(pairs, e, e < 0) for e in es]
    cher = [list(iid.chernoff_positive_parts(a, n) / n) for a in atoms]
    one = [B._max_over_pairs(pairs, n, e, nu, excess=e < 0, atoms=a, cher=c)[0]
           for e, a, c in zip(es, atoms, cher)]
    assert B._max_over_pairs_many(n, nu, atoms, cher) == one
    # more than one pair was summed at some points (the rounds of the batch are exercised)
    assert len(pairs) > 1


def _random_sets(rng):
    sets = []
    kmax = int(rng.integers(1, 12))
    for _ in range(int(rng.integers(1, 60))):
        if rng.random() < 0.1:
            sets.append(None)
            continue
        K = int(rng.integers(1, kmax + 1))
        v = rng.normal(size=K) * 10 ** rng.uniform(-3, 2)
        p = rng.dirichlet(np.ones(K))
        if K > 2 and rng.random() < 0.3:
            p[0] = 0.0
            p /= p.sum()
        if rng.random() < 0.2:
            v = -np.abs(v)
        e = (None if rng.random() < 0.4 else
             (1e-12 if rng.random() < 0.5 else np.abs(rng.normal(size=K)) * 1e-13))
        sets.append((v, p, e))
    return sets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chernoff_search_is_the_frozen_one_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        sets = _random_sets(rng)
        n = int(10 ** rng.uniform(0, 12))
        assert np.array_equal(iid.chernoff_positive_parts(sets, n),
                              _old_chernoff_positive_parts(sets, n))


def test_chernoff_search_reports_an_invalid_set_like_prep():
    good = (np.array([1.0, -1.0]), np.array([0.5, 0.5]), None)
    for bad, msg in [((np.array([1.0, -1.0]), np.array([0.5, 0.6]), None), "sum to 1"),
                     ((np.array([1.0, np.nan]), np.array([0.5, 0.5]), None), "finite"),
                     ((np.array([1.0]), np.array([0.5, 0.5]), None), "equal length")]:
        with pytest.raises(ValueError, match=msg):
            iid.chernoff_positive_parts([good, bad], 100)


def _rem_jobs(seed, count):
    rng = np.random.default_rng(seed)
    jobs = []
    for _ in range(count):
        nnz = int(rng.integers(2, 10))
        j = np.sort(rng.choice(np.arange(-50, 50), nnz, replace=False)).astype(np.int64)
        q = rng.dirichlet(np.ones(nnz)) * (1 - 10 ** rng.uniform(-16, -3))
        n, h, phi = int(10 ** rng.uniform(2, 12)), 10 ** rng.uniform(-3, 1), 10 ** rng.uniform(-5, 0)
        sq = math.fsum(q.tolist())
        e1 = sq - 1.0
        e2 = e1 * (2.0 + e1)
        e2_up = e2 + 4.0 * _U * abs(e2) + 1e-300
        jc = j - float(np.sum(q * j) / sq)
        V = (sq * float(np.sum(q * jc * jc)) - float(np.sum(q * jc)) ** 2) * (1 - 1e-10)
        M = 2 * int(rng.integers(50, 10 ** 6)) + 1
        kB = int(rng.integers(0, (M - 1) // 2))
        lt = math.log(1e-13 * 10 ** rng.uniform(-30, 0))
        wm = math.inf if rng.random() < 0.7 else 10 ** rng.uniform(3, 6)
        jobs.append((j, q, n, h, phi, M, kB, sq, e2_up, V, int(j.max() - j.min()), lt, wm))
    return jobs


@pytest.mark.parametrize("seed", [2, 3])
def test_batched_remainders_are_the_frozen_ones_bit_for_bit(seed):
    jobs = _rem_jobs(seed, 300)
    ref = [_old_remainder_log(*jb) for jb in jobs]
    new = LF._remainders(jobs)
    kinds = {"none": 0, "peaks": 0}
    for a, b in zip(ref, new):
        if a is None:
            assert b is None
            kinds["none"] += 1
            continue
        assert a[0] == b[0] and np.array_equal(a[1], b[1])
        kinds["peaks"] += a[1].size > 0
    # the jobs exercise declines and near-period nodes (bisection past the first round)
    assert kinds["none"] > 5 and kinds["peaks"] > 5
    assert [LF._remainder_log(*jb) is None for jb in jobs[:30]] == [r is None for r in ref[:30]]


def test_tilt_means_batched_are_the_vector_formula_bit_for_bit():
    """``iid._dmeans`` (the tilt search's evaluations, stacked by atom count) against the
    formula it replaced, evaluated on each vector alone (as ``positive_part`` did)."""
    rng = np.random.default_rng(7)
    jobs = []
    for _ in range(400):
        K = int(rng.integers(2, 14))
        jl = np.sort(rng.choice(np.arange(-300, 300), K, replace=False)).astype(float)
        lql = np.log(rng.dirichlet(np.ones(K)))
        jobs.append((lql, jl, float(10 ** rng.uniform(-6, 0) * rng.choice([0, 1, 1]))))

    def old(lql, jl, phi):
        w = lql + phi * jl
        w = np.exp(w - w.max())
        return float(np.sum(w * jl))

    ref = [old(*jb) for jb in jobs]
    assert iid._dmeans(jobs) == ref
    assert [iid._dmeans([jb])[0] for jb in jobs[:50]] == ref[:50]


def test_illinois_steps_drive_like_the_root_search():
    from shuffledp.numerics import illinois_root, illinois_steps
    f = lambda x: math.expm1(x) - 0.3                        # noqa: E731
    r = illinois_root(f, 0.0, 2.0)
    g = illinois_steps(0.0, 2.0)
    x, xs = next(g), []
    try:
        while True:
            xs.append(x)
            x = g.send(f(x))
    except StopIteration as stop:
        s = stop.value
    assert (s.x, s.lo, s.hi, s.iterations) == (r.x, r.lo, r.hi, r.iterations) == (s.x, s.lo, s.hi, len(xs))
    assert abs(s.x - math.log1p(0.3)) < 1e-13
    g = illinois_steps(0.0, 2.0)
    next(g)
    with pytest.raises(Exception, match="NaN"):
        g.send(float("nan"))


@pytest.mark.parametrize("seed", [0, 1])
def test_blanket_renyi_sums_by_blocks_are_the_per_order_sums(seed):
    """``BlanketPair.rdp`` sums every order's two log-sum-exps in one block; each row is the
    order's own sum (the per-order loop it replaced, frozen here), bit for bit."""
    from scipy import special
    rng = np.random.default_rng(seed)
    for K in (3, 40, 145, 400):
        g = np.sort(rng.normal(0.0, 0.5, K))
        lq = np.log(rng.dirichlet(np.ones(K)))
        lam = np.concatenate([[1.0001, 1.5, 2.0], np.geomspace(2.5, 4096, 300)])
        old = np.empty(lam.size)
        for i, a in enumerate(lam):
            f = special.logsumexp(lq + a * g)
            r = special.logsumexp(lq + (1.0 - a) * g)
            old[i] = max(f, r, 0.0) / (a - 1.0)
        new = np.empty(lam.size)
        for s in range(0, lam.size, B._RDP_BLOCK):
            a = lam[s:s + B._RDP_BLOCK]
            f = special.logsumexp(lq + a[:, None] * g, axis=1)
            r = special.logsumexp(lq + (1.0 - a)[:, None] * g, axis=1)
            new[s:s + a.size] = np.maximum(np.maximum(f, r), 0.0) / (a - 1.0)
        assert np.array_equal(old, new)
    # and the pair's own method on a real curve equals the frozen loop
    mech = sd.RandomizedResponse(1.0, 4)
    pair = B.BlanketPair(mech, 10 ** 6, 1.0)
    g, _, lq, _ = B._fdp(mech, 10 ** 6, 1.0)
    lam = np.array([2.0, 3.5, 17.0, 600.0])
    ref = [max(special.logsumexp(lq + a * g), special.logsumexp(lq + (1.0 - a) * g), 0.0) / (a - 1.0)
           for a in lam]
    from shuffledp.numerics import round_up
    assert np.array_equal(pair.rdp(lam), round_up(np.minimum(np.array(ref), 1.0) + 1e-15))
