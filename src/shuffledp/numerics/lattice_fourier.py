r"""Certified Σ_{s≥1} w_s·Q(s) for the n-fold convolution Q of a sparse lattice law, by a
trapezoid Fourier inversion on the few frequencies where Q's characteristic function lives.

Set-up (``pairs.iid.positive_part`` after its lattice spread and tilt): q_l ≥ 0 at integer
positions j_l (l = 1 … L, a handful of atoms), Q = q^{*n}, weights w_t = h·t·e^{−φt} for
t ≥ 1 (φ > 0). With F(θ) = Σ_l q_l e^{iθ j_l} and

    W(θ) = Σ_{t≥1} w_t e^{−iθt} = h·r/(1 − r)²,   r = e^{−φ−iθ},

the M-point trapezoid rule on the circle (θ_k = 2πk/M)

    S_M = (1/M) Σ_{k=0}^{M−1} F(θ_k)^n W(θ_k) = Σ_s Q(s) Σ_{t≥1, t ≡ s (mod M)} w_t

is a sum of non-negative terms, one of which (t = s) is the wanted T = Σ_{s≥1} w_s Q(s):
S_M ≥ T for every M, and S_M − T only counts Q-mass at distance ≈ M from Q's centre and
weights w_t at t ≥ M (M is chosen so that both are far below the rounding of T; either way
the excess is on the safe side). No window and no tail charge are needed: the weights are
summed to infinity in closed form.

Only frequencies near 0 matter once n is large: for |θ| ≤ π/D (D = max j − min j)
every |θ(j_a − j_b)| ≤ π and 1 − cos y ≥ 2y²/π², so

    |F(θ)|² = s² − Σ_{a<b} 2 q_a q_b (1 − cos θ(j_a − j_b)) ≤ s² − (4/π²) θ² V,

s = Σ q, V = Σ_{a<b} q_a q_b (j_a − j_b)²; for π/D ≤ |θ| ≤ π the same identity is bounded on
intervals (each 1 − cos θd takes its minimum over an interval at an end, or is 0 where the
interval holds a zero), bisected until the bound is small enough. So the nodes with
|θ_k| ≤ θ_a are summed (g(−θ) = conj g(θ): k = 0 … k_B) and the others are charged at most
sup_{θ ≥ θ_a} |F(θ)|^n·|W(θ)| (|W| decreases on [0, π]). A few hundred nodes times a
handful of atoms replace an FFT of ~10⁶ points, at any n.

Floating point, bounded per node and charged: the angles are reduced from integers
((k·j_l) mod M), 1 − F = (1 − s) + Σ q_l (2 sin²(x_l/2) − i sin x_l) is summed without
cancellation (x_l reduced to (−π, π], sin taken from π − |x| beyond π/2), log F from it
(log1p), F^n = exp(n·log F); the error of each node's F bounds the error of its power
through log F, and the summation error is charged on Σ|g_k|.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._parallel import parallel, pmap, threads
from .steps import run_steps

__all__ = ["trapezoid_positive_sum", "trapezoid_steps", "STEPS", "ATOMS_MAX", "NODES_MAX"]

_U = 2.0 ** -53
_TWO_PI = 2.0 * math.pi
#: At most this many atoms (the interval bound works on their pairwise differences).
ATOMS_MAX = 256
#: At most this many summed nodes (k = 0 … k_B); beyond it the caller uses its FFT.
NODES_MAX = 400_000
#: Every node is summed (no remainder to bound) when nodes × atoms is at most this.
FULL_WORK = 1 << 17
#: The charge for the nodes not summed must stay below this fraction of the sum.
REMAINDER_TOL = 1e-13
#: Interval bound: pieces of [θ_b, π] to start with, bisection rounds, and intervals in all.
_PIECES = 64
_DEPTH = 48
_INTERVALS_MAX = 20_000
#: A bad interval at most this many node spacings wide has its nodes summed; at most
#: ``_PEAKS_MAX`` such nodes in all.
_PEAK_NODES = 32
_PEAKS_MAX = 200_000
#: Block of nodes × atoms evaluated at once (memory).
_BLOCK = 1 << 18


def _sin_c2(r: np.ndarray, M: int):
    """(sin x, 2 sin²(x/2) = 1 − cos x) for x = 2π r/M, r integers in (−M/2, M/2], each
    with relative error ≤ 8u: x itself carries ≤ 3u relative, and sin is taken of π − |x|
    (computed from the integer M − 2|r|) where |x| > π/2, so both arguments stay in
    [−π/2, π/2] where y·cot y ≤ 1."""
    x = r * (_TWO_PI / M)
    ar = np.abs(r)
    far = 4 * ar > M
    # each element's sine from the one argument it uses (a sine costs ~20 ns: the other
    # argument's was a third of the work), elementwise the same floats as over all of them
    if far.any():
        s = np.empty(x.shape)
        near = ~far
        s[near] = np.sin(x[near])
        Mf = np.broadcast_to(M, r.shape)[far] if np.ndim(M) else M
        s[far] = np.sign(r[far]) * np.sin((Mf - 2 * ar[far]) * (math.pi / Mf))
    else:
        s = np.sin(x)                    # no far element (the common case: small k·j)
    h = np.sin(0.5 * x)
    return s, 2.0 * h * h


def _reduce(k: np.ndarray, j: np.ndarray, M) -> np.ndarray:
    """(k·j) mod M in (−M/2, M/2], exactly (int64: |k·j| < 2⁶³ is checked by the caller);
    ``j`` one row of positions for every k, or a row per k (then ``M`` one per k)."""
    if j.ndim == 1:
        r = np.mod(np.multiply.outer(k, j), M)
        return np.where(2 * r > M, r - M, r)
    Mc = np.asarray(M)[:, None]
    r = k[:, None] * j
    if np.all(Mc & 1):
        # M odd (always, from ``trapezoid_steps``): the residue in (−M/2, M/2] is
        # ((k·j + h) mod M) − h with h = (M − 1)/2, the same integers in three passes in place
        # (|k·j| + h < 2⁶³ as above)
        h = Mc >> 1
        r += h
        np.mod(r, Mc, out=r)
        r -= h
        return r
    np.mod(r, Mc, out=r)
    return np.where(2 * r > Mc, r - Mc, r)


def _W(k: np.ndarray, M, hem, em, a0, sc=None):
    """(W(θ_k), |W(θ_k)|) for θ_k = 2πk/M, 0 ≤ k ≤ M/2: W = h·e^{−φ}·e^{−iθ}·(a − ib)²/(a² + b²)²
    with 1 − r = a + ib, a = (1 − e^{−φ}) + 2e^{−φ} sin²(θ/2), b = e^{−φ} sin θ (each a sum of
    non-negative terms: relative error ≤ 40u for the complex value). ``hem`` = h·e^{−φ},
    ``em`` = e^{−φ}, ``a0`` = 1 − e^{−φ} (scalars, or one per k with ``M``); ``sc``:
    ``_sin_c2(k, M)`` when the caller has it."""
    s, c2 = _sin_c2(k, M) if sc is None else sc
    a = a0 + em * c2
    b = em * s
    den = a * a + b * b
    cos = 1.0 - c2
    num = (a * a - b * b) - 2j * a * b
    W = hem * (cos - 1j * s) * num / (den * den)
    return W, hem / den


def trapezoid_positive_sum(j, q, n: int, h: float, phi: float, centre: float, sd: float,
                           work_max: float = math.inf):
    """Certified upper value of T = Σ_{s≥1} h·s·e^{−φs}·Q(s), Q = q^{*n} (see the module
    docstring), or None when this method declines (too many atoms, a degenerate law, too
    many nodes, or |F| not provably small away from 0 — the caller then uses its FFT).

    ``j``: integer positions (int64), ``q``: their probabilities (> 0, taken as exact),
    ``centre``/``sd``: mean and standard deviation of one q-draw in lattice units (they
    size M; any values give a valid bound). ``work_max``: decline when the nodes to sum
    times the atoms would exceed it (the caller's FFT is then cheaper). Returns (upper,
    details). ``trapezoid_steps`` is the same computation as a step generator
    (``numerics.steps``), for callers that run many of them side by side.
    """
    return run_steps(trapezoid_steps(j, q, n, h, phi, centre, sd, work_max), STEPS)


def trapezoid_steps(j, q, n: int, h: float, phi: float, centre: float, sd: float,
                    work_max: float = math.inf):
    """``trapezoid_positive_sum`` as a generator: it yields each piece of work, ("band",
    ``_band``'s arguments) or ("rem", ``_remainder_log``'s), receives its result, and
    returns the sum's."""
    j = np.asarray(j, dtype=np.int64)
    q = np.asarray(q, dtype=float)
    nnz = q.size
    n = int(n)
    if nnz < 2 or nnz > ATOMS_MAX or not phi > 0.0 or not h > 0.0:
        return None
    # the extreme positions as Python ints (a handful of atoms: three array reductions cost
    # more than the list), the same integers
    jl = j.tolist()
    j_hi, j_lo = max(jl), min(jl)
    D = j_hi - j_lo
    if D <= 0:
        return None
    ql = q.tolist()
    sq = math.fsum(ql)
    e1 = sq - 1.0                      # exact (Sterbenz) for sq in [0.5, 2]
    e2 = e1 * (2.0 + e1)               # s² − 1
    e2_up = e2 + 4.0 * _U * abs(e2) + 1e-300
    # V = s Σ q (j − c)² − (Σ q (j − c))² = Σ_{a<b} q_a q_b (j_a − j_b)², from below
    if nnz < 8:
        # on the lists: numpy sums fewer than 8 terms in order from 0.0, and its elementwise
        # products and differences are these (the ints exact as floats), the same floats
        # without ten calls on tiny arrays
        s1 = 0.0
        for a, b in zip(ql, jl):
            s1 += a * b
        c = s1 / sq
        s2 = s3 = 0.0
        for a, b in zip(ql, jl):
            t = a * (b - c)
            s2 += t * (b - c)
            s3 += t
        V = (sq * s2 - s3 ** 2) * (1.0 - 1e-10)
    else:
        # (np.add.reduce: np.sum of an array without its argument handling, the same sums)
        jc = j - float(np.add.reduce(q * j) / sq)
        V = ((sq * float(np.add.reduce(q * jc * jc)) - float(np.add.reduce(q * jc)) ** 2)
             * (1.0 - 1e-10))
    if not V > 0.0:
        return None
    # M odd: nodes k and M − k are conjugate, no self-conjugate node at θ = π.
    sig_q = math.sqrt(n) * max(sd, math.sqrt(V / sq))
    half = int(math.ceil(max(abs(n * centre) + 14.0 * sig_q + D + 10.0, 20.0 / phi)))
    M = 2 * half + 1
    if M > 2 ** 62 // max(j_hi, -j_lo, 1) // 4:
        return None
    m = half                           # nodes 1 … m, each with its conjugate
    # every node when that is cheap (no remainder to bound) — and within ``work_max``: a
    # short inversion (small n) would otherwise decline where a band and a remainder do
    full = (m + 1) * nnz <= min(FULL_WORK, work_max)
    X = 80.0
    for _attempt in range(3):
        # nodes k ≤ k_B: the quadratic bound is e^{−X}-small at θ_a = 2π(k_B + 1)/M
        theta_a = math.pi * math.sqrt(X / (2.0 * n * V / (sq * sq)))
        kB = m if full else min(m, max(1, int(math.ceil(theta_a * M / _TWO_PI))))
        if kB + 1 > NODES_MAX or (kB + 1) * nnz > work_max:
            return None
        S, err, _ = yield ("band", (j, q, n, h, phi, M, np.arange(kB + 1, dtype=np.int64), sq))
        if not S > 0.0:
            return None
        nodes = kB + 1
        if kB >= m:
            rem, lrem = 0.0, -math.inf
        else:
            lS_target = math.log(REMAINDER_TOL * S)
            got = yield ("rem", (j, q, n, h, phi, M, kB, sq, e2_up, V, D, lS_target,
                                 work_max))
            if got is None:
                return None
            lrem, peaks = got
            if (kB + 1 + peaks.size) * nnz > work_max:
                return None
            if peaks.size:
                # near-periods of the atoms (|F| close to 1 away from 0): their nodes summed
                S2, err2, _ = yield ("band", (j, q, n, h, phi, M, peaks, sq))
                S, err, nodes = S + S2, err + err2, nodes + peaks.size
            rem = math.exp(lrem) if lrem > -745.0 else 0.0
        if rem <= REMAINDER_TOL * max(S, 0.0):
            upper = (S + err + rem) * (1.0 + 4.0 * _U)
            return upper, {"method": "trapezoid", "nodes": nodes, "M": M, "main": S,
                           "node_error": err, "remainder": rem, "atoms": nnz}
        X *= 2.0
    return None


def _band(j, q, n, h, phi, M, ks, sq):
    """(S, err, Σ|g|): the trapezoid sum's part over the nodes ``ks`` (distinct, in
    0 … (M − 1)/2; each k > 0 with its conjugate M − k) and its certified floating-point
    error."""
    return _bands([(j, q, n, h, phi, M, ks, sq)])[0]


def _bands(jobs) -> list:
    """``_band`` of each job (j, q, n, h, phi, M, ks, sq), in one batch: the nodes of jobs
    with the same number of atoms form one array of nodes × atoms (each row with its own
    job's atoms and constants, the constants computed per job as scalars), so every
    elementwise operation and every row's sum over the atoms is the one a job alone gets;
    each job's sums over its nodes are taken block by block (``_BLOCK``) as alone."""
    out = [None] * len(jobs)
    groups: dict = {}
    for i, jb in enumerate(jobs):
        groups.setdefault(jb[1].size, []).append(i)
    for nnz, idx in groups.items():
        step = max(1, _BLOCK // nnz)
        # segments: (job, first node, last node + 1), one per block of one job, in order
        segs = [(i, k0, min(k0 + step, jobs[i][6].size)) for i in idx
                for k0 in range(0, jobs[i][6].size, step)]
        acc = {i: [0.0, 0.0, 0.0] for i in idx}
        chunks, c0 = [], 0
        while c0 < len(segs):
            c1, rows = c0, 0
            while c1 < len(segs) and (c1 == c0 or rows + segs[c1][2] - segs[c1][1] <= step):
                rows += segs[c1][2] - segs[c1][1]
                c1 += 1
            chunks.append(segs[c0:c1])
            c0 = c1
        # each segment's sums are its own (row-wise operations, sums over its rows), so the
        # chunks may be cut at any segment and evaluated on the thread pool in pieces
        chunks = _split_for_threads(chunks, lambda sg: (sg[2] - sg[1]) * nnz)
        for chunk, sums in zip(chunks, pmap(lambda c: _band_rows(jobs, c, nnz), chunks)):
            for (i, _, _), (t, e, g) in zip(chunk, sums):
                a = acc[i]
                a[0] += t
                a[1] += e
                a[2] += g
        for i in idx:
            total, err, gabs = acc[i]
            M, ks = jobs[i][5], jobs[i][6]
            if not (math.isfinite(total) and math.isfinite(err)):
                out[i] = (0.0, math.inf, math.inf)
                continue
            S = total / M
            err = err / M * (1.0 + 4.0 * _U) + (ks.size + 4.0) * _U * gabs / M * 1.01
            out[i] = (S, err, gabs / M)
    return out


#: Elements (rows × atoms or differences) from which a batch's array work is cut in pieces
#: for the thread pool (``_split_for_threads``): about a millisecond of numpy work each.
_THREAD_MIN = 40_000


def _split_for_threads(groups, size):
    """``groups`` (lists of items evaluated in one array each) with each large group cut
    into ``threads()`` consecutive pieces of about equal ``size`` (the sum of ``size(item)``),
    in order, when the pool can run them side by side and every piece has at least
    ``_THREAD_MIN`` of it; unchanged otherwise. Items stay whole and in order."""
    k = threads()
    if k < 2 or not parallel():
        return groups
    out = []
    for g in groups:
        sizes = [size(x) for x in g]
        total = sum(sizes)
        parts = min(k, len(g), int(total // _THREAD_MIN))
        if parts < 2:
            out.append(g)
            continue
        cut = total / parts
        bounds, acc, want = [0], 0, 1
        for i, s_ in enumerate(sizes):
            acc += s_
            if want < parts and acc >= want * cut and i + 1 < len(g):
                bounds.append(i + 1)
                want += 1
        bounds.append(len(g))
        out.extend(g[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a)
    return out


def _row_sums(A: np.ndarray) -> np.ndarray:
    """``np.sum(A, axis=1)``, the same floats: a row of fewer than 8 terms is summed by numpy
    in order from 0.0 (its pairwise sum starts with 8-term blocks), here one column at a
    time (numpy's reduction over a short row costs ~15 ns a row, a column's add ~1 ns an
    element); longer rows by numpy."""
    n = A.shape[1]
    if n >= 8 or n == 0:
        return np.sum(A, axis=1)
    acc = A[:, 0] + 0.0
    for c in range(1, n):
        acc += A[:, c]
    return acc


def _per_row(vals, lens, dtype=float):
    """One value per job, repeated over that job's rows (``lens``) of a batch."""
    return np.repeat(np.asarray(vals, dtype=dtype), lens)


def _band_rows(jobs, segs, nnz):
    """[(Σ wts·Re g, Σ wts·e_node, Σ wts·|Re g|)] of each segment (job, k0, k1): its nodes
    ks[k0:k1] evaluated in one array with the other segments' (``_bands``)."""
    lens = [k1 - k0 for _, k0, k1 in segs]
    k = np.concatenate([jobs[i][6][k0:k1] for i, k0, k1 in segs])

    def per_row(vals, dtype=float):
        return _per_row(vals, lens, dtype)

    Q = np.repeat(np.stack([jobs[i][1] for i, _, _ in segs]), lens, axis=0)
    Mi = per_row([jobs[i][5] for i, _, _ in segs], np.int64)
    # the angles depend on (positions, M, nodes) only, which many jobs of a curve share (the
    # same lattice, other probabilities): their sines are taken once per distinct segment and
    # each row gets its distinct segment's, the same floats elementwise
    first: dict = {}
    uniq, which, lats = [], [], {}
    for sg in segs:
        jb = jobs[sg[0]]
        lat = (jb[0].tobytes(), jb[5])
        u = first.setdefault(lat + (jb[6][sg[1]:sg[2]].tobytes(),), len(uniq))
        if u == len(uniq):
            uniq.append(sg)
            lats.setdefault(lat, []).append(u)
        which.append(u)
    if len(uniq) == len(segs):
        J = np.repeat(np.stack([jobs[i][0] for i, _, _ in segs]), lens, axis=0)
        r = _reduce(k, J, Mi)
        s, c2 = _sin_c2(r, Mi[:, None])
        sck = _sin_c2(k, Mi)
    else:
        if len(lats) == len(uniq):
            # one node set per lattice (the first band of a curve): the distinct segments
            bks = [jobs[i][6][k0:k1] for i, k0, k1 in uniq]
            bj = [jobs[i][0] for i, _, _ in uniq]
            bM = [jobs[i][5] for i, _, _ in uniq]
            ustart = np.cumsum([b.size for b in bks]) - np.array([b.size for b in bks])
            w = np.asarray(which)
            lens_a = np.asarray(lens)
            # row of each batch row in the distinct segments' arrays
            rows = (np.repeat(ustart[w] - (np.cumsum(lens_a) - lens_a), lens_a)
                    + np.arange(lens_a.sum()))
        else:
            # several node sets on a lattice (the near-period nodes of jobs with other
            # probabilities, mostly the same nodes): their union, each segment's rows found in it
            bks, bj, bM, at = [], [], [], [None] * len(uniq)
            base = 0
            for lat, us in lats.items():
                i0 = uniq[us[0]][0]
                if len(us) == 1:
                    i, k0, k1 = uniq[us[0]]
                    ks_u = jobs[i][6][k0:k1]
                    at[us[0]] = base + np.arange(k1 - k0)
                else:
                    ks_u = np.unique(np.concatenate([jobs[i][6][k0:k1]
                                                     for i, k0, k1 in (uniq[u] for u in us)]))
                    for u in us:
                        i, k0, k1 = uniq[u]
                        at[u] = base + np.searchsorted(ks_u, jobs[i][6][k0:k1])
                bks.append(ks_u)
                bj.append(jobs[i0][0])
                bM.append(jobs[i0][5])
                base += ks_u.size
            rows = np.concatenate([at[u] for u in which])
        blens = [b.size for b in bks]
        ku = np.concatenate(bks)
        Ju = np.repeat(np.stack(bj), blens, axis=0)
        Mu = _per_row(bM, blens, np.int64)
        su, c2u = _sin_c2(_reduce(ku, Ju, Mu), Mu[:, None])
        sku, c2ku = _sin_c2(ku, Mu)
        s, c2 = su.take(rows, axis=0), c2u.take(rows, axis=0)
        sck = (sku.take(rows), c2ku.take(rows))
    n = per_row([float(jobs[i][2]) for i, _, _ in segs])
    e0 = per_row([1.0 - jobs[i][7] for i, _, _ in segs])           # 1 − s, error ≤ u
    # W's constants, per job as scalars (math.exp / expm1, as for one job)
    ems = [math.exp(-jobs[i][4]) for i, _, _ in segs]
    em = per_row(ems)
    a0 = per_row([-math.expm1(-jobs[i][4]) for i, _, _ in segs])
    hem = per_row([jobs[i][3] * e for (i, _, _), e in zip(segs, ems)])
    a_re = _row_sums(c2 * Q)                   # Σ q 2sin²(x/2) ≥ 0 (no BLAS: tiny products)
    im_f = _row_sums(s * Q)                                      # Im F = Σ q sin x
    a_im = _row_sums(np.abs(s) * Q)
    reD = e0 + a_re
    # |1 − D̂ − (1 − D)| ≤ E_D: relative 8u per term, (nnz) u for the sums, u for 1 − s
    ED = (nnz + 12.0) * _U * (a_re + a_im) * 1.01 + 2.0 * _U
    re_f = 1.0 - reD
    z = im_f * im_f - reD * (2.0 - reD)                          # |F|² − 1
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
    W, absW = _W(k, Mi, hem, em, a0, sck)
    g = Fn * W
    gre = np.where(ok, g.real, 0.0)
    # per-node error: the power's (from log F) and W's, first order with margin; a node
    # whose |F̂| is within 2·E_D of 0 is not summed and charged (|F| + E_D)^n·|W|
    with np.errstate(over="ignore", invalid="ignore"):
        e_node = np.where(ok, mag * absW * (np.expm1(np.minimum(eps, 700.0)) + 50.0 * _U)
                          * (1.0 + 1e-6),
                          np.exp(n * np.log(absF + ED)) * absW * (1.0 + 1e-6))
    wts = np.where(k == 0, 1.0, 2.0)
    # the three weighted rows in one array: each segment's three sums in one reduction over
    # its columns (each row's the pairwise sum of that row's slice alone, the same floats)
    T3 = np.empty((3, k.size))
    np.multiply(wts, gre, out=T3[0])
    np.multiply(wts, e_node, out=T3[1])
    np.multiply(wts, np.abs(gre), out=T3[2])
    out, o = [], 0
    add = np.add.reduce
    for m in lens:
        out.append(tuple(add(T3[:, o:o + m], axis=1).tolist()))
        o += m
    return out


def _remainder_log(j, q, n, h, phi, M, kB, sq, e2_up, V, D, l_target, work_max=math.inf):
    """(log of an upper bound on sup |F(θ)|^n·|W(θ)| over θ ∈ [θ_a, π] outside the returned
    node intervals, those nodes): θ_a = 2π(kB + 1)/M; the bound covers every other node in
    kB + 1 … (M − 1)/2 and their conjugates together (their weights sum to < 1). Intervals
    where the bound stays above e^{l_target} are bisected down to ``_PEAK_NODES`` nodes and
    their nodes returned, to be summed (near-periods of the atoms, where |F| comes back
    close to 1). None when that takes more than ``_INTERVALS_MAX`` intervals (or intervals
    times distinct differences above ``work_max``) or ``_PEAKS_MAX`` nodes.
    ``_remainders`` does many at once."""
    return _remainders([(j, q, n, h, phi, M, kB, sq, e2_up, V, D, l_target, work_max)])[0]


def _log_absW(theta, a02, fem, lhem):
    """log |W(θ)| from above: |W| = h e^{−φ}/|1 − r|², |1 − r|² = (1 − e^{−φ})² +
    4e^{−φ} sin²(θ/2) from below; ``a02`` = (1 − e^{−φ})², ``fem`` = 4e^{−φ},
    ``lhem`` = log(h e^{−φ}) (per job, or per row with θ)."""
    den = a02 + fem * np.sin(0.5 * theta) ** 2
    return lhem - np.log(den * (1.0 - 16.0 * _U))


def _log_pow(one_minus, e2_up, half_n):
    """(n/2)·log(s² − x) with x = ``one_minus``, rounded up (``half_n`` = n/2)."""
    arg = e2_up - one_minus
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(arg > -1.0, np.log1p(np.maximum(arg, -1.0)), -np.inf)
    v = np.where(v < 0.0, v * (1.0 - 1e-10), v * (1.0 + 1e-10) + 1e-300)
    return half_n * v


class _Rem:
    """One ``_remainder_log`` job's state in ``_remainders``."""

    __slots__ = ("i", "q", "M", "kB", "work_max", "out", "lo", "hi", "c", "dd", "evaluated",
                 "peak_lo", "peak_hi", "e2", "hn", "a02", "fem", "lhem", "lt", "peak_w")


def _remainders(jobs) -> list:
    """``_remainder_log`` of each job (j, q, n, h, phi, M, kB, sq, e2_up, V, D, l_target,
    work_max), side by side: each round of every job's bisection evaluated in one array
    (jobs with the same number of distinct atom differences together; each row with its own
    job's constants, computed per job as scalars), the same elementwise operations and
    row sums as one job alone, so the same floats."""
    res: list = [None] * len(jobs)
    states, first = [], []
    for i, (j, q, n, h, phi, M, kB, sq, e2_up, V, D, l_target, work_max) in enumerate(jobs):
        theta_a = _TWO_PI * (kB + 1) / M * (1.0 - 4.0 * _U)
        theta_D = math.pi / D * (1.0 - 4.0 * _U)
        em = math.exp(-phi)
        st = _Rem()
        st.i, st.q, st.M, st.kB, st.work_max = i, q, M, kB, work_max
        st.e2, st.hn = e2_up, 0.5 * n
        st.a02, st.fem, st.lhem = (-math.expm1(-phi)) ** 2, 4.0 * em, np.log(h * em)
        st.lt, st.peak_w = l_target, _PEAK_NODES * (_TWO_PI / M)
        st.out, lo_ii = -math.inf, theta_a
        if theta_a < theta_D:
            # region (i): quadratic bound at θ_a (it decreases in θ, as does |W|)
            first.append((st, theta_a, (4.0 / math.pi ** 2) * theta_a * theta_a * V
                          * (1.0 - 1e-12)))
            lo_ii = theta_D
        if lo_ii >= math.pi:
            res[i] = st                         # finished after region (i)
            continue
        st.lo = lo_ii
        states.append(st)
    if first:
        th = np.array([f[1] for f in first])
        x = np.array([f[2] for f in first])
        v = (_log_pow(x, np.array([f[0].e2 for f in first]), np.array([f[0].hn for f in first]))
             + _log_absW(th, np.array([f[0].a02 for f in first]),
                         np.array([f[0].fem for f in first]),
                         np.array([f[0].lhem for f in first])))
        for f, val in zip(first, v.tolist()):
            f[0].out = val
    for i, st in enumerate(res):
        if isinstance(st, _Rem):
            res[i] = (st.out, np.zeros(0, dtype=np.int64))
    if not states:
        return res
    # region (ii): pairwise differences, grouped per job (jobs with the same atom count
    # together: the keys (row, difference) sort and accumulate as each job's own would)
    by_nnz: dict = {}
    for st in states:
        by_nnz.setdefault(st.q.size, []).append(st)
    for nnz, group in by_nnz.items():
        a, b = np.triu_indices(nnz, 1)
        J = np.stack([jobs[st.i][0] for st in group])
        Q = np.stack([st.q for st in group])
        d_all = np.abs(J[:, a] - J[:, b])
        c_all = 2.0 * Q[:, a] * Q[:, b]
        span = int(d_all.max()) + 1
        key = np.arange(len(group), dtype=np.int64)[:, None] * span + d_all
        u, inv = np.unique(key.ravel(), return_inverse=True)
        c = np.bincount(inv.ravel(), weights=c_all.ravel()) * (1.0 - 1e-12)
        row = u // span
        cuts = np.searchsorted(row, np.arange(len(group) + 1))
        for g, st in enumerate(group):
            st.c = c[cuts[g]:cuts[g + 1]]
            st.dd = (u[cuts[g]:cuts[g + 1]] - g * span).astype(float)
    edges = np.linspace(np.array([st.lo for st in states]), math.pi, _PIECES + 1)
    for s_i, st in enumerate(states):
        lo, hi = edges[:-1, s_i].copy(), edges[1:, s_i].copy()
        lo[0] = st.lo
        hi[-1] = math.pi * (1.0 + 4.0 * _U)
        st.lo, st.hi, st.evaluated, st.peak_lo, st.peak_hi = lo, hi, 0, [], []
    active = states
    for _ in range(_DEPTH):
        go = []
        for st in active:
            st.evaluated += st.lo.size
            if st.evaluated > _INTERVALS_MAX or st.evaluated * st.dd.size > st.work_max:
                res[st.i] = None
            else:
                go.append(st)
        by_d: dict = {}
        for st in go:
            by_d.setdefault(st.dd.size, []).append(st)
        active = []
        # each job's round is its own rows (the same floats in any grouping): large groups
        # are cut in pieces and evaluated on the thread pool, in order
        pieces = _split_for_threads(list(by_d.values()),
                                    lambda st: st.lo.size * st.dd.size)
        for nxt in pmap(lambda g: _rem_round(g, res), pieces):
            active.extend(nxt)
        if not active:
            return res
    for st in active:
        res[st.i] = None
    return res


def _one_minus_cos_min(group) -> np.ndarray:
    """Rows of min over each interval [lo, hi] of the jobs in ``group`` (the same number of
    distinct differences) of 1 − cos(θd), from below, one column per difference d."""
    lens = [st.lo.size for st in group]
    LO = np.concatenate([st.lo for st in group])
    HI = np.concatenate([st.hi for st in group])
    DD = np.repeat(np.stack([st.dd for st in group]), lens, axis=0)
    # the same operations as Y0 = LO·DD·(1 − 4u), t0 = Y0/2π·(1 − 1e-12) − 1e-12, … in place
    Y0 = LO[:, None] * DD
    Y0 *= 1.0 - 4.0 * _U
    Y1 = HI[:, None] * DD
    Y1 *= 1.0 + 4.0 * _U
    t0 = Y0 / _TWO_PI
    t0 *= 1.0 - 1e-12
    t0 -= 1e-12
    t1 = Y1 / _TWO_PI
    t1 *= 1.0 + 1e-12
    t1 += 1e-12
    has_zero = np.floor(t1, out=t1) >= np.ceil(t0, out=t0)
    # 1 − cos(θd) over the interval: 0 where it holds a multiple of 2π, else the smaller
    # end's 2 sin²(y/2) less its rounding. The sines (~17 ns each at these arguments) are
    # taken only where the interval holds no zero, elementwise as over the whole array.
    mn = np.zeros_like(Y0)
    live = ~has_zero
    y1 = Y1[live]
    m0 = np.square(np.sin(0.5 * Y0[live]))
    m1 = np.square(np.sin(0.5 * y1))
    m = 2.0 * np.minimum(m0, m1) - 4.0 * _U * y1 - 8.0 * _U
    mn[live] = np.maximum(m, 0.0)
    return mn


def _rem_round(group, res) -> list:
    """One bisection round of the jobs in ``group`` (the same number of distinct
    differences), in one array; finished jobs get their result in ``res``; the others are
    returned with their next intervals."""
    lens = [st.lo.size for st in group]
    LO = np.concatenate([st.lo for st in group])
    HI = np.concatenate([st.hi for st in group])

    def per_row(vals):
        return _per_row(vals, lens)

    C = np.repeat(np.stack([st.c for st in group]), lens, axis=0)
    # 1 − cos over the intervals depends on (intervals, differences) only, which many jobs of
    # a curve share (the same lattice and M, other probabilities): it is evaluated once per
    # distinct job of the group and each job's rows get their distinct job's, the same floats
    first: dict = {}
    uniq, which = [], []
    for st in group:
        u = first.setdefault((st.lo.tobytes(), st.hi.tobytes(), st.dd.tobytes()), len(uniq))
        if u == len(uniq):
            uniq.append(st)
        which.append(u)
    mn = _one_minus_cos_min(uniq)
    if len(uniq) < len(group):
        ulens = np.array([st.lo.size for st in uniq])
        lens_a = np.asarray(lens)
        w = np.asarray(which)
        rows = (np.repeat((np.cumsum(ulens) - ulens)[w] - (np.cumsum(lens_a) - lens_a), lens_a)
                + np.arange(lens_a.sum()))
        mn = mn.take(rows, axis=0)
    LB = _row_sums(mn * C) * (1.0 - 1e-12)
    lb = (_log_pow(LB, per_row([st.e2 for st in group]), per_row([st.hn for st in group]))
          + _log_absW(LO, per_row([st.a02 for st in group]), per_row([st.fem for st in group]),
                      per_row([st.lhem for st in group])))
    bad = lb > per_row([st.lt for st in group])
    narrow = bad & (HI - LO <= per_row([st.peak_w for st in group]))
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    good_max = np.maximum.reduceat(np.where(bad, -np.inf, lb), starts)
    any_narrow = np.logical_or.reduceat(narrow, starts)
    bad &= ~narrow
    any_bad = np.logical_or.reduceat(bad, starts)
    nxt = []
    for g, st in enumerate(group):
        st.out = max(st.out, float(good_max[g]))
        sl = slice(starts[g], starts[g] + lens[g])
        if any_narrow[g]:
            nw = narrow[sl]
            st.peak_lo.append(st.lo[nw])
            st.peak_hi.append(st.hi[nw])
        if not any_bad[g]:
            cap = min(_PEAKS_MAX, st.work_max / st.q.size - (st.kB + 1))
            ks = _nodes_in(st.peak_lo, st.peak_hi, st.M, st.kB, cap)
            res[st.i] = None if ks is None else (st.out, ks)
            continue
        bd = bad[sl]
        mid = 0.5 * (st.lo[bd] + st.hi[bd])
        st.lo = np.concatenate([st.lo[bd], mid])
        st.hi = np.concatenate([mid, st.hi[bd]])
        nxt.append(st)
    return nxt


#: The batched runner of each kind of step ``trapezoid_steps`` yields (``numerics.steps``).
STEPS = {"band": _bands, "rem": _remainders}


def _nodes_in(los, his, M, kB, cap=_PEAKS_MAX):
    """The nodes k with θ_k = 2πk/M in any of the intervals, kB < k ≤ (M − 1)/2, once each
    (None when more than ``cap``, counted before they are listed)."""
    if not los:
        return np.zeros(0, dtype=np.int64)
    lo = np.concatenate(los)
    hi = np.concatenate(his)
    a = np.maximum(np.floor(lo * M / _TWO_PI).astype(np.int64) - 1, kB + 1)
    b = np.minimum(np.ceil(hi * M / _TWO_PI).astype(np.int64) + 1, (M - 1) // 2)
    lens = np.maximum(b - a + 1, 0)
    count = int(lens.sum())
    if count > cap:
        return None
    # the union of the runs a … b, sorted and once each (what np.unique of every run's
    # nodes gives), from the runs merged in order of their starts: a sort of the runs
    # (tens) instead of their nodes (thousands), then listed without a Python loop
    live = lens > 0
    if not live.any():
        return np.zeros(0, dtype=np.int64)
    a, b = a[live], b[live]
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    reach = np.maximum.accumulate(b)
    new = np.ones(a.size, dtype=bool)
    new[1:] = a[1:] > reach[:-1] + 1                 # a gap before this run: a new block
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], a.size) - 1
    ra, rb = a[starts], reach[ends]
    rl = rb - ra + 1
    total = int(rl.sum())
    first = np.repeat(ra, rl)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(rl) - rl, rl)
    return first + within
