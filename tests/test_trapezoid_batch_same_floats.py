"""Batched node bands and sums give the same floats as one at a time.

``lattice_fourier._bands`` evaluates the node bands of many Fourier inversions in one array
(rows with their own atoms and constants); ``iid.positive_parts`` and the blanket curve's
``_max_over_pairs_many`` run many certified sums side by side on it. Checked against a
frozen copy of the one-band code as it was before batching (below), and the batch against
the one-at-a-time drivers, bit for bit, on random inputs and on blanket curve points.
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
