"""Certified FFT powers (shared by the i.i.d.-sum engine and the PLD composer): circular
n-fold self-convolutions by one FFT power, with an a-posteriori error bound."""

from __future__ import annotations

import functools
import math
import os
import sys
import threading

import numpy as np

from .rounding import U as _U

#: Constant of the normwise FFT error bound (Higham, Accuracy and Stability of Numerical
#: Algorithms, 2nd ed., Thm 24.2, proved for radix 2: c·u·log2 L); 10 leaves a wide margin
#: for pocketfft's mixed radices 2, 3, 5.
_C_FFT = 10.0
#: Spectral components with |F|^n below e^-_DROP are set to 0 (and charged): computing them
#: produces subnormal numbers, ~100x slower on common CPUs.
_DROP = 600.0


def next_fast_len(n: int) -> int:
    """Smallest 5-smooth integer ≥ n (an efficient length for numpy's pocketfft)."""
    return _next_fast_len(max(int(n), 1))


@functools.lru_cache(maxsize=4096)
def _next_fast_len(n: int) -> int:
    # cached: a certified sum asks for a length once per curve point, ~0.1 ms each in Python
    best = 1 << max(n - 1, 0).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m <<= 1
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def circular_run(Q: np.ndarray, start: int, length: int) -> np.ndarray:
    """Q[(start + j) mod L] for j < length, L = Q.size — a window of a circular convolution
    read as at most two slices when length ≤ L, and as a slice of Q tiled when longer (a
    periodic run); no index array either way."""
    L = Q.size
    i = start % L
    if length > L:
        return np.tile(Q, -(-(i + length) // L))[i:i + length]
    if i + length <= L:
        return Q[i:i + length]
    return np.concatenate([Q[i:], Q[:length - (L - i)]])


def fft_power(q, n: int, L: int):
    """Circular n-fold self-convolution of a non-negative vector by one FFT power.

    ``q`` (length ≤ L, entries ≥ 0, Σq ≤ 1) is zero-padded to L. Returns ``(Q, err)``: the
    computed length-L vector and an a-posteriori bound ``err`` ≥ 2‖Q − Q*‖₂ (a factor-2
    margin included), where Q* is the exact circular convolution. A weighted sum Σ w·Q is
    then within ‖w‖₂·err of Σ w·Q*. ``fft_power_product([(q, n)], L)``; see there.
    """
    return fft_power_product([(q, n)], L)


def fft_powers(q, ns, L: int):
    """``[fft_power(q, n, L) for n in ns]`` with one forward transform of ``q`` (the same
    values to the last bit)."""
    if not _malloc_done:
        _keep_freed_memory()
    fwd = _forward(q, 0.0, L, slot="Fpowers")
    # The powers share the spectrum, and so the complex logarithms of its components (numpy
    # computes them one element at a time, ~0.1 µs each: most of the cost when many
    # frequencies are kept): each component's log is taken once, the same value every power
    # would compute for it.
    memo = [_LogMemo(fwd[0])]
    return [fft_power_product([(q, n)], L, _fwd=[fwd], _clog=memo) for n in ns]


class _LogMemo:
    """np.log of the components of one spectrum, computed on first request (elementwise:
    the value is the one a fresh np.log of the component returns)."""

    def __init__(self, F):
        self.F = F
        self.buf = np.zeros(F.size, dtype=complex)
        self.have = np.zeros(F.size, dtype=bool)

    def log(self, idx):
        miss = idx[~self.have[idx]]
        if miss.size:
            with np.errstate(divide="ignore", invalid="ignore"):
                self.buf[miss] = np.log(self.F[miss])
            self.have[miss] = True
        return self.buf[idx]


#: glibc malloc settings applied once, on the first certified FFT (``_keep_freed_memory``):
#: blocks up to this size come from the heap instead of a fresh mmap …
_MMAP_THRESHOLD = 32 << 20
#: … and up to this much freed heap is kept for reuse instead of being returned at once.
_TRIM_THRESHOLD = 128 << 20
_malloc_done = False


def _keep_freed_memory() -> None:
    """Let glibc keep freed FFT-sized blocks for the next transform (once per process).

    Every FFT of a certified sum needs a few arrays of L floats (pocketfft's own scratch
    among them, which no caller can pass in). With glibc's default (dynamic) thresholds
    the freed blocks go back to the kernel as soon as a few of them are free, and the next
    transform page-faults all of them in again: on this 2-core machine half the CPU of the
    privacy blanket's curve at n = 1.7e7 (4.1 s → 2.1 s with the settings below, the same
    values). ``mallopt`` raises the mmap threshold to 32 MB and the trim threshold to
    128 MB: the process keeps up to 128 MB of freed heap for reuse. glibc only;
    ``SHUFFLEDP_MALLOC=system`` in the environment leaves malloc as it is.
    """
    global _malloc_done
    if _malloc_done:
        return
    _malloc_done = True
    if os.environ.get("SHUFFLEDP_MALLOC", "").strip().lower() == "system":
        return
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import platform
        if platform.libc_ver()[0] != "glibc":
            return
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, ValueError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3       # <malloc.h>
    mallopt(M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


#: Largest FFT length whose work arrays are kept between calls (per thread, a few MB).
_SCRATCH_MAX_L = 1 << 19
_scratch_local = threading.local()


def _scratch(name: str, L: int, size: int, dtype):
    """A work array of ``size`` elements for a length-``L`` transform, kept per thread and
    reused by the next call (its content is overwritten there), or a fresh one above
    ``_SCRATCH_MAX_L``. Reusing it only saves the page faults of a new multi-MB array on
    every call (a quarter of a certified sum's time on a busy machine); values are the
    same."""
    if L > _SCRATCH_MAX_L:
        return np.empty(size, dtype=dtype)
    d = _scratch_local.__dict__
    a = d.get(name)
    if a is None or a.size != size or a.dtype != dtype:
        a = d[name] = np.empty(size, dtype=dtype)
    return a


def _fft_err_unit(L: int) -> float:
    """c·u·log₂L: the error of one length-L transform per unit ℓ1 norm of its input."""
    return _C_FFT * _U * math.ceil(math.log2(max(L, 2)))


def _forward(q, in_err: float, L: int, slot: str | None = None):
    """(F̂, |F̂|, ε) of one part: its zero-padded real transform and the componentwise bound
    on the transform's error (``fft_power_product``). ``slot``: F̂ and |F̂| are written to
    this thread's work arrays of that name (valid until the next call using the slot)."""
    cf = _fft_err_unit(L)
    qa = np.asarray(q, dtype=float)
    m = L // 2 + 1
    if slot is None:
        F = np.fft.rfft(qa, L)                  # zero-padded to L by numpy
        absF = np.abs(F)
    else:
        F = np.fft.rfft(qa, L, out=_scratch(slot, L, m, complex))
        absF = np.abs(F, out=_scratch(slot + "|", L, m, float))
    return F, absF, cf * float(np.sum(np.abs(qa))) + in_err


def _live(absFs, epss, ns):
    """(frequencies k with log G_k = Σ_i n_i·log x_ik > −746, log G there), x_ik = |F̂_ik| + ε_i
    (``_live_sel`` with the index array written out)."""
    sel, logG = _live_sel(absFs, epss, ns)
    return (np.arange(absFs[0].size) if sel is None else sel), logG


def _live_sel(absFs, epss, ns):
    """``_live`` with None for "every frequency" (the common case of a spiky law: its n-th
    power is alive everywhere), so that the caller reads whole arrays instead of gathering
    copies of them; the values are the same.

    The same values as computing log G at every frequency, with the logarithms taken only
    where they can matter: a frequency passes a prefilter when each x_ik exceeds
    exp((−747 − Σ_{j≠i} n_j log max_k x_jk)/n_i) — every frequency with log G_k > −746 does
    (a margin of 1 in log G, far above the rounding of these sums) — and log G is then
    computed exactly as before on the ones that pass.
    """
    tops = []
    for a, e, n in zip(absFs, epss, ns):
        mx = float(a.max()) + e                  # = max_k fl(|F̂_ik| + ε_i) (fl(· + ε) is monotone)
        tops.append(n * math.log(mx) if mx > 0.0 else -math.inf)
    if all(math.isfinite(t) for t in tops):
        mask = None
        for i, (a, e, n) in enumerate(zip(absFs, epss, ns)):
            others = sum(t for j, t in enumerate(tops) if j != i)
            # x_ik > thr, tested as |F̂_ik| > thr − ε_i; the factor 1 − 1e-9 only widens the
            # prefilter (it covers the rounding of both, at any n)
            thr = math.exp(min((-747.0 - others) / n, 709.0)) * (1.0 - 1e-9)
            m = a > thr - e
            mask = m if mask is None else np.logical_and(mask, m, out=mask)
        idx = np.flatnonzero(mask)
        if idx.size == mask.size:
            idx = None
    else:                       # a zero or non-finite spectrum: every frequency, as it is
        idx = None
    logG = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, e, n in zip(absFs, epss, ns):
            lg = np.log(_at(a, idx) + e)
            logG = n * lg if logG is None else logG + n * lg
    ok = logG > -746.0
    if ok.all():
        return idx, logG
    sel = np.flatnonzero(ok)
    return (sel if idx is None else idx[sel]), logG[ok]


def _at(a, idx):
    """a[idx], or a itself for idx None (every index: the same values without a copy)."""
    return a if idx is None else a[idx]


def _compose(outer, inner):
    """outer[inner] for index arrays, where None stands for every index."""
    if inner is None:
        return outer
    return inner if outer is None else outer[inner]


def fft_power_product(parts, L: int, _fwd=None, _clog=None, _scratch_out: bool = False):
    """Circular convolution of ``n_i``-fold self-convolutions of non-negative vectors ``q_i``
    (``parts``: tuples (q_i, n_i) or (q_i, n_i, in_err_i)) by one product of FFT powers.

    Each ``q_i`` (length ≤ L, entries ≥ 0, Σq_i ≤ 1 up to its error) may itself be a
    computed approximation: ``in_err_i`` bounds ‖q_i − q_i*‖₁, and Q* is then the exact
    result for the exact q_i*. Returns ``(Q, err)`` with err ≥ 2‖Q − Q*‖₂.

    The forward transforms' errors η_ik = F̂_ik − F_ik are bounded componentwise,
    |η_ik| ≤ ε_i = c·u·log₂L·‖q_i‖₁ + in_err_i: every intermediate value of a decimation
    stage is a DFT of a subsequence (modulus ≤ its ℓ1 norm), each butterfly errs by a few
    ulps of its inputs' moduli, and later stages carry an error to each output along one
    path of unit-modulus twiddles, so one stage adds ≤ c·u·‖q_i‖₁ to |η_ik| (an input
    perturbation adds at most its ℓ1 norm). For one part without input error the normwise
    bound ‖η‖₂ ≤ c·u·log₂L·√L‖q‖₂ (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., Thm 24.2) is also used and the smaller result kept.

    The product Π F_ik^{n_i} then moves by at most G_k·Σ_i n_i ε_i/(|F̂_ik| + ε_i),
    G_k = Π_i (|F̂_ik| + ε_i)^{n_i} (telescoping) — negligible wherever G_k is, i.e. at all
    but a few frequencies once n is large, where the normwise bound charges n‖η‖₂ to every
    frequency (at n = 1e8 the difference between a 4 % and a 0.01 % allowance on the
    blanket's δ). Added: the powers' own rounding (complex log/exp,
    ∝ n_i(|log|F_i|| + π + 1)·u per part), the components dropped as below e^−600 (each at
    most G_k), and the inverse transform's error; Parseval turns spectral into time-domain
    norms.

    ``_scratch_out``: Q is this thread's work array, overwritten by the next such call (for
    a caller that is done with Q before it makes another).
    """
    if not _malloc_done:
        _keep_freed_memory()
    parts = [(p[0], int(p[1]), float(p[2]) if len(p) > 2 else 0.0) for p in parts]
    cf = _fft_err_unit(L)
    Fs, absFs, epss = [], [], []
    for i, (q, n, in_err) in enumerate(parts):
        F, absF, eps_i = (_fwd[i] if _fwd is not None
                          else _forward(q, in_err, L, slot=f"F{i}"))
        Fs.append(F)
        absFs.append(absF)
        epss.append(eps_i)
    # Where log G_k < −746, G_k = e^{log G_k} is exactly 0 in floating point: no power is
    # kept there (|F̂|^n ≤ G) and nothing is charged. Everything below runs on the other
    # frequencies only — once n is large, a small fraction of them.
    live, logG_live = _live_sel(absFs, epss, [p[1] for p in parts])
    # ``live`` None: every frequency (then whole arrays are read, not gathered copies); the
    # positions below (cand_l, sig_l: into the live frequencies) likewise.
    rough = None
    pert_sum = None
    for F, absF, eps_i, (_, n, _) in zip(Fs, absFs, epss, parts):
        a_l = _at(absF, live)
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.log(a_l)
        rough = n * la if rough is None else rough + n * la
        # n_i ε_i/(|F̂_ik| + ε_i) (the telescoping sum's factor), ≤ n_i
        term = n * eps_i / (a_l + eps_i) if eps_i > 0 else np.zeros(a_l.size)
        pert_sum = term if pert_sum is None else pert_sum + term
    # The complex logs (the accurate log|F̂| near |F̂| = 1, and the phase) only where the
    # power can be kept. The margin covers the difference between log(abs(F̂)) and the
    # complex log's real part.
    cand_m = rough > -_DROP - 1.0 - 1e-6 * sum(n for _, n, _ in parts)
    cand_l = None if cand_m.all() else np.flatnonzero(cand_m)
    cand = _compose(live, cand_l)
    n_cand = rough.size if cand_l is None else cand_l.size
    logF = np.zeros(n_cand, dtype=complex)
    logabs_i = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, (F, (_, n, _)) in enumerate(zip(Fs, parts)):
            memo = _clog[i] if _clog is not None else None
            if memo is not None:
                lf = memo.log(np.arange(F.size) if cand is None else cand)
            else:
                lf = np.log(_at(F, cand))
            logF += n * lf
            logabs_i.append(lf.real)             # log|F̂_i| (−inf where F̂_i = 0)
    keep_m = logF.real > -_DROP
    keep = None if keep_m.all() else np.flatnonzero(keep_m)
    sig_l = _compose(cand_l, keep)               # kept components, as positions in ``live``
    sig = _compose(live, sig_l)                  # … and as frequencies
    if keep is not None:
        logabs_i = [la[keep] for la in logabs_i]
    Fn = _scratch("Fn", L, absFs[0].size, complex)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if sig is None:
            np.exp(logF, out=Fn)
        else:
            Fn.fill(0.0)
            Fn[sig] = np.exp(_at(logF, keep))
    Q = np.fft.irfft(Fn, L, out=_scratch("Q", L, L, float) if _scratch_out else None)
    aFn = np.abs(_at(Fn, sig))
    with np.errstate(under="ignore", over="ignore"):
        G = np.exp(logG_live)
    pert = G * pert_sum
    pert_l2 = math.sqrt(float(np.sum(_at(pert, sig_l) ** 2)))
    if len(parts) == 1 and parts[0][2] == 0.0:
        q, n, _ = parts[0]
        qa = np.asarray(q, dtype=float)
        e_norm = cf * math.sqrt(L) * math.sqrt(float(np.sum(qa * qa)))
        grow = math.exp((n - 1) * math.log(float(absFs[0].max()) + e_norm)) if n > 1 else 1.0
        pert_l2 = min(pert_l2, n * e_norm * grow)
    # powers' rounding: exp(Σ n_i log F_i) — each log carries ≤ ~4u(|log|F|| + π + 1)
    rnd = np.zeros(aFn.size)
    for (q, n, _), la in zip(parts, logabs_i):
        rnd += 4.0 * _U * (n * (np.abs(la) + math.pi + 1.0) + 2.0)
    pow_round = aFn * (rnd + 2.0 * _U * len(parts))
    # dropped components (|exact| ≤ G_k) and the non-significant ones' perturbation
    if sig_l is None:
        dropped_l2 = 0.0                         # none: every live component is kept
    else:
        rest = np.ones(G.size, dtype=bool)
        rest[sig_l] = False
        dropped = G[rest] * (1.0 + pert_sum[rest])
        dropped_l2 = math.sqrt(float(np.sum(dropped * dropped)))
    spec_err = (pert_l2 + math.sqrt(float(np.sum(pow_round * pow_round)))
                + dropped_l2)
    time_err = math.sqrt(2.0) * spec_err / math.sqrt(L)
    inv_err = cf * math.sqrt(2.0) * math.sqrt(float(np.sum(aFn * aFn))) / math.sqrt(L) * 1.01
    return Q, 2.0 * (time_err + inv_err)
