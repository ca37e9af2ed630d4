r"""The moment series of a clone-pair slice's Rényi divergence (closed form per slice).

For slices with many clones, E_P[(P/Q)^{λ−1}] − 1 of the slice is a series in the even
moments of a Rademacher sum; every term is non-negative and the remainder is bounded
rigorously and added, so ``_series_part`` sums a whole window in O(series terms) instead
of O(√c) points per slice. Used by ``renyi.py``.

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...core._memo import register
from ...numerics import rademacher_log_moments
from ...numerics.binomial import even_partition_table
from .rdp_points import _exp_log_sum, _rdp_window

#: Terms of the moment series of a slice's RDP (even moments of V up to twice this), tried
#: in this order until every slice of the window is accurate (cost grows as the square).
_SERIES_TERMS = (16, 32, 64)
#: A slice is summed by its series when the series' remainder bound is below this fraction
#: of its value (accuracy only: the remainder bound is added either way).
_SERIES_TOL = 1e-13
#: Relative slack on a series value: ≤ 130 float operations on non-negative terms, ~1e-14.
_SERIES_SLACK = 1e-12
#: Slices at which the series remainder is evaluated (each charged to a block above it).
_REM_POINTS = 4096


@functools.lru_cache(maxsize=16)
def _series_moments(n: int, p: float, K: float, kmax: int):
    """E[(W/s)^2k] for every slice s = c + 1 of the window, k ≤ kmax + 1.

    Returns (s, mu, log_top): mu[:, k−1] the 2k-th moment for k ≤ kmax (values below the
    float range are 0 and charged separately) and log_top the log of the (2kmax + 2)-th.
    """
    cs = _rdp_window(n, p, K)[0]
    s = (cs + 1).astype(float)
    mu, log_top = _moments_rows(int(cs[0]) + 1, int(cs[-1]) + 1, kmax + 1)
    return s, mu, log_top


#: Rows of ``rademacher_log_moments`` by blocks of consecutive s: they depend on s alone,
#: so the windows of different pairs (the trimmed-clone ε0 search, the order rungs) share
#: them. Each block is computed on its own (``rademacher_log_moments`` of its _MOM_ROWS
#: rows), the first kmax − 1 columns exponentiated (what ``_series_eval`` reads) and the
#: last one's log kept, and written into an arena: per kmax one array of _MOM_ARENA
#: consecutive blocks, so that a window is a view of it (no copy). The window's
#: matrix-vector product reads the same rows with the same strides either way; the
#: values are those of the blocks as computed before. kmax -> ``_Arena``.
_MOM_CACHE: dict = register(__name__ + "._MOM_CACHE", {})
_MOM_ROWS = 1024
_MOM_BLOCKS = 96
#: Blocks per arena (windows of more than _MOM_BLOCKS // 2 blocks are computed directly).
_MOM_ARENA = 64


class _Arena:
    """Blocks b0 .. b0 + _MOM_ARENA − 1 of one kmax: exponentiated moments and log of the
    last, filled block by block on demand (``have``). The arrays are allocated empty, so
    only the blocks written take memory."""

    __slots__ = ("b0", "mom", "top", "have")

    def __init__(self, b0: int, kmax: int):
        rows = _MOM_ARENA * _MOM_ROWS
        self.b0 = b0
        self.mom = np.empty((rows, kmax - 1))
        self.top = np.empty(rows)
        self.have = np.zeros(_MOM_ARENA, dtype=bool)


def _moments_rows(s_lo: int, s_hi: int, kmax: int):
    """(exp(L[:, :-1]), L[:, -1]) for L = ``rademacher_log_moments(arange(s_lo, s_hi + 1),
    kmax)``, as views of the cached blocks (read-only for the caller). A block is
    exponentiated once (exp is elementwise and each row is the same contiguous run of
    kmax − 1 values as when the window's rows were exponentiated, so the same floats)."""
    b_lo, b_hi = s_lo // _MOM_ROWS, s_hi // _MOM_ROWS
    if b_hi - b_lo + 1 > _MOM_BLOCKS // 2:                 # too wide to cache: direct
        lm = rademacher_log_moments(np.arange(s_lo, s_hi + 1, dtype=float), kmax)
        return np.exp(lm[:, :-1]), lm[:, -1]
    ar = _MOM_CACHE.get(kmax)
    if ar is None or b_lo < ar.b0 or b_hi >= ar.b0 + _MOM_ARENA:
        # A new arena around the window (the old one stays alive only through views
        # still held, e.g. by ``_series_moments``'s cache).
        ar = _MOM_CACHE[kmax] = _Arena(max(0, b_lo - (_MOM_ARENA - (b_hi - b_lo + 1)) // 2),
                                       kmax)
    low = _MOM_CACHE.get(kmax // 2 + 1) if kmax in (33, 65) else None
    for b in range(b_lo, b_hi + 1):
        i = b - ar.b0
        if ar.have[i]:
            continue
        rows = np.arange(max(b * _MOM_ROWS, 1), (b + 1) * _MOM_ROWS, dtype=float)
        sl = slice(i * _MOM_ROWS, (i + 1) * _MOM_ROWS)
        j = None if low is None else b - low.b0
        if j is not None and 0 <= j < _MOM_ARENA and low.have[j]:
            # The same block with half the terms is at hand (the series tries 16, 32, then
            # 64 terms): its columns are this block's first ones (each column is formed on
            # its own), so only the columns k ≥ kmax // 2 + 1 are computed.
            k0 = kmax // 2 + 1
            lsl = slice(j * _MOM_ROWS, (j + 1) * _MOM_ROWS)
            lm = rademacher_log_moments(rows, kmax, first=k0)
            if b == 0:
                lm = np.concatenate([np.full((1, lm.shape[1]), np.nan), lm])
            ar.mom[sl, :k0 - 1] = low.mom[lsl]
            np.exp(lm[:, :-1], out=ar.mom[sl, k0 - 1:])
        else:
            lm = rademacher_log_moments(rows, kmax)
            if b == 0:                                  # s = 0 is not a slice size
                lm = np.concatenate([np.full((1, kmax), np.nan), lm])
            np.exp(lm[:, :-1], out=ar.mom[sl])
        ar.top[sl] = lm[:, -1]
        ar.have[i] = True
    r0 = s_lo - ar.b0 * _MOM_ROWS
    rows = slice(r0, r0 + (s_hi - s_lo + 1))
    return ar.mom[rows], ar.top[rows]


@functools.lru_cache(maxsize=256)
def _top_moments(s: float):
    """(mu, log_top) of the one-row check of ``_series_part`` at slice size s (most terms):
    the same call and floats as computing it there; kept because the calls of one order
    search share their window's top slice (a pure function of s; read-only arrays)."""
    lm = rademacher_log_moments(np.array([s]), _SERIES_TERMS[-1] + 1)
    mu, log_top = np.exp(lm[:, :-1]), lm[:, -1]
    mu.flags.writeable = False
    log_top.flags.writeable = False
    return mu, log_top


def _partition_table(kmax: int) -> np.ndarray:
    """E(2k, m), k, m ≤ kmax, as floats: the table of ``rademacher_log_moments``
    (``numerics.binomial.even_partition_table``, shared with it; read-only)."""
    E = even_partition_table(kmax)
    E.flags.writeable = False
    return E


@functools.lru_cache(maxsize=4)
def _quick_parts(kmax: int):
    """E(2k, m) for k, m = 1..kmax, the index k − m (0 above the diagonal, where E is 0),
    0..kmax − 1 and 1..kmax (``_top_moments_quick``)."""
    k = np.arange(1, kmax + 1)
    return (_partition_table(kmax)[1:, 1:], np.maximum(k[:, None] - k[None, :], 0),
            np.arange(kmax, dtype=float), k)


@functools.lru_cache(maxsize=256)
def _quick_log_moments(s: float) -> tuple:
    """log E[(W/s)^2k], k = 1..65, in one small matrix-vector product (~20 µs instead of
    ~0.35 ms): inner_k = Σ_m E(2k, m)·F_m·s^{m−k} for all k at once. Not the same floats
    as ``rademacher_log_moments`` (another summation order): ~1e-13 relative apart at most
    on these sums of non-negative terms, so they only decide where a margin leaves no doubt
    (``_top_hopeless``, ``_first_slice_fails``). A tuple of Python floats."""
    E, d, j, k = _quick_parts(_SERIES_TERMS[-1] + 1)
    F = np.cumprod(np.maximum(1.0 - j / s, 0.0))         # F_m, m = 1..kmax
    U = np.cumprod(np.full(j.size, 1.0 / s))             # s^−d, d = 1..kmax
    U = np.concatenate([[1.0], U])
    inner = (E * U[d]) @ F
    with np.errstate(divide="ignore"):
        lm = np.log(inner) - k * math.log(s)
    return tuple(lm.tolist())


@functools.lru_cache(maxsize=256)
def _top_moments_quick(s: float):
    """``_top_moments(s)`` from ``_quick_log_moments`` (the same row's quick form)."""
    lm = np.array(_quick_log_moments(s))
    mu = np.exp(lm[:-1])[None, :]
    log_top = lm[-1:]
    mu.flags.writeable = False
    log_top.flags.writeable = False
    return mu, log_top


#: Relative margin of ``_top_hopeless``'s quick decision (its moments are ≤ ~1e-13 apart
#: from the exact ones; the remainder and value move by about as much).
_QUICK_MARGIN = 1e-6


def _top_hopeless(pair, lam: int, s: float) -> bool:
    """``_series_part``'s first test: the window's top slice s is not accurate with the
    most terms (its remainder is not ≤ ``_SERIES_TOL`` of its value). Decided on
    ``_top_moments_quick`` (evaluated by ``_one_slice``) where the remainder is beyond the
    threshold by more than ``_QUICK_MARGIN`` either way, else on the exact one-row moments
    (``_top_moments``), so the decision is always the exact one's."""
    kmax = _SERIES_TERMS[-1]
    got = _one_slice(pair, lam, kmax, s)
    if got is not None:
        v, r = got
        lim = _SERIES_TOL * v
        if r > lim * (1.0 + _QUICK_MARGIN):
            return True
        if r < lim * (1.0 - _QUICK_MARGIN):
            return False
    one = np.array([s])
    val, rem = _series_eval(pair, lam, kmax, one, *_top_moments(s))
    return _accepted_from(val, rem) > 0


def _one_slice(pair, lam: int, kmax: int, s: float):
    """(value, remainder bound) of ``_series_eval`` at the one slice s with kmax terms, in
    Python floats from the quick moments (``_top_moments_quick``), for the series' checks:
    ~4× fewer operations than the numpy row (a one-row matrix-vector product and ~40 array
    calls on a few entries). Not the same floats: the moments are ~1e-13 relative from the
    exact ones, and the sums and libm's exp/log round on their own (~1e-15), so a caller
    decides only where its margin (≥ 1e-9 relative) leaves no doubt. None where a value is
    not a finite positive float (the caller then uses the exact row)."""
    lm = _quick_log_moments(s)
    gamma = pair.gamma
    _psi_even(lam, gamma, kmax)                 # the coefficients, as the numpy row reads them
    c = _PSI[(lam, float(gamma))][1]
    try:
        val = 0.0
        csum = 0.0
        for k in range(1, kmax + 1):
            ck = c[2 * k]
            val += _exp(lm[k - 1]) * ck
            csum += ck
        log_top = lm[kmax]
        a, b = pair.a, pair.b
        J1 = 2 * (kmax + 1)
        ln2 = math.log(2.0)
        lpg = lam * math.log(2.0 * a / (a + b)) + (1 - lam) * math.log(2.0 * b / (a + b))
        t_h = min(1.0, math.sqrt(2.0 * (max(lpg, 0.0) + ln2 + 40.0) / s))
        rem = math.inf
        for t in (1.0, 0.5, 0.25, 0.1, min(1.0, J1 / ((2 * lam - 1) * gamma)), t_h):
            x = (lam * math.log1p(gamma * t) + (1 - lam) * math.log(2.0 * pair.beta
                                                                   + gamma * (1.0 - t))
                 - J1 * math.log(t) + log_top)
            tot = _exp(x)
            if t < 1.0:
                tot += _exp(lpg + min(ln2 - 0.5 * s * t * t, 0.0))
            rem = min(rem, tot)
        rem += 2.3e-308 * csum
        val *= 1.0 + _SERIES_SLACK
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    if not (math.isfinite(val) and math.isfinite(rem) and val > 0.0):
        return None
    return val, rem


def _exp(x: float) -> float:
    """e^x as numpy gives it past the float range (+∞, not OverflowError); NaN raises
    ValueError (``_one_slice`` then leaves the decision to the exact row)."""
    if x != x:
        raise ValueError("NaN exponent")
    return math.exp(x) if x < 709.0 else math.inf


def _psi_even(lam: int, gamma: float, kmax: int) -> np.ndarray:
    """ψ_2k γ^2k for k = 1..kmax, where ψ(v) = (1 + v)^λ (1 − v)^(1−λ) = Σ_j ψ_j v^j.

    From (1 − v²) ψ' = (2λ − 1 − v) ψ: ψ_{j+1} = ((2λ − 1) ψ_j + (j − 2) ψ_{j−1})/(j + 1), with
    ψ_0 = 1, ψ_1 = 2λ − 1, ψ_2 = 2λ(λ − 1). For an integer λ ≥ 2 every ψ_j ≥ 0 (both factors
    have non-negative Taylor coefficients) and the recurrence adds non-negative terms only.
    """
    # In Python floats (the same IEEE double operations as on numpy's float64 entries,
    # without an array read and write per term). The coefficients do not depend on kmax
    # (each is formed from the two before it), so they are kept per (λ, γ) at the most
    # terms asked so far and a smaller kmax reads their prefix: an order search asks the
    # same λ at 16, 32 and 64 terms (its one-slice checks and its window), ~2 of every 3
    # calls. The list is extended on a copy (a kept array is never written).
    gamma = float(gamma)
    key = (lam, gamma)
    hit = _PSI.get(key)
    if hit is None or hit[0] < kmax:
        if hit is None:
            c = [1.0, (2 * lam - 1) * gamma, 2.0 * lam * (lam - 1) * gamma * gamma]
        else:
            c = list(hit[1])
        a = 2.0 * lam - 1.0
        # (the two previous terms carried in locals: the same expression on the same floats)
        p2, p1 = c[-2], c[-1]
        append = c.append
        for j in range(len(c) - 1, 2 * kmax):
            p2, p1 = p1, gamma * (a * p1 + (j - 2) * gamma * p2) / (j + 1)
            append(p1)
        arr = np.array(c)
        arr.flags.writeable = False
        hit = (kmax, c, arr)
        _PSI.pop(key, None)
        _PSI[key] = hit
        while len(_PSI) > _PSI_MAX:
            _PSI.pop(next(iter(_PSI)))
    # a strided view of an array of all terms, as before: BLAS's path follows the stride
    return hit[2][2:2 * kmax + 1:2]


#: ``_psi_even``'s coefficients: (λ, γ) -> (kmax, list of ψ_j γ^j, j ≤ 2·kmax, its array).
_PSI: dict = register(__name__ + "._PSI", {})
_PSI_MAX = 4096


def _series_slices(pair, lam: int, K: float, kmax: int):
    """(value, remainder bound) of E[ψ(V)] − 1 for every slice of the window at order λ."""
    return _series_eval(pair, lam, kmax, *_series_moments(pair.n, pair.p, K, kmax))


def _series_eval(pair, lam: int, kmax: int, s, mu, log_top):
    a, b = pair.a, pair.b
    gamma = pair.gamma
    c = _psi_even(lam, gamma, kmax)
    val = mu @ c
    J1 = 2 * (kmax + 1)
    log_psi_g = lam * math.log(2.0 * a / (a + b)) + (1 - lam) * math.log(2.0 * b / (a + b))
    # Candidates r = γt: t = 1 (no Hoeffding term), a few fixed fractions, the t where the
    # first term is smallest (≈ J/((2λ − 1)γ)), and per slice the t where the Hoeffding
    # term drops below e^−40.
    fixed = np.array([1.0, 0.5, 0.25, 0.1, min(1.0, J1 / ((2 * lam - 1) * gamma))])
    # The remainder bound is evaluated at every B-th slice and charged to the B slices from
    # there on: for each r both of its terms are non-increasing in s (E[(W/s)^2k] is, since
    # sample means decrease in convex order as s grows; the Hoeffding term plainly is).
    full = s.size
    B = max(1, -(-full // _REM_POINTS))
    s, log_top = s[::B], log_top[::B]
    t_h = np.minimum(1.0, np.sqrt(2.0 * (max(log_psi_g, 0.0) + math.log(2.0) + 40.0) / s))
    # The parts of the first term that depend on t alone are formed once for the fixed
    # fractions (one row, the same operations) and for the per-slice one.
    head = np.concatenate([fixed[None, :], t_h[:, None]], axis=None)
    rg = gamma * head
    # log(1 − γt) from 1 − γt = 2β + γ(1 − t): 1 − γ rounds to 0 at large log(a/b).
    with np.errstate(divide="ignore"):
        log_1m = np.log(2.0 * pair.beta + gamma * (1.0 - head))
    part = lam * np.log1p(rg) + (1 - lam) * log_1m - J1 * np.log(head)
    if s.size <= _FEW_SLICES:
        rem = _remainder_few(s, log_top, fixed, t_h, part, log_psi_g)
    else:
        rem = _remainder_rows(s, log_top, fixed, t_h, part, log_psi_g)
    # An underflowed moment (< 2.3e-308) times its coefficient: charged to every slice.
    rem = rem + 2.3e-308 * float(c.sum())
    if B > 1:
        rem = np.repeat(rem, B)[:full]
    return val * (1.0 + _SERIES_SLACK), rem


#: At most this many slices, the remainder is formed as one (slices × candidates) array
#: (fewer numpy calls); above, one contiguous row per candidate (``_remainder_rows``).
#: Both give the same floats: the same elementwise operations on the same values.
_FEW_SLICES = 64


def _remainder_few(s, log_top, fixed, t_h, part, log_psi_g):
    """The remainder bound at each slice: the smallest over the candidates t of
    e^{first term} + e^{Hoeffding term} (−∞ where t ≥ 1), as a (slices × candidates) array."""
    k = fixed.size
    ts = np.concatenate([np.broadcast_to(fixed, (s.size, k)), t_h[:, None]], axis=1)
    t1 = np.empty(ts.shape)
    np.add(part[None, :k], log_top[:, None], out=t1[:, :k])
    np.add(part[k:], log_top, out=t1[:, k])
    t2 = log_psi_g + np.minimum(math.log(2.0) - 0.5 * s[:, None] * ts * ts, 0.0)
    t2 = np.where(ts >= 1.0, -np.inf, t2)
    with np.errstate(over="ignore"):
        tot = np.exp(t1)
        tot += np.exp(t2)
    # The smallest candidate per slice, column by column (a minimum is exact: the same
    # floats as a reduction along the rows, which numpy runs 6 elements at a time).
    rem = tot[:, 0].copy()
    for j in range(1, tot.shape[1]):
        np.minimum(rem, tot[:, j], out=rem)
    return rem


def _remainder_rows(s, log_top, fixed, t_h, part, log_psi_g):
    """``_remainder_few`` with one contiguous row per candidate. Every entry is the float
    of the (slices × candidates) form: the same elementwise operations in the same order;
    a Hoeffding term at or below −746 is left out (its e^x is +0.0 exactly, and
    x + 0.0 = x), as is a fixed t ≥ 1 (all −∞)."""
    k = fixed.size
    half_s = 0.5 * s
    ln2 = math.log(2.0)
    skip = _dominated_rows(fixed, part, log_top)
    tot = np.empty((k + 1, s.size))
    with np.errstate(over="ignore"):
        for j in range(k + 1):
            if j < k and skip[j]:
                continue
            row = tot[j]
            if j < k:
                np.add(part[j], log_top, out=row)
            else:
                np.add(part[k:], log_top, out=row)
            np.exp(row, out=row)
            if j < k:
                tj = float(fixed[j])
                if tj >= 1.0:
                    continue
                t2 = half_s * tj
                t2 *= tj
            else:
                t2 = half_s * t_h
                t2 *= t_h
            np.subtract(ln2, t2, out=t2)
            np.minimum(t2, 0.0, out=t2)
            np.add(log_psi_g, t2, out=t2)
            if j == k:
                t2[t_h >= 1.0] = -np.inf
            live = ~(t2 <= -746.0)                  # NaN stays (as e^NaN did)
            if live.all():
                row += np.exp(t2)
            elif live.any():
                row[live] += np.exp(t2[live])
    # The smallest candidate per slice, row by row (a minimum is exact).
    rem = tot[0].copy()
    for j in range(1, k + 1):
        if j < k and skip[j]:
            continue
        np.minimum(rem, tot[j], out=rem)
    return rem


#: Margin of ``_dominated_rows`` on the first terms' exponents (absolute, and relative to
#: their size): far above the rounding of the sums part + log_top (~1e-16 relative) and
#: of exp (≤ a few ulps), so the exponentials keep their order.
_ROW_MARGIN = 1e-12


def _dominated_rows(fixed, part, log_top) -> list:
    """Fixed candidates of ``_remainder_rows`` whose row is at or above the first row
    (t = 1: the first term alone, no Hoeffding term) at every slice, so that leaving them
    out of the minimum changes no float. Row j's value is fl(exp(fl(part_j + log_top)))
    plus a term ≥ 0 (which can only raise it); where part_j exceeds part_0 by more than
    ``_ROW_MARGIN`` (absolute, plus relative to |part| and |log_top|), fl(part_j + log_top)
    exceeds fl(part_0 + log_top) by more than 1e-12 at every slice, and exp keeps that
    order wherever its value is a normal float (part_0 + min log_top ≥ −700 is asked;
    above the float range both are +∞). A fixed t ≥ 1 with part_j = part_0 (t_fix
    clipped to 1: the same operations on the same inputs) is the first row itself. For
    orders below about the term count, t_fix is 1 and every fixed t < 1 has a larger first
    term: four of the six rows are left out there."""
    k = fixed.size
    skip = [False] * k
    if not float(fixed[0]) >= 1.0:
        return skip
    p0 = float(part[0])
    lt_min = float(np.min(log_top)) if log_top.size else math.nan
    lt_abs = float(np.max(np.abs(log_top))) if log_top.size else math.nan
    if not (math.isfinite(p0) and math.isfinite(lt_min) and math.isfinite(lt_abs)
            and p0 + lt_min >= -700.0):
        return skip
    for j in range(1, k):
        pj = float(part[j])
        if float(fixed[j]) >= 1.0 and pj == p0:
            skip[j] = True
        elif pj - p0 > _ROW_MARGIN * (1.0 + abs(p0) + abs(pj) + lt_abs):
            skip[j] = True
    return skip


#: Margin of ``_first_slice_fails``: its one-row value and remainder may differ from the
#: window's row in the last bits (another matrix-vector product; ~1e-15 relative).
_FAIL_MARGIN = 1e-9


def _first_slice_fails(pair, lam: int, s0: int, kmax: int) -> bool:
    """True when the window's first slice (s0 = c + 1) is clearly not accurate with kmax
    terms: its remainder is above ``_SERIES_TOL`` of its value by more than
    ``_FAIL_MARGIN``. ``_accepted_from`` on the whole window would then return at least 1,
    so the window's evaluation with kmax terms is not needed to know that more terms are.
    (Evaluated alone: the remainder at the first slice is the window's own, ``_series_eval``
    evaluates it at every B-th slice from the first.) False when in doubt."""
    got = _one_slice(pair, lam, kmax, float(s0))
    if got is not None:
        # The quick row is ~1e-13 from the exact one, far inside the margin: "fails" here
        # means the window's first slice fails too.
        v, r = got
        return r > _SERIES_TOL * v * (1.0 + _FAIL_MARGIN)
    mu, log_top = _moments_rows(s0, s0, kmax + 1)
    val, rem = _series_eval(pair, lam, kmax, np.array([float(s0)]), mu, log_top)
    return bool(rem[0] > _SERIES_TOL * val[0] * (1.0 + _FAIL_MARGIN))


def _accepted_from(val, rem) -> int:
    """First index of the suffix of slices whose remainder is below _SERIES_TOL of the value."""
    bad = np.nonzero(~(rem <= _SERIES_TOL * val))[0]
    return int(bad[-1]) + 1 if bad.size else 0


def _series_part(pair, orders: np.ndarray, K: float):
    r"""Closed-form slice sums of the RDP: (jstop, Σ_{j ≥ jstop} mass_j (slice value − 1)).

    Conditioned on s = c + 1 the victim's pair is, with X ~ Bin(s, ½), T = X/s and
    V = γ(2T − 1), γ = (a − b)/(a + b) = tanh(log(a/b)/2):
    P(x) = Bin(s,½)(x)·(1 + V), Q(x) = Bin(s,½)(x)·(1 − V), so the slice's
    E_Q[(P/Q)^λ] = E[ψ(V)] with ψ(v) = (1 + v)^λ (1 − v)^(1−λ) = Σ_j ψ_j v^j (ψ_j ≥ 0, radius 1,
    |V| ≤ γ < 1). Odd moments of V vanish, so
    E[ψ(V)] − 1 = Σ_{k ≤ M} ψ_2k γ^2k E[(W/s)^2k] + E[R(V)], W = 2X − s a sum of s signs,
    every term ≥ 0 (no cancellation in the "− 1"). The remainder R (terms j > J = 2M + 1)
    satisfies |R(v)| ≤ R(|v|) ≤ (|v|/r)^{J+1} ψ(r) for |v| ≤ r, and ≤ ψ(γ) elsewhere, so
    E[R(V)] ≤ ψ(r) (γ/r)^{J+1} E[(W/s)^{J+1}] + ψ(γ) Pr[|W| > rs/γ], the last by Hoeffding
    ≤ 2 exp(−s r²/(2γ²)); minimised over a few r ∈ (0, γ] (r = γ: no second term).
    A slice joins the series when that remainder is below ``_SERIES_TOL`` of its value; the
    series slices form a suffix of the window (the bound falls with s). The remainder is
    added in any case, so the result stays an upper bound.
    """
    cs, w, _, log_above, _ = _rdp_window(pair.n, pair.p, K)
    out = np.zeros(orders.shape)
    if pair.a <= pair.b:
        return 0, out
    lam_max = int(orders.max())
    # Hopeless when even the top slice of the window is not accurate with the most terms.
    if _top_hopeless(pair, lam_max, float(cs[-1] + 1)):
        return cs.size, out
    # The fewest terms that serve the largest order as well as the most terms do.
    for kmax in _SERIES_TERMS:
        if kmax != _SERIES_TERMS[-1] and _first_slice_fails(pair, lam_max, int(cs[0]) + 1, kmax):
            continue              # the full evaluation would give jstop > 0: try more terms
        top_part = _series_slices(pair, lam_max, K, kmax)
        jstop = _accepted_from(*top_part)
        if jstop == 0:
            break
    mass = w
    parts = []
    for lam in orders.tolist():
        val, rem = top_part if lam == lam_max else _series_slices(pair, lam, K, kmax)
        jstop = max(jstop, _accepted_from(val, rem))
        parts.append((val, rem))
    if jstop >= cs.size:
        return cs.size, out
    m_ = mass[jstop:]
    for i, (val, rem) in enumerate(parts):
        out[i] = float(np.dot(m_, val[jstop:])) + float(np.dot(m_, rem[jstop:]))
        # The upper tail of C, charged at the top slice's value (in logs: it may underflow).
        top_v = float(val[-1] + rem[-1])
        if top_v > 0:
            out[i] += _exp_log_sum(log_above, math.log(top_v))
    return jstop, out

