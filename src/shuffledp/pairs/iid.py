r"""Certified E[(G_1 + … + G_n)_+] for i.i.d. G with a finite atom distribution.

One engine for every bound of the form δ = E[(ΣG_i)_+]/n (the privacy blanket of
Balle–Bell–Gascón–Nissim, arXiv:1903.02837, in the GPARV form of Su–Cheng–Wang,
arXiv:2504.07414; the hidden-⊥ sampled clone pairs). Steps, each on the safe side:

1. **Lattice spread.** Every atom g is split onto the two neighbouring points of hℤ with
   the same mean (g = h(m + f) → h·m w.p. 1 − f, h(m+1) w.p. f). The spread variable is
   larger in convex order, so is the sum, and x ↦ x_+ is convex: the lattice value is an
   upper bound. It adds at most h²/4 variance per term and no drift (unlike rounding every
   atom up to a fixed grid, which overstates δ more and more as n grows). h = sd(G)/ν.
   Atoms are first moved up by their stated floating-point error (E(S_+) is
   non-decreasing in every atom).
2. **Exponential tilt.** With lattice coordinates j and M(φ) = E e^{φJ},
   P(S = s) = M(φ)^n e^{−φ s} Q_φ(s), Q_φ the n-fold law under the tilted atoms
   q_j e^{φ j}/M(φ). φ is the tilt that centres the tilted atoms (the saddle point), so
   Q_φ is concentrated within a few √n standard deviations of 0 and the weights
   h·s·e^{−φ s} of the positive part are bounded by h/(eφ).
3. **One FFT power** of the tilted atoms on a window of ±``sds`` standard deviations
   (``numerics.fft_power``: numpy's pocketfft on a 5-smooth length). Wrap-around only adds non-negative mass to the
   window's points.
4. **Tails** beyond the window: weight ≤ max_{s > W} h s e^{−φ s} times a Chernoff bound
   on P_Q(S > W) (any ψ > 0 is valid; the best on a grid is used).
5. **Floating point**, bounded a posteriori from the computed spectrum: the normwise
   FFT error ‖fl(F x) − F x‖₂ ≤ c·u·log₂L·‖F x‖₂ (Higham, *Accuracy and Stability of
   Numerical Algorithms*, 2nd ed., Thm 24.2; c = 10 here, covering pocketfft's mixed
   radices with margin), the n-th power's perturbation n·|η|(|F|+|η|)^{n−1} plus its own
   rounding, the inverse transform's, carried to the weighted sum by Cauchy–Schwarz;
   relative atom errors η enter as (1 + η)^n (all terms of the convolution are
   non-negative products of n atoms).

A sparse law (an atom at 0, at most three others drawn about λ ≤ ``SPARSE_MEAN`` times in
all) where these steps would take an FFT is summed exactly over its atoms' counts instead
(``_sparse_sum``: no lattice, Chernoff tails, every rounding charged).

``positive_part`` returns the certified upper value and the pieces of its error.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from ..core._lazy import special  # scipy.special on first use (import time)
from ..core._memo import memo
from ..core._parallel import parallel, pmap
from ..numerics import (circular_run, fft_power_product, fft_powers, next_fast_len,
                        run_steps, run_steps_many)
from ..numerics.steps import illinois_rows
from ..numerics import lattice_fourier as _lf
from ..numerics.lattice_fourier import trapezoid_steps

__all__ = ["SumBound", "positive_part", "positive_parts", "chernoff_positive_part",
           "chernoff_positive_parts", "exact_positive_part"]

_U = 2.0 ** -53
#: Largest lattice support of one atom distribution, and largest FFT (memory ~ 16 bytes each).
MAX_SUPPORT = 2_000_000
MAX_FFT = 1 << 26


@dataclass(frozen=True)
class SumBound:
    """Certified upper value of E[(G_1 + … + G_n)_+] and how it was obtained."""

    upper: float
    details: dict = field(default_factory=dict)


def _prep(values, probs, value_err):
    v = np.asarray(values, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    if v.shape != p.shape or v.size == 0:
        raise ValueError(f"values and probs must be non-empty arrays of equal length; got "
                         f"{v.size} and {p.size}")
    if not (np.isfinite(v).all() and np.isfinite(p).all()) or (p < 0).any():
        raise ValueError("values must be finite and probs finite and >= 0")
    s = float(p.sum())
    if not 0.999999 <= s <= 1.000001:
        raise ValueError(f"probs must sum to 1 (within 1e-6); got {s!r}")
    if value_err is None:
        e = np.zeros_like(v)
    else:
        e = np.asarray(value_err, dtype=float)
        if e.shape != v.shape:
            e = np.broadcast_to(e, v.shape)
    keep = p > 0
    return _moved_up(v[keep], e[keep]), p[keep]


#: The reductions of 1-D arrays called directly (``np.sum(a)`` is ``np.add.reduce(a)`` on an
#: array, after a few microseconds of argument handling; a curve has ~30 of them per sum).
_asum, _amax, _amin = np.add.reduce, np.maximum.reduce, np.minimum.reduce


def _prep_again(v, p):
    """``_prep(v, p, None)`` for atoms that came out of ``_prep`` (negated): every
    probability is positive and sums to 1 as checked there, so only the values' move and
    their finiteness (a move can overflow) remain; the same floats (``_moved_up`` with
    zero errors)."""
    if not np.isfinite(v).all():
        return _prep(v, p, None)                       # raises the error as before
    return _moved_up(v, np.zeros(v.size)), p


def _moved_up(v, e):
    """Every atom moved up by its stated error and by the rounding of what follows."""
    return v + e + 4.0 * _U * np.abs(v)


def chernoff_positive_part(values, probs, n: int, *, value_err=None) -> float:
    """Certified upper bound on E[(G_1 + … + G_n)_+] without a lattice or an FFT.

    x_+ ≤ e^{θx − 1}/θ for every x and θ > 0 (e^{y−1} ≥ y and ≥ 0), so
    E[S_+] ≤ M(θ)^n/(eθ), M(θ) = E e^{θG}; θ is optimised by a zooming grid search in
    log θ (any θ gives a valid bound). Looser than ``positive_part`` (by a factor of order
    √n·sd(G)·θ), but cheap: callers use it to decide that an exact sum cannot change a
    maximum. Atoms are moved up by their errors as in ``positive_part``, and the logarithm
    carries a rounding allowance of 16u per operation, n-fold. ``chernoff_positive_parts``
    does many atom sets in one vectorised search.
    """
    return float(chernoff_positive_parts([(values, probs, value_err)], n)[0])


def chernoff_positive_parts(atom_sets, n: int, points: int = 129,
                            passes: int = 4) -> np.ndarray:
    """``chernoff_positive_part`` of each (values, probs, value_err) in ``atom_sets`` (None:
    0), all at once: the grid search in log θ runs on one (sets × points × atoms) array,
    ``points`` per pass, each pass zoomed to the best point's neighbours (64x shorter)."""
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be an integer in [1, inf); got {n!r}")
    out = np.zeros(len(atom_sets))
    got = _prep_rows(atom_sets)
    if got is None:
        return out
    live, V, LP, size = got
    # every set's search is its own row (row-wise operations and reductions): large batches
    # are cut in two and searched on the thread pool, the same floats
    N = len(live)
    cuts = [0, N]
    if parallel() and N >= 2 and N * points * V.shape[1] >= _CHERNOFF_THREAD_MIN:
        cuts = [0, N // 2, N]
    pieces = pmap(lambda ab: _chernoff_rows(V[ab[0]:ab[1]], LP[ab[0]:ab[1]],
                                            size[ab[0]:ab[1]], n, points, passes),
                  list(zip(cuts[:-1], cuts[1:])))
    out[live] = np.concatenate(pieces)
    return out


#: Sets × grid points × atoms of a Chernoff batch from which it is split over two threads.
_CHERNOFF_THREAD_MIN = 200_000


def _chernoff_rows(V, LP, size, n: int, points: int, passes: int) -> np.ndarray:
    """``chernoff_positive_parts``' zooming grid search for the prepared rows (values,
    log-probabilities, atom counts): the bound of each row."""
    K = V.shape[1]
    span = np.max(np.abs(V), axis=1)
    lo = np.log(1e-6 / (span * math.sqrt(n)))
    hi = np.log(1e3 / span)
    rows = np.arange(V.shape[0])
    grid = np.linspace(0.0, 1.0, points)
    best_u, best_f = np.zeros(V.shape[0]), np.full(V.shape[0], np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        for _ in range(passes):
            U = lo[:, None] + (hi - lo)[:, None] * grid[None, :]
            # f(u) = n·log M(e^u) − u − 1, padded atoms have log-probability −inf
            if K <= 7:
                fs = _log_mgf_rows(LP, V, U)
                fs *= n
                fs -= U
                fs -= 1.0
            else:
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
    return np.where(np.isfinite(best_f), res, math.inf)     # never rounded down to 0


def _log_mgf_rows(LP, V, U):
    """top + log Σ_k exp(z_k − top), z_k = LP[:, k] + e^U·V[:, k], for every set (row) and
    grid point (column) — ``chernoff_positive_parts``' log M for at most 7 atoms, atom by
    atom on (sets × points) arrays: the same floats as the reductions over a trailing atom
    axis, which numpy sums left to right below 8 terms (max is exact in any order), at a
    tenth of their cost (a reduction over 4 contiguous numbers per output is slow)."""
    eU = np.exp(U)
    # the same operations written in place (IEEE sums and products commute): an atom at 0 in
    # every row has z = LP + e^U·0 = LP exactly (e^U is finite), so it is not formed
    zs = []
    for k in range(V.shape[1]):
        if not V[:, k].any():
            zs.append(LP[:, k, None])
            continue
        z = np.multiply(eU, V[:, k, None])
        z += LP[:, k, None]
        zs.append(z)
    top = np.broadcast_to(zs[0], U.shape).copy()
    for z in zs[1:]:
        np.maximum(top, z, out=top)
    acc = None
    for z in zs:
        d = np.subtract(z, top, out=z) if z.shape == top.shape else np.subtract(z, top)
        np.exp(d, out=d)
        if acc is None:
            acc = d
        else:
            acc += d
    np.log(acc, out=acc)
    acc += top
    return acc


def _prep_rows(atom_sets):
    """``_prep`` of every set (None: no atoms) at once, as padded rows for the Chernoff
    search: (indices of the sets with a positive atom, values (zeros past each set's
    atoms), log-probabilities (−inf there), atom counts), or None when no set has a
    positive atom. The same floats as ``_prep`` set by set (elementwise formulas); an
    invalid set is handed to ``_prep`` for its error."""
    idx, vs, ps, es = [], [], [], []
    for i, a in enumerate(atom_sets):
        if a is None:
            continue
        v, p = _vector(a[0]), _vector(a[1])
        if v.shape != p.shape or v.size == 0:
            _prep(*a)                                  # raises the set's error
        e = a[2] if len(a) > 2 else None
        idx.append(i)
        vs.append(v)
        ps.append(p)
        es.append(_err_row(e, v.size))
    if not idx:
        return None
    lens = np.array([v.size for v in vs])
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    v, p, e = np.concatenate(vs), np.concatenate(ps), np.concatenate(es)
    sums = np.add.reduceat(p, starts)
    bad = ~(np.isfinite(v) & np.isfinite(p)) | (p < 0)
    if np.any(bad) or np.any((sums < 0.999999) | (sums > 1.000001)):
        for i in idx:
            _prep(*atom_sets[i])                       # raises the first invalid set's error
    keep = p > 0
    which = np.repeat(np.arange(len(idx)), lens)[keep]
    vk = _moved_up(v[keep], e[keep])
    cnt = np.bincount(which, minlength=len(idx))
    top = np.full(len(idx), -np.inf)
    np.maximum.at(top, which, vk)
    live_r = np.flatnonzero(top > 0.0)
    if live_r.size == 0:
        return None
    K = int(cnt[live_r].max())
    pos = np.arange(which.size) - np.concatenate([[0], np.cumsum(cnt)[:-1]])[which]
    row = np.full(len(idx), -1)
    row[live_r] = np.arange(live_r.size)
    sel = row[which] >= 0
    V = np.zeros((live_r.size, K))
    LP = np.full((live_r.size, K), -np.inf)
    V[row[which][sel], pos[sel]] = vk[sel]
    LP[row[which][sel], pos[sel]] = np.log(p[keep][sel])
    return [idx[r] for r in live_r], V, LP, cnt[live_r].astype(float)


def _auto_nu(n: int) -> float:
    """Lattice resolution: fine where the FFT is cheap, ν = 20 (variance +1/1600) at n ≥ 1e6."""
    return float(min(40.0, max(20.0, 40.0 * (1e4 / n) ** 0.15)))


def positive_part(values, probs, n: int, *, value_err=None, nu: float | None = None,
                  sds: float = 7.0, split: bool | None = None,
                  _inner: bool = False) -> SumBound:
    """Certified upper bound on E[(G_1 + … + G_n)_+], G_i i.i.d. on ``values`` w.p. ``probs``.

    ``probs`` must sum to 1 (list the zero atom explicitly); ``value_err`` (optional, per
    atom or scalar) is an absolute error bound on the values as computed by the caller.
    ``nu`` sets the lattice step h = sd(G)/ν (default: 40 at n ≤ 1e4 down to 20 at
    n ≥ 1e6), ``sds`` the FFT window in standard
    deviations of the tilted sum. Never below the true value; the details give the
    lattice step, the tilt, the FFT and tail allowances included in ``upper``.
    ``split``: sum in two stages (blocks of ~√n terms, ``_two_stage``); default when the
    one-stage FFT would be longer than ``SPLIT_MIN_L``. From an FFT length of
    ``TRAPEZOID_MIN_L`` on, the sum is taken by Fourier inversion on the live frequencies
    instead (``_trapezoid``), with the FFT as the fallback; a sparse law that would take
    the FFT is summed over its counts (``_sparse_sum``); giving ``split`` (True or
    False) asks for the FFT engine itself. ``positive_parts`` does many at once.
    """
    return run_steps(_positive_part_steps(values, probs, n, value_err=value_err, nu=nu,
                                          sds=sds, split=split, _inner=_inner), _STEPS)


def positive_parts(atom_sets, n: int, *, nu: float | None = None) -> list:
    """``positive_part`` of each (values, probs, value_err) in ``atom_sets``, side by side:
    the Fourier inversions' node bands are summed in shared batches
    (``lattice_fourier.run_steps_many``) — the same floats as one at a time, without a few
    dozen numpy calls per set (at large n a set's own work is a few hundred nodes)."""
    fast = _lattices_many(atom_sets, n, nu)
    return run_steps_many([fast[i] if i in fast else
                           _positive_part_steps(v, p, n, value_err=e, nu=nu)
                           for i, (v, p, e) in enumerate(atom_sets)], _STEPS, defer=_DEFER)


def _lattices_many(atom_sets, n, nu) -> dict:
    """Step generators of ``positive_parts``' common sets, their prologue done in arrays:
    {index: generator at ``_lattice_steps``}. A set qualifies when ``_positive_part_steps``
    would take it to a lattice without a branch of its own: every probability positive, the
    checks of ``_prep`` passed, a positive atom, not a law for the sparse engine, more multisets than ``ENUMERATE_MAX``, a positive variance (and, reflected, a
    positive negated atom); the others (and any set with an error to raise) keep the
    generator. Sets with the same number of atoms are rows of one array: ``_prep``'s move,
    the mean and its reflection (``_prep_again``), the sd, the step h and the two-point
    spread are the same elementwise operations and the same row sums as for one set (numpy
    reduces a row as it reduces a vector), and the spread's ``bincount`` (additions in
    input order from 0) is replayed as ordered additions per lattice point (``_spread_rows``),
    so every lattice, hence every sum, is the float the generator computes alone."""
    n = int(n)
    if n < 2 or len(atom_sets) < 2:
        return {}
    nu = _auto_nu(n) if nu is None else nu
    split, nu_eff = _engine(n, nu, 7.0, None)
    groups: dict = {}
    for i, a in enumerate(atom_sets):
        v = a[0]
        if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype == float:
            groups.setdefault(v.size, []).append(i)
    out = {}
    for K, idx in groups.items():
        if K == 0 or len(idx) < 2 or math.comb(n + K - 1, n) <= ENUMERATE_MAX:
            continue
        try:
            P = np.stack([np.asarray(atom_sets[i][1], dtype=float).ravel() for i in idx])
            E = np.stack([_err_row(atom_sets[i][2], K) for i in idx])
        except ValueError:
            continue                                # a shape the generator reports
        if P.shape != (len(idx), K):
            continue
        V = np.stack([atom_sets[i][0] for i in idx])
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (np.isfinite(V).all(axis=1) & np.isfinite(P).all(axis=1)
                  & (P > 0.0).all(axis=1))
            s = np.add.reduce(P, axis=1)
            ok &= (0.999999 <= s) & (s <= 1.000001)
            V = _moved_up(V, E)
            ok &= np.isfinite(V).all(axis=1) & (np.maximum.reduce(V, axis=1) > 0.0)
        # the sparse engine's test (``_sparse_first``): decided here where the non-zero
        # atoms' mass alone is too large (below 8 atoms a row's sum is left to right, and
        # adding the zero atoms' 0.0 leaves every partial sum as it is), else by the test
        zero = V == 0.0
        nz = np.add.reduce(~zero, axis=1)
        maybe = zero.any(axis=1) & (nz <= SPARSE_ATOMS)
        if K < 8:
            maybe &= ~(n * np.add.reduce(np.where(zero, 0.0, P), axis=1) > SPARSE_MEAN)
        for r in np.flatnonzero(maybe & ok).tolist():
            ok[r] = not _sparse_first(V[r], P[r], n, nu, 7.0)
        rows = np.flatnonzero(ok)
        if rows.size < 2:
            continue
        V, P = V[rows], P[rows]
        mean = np.add.reduce(P * V, axis=1)
        refl = mean > 0.0
        # the reflected sets sum the negated atoms, moved up again (``_prep_again``)
        W = np.where(refl[:, None], _moved_up(-V, np.zeros(V.shape)), V)
        mean_w = np.where(refl, np.add.reduce(P * W, axis=1), mean)
        var = np.add.reduce(P * (W - mean_w[:, None]) ** 2, axis=1)
        wmax, wmin = np.maximum.reduce(W, axis=1), np.minimum.reduce(W, axis=1)
        good = (var > 0.0) & (wmax > 0.0)
        sd = np.sqrt(np.where(good, var, 1.0))
        h = np.maximum(sd / nu_eff, (wmax - wmin) / MAX_SUPPORT)
        lat = _spread_rows(W, P, h)
        vabs = np.add.reduce(P * np.abs(V), axis=1)
        span = (wmax - wmin) / sd
        for r in np.flatnonzero(good).tolist():
            i = idx[rows[r]]
            lo, Kl, lql, jl = lat[r]
            sd_r, h_r = float(sd[r]), float(h[r])
            if refl[r]:
                vals, probs, err = -V[r], P[r], None
            else:
                vals, probs, err = atom_sets[i]
            g = _lattice_steps(vals, probs, err, n, nu, 7.0, split, False, nu_eff, sd_r, h_r,
                               lo, Kl, lql, jl, float(span[r]))
            if refl[r]:
                es = n * (float(mean[r]) + 4.0 * _U * float(vabs[r]))
                g = _reflected(g, es)
            out[i] = g
    return out


def _vector(a):
    """``np.asarray(a, dtype=float).ravel()`` (the array itself where it is one already)."""
    if isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype == float:
        return a
    return np.asarray(a, dtype=float).ravel()


def _err_row(e, K: int):
    """A set's value errors as a row of K (``_prep``'s zeros or broadcast)."""
    if e is None:
        return np.zeros(K)
    if isinstance(e, np.ndarray) and e.shape == (K,) and e.dtype == float:
        return e
    return np.broadcast_to(np.asarray(e, dtype=float), (K,))


def _reflected(inner_gen, es: float):
    """The reflected sum E S + E (−S)_+ of ``_positive_part_steps`` around the generator of
    E (−S)_+ (``es``: E S rounded up)."""
    inner = yield from inner_gen
    d = dict(inner.details)
    d["reflected"] = True
    return SumBound(float(es + inner.upper) * (1.0 + 1e-12), d)


def _spread_rows(V, P, h) -> list:
    """``_positive_part_steps``' two-point spread of each row's atoms onto its lattice h·ℤ:
    [(lo, lattice points K, log q of the live points, their positions j)] per row. The
    generator adds the lower neighbours' weights, then the upper ones', in atom order into
    zeros (``bincount``); here the (point, weight) pairs are put in that order, stably sorted
    by point, and each point's weights added left to right from its first: the same sums."""
    X = V / h[:, None]
    M = np.floor(X)
    F = X - M
    lo = np.minimum.reduce(M, axis=1)
    hi = np.maximum.reduce(M, axis=1) + 1.0
    AT = (M - lo[:, None]).astype(np.int64)
    G, K = V.shape
    idx = np.concatenate((AT, AT + 1), axis=1)
    wts = np.concatenate((P * (1.0 - F), P * F), axis=1)
    order = np.argsort(idx, axis=1, kind="stable")
    si = np.take_along_axis(idx, order, axis=1).ravel()
    sw = np.take_along_axis(wts, order, axis=1).ravel()
    rowi = np.repeat(np.arange(G), 2 * K)
    first = np.ones(si.size, dtype=bool)
    first[1:] = (si[1:] != si[:-1]) | (rowi[1:] != rowi[:-1])
    starts = np.flatnonzero(first)
    lens = np.diff(np.append(starts, si.size))
    acc = sw[starts].copy()
    for k in range(1, int(lens.max())):
        more = lens > k
        acc[more] += sw[starts[more] + k]
    live = acc > 0.0
    seg_row = rowi[starts]
    pos = si[starts]
    with np.errstate(divide="ignore"):
        lacc = np.log(np.where(live, acc, 1.0))
    cuts = np.searchsorted(seg_row, np.arange(G + 1))
    out = []
    lo_l, hi_l = lo.tolist(), hi.tolist()
    for r in range(G):
        a, b = cuts[r], cuts[r + 1]
        lv = live[a:b]
        lo_r = int(lo_l[r])
        out.append((lo_r, int(hi_l[r]) - lo_r + 1, lacc[a:b][lv],
                    (pos[a:b][lv] + lo_r).astype(float)))
    return out


def _positive_part_steps(values, probs, n: int, *, value_err=None, nu: float | None = None,
                         sds: float = 7.0, split: bool | None = None, _inner: bool = False,
                         _prepped: bool = False):
    """``positive_part`` as a step generator (``lattice_fourier.trapezoid_steps``).
    ``_prepped``: ``values``/``probs`` are atoms ``_prep`` returned, negated (the reflection
    below): the same floats as ``_prep`` without its checks of what it already checked."""
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be an integer in [1, inf); got {n!r}")
    v, p = _prep_again(values, probs) if _prepped else _prep(values, probs, value_err)
    if nu is None:
        nu = _auto_nu(n)
    if _amax(v) <= 0.0:
        return SumBound(0.0, {"reason": "no positive atom: the sum is never positive"})
    if n == 1:
        return SumBound(float(np.sum(p * np.maximum(v, 0.0))) * (1.0 + 1e-12), {"n": 1})
    if math.comb(n + v.size - 1, n) <= ENUMERATE_MAX:
        return _enumerated(v, p, n)
    if not _inner and split is None and _sparse_first(v, p, n, nu, sds):
        got = yield ("sparse", (v, p, n))
        if got is not None:
            return got
    mean = float(_asum(p * v))
    if mean > 0.0 and not _inner:
        # E S_+ = E S + E (−S)_+; E S rounded up. (Once only: with a mean of ~0, the
        # upward nudge of the atoms can make both signs look positive.)
        inner = yield from _positive_part_steps(-v, p, n, nu=nu, sds=sds, split=split,
                                                _inner=True, _prepped=True)
        es = n * (mean + 4.0 * _U * float(_asum(p * np.abs(v))))
        d = dict(inner.details)
        d["reflected"] = True
        return SumBound(float(es + inner.upper) * (1.0 + 1e-12), d)
    sd = _law_sd(v, p, mean)
    forced = split is not None          # an FFT variant asked for (tests, comparisons)
    split, nu_eff = _engine(n, nu, sds, split)
    # The lattice must stay listable: a coarser step is still valid (only looser).
    h = max(sd / nu_eff, float(_amax(v) - _amin(v)) / MAX_SUPPORT)

    # ---- 1. mean-preserving two-point spread onto hZ -----------------------------------
    x = v / h
    m = np.floor(x)
    f = x - m
    lo = int(m.min())
    hi = int(m.max()) + 1
    K = hi - lo + 1
    # both neighbours' weights added in atom order, lower ones first: the additions of two
    # ``np.add.at`` calls on zeros, in one ``bincount`` (it adds in input order from 0)
    at = (m - lo).astype(np.int64)
    q = np.bincount(np.concatenate((at, at + 1)),
                    weights=np.concatenate((p * (1.0 - f), p * f)), minlength=K)
    live = q > 0
    lql = np.log(q[live])
    jl = np.arange(lo, hi + 1, dtype=float)[live]
    return (yield from _lattice_steps(values, probs, value_err, n, nu, sds, split, forced,
                                      nu_eff, sd, h, lo, K, lql, jl, _span_sds(v, sd)))


def _lattice_steps(values, probs, value_err, n, nu, sds, split, forced, nu_eff, sd, h, lo, K,
                   lql, jl, span_sds):
    """``_positive_part_steps`` from its lattice on (a step generator): the live lattice
    atoms (log q, j: positions ``lo`` + their indices among the ``K`` lattice points), the
    law's sd, the step h and the atoms' span in sds; ``values``/``probs``/``value_err``
    are the set the sum was asked for (the Chernoff stand-in past ``FFT_MAX_N``)."""

    def log_mgf(phi):
        # numpy log-sum-exp (scipy's wrapper costs ~1 ms per call; this is called often)
        z = lql + np.multiply.outer(np.atleast_1d(np.asarray(phi, dtype=float)), jl)
        top = z.max(axis=-1)
        r = top + np.log(np.exp(z - top[..., None]).sum(axis=-1))
        return float(r[0]) if np.ndim(phi) == 0 else r

    # ---- 2. tilt to zero mean (one step: ``_tilts`` searches a batch's tilts together) ---
    if jl.max() <= 0:
        return SumBound(0.0, {"reason": "no positive lattice atom"})
    phi_star = yield ("tilt", (lql, jl))
    sd_lat = sd / h
    if not forced and _fourier(n, nu_eff, sds, span_sds):
        # Where one FFT would be long: Fourier inversion on the live frequencies only
        # (``numerics.lattice_fourier``), certified at any n without a window or a tail
        # charge and with a rounding allowance of ~1e-9 instead of the FFT's ~1e-6 (same
        # lattice; with two stages the finer first lattice, whose sum is smaller in convex
        # order than the two-stage spread). The tilt is any φ > 0 (the identity
        # P(S = s) = M(φ)^n e^{−φs} Q_φ(s) holds for all); φ ≥ 1/sd(S) keeps the weights'
        # decay within a few standard deviations of the sum, so few frequencies are needed.
        got = yield from _trapezoid(lql, jl, n, h, max(phi_star, 1.0 / (math.sqrt(n) * sd_lat)),
                                    log_mgf,
                                    work_max=TRAPEZOID_WORK * 2.0 * sds * math.sqrt(n) * nu_eff)
        if got is not None:
            upper, det = got
            det["nu"] = float(nu)
            return SumBound(upper, det)
        if n > FFT_MAX_N:
            # Past 1e10 terms the FFT's allowance for the n-th power of a computed spectrum
            # is over 1 % of the value (100x at 1e12) and two stages take ~0.2 s: the
            # Chernoff bound (certified, microseconds) stands in where the inversion
            # declines (a law with near-periods everywhere, e.g. check-in at rate 1e-6).
            ch = chernoff_positive_parts([(values, probs, value_err)], n)[0]
            return SumBound(float(ch), {"method": "chernoff", "lattice_step": h,
                                        "reason": "the Fourier inversion declined past "
                                                  f"n = {FFT_MAX_N:.0e} (no FFT there)"})
    # ---- 3.–5. the FFT engine, as a step of its own (``_fft_jobs``): a batch of sums
    # (``positive_parts``) runs its FFTs side by side on the thread pool. The closure
    # computes what the code did in line here, on whichever thread runs it.
    def fft_sum():
        # the whole lattice (only the FFT engine needs it): −inf where q is 0
        j = np.arange(lo, lo + K, dtype=float)
        live = np.zeros(K, dtype=bool)
        live[(jl - lo).astype(np.int64)] = True
        lq = np.full(K, -np.inf)
        lq[live] = lql
        phi = max(phi_star, 0.01 / (math.sqrt(n) * sd_lat))
        lM = log_mgf(phi)
        lqt = np.where(live, lq + phi * j - lM, -np.inf)
        qt = np.exp(lqt)
        mu_t = float(np.sum(qt * j))
        sd_t = math.sqrt(max(float(np.sum(qt * (j - mu_t) ** 2)), 1e-300))

        # relative atom errors (tilted atoms, log M) enter as (1 + η)^n
        rel = _atoms_rel(n, phi, j[live], lM)

        # ---- 3. window and FFT power ------------------------------------------------------------
        c = n * mu_t
        w = sds * math.sqrt(n) * sd_t + K
        if split:
            return _two_stage(qt, lo, n, phi, lM, h, mu_t, sd_t, sds, nu_eff, log_mgf, rel)
        s_lo, L = _window(c, w, 2 * K, n)
        s_hi = s_lo + L - 1
        # (Q is a per-thread work array: _weighted_sum is done with it before the next FFT)
        Q, fft_err_l2 = fft_power_product([(qt, n)], L, _scratch_out=True)
        # position s sits at index (s − n·lo) mod L
        main, beyond_cut, wnorm = _weighted_sum(Q, n * lo, L, s_hi, h, phi)

        # ---- 5. a-posteriori floating-point allowance (numerics.fft_power) ---------------
        fft_err = wnorm * fft_err_l2

        # ---- 4. Chernoff tail beyond the window ---------------------------------------------
        psis = _psi_grid(sd_t)
        lt = float(np.min(n * (log_mgf(phi + psis) - lM) - psis * (s_hi + 1)))
        tail = _max_weight(h, phi, s_hi) * math.exp(min(lt, 0.0)) if lt > -745 else 0.0

        log_scale = n * lM
        upper = _scaled_upper(log_scale, (main + fft_err + tail + beyond_cut) * (1.0 + rel))
        det = {"lattice_step": h, "nu": float(nu), "tilt": phi / h, "fft_length": L,
               "window_sds": float(sds), "log_scale": log_scale, "main": main,
               "fft_error": fft_err, "tail": tail, "relative_rounding": rel,
               "certified_relative_error": (fft_err + tail) / main + rel if main > 0 else math.inf}
        return SumBound(upper, det)

    return (yield ("fft", fft_sum))


def _dmeans(jobs) -> list:
    """Σ_l e^{w_l − max w}·j_l, w = log q_l + φ·j_l (the sign of the tilted mean, scaled) of
    each job (log q, j, φ): jobs with the same number of atoms in one array, each row's
    operations and sum those of the job alone (numpy sums a row as it sums a vector)."""
    if len(jobs) == 1:                           # one sum on its own: no stacking
        lql, jl, phi = jobs[0]
        return [float(_dmean_rows(lql, jl, phi))]
    out: list = [None] * len(jobs)
    groups: dict = {}
    for i, (lql, _, _) in enumerate(jobs):
        groups.setdefault(lql.size, []).append(i)
    for idx in groups.values():
        phi = np.array([jobs[i][2] for i in idx], dtype=float)[:, None]
        got = _dmean_rows(np.stack([jobs[i][0] for i in idx]),
                          np.stack([jobs[i][1] for i in idx]), phi)
        for i, v in zip(idx, got.tolist()):
            out[i] = v
    return out


def _dmean_rows(lq, j, phi):
    """``_dmeans``' formula along the last axis (one job: vectors and a float φ)."""
    w = lq + phi * j
    w = np.exp(w - w.max(axis=-1, keepdims=True))
    return np.sum(w * j, axis=-1)


def _tilts(jobs) -> list:
    """The tilt φ* ≥ 0 of each job (log q, j) where the tilted mean Σ q e^{φj}·j is 0 (0
    where it is already ≥ 0), every job's search side by side: the tilted mean's sign at 0,
    then b = 1/max(max j, 1) doubled while it is negative, then regula falsi (Illinois) on
    [0, b] to 1e-13 relative (``numerics.steps.illinois_rows``: the steps of
    ``illinois_steps`` row by row, reusing the values at 0 and b that the bracketing
    computed). Jobs with the same number of atoms are stacked, each row evaluated by
    ``_dmean_rows`` (the same floats as the job alone), so each φ* is the one the job's own
    search (``illinois_root`` over ``_dmeans`` one at a time) finds, bit for bit."""
    out = [0.0] * len(jobs)
    groups: dict = {}
    for i, (lql, _) in enumerate(jobs):
        groups.setdefault(lql.size, []).append(i)
    for idx in groups.values():
        if len(idx) == 1:
            LQ, J = jobs[idx[0]][0][None, :], jobs[idx[0]][1][None, :]
        else:
            LQ = np.stack([jobs[i][0] for i in idx])
            J = np.stack([jobs[i][1] for i in idx])
        G = len(idx)

        def dmean(rows, x, LQ=LQ, J=J):
            return _dmean_rows(LQ[rows], J[rows], x[:, None])

        every = np.arange(G)
        d0 = dmean(every, np.zeros(G))
        # (a NaN anywhere raises in ``illinois_rows``, as the scalar search's guard does)
        neg = np.flatnonzero(~(d0 >= 0.0))
        phi = np.zeros(G)
        if neg.size:
            b = 1.0 / np.maximum(J[neg].max(axis=1), 1.0)
            fb = np.empty(neg.size)
            todo = np.arange(neg.size)
            for _ in range(4096):
                v = dmean(neg[todo], b[todo])
                fb[todo] = v
                more = v < 0.0
                if not more.any():
                    break
                todo = todo[more]
                b[todo] *= 2.0
            phi[neg] = illinois_rows(lambda rows, x, neg=neg: dmean(neg[rows], x),
                                     np.zeros(neg.size), b, d0[neg], fb, xtol=1e-14, rtol=1e-13)
        for i, v in zip(idx, phi.tolist()):
            out[i] = v
    return out


def _tilted(jobs) -> list:
    """The tilted atoms of each job (log q, j, φ, n) for the Fourier inversion:
    (log M(φ), q e^{φj}/M(φ), their mean and sd, the atoms' rounding ``_atoms_rel``) — jobs
    with the same number of atoms as rows of one array, each row's operations and sums
    those of the job alone (``_lattice_steps``' ``log_mgf`` and the formulas it replaced)."""
    out: list = [None] * len(jobs)
    groups: dict = {}
    for i, jb in enumerate(jobs):
        groups.setdefault(jb[0].size, []).append(i)
    for idx in groups.values():
        LQ = np.stack([jobs[i][0] for i in idx])
        J = np.stack([jobs[i][1] for i in idx])
        phi = np.array([jobs[i][2] for i in idx], dtype=float)[:, None]
        pj = phi * J
        z = LQ + pj
        top = z.max(axis=-1)
        lM = top + np.log(np.exp(z - top[..., None]).sum(axis=-1))
        QT = np.exp(z - lM[:, None])
        mu = np.add.reduce(QT * J, axis=1)
        var = np.add.reduce(QT * (J - mu[:, None]) ** 2, axis=1)
        ptop = np.maximum.reduce(np.abs(pj), axis=1)
        for r, (i, lm, m, v, t) in enumerate(zip(idx, lM.tolist(), mu.tolist(), var.tolist(),
                                                ptop.tolist())):
            out[i] = (lm, QT[r], m, math.sqrt(max(v, 1e-300)), _atoms_rel_at(jobs[i][3], t, lm))
    return out


def _fft_jobs(jobs) -> list:
    """The FFT engine's sums (each a closure of ``_positive_part_steps``: tilted atoms, one
    FFT power or two stages, weighted sum, tail) side by side on the thread pool: numpy's
    FFTs and large array operations release the GIL, and each job's floats are its own."""
    return pmap(_call, jobs)


def _call(f):
    return f()


def _sparse_jobs(jobs) -> list:
    """``_sparse_sum`` of each job (v, p, n): side by side on the thread pool where the
    count tables are large (λ ≥ ``_SPARSE_THREADED``: arrays of 10⁴–10⁵ entries, whose
    operations release the GIL), one after the other where they are small (a few hundred
    numpy calls on ~10³ entries each, which hold it). The same values either way."""
    lam = [job[2] * float(np.sum(job[1][job[0] != 0.0])) for job in jobs]
    if lam and sorted(lam)[len(lam) // 2] >= _SPARSE_THREADED:
        return pmap(_sparse_job, jobs)
    return _sparse_sums(jobs)


#: Median λ of a batch of sparse sums from which they run on the thread pool.
_SPARSE_THREADED = 40.0


def _sparse_job(job):
    return _sparse_sum(*job)


#: The runner of each kind of step the certified sums yield (``numerics.steps``).
_STEPS = {**_lf.STEPS, "tilt": _tilts, "tilted": _tilted, "fft": _fft_jobs,
          "sparse": _sparse_jobs}
#: … and the kinds a batch holds back until no other is pending (one thread-pool map each).
_DEFER = ("fft", "sparse", "band", "rem")


def _engine(n: int, nu: float, sds: float, split: bool | None):
    """(two stages?, lattice resolution) of ``positive_part``'s FFT engine: two stages when
    asked or when one FFT would be longer than ``SPLIT_MIN_L``; they add a second spread
    (of the block sums), so their first lattice is finer (the FFTs stay short)."""
    if split is None:
        split = n >= 64 and 2.0 * sds * math.sqrt(n) * nu > SPLIT_MIN_L
    return split, (_SPLIT_FINER * float(nu) if split else float(nu))


def _fourier(n: int, nu_eff: float, sds: float, span_sds: float = math.inf) -> bool:
    """Whether the sum is taken by Fourier inversion first: one FFT would be at least
    ``TRAPEZOID_MIN_L`` long, or at least ``TRAPEZOID_MIN_L_SMOOTH`` long for a law whose
    atoms span at most ``SMOOTH_SPAN``·√n of its standard deviations (``span_sds``)."""
    L1 = 2.0 * sds * math.sqrt(n) * nu_eff
    return L1 > TRAPEZOID_MIN_L or (L1 > TRAPEZOID_MIN_L_SMOOTH
                                    and span_sds <= _smooth_span_max(n))


def _smooth_span_max(n: int) -> float:
    """The largest span (in standard deviations) of a smooth law of n terms."""
    return SMOOTH_SPAN * math.sqrt(n)


def _law_sd(v, p, mean: float) -> float:
    """The law's standard deviation (its largest |atom| where the variance is 0): the
    lattice's step and the smoothness test are taken in it."""
    var = float(_asum(p * (v - mean) ** 2))
    return math.sqrt(var) if var > 0 else float(_amax(np.abs(v)))


def _span_sds(v, sd: float) -> float:
    """The atoms' span in standard deviations of the law (``_fourier``'s smoothness test)."""
    return float(_amax(v) - _amin(v)) / sd if sd > 0.0 else math.inf


def fourier_first(n: int, nu: float | None = None, sds: float = 7.0,
                  span_sds: float = math.inf) -> bool:
    """Whether ``positive_part(…, n, nu=nu)`` starts with the Fourier inversion (its step
    generators then yield node bands; ``positive_parts`` batches them), for a law whose
    atoms span ``span_sds`` standard deviations (default: any law)."""
    nu = _auto_nu(int(n)) if nu is None else nu
    return _fourier(int(n), _engine(int(n), nu, sds, None)[1], sds, span_sds)


def _atoms_rel(n: int, phi: float, jl, lM: float) -> float:
    """(1 + η)^n − 1: the relative error of the n-fold sum from the tilted atoms' rounding
    (η = 16u(1 + max|φj| + |log M|) per atom; every term of the convolution is a product
    of n atoms), for both engines."""
    return _atoms_rel_at(n, float(_amax(np.abs(phi * jl))), lM)


def _atoms_rel_at(n: int, top: float, lM: float) -> float:
    """``_atoms_rel`` from max|φj| (``top``)."""
    eta = 16.0 * _U * (1.0 + top + abs(lM))
    return math.expm1(n * eta)


def _trapezoid(lql, jl, n, h, phi, log_mgf, work_max=math.inf):
    """``positive_part`` by ``lattice_fourier.trapezoid_steps`` on the tilted live atoms
    (None where it declines; a step generator). The atoms' rounding enters as (1 + η)^n as
    for the FFT; an error in log M cancels (the scale e^{n log M} and the tilted atoms use
    the same computed value, and the sum is homogeneous of degree n in the atoms)."""
    lM, qt, mu_t, sd_t, rel = yield ("tilted", (lql, jl, phi, n))
    tz = yield from trapezoid_steps(jl.astype(np.int64), qt, n, h, phi, mu_t, sd_t,
                                    work_max=work_max)
    if tz is None:
        return None
    t_up, td = tz
    log_scale = n * lM
    main = td["main"]
    det = {"lattice_step": h, "tilt": phi / h, "method": "trapezoid", "nodes": td["nodes"],
           "trapezoid_M": td["M"], "log_scale": log_scale, "main": main,
           "fft_error": td["node_error"], "tail": td["remainder"], "relative_rounding": rel,
           "certified_relative_error": ((td["node_error"] + td["remainder"]) / main + rel
                                        if main > 0 else math.inf)}
    return _scaled_upper(log_scale, t_up * (1.0 + rel)), det


#: From this one-stage FFT length (2·sds·√n·ν) on, the sum is taken by Fourier inversion on
#: the live frequencies (``_trapezoid``); below it one FFT is as fast and the values stay
#: those of the FFT.
TRAPEZOID_MIN_L = 1 << 16
#: … and from this length on for a law whose atoms span at most ``SMOOTH_SPAN``·√n standard
#: deviations (blanket curves: n ≳ 850). Such a sum needs a few hundred nodes where its FFT
#: is ~1e4–6e4 long (a 3×3 matrix's blanket at n = 1e4, T = 10: 0.35 → 0.15 s CPU; at n =
#: 2e3, T = 100: 0.39 → 0.21 s); a law with far, light atoms (k-RR at ε0 ≈ 7.5 and n ≈ 4e3:
#: span ≈ 50 sd) has near-periods in its characteristic function that need thousands of
#: nodes, and the inversion would decline (its FFT following) at most points of its curve.
#: The inversion's value is that of the same lattice with a rounding allowance of ~1e-9
#: instead of the FFT's ~1e-6 relative: below the FFT's (tests/test_fourier_small_n.py).
TRAPEZOID_MIN_L_SMOOTH = 1 << 13
SMOOTH_SPAN = 0.2
#: Above this many terms the FFT engines are not used (see ``positive_part``).
FFT_MAX_N = 10**10
#: ... and while the nodes × atoms it would sum stay below this many times that length
#: (near-periodic laws at moderate n need many nodes: the FFT is then cheaper).
TRAPEZOID_WORK = 2.0
#: Above this one-stage FFT length the sum is taken in two stages (``_two_stage``).
SPLIT_MIN_L = 1 << 20
#: Two stages: first lattice this much finer than ν; block sums spread at sd(block)/(2ν).
_SPLIT_FINER = 2.0
#: Window of the first stage's block laws, in standard deviations (what lies outside is
#: charged, so it is wider than the final window).
_SDS_BLOCK = 10.0


def _window(centre: float, half: float, min_len: int, n: int):
    """(lowest index, FFT length) of a window covering centre ± half and the indices 0, 1."""
    s_lo = min(int(math.floor(centre - half)), 0)
    s_hi = max(int(math.ceil(centre + half)), 1)
    L = next_fast_len(max(s_hi - s_lo + 1, min_len))
    if L > MAX_FFT:
        raise ArithmeticError(f"the certified i.i.d. sum needs an FFT of length {L} > {MAX_FFT} "
                              f"at n={n}; not computed")
    return s_lo, L


def _weighted_sum(Q, offset: int, L: int, s_hi: int, step: float, phi: float):
    """(Σ_{s=1}^{s_hi} step·s·e^{−φs}·Q(s), the bulk charge past s_cut, ‖weights‖₂), the
    lattice point s sitting at index (s − offset) mod L of ``Q``.

    Past s_cut (φ·s_cut ≥ 300) the weights are below step·s_cut·e^{−300} and are charged
    in bulk (at most that times the total mass, ≤ 2): their products with tiny Q values
    would be subnormal numbers, ~100x slower on common CPUs. (No np.dot: multi-threaded
    BLAS on a busy machine costs more than the whole FFT.)
    """
    s_cut = min(s_hi, max(int(300.0 / phi), 1))
    # wts = step·s·e^{−φs} and the products below, computed in place: the same operations
    # in the same order as the plain expressions (IEEE products commute), without a fresh
    # array (and its page faults) for each intermediate
    sf = np.arange(1.0, s_cut + 1.0)             # the integers 1 … s_cut, exactly
    ex = np.multiply(sf, -phi)
    np.exp(ex, out=ex)
    wts = np.multiply(sf, step, out=sf)
    np.multiply(wts, ex, out=wts)
    qw = np.maximum(circular_run(Q, 1 - offset, s_cut), 0.0)
    main = float(np.sum(np.multiply(qw, wts, out=qw)))
    beyond = 2.0 * step * s_cut * math.exp(-phi * s_cut) if s_cut < s_hi else 0.0
    return main, beyond, math.sqrt(float(np.sum(np.multiply(wts, wts, out=ex))))


def _max_weight(h: float, phi: float, x: float) -> float:
    """max over s ≥ x of h·s·e^{−φs} (the weight beyond a window's top)."""
    return h * (1.0 / (math.e * phi) if x * phi < 1.0 else x * math.exp(-phi * x))


_PSI = np.geomspace(1e-4, 10.0, 80)


def _psi_grid(sd_t: float) -> np.ndarray:
    """The Chernoff parameters tried (per lattice unit of a tilted law with sd ``sd_t``)."""
    return _PSI / max(sd_t, 1e-12)


def _scaled_upper(log_scale: float, total: float) -> float:
    """e^{log_scale}·total rounded up; an underflow to 0 would be below the true value, the
    smallest float is not."""
    upper = max(math.exp(log_scale + math.log(total)), 5e-324) if total > 0 else 0.0
    return float(upper * (1.0 + 1e-12))


def _chernoff_out(k, lo_s, hi_s, phi, lM, sd_t, log_mgf):
    """Tilted probability that a k-fold lattice sum lies outside [lo_s, hi_s] (Chernoff,
    both sides; the best ψ on a grid)."""
    psis = _psi_grid(sd_t)
    up = float(np.min(k * (log_mgf(phi + psis) - lM) - psis * (hi_s + 1)))
    dn = float(np.min(k * (log_mgf(phi - psis) - lM) + psis * (lo_s - 1)))
    return sum(math.exp(x) for x in (up, dn) if x > -745)


def _two_stage(qt, lo, n, phi, lM, h, mu_t, sd_t, sds, nu, log_mgf, rel):
    r"""E[(ΣG_i)_+] for large n in two stages: blocks of n1 ≈ √n terms, then n/n1 blocks.

    One-stage FFTs grow like √n (1.7M points at n = 1e8 for the blanket); two stages need
    two of ~n^{1/4}. Each step stays on the safe side:

    1. **Block laws.** The tilted k-fold law (k = n1, and the remainder r = n − n1·n2) by
       one FFT power on a window of ±``_SDS_BLOCK`` sd. Mass outside it (aliased onto the
       window, where it only adds) is charged through the event "some block is outside":
       E[S'_+; X_b out] ≤ E[e^{φS'}; X_b out]/(eφ), a Chernoff bound on X_b.
    2. **Coarse spread.** Each block sum x is split onto the two neighbouring points of
       (m·h)ℤ with the same mean (the block variable grows in convex order, adding ≤
       (mh)²/4 variance), m ≈ √n1·sd/(2ν); in the tilted weights the split carries
       e^{∓φ·offset}. The computed block law's FFT error enters the next stage as an ℓ1
       input perturbation (``numerics.fft_power_product``).
    3. **Product of powers** of the coarse block laws, weights h·x·e^{−φx} as in one stage.
       Beyond the window: E[e^{θS'}] ≤ M(θ)^n·e^{n_b θ²m²/8} (Hoeffding's lemma for each
       block's two-point spread), then Chernoff.
    """
    K = qt.size
    n1 = max(2, int(round(math.sqrt(n))))
    n2, r = divmod(n, n1)
    sizes = [(n1, n2)] + ([(r, 1)] if r else [])
    nb = n2 + (1 if r else 0)
    # coarse step ≈ sd(block)/(2ν₀), ν₀ = ν/_SPLIT_FINER the caller's resolution
    m = max(1, int(math.sqrt(n1) * sd_t / (2.0 * nu / _SPLIT_FINER)))
    wins = []
    for k, _ in sizes:
        wk = _SDS_BLOCK * math.sqrt(k) * sd_t + K
        wins.append((int(math.floor(k * mu_t - wk)), int(math.ceil(k * mu_t + wk))))
    L1 = next_fast_len(max(max(b - a + 1 for a, b in wins), 2 * K))
    if L1 > MAX_FFT:
        raise ArithmeticError(f"the certified i.i.d. sum needs an FFT of length {L1} > "
                              f"{MAX_FFT} at n={n}; not computed")
    parts, a_offset, log_c, out_prob = [], 0, 0.0, 0.0
    k2 = 0
    powers = fft_powers(qt, [k for k, _ in sizes], L1)     # one forward transform
    for (k, count), (s_lo, s_hi), (Qk, errk) in zip(sizes, wins, powers):
        sw = np.arange(s_lo, s_hi + 1, dtype=np.int64)
        qw = np.maximum(circular_run(Qk, s_lo - k * lo, sw.size), 0.0)
        out_prob += count * _chernoff_out(k, s_lo, s_hi, phi, lM, sd_t, log_mgf)
        a = np.floor_divide(sw, m)
        a_lo = int(a[0])
        size = int(a[-1]) - a_lo + 2
        # b = s mod m runs through 0 … m − 1 periodically: the factors that depend on b alone
        # are computed on one period and tiled (the same values, elementwise)
        bv = np.arange(m, dtype=float)
        r0 = s_lo - a_lo * m
        fv = bv / m
        omf = circular_run(1.0 - fv, r0, sw.size)
        f = circular_run(fv, r0, sw.size)
        e_dn = circular_run(np.exp(-phi * bv), r0, sw.size)
        e_up = circular_run(np.exp(phi * (m - bv)), r0, sw.size)
        q2 = (np.bincount(a - a_lo, weights=qw * omf * e_dn, minlength=size)
              + np.bincount(a - a_lo + 1, weights=qw * f * e_up, minlength=size))
        ck = float(q2.sum())
        q2 /= ck
        # ℓ1 perturbation: the block law's FFT error (‖·‖₂ ≤ errk/2 on ≤ |window| points)
        # through weights ≤ e^{φm}, plus the spread's own rounding
        in_err = (math.exp(phi * m) * math.sqrt(sw.size) * 0.5 * errk / ck + 16.0 * _U)
        parts.append((q2, count, in_err))
        a_offset += count * a_lo
        log_c += count * math.log(ck)
        k2 = max(k2, size)
    log_scale = n * lM + log_c
    # second stage window, in coarse units A (the sum is at fine index m·A)
    sd_c = math.sqrt(n * sd_t * sd_t + nb * m * m / 4.0) / m
    c2 = n * mu_t / m
    A_lo, L2 = _window(c2, sd_c * sds + k2, 2 * k2, n)
    A_hi = A_lo + L2 - 1
    Q, err2 = fft_power_product(parts, L2)
    main, beyond_cut, wnorm = _weighted_sum(Q, a_offset, L2, A_hi, h * m, phi * m)
    fft_err = wnorm * err2
    # above the window (fine index ≥ x_top): E[e^{(φ+ψ)S'}] e^{−ψ x_top} times max weight
    x_top = m * (A_hi + 1)
    psis = _psi_grid(sd_t)
    th = phi + psis
    lt = float(np.min(n * log_mgf(th) + nb * th * th * m * m / 8.0 - psis * x_top)) - log_scale
    tail = _max_weight(h, phi, x_top) * math.exp(min(lt, 0.0)) if lt > -745 else 0.0
    # some block outside its first-stage window: ≤ h/(eφ)·E[e^{φS'}]·P_φ(out)
    lo_ = n * lM + nb * phi * phi * m * m / 8.0 - log_scale
    out = h / (math.e * phi) * math.exp(min(lo_, 700.0)) * out_prob
    upper = _scaled_upper(log_scale, (main + fft_err + tail + beyond_cut + out) * (1.0 + rel))
    det = {"lattice_step": h, "nu": float(nu), "tilt": phi / h, "fft_length": L2,
           "stages": 2, "block_terms": n1, "coarse_step": m * h, "fft_length_block": L1,
           "window_sds": float(sds), "log_scale": log_scale, "main": main,
           "fft_error": fft_err, "tail": tail + out, "relative_rounding": rel,
           "certified_relative_error": ((fft_err + tail + out + beyond_cut) / main + rel
                                        if main > 0 else math.inf)}
    return SumBound(upper, det)


#: The sparse engine (``_sparse_sum``) takes a law with one atom exactly 0 and at most
#: ``SPARSE_ATOMS`` others whose total mass p is at most ``SPARSE_MEAN``/n (so that the
#: number of non-zero draws, Bin(n, p), has mean at most that) — where the lattice engines
#: would take the FFT (a spiky law at a few thousand terms: k-RR at large ε0).
SPARSE_ATOMS = 3
SPARSE_MEAN = 160.0
#: Relative error bound of numpy's float64 log and log1p (≤ 4 units in the last place, with
#: a margin over the ≤ 1-ulp implementations).
_LOG_ERR = 4.0 * _U
#: Largest total count m it enumerates to (C(m + r, r) count vectors).
_SPARSE_M_MAX = 640
#: The tail beyond m is at most this fraction of the enumerated sum (else m grows).
_SPARSE_TAIL = 1e-9


def _sparse_first(v, p, n: int, nu: float, sds: float) -> bool:
    """Whether ``positive_part`` tries ``_sparse_sum`` before a lattice: the law is sparse
    (see ``SPARSE_MEAN``) and the lattice engines would take an FFT for it."""
    zero = v == 0.0
    if not zero.any() or v.size - int(np.count_nonzero(zero)) > SPARSE_ATOMS:
        return False
    if n * float(_asum(p[~zero])) > SPARSE_MEAN:
        return False
    sd = _law_sd(v, p, float(_asum(p * v)))
    return not _fourier(n, _engine(n, nu, sds, None)[1], sds, _span_sds(v, sd))


@functools.lru_cache(maxsize=64)
def _head_vectors(bounds: tuple, m: int):
    """The count vectors (k_1 … k_h) with k_i ≤ bounds[i] and total ≤ m, as an (h, N)
    array (lexicographic), and their totals; h = 0: the empty vector."""
    if not bounds:
        return np.zeros((0, 1), dtype=np.intp), np.zeros(1, dtype=np.intp)
    g = np.indices(tuple(b + 1 for b in bounds)).reshape(len(bounds), -1)
    tot = g.sum(axis=0)
    keep = tot <= m
    k = np.ascontiguousarray(g[:, keep].astype(np.intp))
    t = tot[keep].astype(np.intp)
    k.setflags(write=False)
    t.setflags(write=False)
    return k, t


def _count_tail(n: int, p: float, b: int) -> float:
    """An upper bound on Pr[Bin(n − 1, p) ≥ b] (Chernoff at its minimising θ, each log with
    a relative slack of 1e-9): 1 where b is not past the mean, 0 where b > n − 1."""
    if b > n - 1:
        return 0.0
    if b <= p * (n - 1) or b == n - 1:
        return 1.0
    eth = b * (1.0 - p) / (p * (n - 1 - b))
    a, c = b * math.log(eth), (n - 1) * math.log1p(p * (eth - 1.0))
    # (+ 4nu: the given masses sum to 1 within a few ulps)
    lt = -a + c + 1e-9 * (abs(a) + abs(c)) + 1e-12 + 4.0 * n * _U
    return math.exp(lt) if lt < 0.0 else 1.0


def _sparse_sum(v, p, n: int, m: int | None = None):
    r"""Certified E[(G_1 + … + G_n)_+] of a sparse law, summed over the counts of its
    non-zero atoms (no lattice, no FFT): None where the counts would be too many.

    The law has an atom at exactly 0 (mass p_0; several are merged) and r ≤
    ``SPARSE_ATOMS`` others v_1 … v_r (masses p_i, P = Σ p_i). With counts k_i of the
    non-zero atoms and K = Σ k_i,
    E[S_+] = Σ_k n!/((n − K)! Π k_i!) · p_0^{n−K} Π p_i^{k_i} · (Σ k_i v_i)_+,
    taken exactly over every k with K ≤ m and each head count (below) within a box
    k_i ≤ b_i, plus a bound on the rest: S_+ ≤ Σ_j k_j v_j over the positive atoms, and
    E[k_j; K > m] = n p_j Pr[Bin(n − 1, P) ≥ m], E[k_i; k_i > b] = n p_i Pr[Bin(n − 1, p_i)
    ≥ b], E[k_j; k_i > b] ≤ n p_j/(1 − p_i)·Pr[Bin(n, p_i) > b] (j ≠ i), each tail by
    Chernoff at its minimising θ (``_count_tail``). m starts past the count's mean by 6
    standard deviations (or at ``m``), the boxes by 7, and they grow until the tail is at
    most ``_SPARSE_TAIL`` of the sum.

    The first r − 1 counts are enumerated (the "heads": c = Σ_{i<r} k_i v_i, head total T),
    the last atom (the likeliest) is summed in closed form. With u_k the weight of k_r = k
    given the head and F the running sums of u_k: for v_r < 0 the positive terms are
    k ≤ t = ⌊c/|v_r|⌋ and Σ_{k≤t} u_k (c − |v_r| k) = |v_r|·Σ_{i<t} F_i + (c − |v_r| t)·F_t;
    for v_r > 0 the terms k ≥ ⌈−c/v_r⌉, mirrored with the sums from the end. Every term of
    these is ≥ 0 (the remainder lies in [0, |v_r|)), so relative errors of the weights and
    of the running sums of running sums (≤ 2mu) are relative errors of the value. A
    remainder below 0 (t one past the bound by rounding) is dropped, which only adds; a
    term left out the other way is at most 4u(|c| + |v_r|(t + 1)) times the next running
    sum, added per head; c is rounded up by its error bound 4u·Σ|k_i v_i| first.

    Weights are products e^a·e^b: a = Σ_{i<r} (k_i log(np_i) − log k_i!) per head,
    b = log(n!/((n − K)! n^K)) + (n − K) log p_0 + k log(np_r) − log k! per (T, k), from
    running sums of logarithms. Each log-weight is rounded up by a bound on its own error
    before the exponential (a running sum of same-sign terms errs by ≤ (4 + K)u of itself,
    a log by ≤ 4u, every other operation by u of its result), 16u for the two exponentials
    and their product; the heads' sum of non-negative terms errs by < (N + 8)u relative.
    Weights below the normal range are charged at the smallest normal number each.
    Values are moved up by their errors beforehand (``_prep``); the probabilities are those
    given, as for the lattice engines. Exact but for rounding: at or below the lattice
    engines' values (a lattice spread is larger in convex order), never below E[S_+].
    """
    st = _sparse_setup(v, p, n, m)
    if isinstance(st, SumBound):
        return st
    while True:
        tab = _sparse_tables(*st.key())
        main, tail = st.finish(tab, _sparse_parts(tab, st.vn[None, :], st.ar, st.m)[0])
        if tail <= _SPARSE_TAIL * main:
            break
        if not st.grow():
            return None
    m, tot = st.m, tab[2]
    return _sparse_value(main, tail, m, tot)


class _SparseSum:
    """One ``_sparse_sum``'s law and count caps (``_sparse_setup``), what its value needs
    beside the shared tables (``_sparse_tables``) and the per-value part
    (``_sparse_parts``)."""

    __slots__ = ("ar", "boxes", "lam", "lp0", "m", "merge", "n", "pn", "pn_bytes", "r", "vmax",
                 "vn", "w_pos")

    def key(self):
        return (self.n, self.m, tuple(int(b) for b in self.boxes), self.pn_bytes, self.lp0,
                self.ar < 0.0)

    def finish(self, tab, s_part):
        """(main, tail) of ``_sparse_sum`` from Σ e^a·part (``s_part``, numpy's sum)."""
        n, m, lam, vmax, w_pos, vn, pn = (self.n, self.m, self.lam, self.vmax, self.w_pos,
                                          self.vn, self.pn)
        tot, F, ct_all, ct_box = tab[2], tab[4], tab[6], tab[7]
        size = tot.size
        main = float(s_part) * (1.0 + (size + 8) * _U)
        main *= (1.0 + 16.0 * _U) * self.merge
        # weights (or products) below the normal range lose at most 2.3e-308 each; a head's
        # weight multiplies at most m + 1 table entries and a table entry at most (m + 1)
        # heads, each of the partners at most e^λ (e^{k log(np) − log k!} ≤ e^{np}), and
        # every value c + v_r k is at most m·max v
        main += ((size + F.size) * (m + 1.0) * 2.3e-308 * math.exp(min(lam, 700.0))
                 * (m * vmax + 1.0))
        # the counts left out: K > m, and a head count past its box. S_+ ≤ Σ_j k_j v_j over
        # the positive atoms j, and E[k_j; K > m] = n p_j Pr[Bin(n − 1, P) ≥ m];
        # E[k_i; k_i > b] = n p_i Pr[Bin(n − 1, p_i) ≥ b], and for j ≠ i, given k_i the
        # count k_j has mean ≤ n p_j/(1 − p_i): E[k_j; k_i > b] ≤ that·Pr[Bin(n, p_i) > b]
        tail = w_pos * ct_all
        for i, b in enumerate(self.boxes):
            pi = float(pn[i])
            if b < m:
                own = n * pi * max(float(vn[i]), 0.0) * ct_box[i][0]
                rest = (w_pos - n * pi * max(float(vn[i]), 0.0)) / (1.0 - pi)
                tail += own + max(rest, 0.0) * ct_box[i][1]
        return main, tail * (1.0 + 1e-9)

    def grow(self) -> bool:
        """The next count cap and boxes (False: past ``_SPARSE_M_MAX`` or n)."""
        m, n = self.m, self.n
        if m >= min(n, _SPARSE_M_MAX):
            return False
        m = min(_SPARSE_M_MAX, 8 * math.ceil(1.25 * m / 8.0))
        self.m = n if m >= n - 1 else m
        self.boxes = [math.ceil(1.25 * b) for b in self.boxes]
        return True


def _sparse_setup(v, p, n: int, m: int | None):
    """``_sparse_sum``'s law: a ``_SparseSum`` at the first count cap (or the SumBound of a
    law without a positive atom)."""
    zero = v == 0.0
    # several atoms at 0 (e.g. the blanket's law at ε = 0) are one: their masses' sum
    # rounds by at most u each, charged below as (1 + u)^{n·(count − 1)} on every term
    p0 = float(np.sum(p[zero]))
    st = _SparseSum()
    st.n = n
    st.merge = math.exp(2.0 * _U * n * (int(np.count_nonzero(zero)) - 1))
    vn, pn = v[~zero], p[~zero]
    order = np.argsort(pn, kind="stable")        # the closed sum over the likeliest atom
    vn, pn = vn[order], pn[order]
    st.vn, st.pn, st.r = vn, pn, int(vn.size)
    P = float(np.sum(pn))
    st.lam = lam = n * P
    st.vmax = float(np.max(vn))
    if st.vmax <= 0.0:
        return SumBound(0.0, {"reason": "no positive atom: the sum is never positive"})
    if m is None:
        m = 8 * math.ceil((lam + 6.0 * math.sqrt(lam) + 12.0) / 8.0)
    st.m = n if m >= n - 1 else m
    st.lp0 = math.log(p0)
    st.ar = float(vn[-1])
    # Σ over the positive atoms of n p_j v_j (rounded up): the tails' weight
    st.w_pos = float(np.sum(n * pn * np.maximum(vn, 0.0))) * (1.0 + 8.0 * _U)
    # each head count's box: past its mean by 7 standard deviations (plus 12)
    st.boxes = [math.ceil(n * float(pi) + 7.0 * math.sqrt(n * float(pi)) + 12.0)
                for pi in pn[:-1]]
    st.pn_bytes = pn.tobytes()
    return st


def _sparse_parts(tab, VN, ar, m: int) -> list:
    """Σ_heads e^a·part of ``_sparse_sum`` for each row of ``VN`` (the non-zero values in
    the tables' order; ``ar``: the last value, one per row or a float, all of one sign),
    every row's elementwise operations those of the row alone and its sum numpy's sum of
    that row (a contiguous vector)."""
    j, kk, tot, ea, F, H = tab[:6]
    G, r = VN.shape
    c = np.zeros((G, tot.size))
    cabs = np.zeros((G, tot.size))
    for i in range(r - 1):
        ti = (j[None, :] * VN[:, i, None])[:, kk[i]]
        c += ti
        cabs += np.abs(ti)
    c_up = c + 4.0 * _U * cabs
    rows = tot
    ar = np.asarray(ar, dtype=float).reshape(-1, 1)
    aa = np.abs(ar)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if ar[0, 0] < 0.0:
            # Σ_{k≤t} u_k (c − |a|k) = |a|·Σ_{i<t} F_i + (c − |a|t)·F_t (F running sums)
            t = np.minimum(np.floor(c_up / aa), m - rows)
            live = t >= 0.0
            ti = np.maximum(t, 0.0).astype(np.intp)
            h1 = np.where(ti >= 1, H[rows, np.maximum(ti - 1, 0)], 0.0)
            rem = c_up - aa * ti
            f_t = F[rows, ti]
            f_next = F[rows, np.minimum(ti + 1, m)]
        else:
            # Σ_{k≥t} u_k (c + ak) = a·Σ_{i>t} Fs_i + (c + at)·Fs_t (Fs from the end)
            t = np.maximum(np.ceil(-c_up / ar), 0.0)
            live = t <= m - rows
            ti = np.minimum(t, m).astype(np.intp)
            h1 = np.where(ti + 1 <= m, H[rows, np.minimum(ti + 1, m)], 0.0)
            rem = c_up + ar * ti
            f_t = F[rows, ti]
            f_next = F[rows, np.maximum(ti - 1, 0)]
    # every term of both sums is ≥ 0; a negative remainder (t one past the true bound by
    # rounding) is dropped, which only adds; a term left out by rounding the other way
    # is at most the remainder's rounding times the next running sum
    raw = aa * h1 + np.maximum(rem, 0.0) * f_t
    err = (4.0 * _U * (np.abs(c_up) + aa * (ti + 1.0)) * f_next
           + (2 * m + 8) * _U * raw)            # running sums of running sums
    part = np.where(live, raw + err, 0.0)
    prod = ea * part
    return [np.add.reduce(prod[g]) for g in range(G)]


def _sparse_sums(jobs) -> list:
    """``_sparse_sum`` of each job (v, p, n), the per-value parts of the jobs that share
    their tables (a curve's laws: the same masses) in one array (``_sparse_parts``); a job
    whose first count cap leaves too large a tail is summed alone (its caps grow)."""
    out: list = [None] * len(jobs)
    groups: dict = {}
    states = {}
    for k, (v, p, n) in enumerate(jobs):
        st = _sparse_setup(v, p, n, None)
        if isinstance(st, SumBound):
            out[k] = st
            continue
        states[k] = st
        groups.setdefault(st.key(), []).append(k)
    for key, idx in groups.items():
        tab = _sparse_tables(*key)
        sts = [states[k] for k in idx]
        VN, AR, m = np.stack([st.vn for st in sts]), [st.ar for st in sts], sts[0].m
        # rows are independent (each its own operations and sum): a large group is cut in
        # two halves on the thread pool (its array operations release the GIL)
        cuts = [0, len(sts)]
        if parallel() and len(sts) >= 2 and len(sts) * tab[2].size >= _SPARSE_THREAD_MIN:
            cuts = [0, len(sts) // 2, len(sts)]
        def half(ab, tab=tab, VN=VN, AR=AR, m=m):
            return _sparse_parts(tab, VN[ab[0]:ab[1]], AR[ab[0]:ab[1]], m)

        sums = [x for got in pmap(half, list(itertools.pairwise(cuts))) for x in got]
        for k, st, sp in zip(idx, sts, sums):
            main, tail = st.finish(tab, sp)
            if tail <= _SPARSE_TAIL * main:
                out[k] = _sparse_value(main, tail, st.m, tab[2])
            else:
                out[k] = _sparse_sum(*jobs[k])
    return out


#: Rows × heads of a group of sparse sums from which its value parts run in two halves.
_SPARSE_THREAD_MIN = 40_000


def _sparse_value(main: float, tail: float, m: int, tot) -> SumBound:
    upper = (main + tail) * (1.0 + 1e-12)
    return SumBound(float(upper), {"method": "sparse", "max_count": m, "heads": int(tot.size),
                                   "main": main, "tail": tail,
                                   "certified_relative_error": (tail / main if main > 0
                                                                else math.inf) + 1e-12})


@memo(maxsize=16)
def _sparse_tables(n: int, m: int, boxes: tuple, pn_bytes: bytes, lp0: float, neg: bool):
    """What ``_sparse_sum`` computes from the masses alone (n, the count cap m, the head
    boxes, the non-zero atoms' masses ``pn`` in its order, log p0, the last value's sign):
    the counts j, the head vectors and totals, the heads' weights e^a, the table's running
    sums F and their running sums H, and the count tails (Pr[Bin(n − 1, P) ≥ m], and per box
    b < m the two tails of its head). A blanket curve's laws have the same masses at every ε
    (only the values move), so its ~200 sparse sums share these: the same arrays, hence the
    same floats, as each sum computing them itself. Read-only."""
    pn = np.frombuffer(pn_bytes, dtype=float)
    r = int(pn.size)
    logn = math.log(n)
    lnp = np.log(pn) + logn                      # log(n p_i)
    lp0_err = _LOG_ERR * abs(lp0)
    lnp_err = _LOG_ERR * (np.abs(np.log(pn)) + logn) + _U * np.abs(lnp)
    # log-weights and, alongside, an upper bound on each one's rounding error (added
    # before the exponential: every weight is rounded up)
    j = np.arange(m + 1, dtype=float)
    terms = np.log1p(-j[:m] / n)
    lfall = np.zeros(m + 1)                      # log n!/(n − K)! − K log n (≤ 0)
    np.cumsum(terms, out=lfall[1:])
    lfact = np.zeros(m + 1)                      # log k!
    np.cumsum(np.log(np.maximum(j[1:], 1.0)), out=lfact[1:])
    # running sums of same-sign terms: each term's own error (log: _LOG_ERR; log1p of
    # x = −i/n, itself within u: u times the condition number |x/((1 + x) log1p x)|,
    # ≤ 2 for i ≤ n/2) plus u per partial sum (≤ K·u of the sum)
    x = j[:m] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(x > 0.0, x / ((1.0 - x) * np.abs(terms)), 1.0)
    e_terms = np.zeros(m + 1)
    np.cumsum((_LOG_ERR + _U * (cond + 1.0)) * np.abs(terms), out=e_terms[1:])
    e_fall = e_terms + j * _U * np.abs(lfall)
    e_fact = (_LOG_ERR + j * _U) * lfact
    rest0 = (n - j) * lp0
    hK = lfall + rest0
    e_hK = e_fall + (n - j) * lp0_err + _U * (np.abs(rest0) + np.abs(hK))
    # heads: counts of the first r − 1 atoms, each within its box, with total ≤ m
    kk, tot = _head_vectors(tuple(min(int(b), m) for b in boxes), m)
    la = np.zeros(tot.size)
    e_la = np.zeros(tot.size)
    for i in range(r - 1):
        jl = j * float(lnp[i])
        gi = jl - lfact
        e_gi = j * float(lnp_err[i]) + _U * (np.abs(jl) + np.abs(gi)) + e_fact
        la += gi[kk[i]]
        e_la += e_gi[kk[i]] + (r * _U) * np.abs(gi)[kk[i]]
    la_up = la + (e_la * 1.01 + 2.0 * _U * np.abs(la))
    # last atom: table over (head total T, k) with T + k ≤ m
    jl = j * float(lnp[-1])
    gr = jl - lfact
    e_gr = j * float(lnp_err[-1]) + _U * (np.abs(jl) + np.abs(gr)) + e_fact
    Tk = j[:int(tot.max()) + 1, None] + j[None, :]
    inside = Tk <= m
    at = np.minimum(Tk, m).astype(np.intp)
    lb = hK[at] + gr[None, :]
    e_lb = e_hK[at] + e_gr[None, :] + _U * (np.abs(hK)[at] + np.abs(gr)[None, :])
    lb_up = np.where(inside, lb + (e_lb * 1.01 + 2.0 * _U * np.abs(lb)), -np.inf)
    with np.errstate(under="ignore", over="ignore"):
        eb = np.exp(lb_up)
        ea = np.exp(la_up)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if neg:
            F = np.cumsum(eb, axis=1)
            H = np.cumsum(F, axis=1)
        else:
            F = np.cumsum(eb[:, ::-1], axis=1)[:, ::-1]
            H = np.cumsum(F[:, ::-1], axis=1)[:, ::-1]
    P = float(np.sum(pn))
    ct_all = _count_tail(n, P, m)
    ct_box = [(_count_tail(n, float(pn[i]), int(b)), _count_tail(n + 1, float(pn[i]), int(b) + 1))
              if b < m else None for i, b in enumerate(boxes)]
    for arr in (j, ea, F, H):
        arr.setflags(write=False)
    return j, kk, tot, ea, F, H, ct_all, ct_box


#: Up to this many multisets of n atoms, ``positive_part`` sums every one of them (exact up
#: to rounding, which is charged) instead of a lattice and an FFT: at small n the lattice of
#: a pair whose atoms span e^ε0 (large ε0) is both slow and loose.
ENUMERATE_MAX = 20_000


def _enumerated(v: np.ndarray, p: np.ndarray, n: int) -> SumBound:
    """E[(G_1 + … + G_n)_+] summed over every multiset of n atoms (a certified value).

    Each multiset with counts k_j has probability n!/Π k_j! · Π p_j^k_j (log-space,
    ``gammaln``; the exponential's relative error 4u(|log w| + n + 8) is charged); its sum of n values is rounded up by
    n·u·Σ|v| (the values are already moved up by their own errors in ``_prep``).
    """
    K = v.size
    combos = np.array(list(itertools.combinations_with_replacement(range(K), n)),
                      dtype=np.int64)                                  # (M, n)
    counts = np.zeros((combos.shape[0], K))
    np.add.at(counts, (np.repeat(np.arange(combos.shape[0]), n), combos.ravel()), 1.0)
    with np.errstate(divide="ignore"):
        lp = np.log(p)
    lw = (special.gammaln(n + 1.0) - special.gammaln(counts + 1.0).sum(axis=1)
          + (counts * np.where(counts > 0, lp[None, :], 0.0)).sum(axis=1))
    vals = v[combos]
    tot = vals.sum(axis=1) + n * _U * np.abs(vals).sum(axis=1)
    pos = np.maximum(tot, 0.0)
    # exp of a log-weight carries its absolute error |lw|·u (and gammaln's few ulps) as a
    # relative error: charged per term.
    w = np.exp(lw) * (1.0 + 4.0 * _U * (np.abs(lw) + n + 8.0))
    upper = float(np.sum(w * pos)) * (1.0 + (n + 8) * _U) + 1e-300
    return SumBound(upper, {"enumerated": int(combos.shape[0]), "n": n})


def exact_positive_part(values, probs, n: int) -> float:
    """E[(ΣG_i)_+] by summing over every multinomial count vector (small n, ≤ 3 atoms
    besides one zero atom). Reference for tests and benchmarks, not certified."""
    v = np.asarray(values, dtype=float)
    p = np.asarray(probs, dtype=float)
    nz = [(a, b) for a, b in zip(v, p) if a != 0.0 and b > 0]
    p0 = float(1.0 - sum(b for _, b in nz))
    if len(nz) > 3:
        raise ValueError("exact_positive_part handles at most 3 non-zero atoms")
    lfact = special.gammaln(np.arange(n + 2) + 1.0)
    lp = [math.log(b) for _, b in nz]
    lp0 = math.log(p0) if p0 > 0 else -math.inf
    vals = [a for a, _ in nz]
    tot = 0.0
    if len(nz) == 1:
        i = np.arange(n + 1)
        lw = lfact[n] - lfact[i] - lfact[n - i] + i * lp[0] + np.where(n - i > 0, (n - i) * lp0, 0.0)
        return float(np.sum(np.exp(lw) * np.maximum(i * vals[0], 0.0)))
    if len(nz) == 2:
        for i in range(n + 1):
            k = np.arange(n - i + 1)
            r = n - i - k
            lw = (lfact[n] - lfact[i] - lfact[k] - lfact[r] + i * lp[0] + k * lp[1]
                  + np.where(r > 0, r * lp0, 0.0))
            tot += float(np.sum(np.exp(lw) * np.maximum(i * vals[0] + k * vals[1], 0.0)))
        return tot
    for i in range(n + 1):
        for k in range(n - i + 1):
            l = np.arange(n - i - k + 1)
            r = n - i - k - l
            lw = (lfact[n] - lfact[i] - lfact[k] - lfact[l] - lfact[r] + i * lp[0] + k * lp[1]
                  + l * lp[2] + np.where(r > 0, r * lp0, 0.0))
            tot += float(np.sum(np.exp(lw) * np.maximum(i * vals[0] + k * vals[1] + l * vals[2], 0.0)))
    return tot
