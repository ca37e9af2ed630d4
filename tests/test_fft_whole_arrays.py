"""``numerics.fft.fft_power_product`` reads whole arrays where every frequency is live and
kept (session 18) instead of gathering copies: the same floats as the code it replaced
(frozen copy below), on spiky laws whose power is alive everywhere, on smooth ones where
most frequencies are dropped, and on the PLD composer's products of several parts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.numerics import fft


def _old_live(absFs, epss, ns):
    """(frequencies k with log G_k = Σ_i n_i·log x_ik > −746, log G there), x_ik = |F̂_ik| + ε_i.

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
    else:                       # a zero or non-finite spectrum: every frequency, as it is
        idx = np.arange(absFs[0].size)
    logG = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, e, n in zip(absFs, epss, ns):
            lg = np.log(a[idx] + e)
            logG = n * lg if logG is None else logG + n * lg
    ok = logG > -746.0
    return idx[ok], logG[ok]



def _old_fft_power_product(parts, L: int, _fwd=None, _clog=None, _scratch_out: bool = False):
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
    parts = [(p[0], int(p[1]), float(p[2]) if len(p) > 2 else 0.0) for p in parts]
    cf = fft._fft_err_unit(L)
    Fs, absFs, epss = [], [], []
    for i, (q, n, in_err) in enumerate(parts):
        F, absF, eps_i = (_fwd[i] if _fwd is not None
                          else fft._forward(q, in_err, L, slot=f"F{i}"))
        Fs.append(F)
        absFs.append(absF)
        epss.append(eps_i)
    # Where log G_k < −746, G_k = e^{log G_k} is exactly 0 in floating point: no power is
    # kept there (|F̂|^n ≤ G) and nothing is charged. Everything below runs on the other
    # frequencies only — once n is large, a small fraction of them.
    live, logG_live = _old_live(absFs, epss, [p[1] for p in parts])
    rough = None
    pert_sum = None
    for F, absF, eps_i, (_, n, _) in zip(Fs, absFs, epss, parts):
        a_l = absF[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.log(a_l)
        rough = n * la if rough is None else rough + n * la
        # n_i ε_i/(|F̂_ik| + ε_i) (the telescoping sum's factor), ≤ n_i
        term = n * eps_i / (a_l + eps_i) if eps_i > 0 else np.zeros(a_l.size)
        pert_sum = term if pert_sum is None else pert_sum + term
    # The complex logs (the accurate log|F̂| near |F̂| = 1, and the phase) only where the
    # power can be kept. The margin covers the difference between log(abs(F̂)) and the
    # complex log's real part.
    cand_l = np.flatnonzero(rough > -fft._DROP - 1.0 - 1e-6 * sum(n for _, n, _ in parts))
    cand = live[cand_l]
    logF = np.zeros(cand.size, dtype=complex)
    logabs_i = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, (F, (_, n, _)) in enumerate(zip(Fs, parts)):
            memo = _clog[i] if _clog is not None else None
            lf = memo.log(cand) if memo is not None else np.log(F[cand])
            logF += n * lf
            logabs_i.append(lf.real)             # log|F̂_i| (−inf where F̂_i = 0)
    keep = logF.real > -fft._DROP
    sig_l = cand_l[keep]                         # kept components, as positions in ``live``
    sig = cand[keep]                             # … and as frequencies
    logabs_i = [la[keep] for la in logabs_i]
    Fn = fft._scratch("Fn", L, absFs[0].size, complex)
    Fn.fill(0.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        Fn[sig] = np.exp(logF[keep])
    Q = np.fft.irfft(Fn, L, out=fft._scratch("Q", L, L, float) if _scratch_out else None)
    aFn = np.abs(Fn[sig])
    with np.errstate(under="ignore", over="ignore"):
        G = np.exp(logG_live)
    pert = G * pert_sum
    pert_l2 = math.sqrt(float(np.sum(pert[sig_l] ** 2)))
    if len(parts) == 1 and parts[0][2] == 0.0:
        q, n, _ = parts[0]
        qa = np.asarray(q, dtype=float)
        e_norm = cf * math.sqrt(L) * math.sqrt(float(np.sum(qa * qa)))
        grow = math.exp((n - 1) * math.log(float(absFs[0].max()) + e_norm)) if n > 1 else 1.0
        pert_l2 = min(pert_l2, n * e_norm * grow)
    # powers' rounding: exp(Σ n_i log F_i) — each log carries ≤ ~4u(|log|F|| + π + 1)
    rnd = np.zeros(int(sig_l.size))
    for (q, n, _), la in zip(parts, logabs_i):
        rnd += 4.0 * fft._U * (n * (np.abs(la) + math.pi + 1.0) + 2.0)
    pow_round = aFn * (rnd + 2.0 * fft._U * len(parts))
    # dropped components (|exact| ≤ G_k) and the non-significant ones' perturbation
    rest = np.ones(live.size, dtype=bool)
    rest[sig_l] = False
    dropped = G[rest] * (1.0 + pert_sum[rest])
    spec_err = (pert_l2 + math.sqrt(float(np.sum(pow_round * pow_round)))
                + math.sqrt(float(np.sum(dropped * dropped))))
    time_err = math.sqrt(2.0) * spec_err / math.sqrt(L)
    inv_err = cf * math.sqrt(2.0) * math.sqrt(float(np.sum(aFn * aFn))) / math.sqrt(L) * 1.01
    return Q, 2.0 * (time_err + inv_err)


def _cases():
    rng = np.random.default_rng(18)
    out = []
    # a far-atom law (most mass at 0, light atoms far out): every frequency alive and kept
    for L, n in ((1800, 3666), (19440, 3666), (4096, 1077)):
        q = np.zeros(1200)
        q[600], q[0], q[1], q[1198], q[1199], q[603] = 0.997, 4e-4, 1e-4, 2e-4, 3e-4, 2e-3
        out.append(([(q / q.sum(), n)], L))
    for t in range(60):
        L = int(rng.choice([64, 100, 512, 1000, 4096]))
        parts = []
        for _ in range(int(rng.integers(1, 4))):
            K = int(rng.integers(1, L // 2))
            q = rng.random(K) ** float(rng.choice([1.0, 3.0, 8.0]))
            if rng.random() < 0.5:
                q[rng.random(K) < 0.8] = 0.0
                q[0] = 0.5
            q = q / q.sum()
            n = int(rng.choice([1, 2, 7, 100, 3000, 10**5, 10**7]))
            parts.append((q, n, 1e-12) if rng.random() < 0.5 else (q, n))
        out.append((parts, L))
    return out


@pytest.mark.parametrize("case", range(63))
def test_same_floats_as_the_gathering_code(case):
    parts, L = _cases()[case]
    Q, err = fft.fft_power_product(parts, L)
    Q0, err0 = _old_fft_power_product(parts, L)
    assert Q.tobytes() == Q0.tobytes() and err == err0


def test_spiky_law_takes_the_whole_array_path():
    q = np.zeros(1200)
    q[600], q[0], q[1199] = 0.998, 1e-3, 1e-3
    absF = np.abs(np.fft.rfft(q, 19440))
    live, _ = fft._live_sel([absF], [1e-15], [3666])
    assert live is None                       # every frequency: no index array
    a, _ = fft._live([absF], [1e-15], [3666])
    assert np.array_equal(a, np.arange(absF.size))
