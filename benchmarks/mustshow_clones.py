"""Issue #4 must-show numbers for the clone bounds (not a test: minutes of CPU at n = 1e6).

For every (ε0, n) on the grid: our certified ε(δ = 1e-6) of the fmt20 and fmt23 pairs, and
an independent float64 evaluation of the pair's δ(ε) written from spec/clones.md §1-2 as a
direct sum of positive terms Σ_c Pr[C=c] Σ_x (P(x|c) − e^ε Q(x|c))_+ with
scipy.stats.binom.logpmf weights (a different pmf algorithm from the library's). We check
δ_ind(ε_ours) ≤ δ (ours is not below the root) and δ_ind(ε_ours (1 − 1e-6)) > δ (ours is
within 1e-6 relative). Also krr-lower for k = 2, 3, 10 against fmt23, and the pair RDP at
λ ∈ {2, 4, 8, 16, 32} against an independent direct sum (n ≤ 1e6).

Run: PYTHONPATH=src python3 benchmarks/mustshow_clones.py
"""

import math
import sys
import time

import numpy as np
from scipy import stats

import shuffledp as sd
from shuffledp.pairs import clone as cp


def ind_delta(n, p, eps0, eps, sds=13.0):
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    m = n - 1
    mean, s = m * p, math.sqrt(m * p * (1 - p))
    lo, hi = max(0, int(mean - sds * s - 10)), min(m, int(mean + sds * s + 10))
    cs = np.arange(lo, hi + 1)
    w = np.exp(stats.binom.logpmf(cs, m, p))
    E = math.exp(eps)
    tot = 0.0
    for i in range(0, cs.size, 256):
        c = cs[i:i + 256][:, None].astype(float)
        half = sds * np.sqrt(np.maximum(c, 1)) / 2 + 10
        width = int(half.max()) + 2
        x = np.floor(c / 2) + np.arange(-2, width)[None, :]     # only x above ~c/2 can be > 0
        x = np.minimum(x, c + 1)
        u = np.exp(stats.binom.logpmf(x - 1, c, 0.5))
        v = np.exp(stats.binom.logpmf(x, c, 0.5))
        P = alpha * u + (1 - alpha) * v
        Q = (1 - alpha) * u + alpha * v
        term = np.maximum(P - E * Q, 0.0)
        # x was clipped at c+1: count each (c, x) once
        dup = np.concatenate([np.zeros((x.shape[0], 1), bool), x[:, 1:] == x[:, :-1]], axis=1)
        term[dup] = 0.0
        tot += float(np.dot(w[i:i + 256], term.sum(axis=1)))
    return tot


def _mp_logpmf(k, n, p):
    """log Pr[Bin(n, p) = k] with mpmath (30 digits): no lgamma cancellation at n = 1e6."""
    import mpmath as mp
    mp.mp.dps = 30
    return float(mp.log(mp.binomial(n, k)) + k * mp.log(p) + (n - k) * mp.log1p(-mp.mpf(p)))


def ind_rdp(n, p, eps0, orders, sds=14.0):
    """Independent direct sum Σ_c Pr[C=c] Σ_x P (P/Q)^(λ−1) − 1 over x in ±(sds sd + 10).

    Weights: mpmath per slice (scipy's lgamma route loses ~1e-9 at n = 1e6); the x-pmfs:
    mpmath at the slice's centre, float ratios (c − x)/(x + 1) outward (≤ ~1e-12 relative).
    """
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    m = n - 1
    mean, s = m * p, math.sqrt(m * p * (1 - p))
    lo, hi = max(0, int(mean - sds * s - 10)), min(m, int(mean + sds * s + 10))
    acc = np.zeros(len(orders))
    for c in range(lo, hi + 1):
        wc = math.exp(_mp_logpmf(c, m, p))
        half = int(sds * math.sqrt(max(c, 1)) / 2 + 10)
        x0, x1 = max(0, c // 2 - half), min(c, c // 2 + half)
        mid = c // 2
        vmid = math.exp(_mp_logpmf(mid, c, 0.5))
        # v(x) = Bin(c, ½)(x) for x = x0 − 1 .. x1 + 1 (0 outside 0..c); u(x) = v(x − 1).
        up = np.arange(mid, x1 + 1, dtype=float)              # ratios v(x+1)/v(x)
        dn = np.arange(mid, x0 - 1, -1, dtype=float)          # ratios v(x−1)/v(x)
        v_up = vmid * np.cumprod(np.maximum(c - up, 0.0) / (up + 1.0))   # x = mid+1..x1+1
        v_dn = vmid * np.cumprod(dn / (c - dn + 1.0))                     # x = mid−1..x0−1
        v = np.concatenate([v_dn[::-1], [vmid], v_up])        # x = x0 − 1 .. x1 + 1
        u, v = v[:-1], v[1:]                                  # at x = x0 .. x1 + 1
        P = alpha * u + (1 - alpha) * v
        Q = (1 - alpha) * u + alpha * v
        keep = P > 0
        lr = np.log(P[keep]) - np.log(Q[keep])
        for i, lam in enumerate(orders):
            acc[i] += wc * np.sum(P[keep] * np.expm1((lam - 1) * lr))
    return np.log1p(acc) / (np.array(orders) - 1.0)


def main():
    delta = 1e-6
    E0 = [0.5, 1.0, 2.0, 4.0, 8.0]
    NS = [1000, 10_000, 100_000, 1_000_000]
    if "--quick" in sys.argv:
        NS = NS[:3]
    if "--rdp-only" in sys.argv:
        NS = []
    if NS:
        print("## eps(delta=1e-6) of the pairs, checked by an independent direct sum")
        print("| eps0 | n | fmt20 | fmt23 | ok20 | ok23 | krr-lower k=2 | k=3 | k=10 | lower<=fmt23 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    worst_rel = 0.0
    for n in NS:
        for e0 in E0:
            row = []
            oks = []
            for mk, p in ((cp.fmt20_pair, math.exp(-e0)), (cp.fmt23_pair, 2 / (math.exp(e0) + 1))):
                e = cp.pair_epsilon(mk(e0, n), delta)
                row.append(e)
                if e >= e0 * (1 - 1e-9):
                    oks.append("=eps0")
                    continue
                above = ind_delta(n, p, e0, e) <= delta * (1 + 1e-9)
                within = ind_delta(n, p, e0, e * (1 - 1e-6)) > delta
                oks.append("yes" if (above and within) else f"NO({above},{within})")
            lows = []
            for k in (2, 3, 10):
                lows.append(sd.epsilon(sd.Shuffle(sd.RandomizedResponse(e0, k), n), delta=delta,
                                       bound="krr-lower").epsilon)
            le = all(l <= row[1] * (1 + 1e-12) for l in lows)
            print(f"| {e0} | {n} | {row[0]:.10g} | {row[1]:.10g} | {oks[0]} | {oks[1]} | "
                  f"{lows[0]:.6g} | {lows[1]:.6g} | {lows[2]:.6g} | {le} |", flush=True)
    print()
    print("## pair RDP vs an independent direct sum (relative difference, ours - ind)")
    print("default path (moment series where accurate) and, for n <= 1e5, the exact point sum "
          "(step=1)")
    orders = [2, 4, 8, 16, 32]
    rdp_ns = (1000, 10_000, 100_000, 1_000_000)
    if "--rdp-n" in sys.argv:
        rdp_ns = (int(float(sys.argv[sys.argv.index("--rdp-n") + 1])),)
    for n in rdp_ns:
        for e0 in (0.5, 1.0, 4.0):
            for name, mk, p in (("fmt20", cp.fmt20_pair, math.exp(-e0)),
                                ("fmt23", cp.fmt23_pair, 2 / (math.exp(e0) + 1))):
                ind = ind_rdp(n, p, e0, orders)
                ours = cp.pair_rdp(mk(e0, n), orders)
                rel = (ours - ind) / ind
                line = (f"{name} n={n} eps0={e0}: default max |rel| {np.max(np.abs(rel)):.2e} "
                        f"(min signed {np.min(rel):.2e})")
                if n <= 100_000:
                    ex = cp.pair_rdp(mk(e0, n), orders, step=1)   # exact point sum
                    rel = (ex - ind) / ind
                    line += (f"; step=1 max |rel| {np.max(np.abs(rel)):.2e} "
                             f"(min signed {np.min(rel):.2e})")
                print(line, flush=True)


if __name__ == "__main__":
    main()
