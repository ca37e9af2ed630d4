"""Foundation benchmark (issue #3): UB1 at all orders and the Girgis lower bound at n = 1e6,
each against a plain-Python baseline timed in the same run.

    PYTHONPATH=src python3 benchmarks/bench_foundation.py

(a) UB1, ε0 = 1, n = 1e6, every order 2…3000 (target < 0.1 s). Baseline: a per-order,
    per-term Python loop with math.lgamma summing the full i = 3…λ series; timed on every
    30th order and scaled by the ratio of terms (Σ(λ − 1) over all orders / over the subset).
(b) Girgis lower bound, ε0 = 1, n = 1e6, orders 2…65, both directions (target < 1 s).
    Baseline: a plain per-m loop (math.lgamma log-pmf, r(m)^a) over the same window
    mean ± (15 sd + 64), timed on 4 of the 64 orders and scaled ×16.
Timings are the best of 3 runs (the baselines: one run). No assertions: informational.
"""

from __future__ import annotations

import math
import time

import numpy as np

from shuffledp.bounds import girgis as g


def best_of(fn, k=3):
    t = math.inf
    for _ in range(k):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def ub1_plain(eps0, n, lam):
    e = math.exp(eps0)
    nb = math.floor((n - 1) / (2 * e)) + 1
    lk = math.log((e * e - 1) ** 2 / (2 * e * e * nb))
    lgl = math.lgamma(lam + 1)
    terms = [math.log(lam * (lam - 1) / 2 * (e - 1) ** 2 / (nb * e)),
             eps0 * lam - (n - 1) / (8 * e)]
    for i in range(3, lam + 1):
        terms.append(lgl - math.lgamma(i + 1) - math.lgamma(lam - i + 1) + math.log(i)
                     + math.lgamma(i / 2) + 0.5 * i * lk)
    m = max(terms)
    return math.log1p(sum(math.exp(t - m) for t in terms) * math.exp(m)) / (lam - 1)


def lower_plain(eps0, n, lam):
    q = 1 / (math.exp(eps0) + 1)
    p = 1 - q
    c = 2 * math.sinh(eps0) / n
    mean, sd = n * q, math.sqrt(n * p * q)
    lo, hi = int(mean - 15 * sd - 64), int(mean + 15 * sd + 64)
    out = []
    for a in (lam, 1 - lam):
        s = 0.0
        for m in range(lo, hi + 1):
            lp = (math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)
                  + m * math.log(q) + (n - m) * math.log(p))
            s += math.exp(lp) * (1 + c * (m - mean)) ** a
        out.append(math.log(s) / (lam - 1))
    return max(out)


def main() -> int:
    rows = []
    eps0, n = 1.0, 10**6
    orders = np.arange(2, 3001)
    t_fast = best_of(lambda: g.ub1(eps0, n, orders))
    sub = orders[::30]
    t0 = time.perf_counter()
    base = [ub1_plain(eps0, n, int(l)) for l in sub]
    t_sub = time.perf_counter() - t0
    t_plain = t_sub * float(np.sum(orders - 1)) / float(np.sum(sub - 1))
    assert np.allclose(base, g.ub1(eps0, n, sub), rtol=1e-9)   # same quantity
    rows.append(("UB1, orders 2..3000, n=1e6", t_fast, t_plain, 0.1))

    lam = np.arange(2, 66)
    t_fast = best_of(lambda: g.lower(eps0, n, lam))
    sub = [2, 17, 33, 65]
    t0 = time.perf_counter()
    base = [lower_plain(eps0, n, int(l)) for l in sub]
    t_plain = (time.perf_counter() - t0) * len(lam) / len(sub)
    # The plain loop's lgamma-based pmf loses ~1e-10 at n = 1e6: loose check only.
    assert np.allclose(base, g.lower(eps0, n, sub), rtol=1e-6)
    rows.append(("lower bound, 64 orders, n=1e6", t_fast, t_plain, 1.0))

    print(f"{'task':<32} {'shuffledp (s)':>14} {'plain loop (s)':>15} {'speed-up':>9} {'target (s)':>11}")
    for name, tf, tp, tgt in rows:
        print(f"{name:<32} {tf:>14.4f} {tp:>15.3f} {tp / tf:>8.0f}x {'< ' + str(tgt):>11}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
