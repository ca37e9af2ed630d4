"""Benchmark of the clone-pair kernels (issue #4).

1. One certified ε(δ = 1e-6) of the FMT23 pair (ε0 = 1) with ``pairs.clone.pair_epsilon``,
   against a plain baseline timed in the same run: a Python loop over slices c, each slice's
   hockey-stick summed directly over x with ``scipy.stats.binom.pmf``, and plain bisection
   (36 steps, absolute tolerance 1.5e-11) on [0, ε0]. The baseline is too slow at n = 1e6, so it runs at n = 1e4 and
   n = 4e4; its cost per δ evaluation grows ~linearly in n (√n slices × √n points), and the
   n = 1e6 figure is that linear extrapolation from n = 1e4 (stated as such).
2. The pair RDP curve at 64 orders (2..65) at n = 1e6 (``rdp_curve``).

Run: PYTHONPATH=src python3 benchmarks/bench_clones.py
"""

import math
import time

import numpy as np
from scipy import stats

from shuffledp.pairs import clone as cp
from shuffledp.pairs.clone import rdp_points, rdp_series, renyi


def baseline_delta(n, p, eps0, eps):
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    m = n - 1
    mean, s = m * p, math.sqrt(m * p * (1 - p))
    lo, hi = max(0, int(mean - 12 * s - 12)), min(m, int(mean + 12 * s + 12))
    E = math.exp(eps)
    tot = 0.0
    for c in range(lo, hi + 1):
        x = np.arange(0, c + 2)
        u = stats.binom.pmf(x - 1, c, 0.5)
        v = stats.binom.pmf(x, c, 0.5)
        P = alpha * u + (1 - alpha) * v
        Q = (1 - alpha) * u + alpha * v
        tot += stats.binom.pmf(c, m, p) * np.maximum(P - E * Q, 0).sum()
    return tot


def baseline_epsilon(n, eps0, delta):
    p = 2 / (math.exp(eps0) + 1)
    lo, hi = 0.0, eps0
    for _ in range(36):
        mid = 0.5 * (lo + hi)
        if baseline_delta(n, p, eps0, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def timed(f, *a, repeat=1):
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        r = f(*a)
        best = min(best, time.perf_counter() - t)
    return r, best


def main():
    eps0, delta = 1.0, 1e-6
    rows = []
    for n in (5_000, 10_000):
        ours, t_ours = timed(lambda: cp.pair_epsilon(cp.fmt23_pair(eps0, n), delta), repeat=3)
        base, t_base = timed(baseline_epsilon, n, eps0, delta)
        rows.append((n, ours, t_ours, base, t_base))
        print(f"n={n}: ours {ours:.10g} in {t_ours:.4f} s; baseline {base:.10g} in {t_base:.2f} s; "
              f"ratio {t_base / t_ours:.0f}x", flush=True)
    n = 1_000_000
    cp.pair_epsilon(cp.fmt23_pair(eps0, 999_999), delta)          # warm numpy
    ours, t_ours = timed(lambda: cp.pair_epsilon(cp.fmt23_pair(eps0, n), delta), repeat=3)
    t_base_scaled = rows[-1][4] * n / rows[-1][0]
    print(f"n=1e6: ours {ours:.10g} in {t_ours:.4f} s; baseline (extrapolated linearly from "
          f"n=1e4) ~{t_base_scaled:.0f} s; ratio ~{t_base_scaled / t_ours:.0f}x")
    rdp_curve()
    multi_round()


def baseline_slice_rdp(c, alpha, orders):
    """Plain loop body: one slice's Σ_x P (P/Q)^(λ−1) − 1 over all x, scipy pmfs."""
    x = np.arange(0, c + 2)
    u = stats.binom.pmf(x - 1, c, 0.5)
    v = stats.binom.pmf(x, c, 0.5)
    P = alpha * u + (1 - alpha) * v
    Q = (1 - alpha) * u + alpha * v
    keep = (P > 0) & (Q > 0)                # both underflow only far in the tails
    ell = np.log(P[keep]) - np.log(Q[keep])
    return [float(np.sum(P[keep] * np.expm1((lam - 1) * ell))) for lam in orders]


def rdp_curve():
    """Pair RDP at 64 orders (2..65), n = 1e6: the shipped path (moment series per slice,
    point sum only where the series is not accurate) against (a) the previous path (point
    sum over every slice, Δ-blocks past the point budget) and (b) a plain per-slice loop over
    the ±12 sd window of C, timed on 8 slices and scaled to the window (stated as such)."""
    n = 1_000_000
    orders = np.arange(2, 66)
    print("| pair | eps0 | ours (s) | previous point sum (s) | plain loop (s, scaled) |"
          " ratio prev/ours | ratio plain/ours | max rel (prev - ours)/ours |")
    print("|---|---|---|---|---|---|---|---|")
    for name, mk in (("fmt20", cp.fmt20_pair), ("fmt23", cp.fmt23_pair)):
        for e0 in (1.0, 4.0):
            pair = mk(e0, n)
            _clear()
            r, t = timed(lambda: cp.pair_rdp(pair, orders))
            _clear()
            renyi._SERIES_ENABLED = False
            try:
                r0, t0 = timed(lambda: cp.pair_rdp(pair, orders))
            finally:
                renyi._SERIES_ENABLED = True
            m = n - 1
            sd = math.sqrt(m * pair.p * (1 - pair.p))
            lo, hi = int(m * pair.p - 12 * sd - 12), int(m * pair.p + 12 * sd + 12)
            sample = np.linspace(lo, hi, 8).astype(int)
            _, tp = timed(lambda: [baseline_slice_rdp(int(c), pair.alpha, orders) for c in sample])
            tp *= (hi - lo + 1) / sample.size
            print(f"| {name} | {e0} | {t:.2f} | {t0:.2f} | {tp:.0f} | {t0 / t:.0f}x | "
                  f"{tp / t:.0f}x | {np.max((r0 - r) / r):.1e} |", flush=True)


def _clear():
    rdp_points._TERMS_CACHE.clear()
    renyi._VALUES.clear()
    rdp_series._series_moments.cache_clear()
    rdp_points._rdp_window.cache_clear()


def multi_round():
    """ε after T rounds via the pair's RDP: the order search as shipped against the previous
    path (every order 2…256 first, no cached points) timed in the same run."""
    from shuffledp.compose import conversions as conv
    n, e0, T, delta = 10_000, 1.0, 10, 1e-6
    pair = cp.fmt20_pair(e0, n)

    def ours():
        _clear()
        return conv.search_epsilon(lambda o: cp.pair_rdp(pair, o), delta, T,
                                   max_order=100_000, coarse="sparse").value

    def previous():
        def f(o):
            _clear()                     # the previous kernel kept nothing between calls
            return cp.pair_rdp(pair, o)
        return conv.search_epsilon(f, delta, T, max_order=100_000, coarse="dense").value

    a, ta = timed(ours)
    b, tb = timed(previous)
    print(f"fmt20 pair, n={n}, eps0={e0}, T={T}, delta={delta}: ours {a:.10g} in {ta:.2f} s; "
          f"dense grid without caches {b:.10g} in {tb:.2f} s; ratio {tb / ta:.1f}x")


if __name__ == "__main__":
    main()
